"""`fail_open` is honoured in one place (`runtime.enforcement.failure_decision`), so every
front end answers the same whatever raised: an exception inside the gate and one inside the
runtime are both refused with their cause, or both allowed when `statewright.json` sets
`"fail_open": true`. Real processes (the hook fed real hook JSON, `statewright serve` driven by
the SDK `Client`, the `statewright check` CLI) are made to raise by a `sitecustomize` on their
PYTHONPATH: no test hook in the product."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from conftest import bin_path, clean_env
from hook.harness import Project, allowed, denied
from proxy.harness import ProxyClient, everything_server, make_project, statewright, text_of

# Which function raises, by the RAISE_IN variable: the gate's decision, or the runtime's
# gathering of the run's counters (between reading the run and calling the gate).
SITECUSTOMIZE = '''
import importlib
import os

# (importlib.import_module: `import statewright.policy.gate as m` would bind the `gate`
# function that the package exports under the module's name)
where = os.environ.get("STATEWRIGHT_TEST_RAISE_IN")
if where == "gate":
    target = importlib.import_module("statewright.policy.gate")

    def _gate(*args, **kwargs):
        raise RuntimeError("boom in the gate")

    target._gate = _gate
elif where == "runtime":
    target = importlib.import_module("statewright.runtime.enforcement")

    def counters_of(*args, **kwargs):
        raise RuntimeError("boom in the runtime")

    target.counters_of = counters_of
'''
CAUSES = {"gate": "RuntimeError: boom in the gate", "runtime": "RuntimeError: boom in the runtime"}

@pytest.fixture
def patch_dir(tmp_path: Path) -> Path:
    d = tmp_path / "patch"
    d.mkdir()
    (d / "sitecustomize.py").write_text(SITECUSTOMIZE)
    return d


def _raising_env(patch_dir: Path, where: str, **extra: str) -> dict[str, str]:
    # (clean_env drops STATEWRIGHT_* of the outer shell; the switch is set after it)
    env = clean_env(PYTHONPATH=str(patch_dir), **extra)
    env["STATEWRIGHT_TEST_RAISE_IN"] = where
    return env


def _set_fail_open(root: Path, on: bool) -> None:
    path = root / "statewright.json"
    cfg = json.loads(path.read_text()) if path.exists() else {}
    cfg["fail_open"] = on
    path.write_text(json.dumps(cfg))


@pytest.mark.parametrize("fail_open", [False, True])
def test_hook_answers_the_same_whatever_raised(tmp_path: Path, patch_dir: Path,
                                               fail_open: bool) -> None:
    proj = Project(tmp_path / "proj")
    proj.start("tdd-feature")
    _set_fail_open(proj.root, fail_open)
    payload = json.dumps(proj.payload("PreToolUse", tool_name="Read",
                                      tool_input={"file_path": proj.path("a.txt")})).encode()
    for where, cause in CAUSES.items():
        env = _raising_env(patch_dir, where, CLAUDE_PROJECT_DIR=str(proj.root))
        rc, out, err = proj.run_hook(["pre-tool-use"], payload, env)
        assert rc == 0 and "Traceback" not in err, err
        answer = json.loads(out) if out.strip() else None
        if fail_open:
            allowed(answer)
        else:
            why = denied(answer)
            assert cause in why, (where, why)


@pytest.mark.e2e
@pytest.mark.parametrize("fail_open", [False, True])
def test_proxy_answers_the_same_whatever_raised(tmp_path: Path, patch_dir: Path,
                                                fail_open: bool) -> None:
    wf = {"id": "echoing", "initial": "work",
          "states": {"work": {"allowed_tools": ["mcp__every__echo"], "on": {"DONE": "end"}},
                     "end": {"type": "final"}}}
    root = make_project(tmp_path / "proj", {"every": everything_server()}, {"echoing": wf})
    _set_fail_open(root, fail_open)
    statewright("start", "echoing", project=root)
    for where, cause in CAUSES.items():
        env = _raising_env(patch_dir, where, STATEWRIGHT_SESSION="default")
        with ProxyClient(root, env=env) as pc:
            result = pc.call("every__echo", {"message": "hello"})
        text = text_of(result)
        if fail_open:
            assert not result.is_error and "hello" in text, (where, text)
        else:
            assert result.is_error and cause in text, (where, text)


@pytest.mark.parametrize("fail_open", [False, True])
def test_check_answers_the_same_whatever_raised(tmp_path: Path, patch_dir: Path,
                                                fail_open: bool) -> None:
    proj = Project(tmp_path / "proj")
    proj.start("tdd-feature")
    _set_fail_open(proj.root, fail_open)
    for where, cause in CAUSES.items():
        r = subprocess.run([bin_path("statewright"), "check", "Read",
                            json.dumps({"file_path": proj.path("a.txt")}), "--json",
                            "--project", str(proj.root)],
                           capture_output=True, text=True, timeout=120,
                           env=_raising_env(patch_dir, where))
        assert "Traceback" not in r.stderr, r.stderr
        out = json.loads(r.stdout)
        assert cause in out["reason"], (where, out)
        if fail_open:
            assert r.returncode == 0 and out["allowed"] and out["rule"] == "fail_open"
        else:
            assert r.returncode == 1 and not out["allowed"]


def test_fail_open_is_no_way_past_the_gate_for_malformed_input(tmp_path: Path) -> None:
    """`fail_open` only forgives statewright's own failures: input the agent shapes to make a
    check raise (nested too deep, a path no system call takes) is refused by the gate itself,
    so it never reaches `fail_open` (a Write into the store stays refused)."""
    proj = Project(tmp_path / "proj")
    proj.start("tdd-feature")
    _set_fail_open(proj.root, True)
    store = str(proj.root / ".statewright" / "state.db")
    deep: object = "x"
    for _ in range(20):
        deep = [deep]
    for extra in ({"options": {"path": deep}}, {"target_path": "\ud800"}):
        answer = proj.pre("Write", {"file_path": store, "content": "pwned", **extra})
        why = denied(answer)
        assert "nested more than" in why or "lone surrogate" in why, why
    assert (proj.root / ".statewright" / "state.db").read_bytes()[:16] == b"SQLite format 3\x00"
