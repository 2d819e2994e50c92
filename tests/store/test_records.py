"""The shared value types (`CompiledWorkflow` & co, `Run`, `ToolCall`, `Decision`, `Config`) are
plain `__slots__` records, not dataclasses: they must keep what the dataclasses gave."""

from __future__ import annotations

import copy
import json
import pickle
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from statewright.config import Config, load_config
from statewright.definition import compile_dict
from statewright.definition.compiled import Branch, CompiledWorkflow, Guard, State, Transition
from statewright.engine.run import PendingApproval, Run
from statewright.lean import FrozenInstanceError
from statewright.policy.types import Counters, Decision, GateContext, ToolCall, ToolResult

REPO = Path(__file__).resolve().parents[2]


def _examples() -> list[CompiledWorkflow]:
    out = []
    for p in sorted((REPO / "workflows").glob("*.json")):
        try:
            out.append(compile_dict(json.loads(p.read_text()), str(p)))
        except Exception:
            continue
    return out


def test_compiled_workflows_round_trip_through_json() -> None:
    examples = _examples()
    assert len(examples) >= 3
    for wf in examples:
        again = CompiledWorkflow.from_dict(json.loads(json.dumps(wf.to_dict())))
        assert again == wf
        assert again.to_dict() == wf.to_dict()
        assert copy.deepcopy(wf) == wf
        assert pickle.loads(pickle.dumps(wf)) == wf
        assert repr(wf).startswith("CompiledWorkflow(id=")


def test_records_are_immutable_and_replaceable() -> None:
    s = State(name="s", allowed_tools=("Read",), max_iterations=3)
    with pytest.raises(FrozenInstanceError):
        s.max_iterations = 4  # type: ignore[misc]
    with pytest.raises(AttributeError):
        del s.name
    with pytest.raises(AttributeError):
        s.extra = 1  # type: ignore[attr-defined]
    t = s.replace(max_iterations=4)
    assert (t.max_iterations, s.max_iterations, t.allowed_tools) == (4, 3, ("Read",))
    assert t != s and s.replace() == s
    with pytest.raises(TypeError):
        s.replace(nope=1)
    assert State("x").env_overrides == {} and State("x").on == {}
    assert State("x").on is not State("x").on  # no shared mutable default


def test_equality_and_hash_follow_the_fields() -> None:
    assert Branch("a", ("g",)) == Branch(target="a", guards=("g",))
    assert hash(Branch("a", ("g",))) == hash(Branch("a", ("g",)))
    assert Branch("a") != Branch("b")
    assert Guard("g", "x", "eq", 1, True) != Guard("g", "x", "eq", 1, False)
    assert Branch("a") != ("a", ())  # another type is never equal
    assert len({Branch("a"), Branch("a"), Branch("b")}) == 2
    with pytest.raises(TypeError):
        hash(State("s"))  # holds dicts, like the frozen dataclass it replaces
    tr = Transition("GO", "simple", (Branch("b"),))
    assert tr.targets() == ("b",) and tr.input == {}


def test_policy_types_construction() -> None:
    call = ToolCall("Read", {"file_path": "a"})
    assert (call.source, call.cwd) == ("claude", None)
    assert call == ToolCall(tool_name="Read", tool_input={"file_path": "a"}, source="claude")
    assert ToolResult("Read", {}, 10).output_bytes == 10
    assert Counters().files_edited == frozenset() and Counters(iterations=2).iterations == 2
    ctx = GateContext("/p", "/p/.statewright")
    assert ctx.shell_tools == {} and ctx.events == () and ctx.read_text is None
    d = Decision.deny("no", "allowed_tools")
    assert (d.allowed, d.code, d.rule, d.counts_iteration) == (False, "TOOL_DENIED", "allowed_tools", True)
    assert Decision(True, reason="r") == Decision.allow(reason="r")
    assert Decision.allow(counts_iteration=False).counts_iteration is False
    assert "Decision(allowed=False, reason='no'" in repr(d)
    with pytest.raises(TypeError):
        Decision()  # type: ignore[call-arg]


runs = st.builds(
    Run, run_id=st.text(min_size=1, max_size=8), workflow=st.text(max_size=5),
    session=st.text(max_size=5), state=st.text(max_size=5),
    status=st.sampled_from(["running", "paused", "completed", "failed"]),
    context=st.dictionaries(st.text(max_size=4), st.integers() | st.text(max_size=4), max_size=3),
    version=st.integers(1, 10**6), iterations=st.integers(0, 1000),
    files_edited=st.lists(st.text(max_size=6), max_size=3).map(lambda x: tuple(sorted(set(x)))),
    bytes_read=st.integers(0, 10**9), interrupt=st.none() | st.text(max_size=4),
    pending_approval=st.none() | st.just(PendingApproval("appr_1", "GO")),
    created_at=st.floats(0, 1e10), updated_at=st.floats(0, 1e10),
)


@settings(max_examples=60, deadline=None)
@given(runs)
def test_run_round_trips_and_with_(run: Run) -> None:
    again = Run.from_dict(json.loads(json.dumps(run.to_dict())))
    assert again == run
    assert list(run.to_dict()) == list(Run._fields)
    bumped = run.with_(iterations=run.iterations + 1)
    assert bumped.iterations == run.iterations + 1 and bumped.run_id == run.run_id
    assert run.with_() == run
    assert copy.deepcopy(run) == run and pickle.loads(pickle.dumps(run)) == run


def test_run_positional_construction_and_unknown_keys() -> None:
    r = Run("run_1", "wf", "s", "a")
    assert (r.status, r.version, r.context, r.files_edited) == ("running", 1, {}, ())
    assert Run.from_dict({**r.to_dict(), "from_the_future": 1}) == r


def test_config_keeps_its_path_api(tmp_path: Path) -> None:
    (tmp_path / "statewright.json").write_text('{"fail_open": true, "shell_tools": {"t": "cmd"}}')
    cfg = load_config(tmp_path)
    assert cfg.root == tmp_path and isinstance(cfg.root, Path)
    assert cfg.root_dir == str(tmp_path)
    assert cfg.store_file == str(tmp_path / ".statewright" / "state.db")
    assert cfg.store_file == str(tmp_path / ".statewright" / "state.db")
    assert cfg.fail_open is True and cfg.shell_tools == {"t": "cmd"}
    assert cfg == Config(root=tmp_path, fail_open=True, shell_tools={"t": "cmd"})
    assert Config(root=str(tmp_path)) == Config(root=tmp_path)
    assert cfg.workflow_dirs()[0] == tmp_path / "workflows"
