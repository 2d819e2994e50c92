"""Evidence the agent cannot fake (DESIGN section 3), through the real `statewright-hook`
process fed Claude Code's hook JSON and the real CLI: `_observed` is what statewright saw the
host report, never what the agent says."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .harness import Project, allowed

pytestmark = pytest.mark.e2e

OK = {"stdout": "3 passed\n", "stderr": "", "interrupted": False, "isImage": False}


#: DONE on the agent's own evidence: the last `pytest` line statewright saw pass (the shipped
#: verified-fix runs the suite itself, as a check: tests/runtime/test_checks.py)
OBSERVED_FIX = {
    "id": "observed-fix", "initial": "fixing",
    "guards": {"tests_really_passed": {"field": "_observed.commands.pytest.ok", "op": "eq",
                                       "value": True}},
    "states": {
        "fixing": {
            "allowed_tools": ["Read", "Grep", "Glob", "Edit", "Write", "Bash"],
            "allowed_commands": ["pytest", "git diff", "git status"],
            "max_edit_lines": 60,
            "on": {"DONE": {"target": "done", "guard": "tests_really_passed"},
                   "GIVE_UP": "abandoned"}},
        "done": {"type": "final"}, "abandoned": {"type": "final"}},
}


@pytest.fixture
def proj(tmp_path: Path) -> Project:
    p = Project(tmp_path / "proj")
    p.write_workflow(OBSERVED_FIX)
    p.start("observed-fix")
    return p


def _observed(p: Project) -> dict:
    return p.status()["context"].get("_observed", {})


def _bash(p: Project, command: str, *, ok: bool = True, code: int = 1) -> None:
    out = p.pre("Bash", {"command": command})
    allowed(out)
    # the host reports the input it ran: the rewritten line (the kernel sandbox's launcher
    # around it) where the hook rewrote it
    ran = out["hookSpecificOutput"]["updatedInput"] if out else {"command": command}
    if ok:
        p.post("Bash", ran, OK)
    else:
        p.failure("Bash", ran, f"Exit code {code}\nFAILED tests/test_a.py::t")


def _claim_done(p: Project) -> tuple[int, str]:
    r = p.cli("transition", "DONE", "--data", json.dumps({"tests_passed": True}), check=False)
    return r.returncode, r.stderr


def test_done_is_refused_until_pytest_is_seen_passing(proj: Project) -> None:
    rc, err = _claim_done(proj)  # the agent only says so
    assert rc != 0 and "GUARD_REJECTED" in err and "_observed.commands.pytest.ok" in err
    assert "nothing (the field is not set)" in err

    _bash(proj, "pytest -q", ok=False, code=1)
    obs = _observed(proj)
    assert obs["commands"]["pytest"]["ok"] is False and obs["commands"]["pytest"]["exit_code"] == 1
    assert obs["last_tool"] == {"name": "Bash", "ok": False}
    rc, err = _claim_done(proj)
    assert rc != 0 and "GUARD_REJECTED" in err and "saw false" in err

    _bash(proj, "cd tests && pytest -q")
    assert _observed(proj)["commands"]["pytest"] == {
        "ok": True, "exit_code": 0, "at": _observed(proj)["commands"]["pytest"]["at"]}
    assert proj.transition("DONE")["state"] == "done"
    kinds = [h["kind"] for h in proj.history()]
    assert kinds.count("observed") == 2


@pytest.mark.parametrize("line", [
    "pytest || true",       # the status is true's when pytest fails
    "pytest; true",         # a later command's status
    "pytest | true",        # a later pipeline stage's
    "! pytest",             # negated
    "git status || pytest",  # a passing left side skips pytest
])
def test_lines_whose_status_is_not_pytest_own_are_not_credited(proj: Project, line: str) -> None:
    _bash(proj, line)
    obs = _observed(proj)
    assert "pytest" not in obs.get("commands", {})
    assert obs["last_tool"] == {"name": "Bash", "ok": True}
    rc, err = _claim_done(proj)
    assert rc != 0 and "GUARD_REJECTED" in err


def test_a_failure_after_a_pass_takes_the_credit_back(proj: Project) -> None:
    _bash(proj, "pytest")
    _bash(proj, "pytest tests/test_new.py", ok=False, code=2)
    assert _observed(proj)["commands"]["pytest"]["exit_code"] == 2
    rc, _ = _claim_done(proj)
    assert rc != 0


def test_background_interrupted_and_interpreted_status_are_not_a_pass(proj: Project) -> None:
    # (a restricted state refuses background lines at PreToolUse; the record alone is checked)
    proj.post("Bash", {"command": "pytest", "run_in_background": True},
              {"stdout": "", "stderr": "", "interrupted": False, "backgroundTaskId": "b1"})
    assert "pytest" not in _observed(proj).get("commands", {})
    proj.post("Bash", {"command": "pytest"}, {**OK, "interrupted": True})
    assert _observed(proj)["commands"]["pytest"]["ok"] is False
    proj.post("Bash", {"command": "pytest"}, {**OK, "returnCodeInterpretation": "No matches"})
    assert _observed(proj)["commands"]["pytest"]["ok"] is False


def test_agent_cannot_write_reserved_keys(proj: Project) -> None:
    fake = {"_observed": {"commands": {"pytest": {"ok": True, "exit_code": 0, "at": 1}}}}
    r = proj.cli("transition", "DONE", "--data", json.dumps(fake), check=False)
    assert r.returncode != 0 and "GUARD_REJECTED" in r.stderr
    # nor through a forced context or a run's input
    proj.cli("force-state", "fixing", "--context", json.dumps(fake))
    assert "commands" not in _observed(proj)
    proj.cli("end")
    started = proj.start("observed-fix", "--input", json.dumps(fake))
    assert "_observed" not in started["context"]
    assert "GUARD_REJECTED" in _claim_done(proj)[1]


def test_edits_are_files_changed_of_this_state(proj: Project) -> None:
    target = proj.path("src/app.py")
    (proj.root / "src").mkdir()
    Path(target).write_text("x = 1\n")
    inp = {"file_path": target, "old_string": "x = 1", "new_string": "x = 2"}
    allowed(proj.pre("Edit", inp))
    proj.post("Edit", inp, {"filePath": target})
    assert _observed(proj)["files_changed"] == ["src/app.py"]
    assert _observed(proj)["last_tool"] == {"name": "Edit", "ok": True}


@pytest.mark.parametrize("line", [
    "pytest --version",                 # prints a version
    "pytest -q --collect-only",         # only collects
    "pytest -q -k 'not failing'",       # deselects the failing test
    "pytest --lf",                      # only what failed last time
    "python -m pytest tests/test_a.py::test_ok",  # one test
])
def test_a_pass_of_a_line_that_runs_less_than_the_suite_is_no_evidence(
        proj: Project, line: str) -> None:
    proj.write_workflow({**OBSERVED_FIX, "id": "observed-fix-py", "states": {
        **OBSERVED_FIX["states"], "fixing": {**OBSERVED_FIX["states"]["fixing"],
                                              "allowed_commands": ["pytest", "python -m pytest"]}}})
    proj.cli("end")
    proj.start("observed-fix-py")
    _bash(proj, line)
    assert "commands" not in _observed(proj)
    rc, err = _claim_done(proj)
    assert rc != 0 and "GUARD_REJECTED" in err
    # a failure of such a line is still evidence (of a failure)
    _bash(proj, line, ok=False, code=1)
    assert set(_observed(proj)["commands"]) <= {"pytest", "python -m pytest"}
    assert all(not c["ok"] for c in _observed(proj)["commands"].values())


def test_a_pass_after_the_agent_changed_the_test_config_is_no_evidence(proj: Project) -> None:
    conftest = proj.path("conftest.py")
    body = "def pytest_sessionfinish(session, exitstatus):\n    session.exitstatus = 0\n"
    allowed(proj.pre("Write", {"file_path": conftest, "content": body}))
    Path(conftest).write_text(body)
    proj.post("Write", {"file_path": conftest, "content": body}, {"filePath": conftest})
    _bash(proj, "pytest -q")
    assert "commands" not in _observed(proj)
    assert "GUARD_REJECTED" in _claim_done(proj)[1]


def test_a_config_file_changed_behind_the_tools_back_is_seen_by_its_inode(proj: Project) -> None:
    # (a script, a test the agent wrote, a background job: no edit tool reported it)
    (proj.root / "pytest.ini").write_text("[pytest]\naddopts = -k 'not failing'\n")
    _bash(proj, "pytest -q")
    assert "commands" not in _observed(proj)


def test_a_full_run_with_untouched_config_is_credited(proj: Project) -> None:
    _bash(proj, "pytest -q -x tests")
    assert _observed(proj)["commands"]["pytest"]["ok"] is True
