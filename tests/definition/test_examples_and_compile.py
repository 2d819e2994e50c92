"""Shipped examples, the compiled form, discovery on the search path, graphs."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from statewright.config import Config, load_config, schema_path
from statewright.definition import compile_dict, load_path, validate
from statewright.definition.compiled import CompiledWorkflow
from statewright.definition.discovery import find_workflow, list_workflows, make_resolver
from statewright.definition.graph import to_dot, to_mermaid
from statewright.errors import INVALID_WORKFLOW, UNKNOWN_WORKFLOW, StatewrightError

from .corpus import EXAMPLES, REPO, example_docs

EX = example_docs()


@pytest.mark.parametrize("name", sorted(EX))
def test_example_validates_without_errors(name: str) -> None:
    config = Config(root=REPO)
    result = validate(EXAMPLES / name, resolver=make_resolver(config))
    assert result.ok and result.errors == [], [str(d) for d in result.diagnostics]
    wf = result.compiled
    assert CompiledWorkflow.from_dict(json.loads(json.dumps(wf.to_dict()))) == wf
    assert wf.source_path == str((EXAMPLES / name).resolve())


def test_examples_point_at_the_schema_and_cover_every_feature() -> None:
    ours = {n: d for n, d in EX.items() if n != "demo-proxy.json"}
    assert len(ours) >= 6
    assert {d["id"] for d in ours.values()} >= {"tdd-feature", "bugfix", "deploy-pipeline", "ci-pipeline",
                                                  "guarded-edits", "release", "release-checks"}
    for n, d in ours.items():
        assert d["$schema"] == "../schema/workflow-schema.json", n
    compiled = [load_path(EXAMPLES / n) for n in ours]
    states = [s for wf in compiled for s in wf.states.values()]
    transitions = [t for s in states for t in s.on.values()]
    kinds = {t.kind for t in transitions}
    assert kinds == {"simple", "guarded", "branched", "invoke", "fork"}
    assert {t.fork.join for t in transitions if t.fork} == {"all", "any"}
    assert any(t.requires_approval for t in transitions)
    assert {g.op for wf in compiled for g in wf.guards.values()} == {
        "eq", "neq", "gt", "gte", "lt", "lte", "in", "contains", "exists", "not_exists"}
    for attr in ("max_iterations", "max_edit_lines", "max_files_per_state", "context_budget_bytes", "safe_next"):
        assert any(getattr(s, attr) is not None for s in states), attr
    for attr in ("disallowed_tools", "blocked_env", "env_overrides", "allowed_commands"):
        assert any(getattr(s, attr) for s in states), attr
    assert any(wf.interrupts for wf in compiled)
    # checks statewright runs itself, with frozen paths and a JUnit report; a state timeout
    assert any(c.read_only for wf in compiled for c in wf.checks.values())
    assert any(c.report for wf in compiled for c in wf.checks.values())
    assert any(t.checks for t in transitions if t.kind == "branched")
    assert any(s.timeout_s and s.on_timeout for s in states)
    assert any(b.target == "$return" for t in transitions for b in t.branches)
    # meta.debug lets the agent jump anywhere: never in a shipped example (DESIGN section 2)
    assert not any(wf.debug for wf in compiled) and any(wf.approval_mode == "ui" for wf in compiled)
    raw = json.dumps(list(ours.values()))
    assert '"deny_env"' in raw and '"env"' in raw  # the aliases are exercised too
    # the invoked child's failure state is named `failed`
    child = load_path(EXAMPLES / "release-checks.json")
    assert child.states["failed"].final


def test_tdd_feature_refuses_edits_while_testing() -> None:
    wf = load_path(EXAMPLES / "tdd-feature.json")
    for name in ("testing_red", "testing_green"):
        st = wf.states[name]
        assert "Edit" not in st.allowed_tools and "Edit" in st.disallowed_tools
        assert "pytest" in st.allowed_commands and "npm test" in st.allowed_commands


def test_normalisation() -> None:
    doc = {"id": "n", "initial": "a", "context": {"x": 1}, "meta": {"debug": True, "owner": "me"},
           "guards": {"g": {"field": "x", "op": "exists"}, "h": {"field": "y", "op": "eq", "value": None}},
           "interrupts": {"i": {"trigger": {"file_pattern": "**/*.env*"}, "target": "hd"}},
           "states": {
               "a": {"deny_env": ["AWS"], "env": {"K": "v"}, "max_iterations": 3.0,
                     "on": {"S": "d", "G": {"target": "d", "guard": "g", "guards": ["h"], "requires_approval": True,
                                                "approval_message": "ok?"},
                            "B": [{"target": "d", "guards": ["h"]}, {"target": "a"}],
                            "I": {"invoke": "c", "on_complete": "d", "input": {"k": [1]}},
                            "F": {"fork": {"branches": {"x": {"initial": "x1", "terminal": "xd"}}, "on_complete": "d"}}}},
               "x1": {"on": {"OK": "xd"}}, "xd": {"type": "final"},
               "hd": {"allowed_tools": [], "on": {"BACK": "$return"}},
               "d": {"type": "final"}}}
    wf = compile_dict(doc, source_path="/x/n.json")
    a = wf.states["a"]
    assert a.blocked_env == ("AWS",) and a.env_overrides == {"K": "v"}
    assert a.max_iterations == 3 and isinstance(a.max_iterations, int)
    assert a.allowed_tools is None and a.allowed_commands is None and wf.states["hd"].allowed_tools == ()
    assert a.on["S"].kind == "simple" and a.on["S"].branches[0].target == "d" and a.on["S"].branches[0].guards == ()
    g = a.on["G"]
    assert g.kind == "guarded" and g.branches[0].guards == ("g", "h") and g.requires_approval and g.approval_message == "ok?"
    assert [(b.target, b.guards) for b in a.on["B"].branches] == [("d", ("h",)), ("a", ())]
    i = a.on["I"]
    assert (i.kind, i.invoke, i.on_complete, i.on_fail, i.input) == ("invoke", "c", "d", None, {"k": [1]})
    f = a.on["F"]
    assert f.kind == "fork" and f.fork.join == "all" and f.fork.branches["x"].initial == "x1"
    assert wf.guards["g"].has_value is False and wf.guards["h"].has_value is True and wf.guards["h"].value is None
    assert wf.interrupts[0].file_pattern == "**/*.env*" and wf.interrupts[0].target == "hd"
    assert wf.meta == {"debug": True, "owner": "me"} and wf.debug
    assert wf.source_path == "/x/n.json"
    # digest: sha256 of canonical JSON, independent of key order and whitespace
    reordered = json.loads(json.dumps(doc, sort_keys=True))
    assert compile_dict(reordered).digest == wf.digest and len(wf.digest) == 64
    changed = json.loads(json.dumps(doc))
    changed["context"]["x"] = 2
    assert compile_dict(changed).digest != wf.digest
    # the compiled form does not alias the input document
    doc["context"]["x"] = 99
    assert wf.context == {"x": 1}


def test_load_path_errors_are_one_line(tmp_path: Path) -> None:
    with pytest.raises(StatewrightError) as e:
        load_path(tmp_path / "missing.json")
    assert e.value.code == INVALID_WORKFLOW and "no such file" in e.value.message and "\n" not in e.value.message
    bad = tmp_path / "bad.json"
    bad.write_text('{"id": "x",\n  oops}')
    with pytest.raises(StatewrightError) as e:
        load_path(bad)
    assert "invalid JSON at line 2" in e.value.message and "\n" not in e.value.message
    assert e.value.details["diagnostics"][0]["code"] == "invalid-json"


def _write(d: Path, name: str, doc) -> Path:
    d.mkdir(parents=True, exist_ok=True)
    p = d / name
    p.write_text(doc if isinstance(doc, str) else json.dumps(doc))
    return p


def _mini(wid: str, **extra) -> dict:
    doc = {"id": wid, "initial": "a", "states": {"a": {"on": {"DONE": "d"}}, "d": {"type": "final"}}}
    doc.update(extra)
    return doc


def test_discovery_search_path_duplicates_and_errors(tmp_path: Path, monkeypatch) -> None:
    root = tmp_path / "proj"
    extra_dir = tmp_path / "more"
    first = _write(root / "workflows", "one.json", _mini("one"))
    _write(root / ".statewright" / "workflows", "one-again.json", _mini("one"))
    _write(root / "workflows", "broken.json", "{not json")
    _write(extra_dir, "two.json", _mini("two"))
    _write(root / "workflows", "notes.txt", "ignored")
    monkeypatch.setenv("STATEWRIGHT_WORKFLOWS", str(extra_dir))
    config = load_config(root)
    entries = list_workflows(config)
    by_path = {e.path.name: e for e in entries}
    assert "notes.txt" not in by_path
    assert by_path["one.json"].active and by_path["one.json"].ok
    dup = by_path["one-again.json"]
    assert dup.duplicate_of == first and not dup.active
    assert any(d.code == "duplicate-id" for d in dup.diagnostics)
    assert by_path["broken.json"].id is None and not by_path["broken.json"].ok
    assert by_path["two.json"].source_dir == extra_dir
    # shipped examples come last on the search path
    assert by_path.get("tdd-feature.json") is not None
    assert entries.index(by_path["one.json"]) < entries.index(by_path["tdd-feature.json"])

    assert find_workflow("one", config) == first
    assert find_workflow("two", config) == extra_dir / "two.json"
    with pytest.raises(StatewrightError) as e:
        find_workflow("nope", config)
    assert e.value.code == UNKNOWN_WORKFLOW and "one" in e.value.message and "two" in e.value.message
    with pytest.raises(StatewrightError) as e:
        find_workflow("broken", config)
    assert e.value.code == INVALID_WORKFLOW

    resolver = make_resolver(config)
    assert resolver("two") is True
    assert resolver("nope") is None  # a broken file could be it: cannot tell
    (root / "workflows" / "broken.json").unlink()
    assert make_resolver(load_config(root))("nope") is False


def test_invoke_of_unknown_workflow_on_search_path(tmp_path: Path) -> None:
    root = tmp_path / "p"
    parent = _write(root / "workflows", "parent.json",
                    _mini("parent", states={"a": {"on": {"GO": {"invoke": "ghost", "on_complete": "d"}}},
                                            "d": {"type": "final"}}))
    result = validate(parent, resolver=make_resolver(load_config(root)))
    assert [(d.pointer, d.code) for d in result.errors] == [("/states/a/on/GO/invoke", "unknown-workflow")]


def test_graph_renderings() -> None:
    wf = load_path(EXAMPLES / "guarded-edits.json")
    m = to_mermaid(wf)
    assert m.startswith("stateDiagram-v2\n") and "[*] --> s0" in m and "--> ret : VALIDATED" in m
    assert "int0 --> s2 : file changed" in m
    d = to_dot(load_path(EXAMPLES / "ci-pipeline.json"))
    assert d.startswith('digraph "ci-pipeline" {') and d.rstrip().endswith("}")
    assert '"building" -> "lint_run" [label="BUILD_DONE fork lint", style=dashed];' in d
    assert '"building" -> "publishing" [label="BUILD_DONE join all"];' in d
    if shutil.which("dot"):
        subprocess.run(["dot", "-Tsvg"], input=d, text=True, check=True, capture_output=True)


def test_schema_file_is_a_documented_draft_2020_12_schema() -> None:
    from jsonschema import Draft202012Validator

    schema = json.loads(schema_path().read_text())
    Draft202012Validator.check_schema(schema)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["$id"] and schema["title"] and schema["description"]
    missing = []

    def walk(node, path):
        if isinstance(node, dict):
            for key in ("properties", "$defs"):
                for name, sub in (node.get(key) or {}).items():
                    if isinstance(sub, dict) and "description" not in sub:
                        missing.append(f"{path}/{key}/{name}")
            for k, v in node.items():
                walk(v, f"{path}/{k}")
        elif isinstance(node, list):
            for i, v in enumerate(node):
                walk(v, f"{path}/{i}")

    walk(schema, "")
    assert missing == []
    assert (schema["$defs"]["state"]["additionalProperties"] is False
            and schema["additionalProperties"] is False
            and schema["$defs"]["meta"]["additionalProperties"] is True)


def test_compiled_layer_stays_light() -> None:
    code = ("import sys, statewright.definition.compiled, statewright.definition.discovery;"
            "bad=[m for m in ('pydantic','jsonschema','typer','rich','mcp') if m in sys.modules];"
            "print(','.join(bad))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def _warnings(doc: dict) -> dict[str, str]:
    result = validate(json.dumps(doc))
    assert result.ok, result
    return {d.pointer: d.code for d in result.diagnostics if d.severity == "warning"}


def test_meta_settings_that_change_enforcement_are_warned_about() -> None:
    base = {"id": "w", "initial": "a",
            "states": {"a": {"on": {"GO": {"target": "b", "requires_approval": True}}},
                       "b": {"type": "final"}}}
    # requires_approval parks only under approval_mode "ui"; without it the transition is free
    assert _warnings(base) == {"/states/a/on/GO/requires_approval": "approval-not-enforced"}
    assert _warnings({**base, "meta": {"approval_mode": "none"}}) == {
        "/states/a/on/GO/requires_approval": "approval-not-enforced"}
    assert _warnings({**base, "meta": {"approval_mode": "ui"}}) == {}
    # debug lets the agent force any state and pause
    assert _warnings({**base, "meta": {"approval_mode": "ui", "debug": True}}) == {
        "/meta/debug": "debug-workflow"}
    assert _warnings({**base, "meta": {"approval_mode": "ui", "debug": False}}) == {}
