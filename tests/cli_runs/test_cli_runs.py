"""The run-control CLI, driven as a real `statewright` process."""

from __future__ import annotations

import json
import subprocess

import pytest

from tests.conftest import bin_path, clean_env


def sw(project, *args, session=None, check=True):
    cmd = [bin_path("statewright"), *args, "--project", str(project)]
    if session:
        cmd += ["--session", session]
    p = subprocess.run(cmd, capture_output=True, text=True, env=clean_env(COLUMNS="200"), timeout=60)
    if check:
        assert p.returncode == 0, (args, p.stdout, p.stderr)
    return p


def one_line_error(p, code):
    assert p.returncode != 0
    assert "Traceback" not in p.stderr and "Traceback" not in p.stdout
    lines = [line for line in p.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and f"[{code}]" in lines[0], p.stderr
    return lines[0]


def test_approval_parked_then_approved_from_the_cli(project):
    from statewright.runtime import Runtime

    rt = Runtime.open(project)  # the agent side, in process
    rt.start("demo-proxy", "agent")
    rt.transition("agent", "PLAN_READY")
    parked = rt.transition("agent", "DONE")
    aid = parked["pending_approval"]["approval_id"]
    try:
        rt.transition("agent", "DONE")
        raise AssertionError("a second event must be refused")
    except Exception as exc:
        assert getattr(exc, "code", None) == "PENDING_APPROVAL"
    status = sw(project, "status", "--json", session="agent")
    assert json.loads(status.stdout)["pending_approval"]["approval_id"] == aid
    panel = sw(project, "status", session="agent").stdout
    assert aid in panel and "pending approval" in panel
    out = sw(project, "approve", aid, "--json")  # any session: the id names the run
    assert json.loads(out.stdout)["status"] == "completed"
    hist = json.loads(sw(project, "history", "--json", session="agent").stdout)
    approved = [h for h in hist if h["kind"] == "approved"]
    assert approved and approved[0]["actor"] == "human"
    assert hist[-1]["kind"] == "completed"


def test_start_status_transition_pause_resume_force_runs_history(project):
    a = json.loads(sw(project, "start", "tdd-feature", "--input", '{"failing_test": "t1"}', "--json").stdout)
    assert a["state"] == "planning" and a["context"]["failing_test"] == "t1"
    panel = sw(project, "status").stdout
    for text in ("tdd-feature", "planning", "Read, Grep, Glob", "READY", "iterations 0 / 20"):
        assert text in panel
    b = json.loads(sw(project, "transition", "READY", "--data", '{"x": 1}', "--expected-version", "1",
                      "--json").stdout)
    assert b["state"] == "writing_test" and b["version"] == 2 and b["context"]["x"] == 1
    one_line_error(sw(project, "transition", "READY", "--expected-version", "1", check=False),
                   "STALE_VERSION")
    line = one_line_error(sw(project, "transition", "NOPE", check=False), "INVALID_TRANSITION")
    assert "TEST_WRITTEN" in line  # tells what to do
    assert json.loads(sw(project, "pause", "--json").stdout)["status"] == "paused"
    one_line_error(sw(project, "transition", "TEST_WRITTEN", check=False), "NO_ACTIVE_RUN")
    assert json.loads(sw(project, "resume", "tdd-feature", "--json").stdout)["status"] == "running"
    f = json.loads(sw(project, "force-state", "refactoring", "--context", '{"test_result": "pass"}',
                      "--json").stdout)
    assert f["state"] == "refactoring" and f["context"]["x"] == 1
    runs = sw(project, "runs").stdout
    assert a["run_id"] in runs and "tdd-feature" in runs
    hist = sw(project, "history").stdout
    for kind in ("started", "transitioned", "refused", "paused", "resumed", "forced"):
        assert kind in hist
    assert json.loads(sw(project, "runs", "--json").stdout)[0]["run_id"] == a["run_id"]


def test_reject_with_reason(project):
    sw(project, "start", "demo-proxy")
    sw(project, "transition", "PLAN_READY")
    assert sw(project, "transition", "DONE", check=False).returncode == 3  # parked
    out = json.loads(sw(project, "reject", "--reason", "tests missing", "--json").stdout)
    assert out["pending_approval"] is None and out["state"] == "implement"
    hist = json.loads(sw(project, "history", "--json").stdout)
    assert hist[-1]["kind"] == "rejected_by_human" and hist[-1]["data"]["reason"] == "tests missing"
    one_line_error(sw(project, "approve", check=False), "NO_PENDING_APPROVAL")


def test_errors_are_one_line(project):
    one_line_error(sw(project, "status", check=False), "NO_ACTIVE_RUN")
    one_line_error(sw(project, "start", "no-such-workflow", check=False), "UNKNOWN_WORKFLOW")
    one_line_error(sw(project, "start", "tdd-feature", "--input", "{bad", check=False),
                   "INVALID_ARGUMENTS")
    one_line_error(sw(project, "start", "tdd-feature", "--input", "[1]", check=False),
                   "INVALID_ARGUMENTS")
    sw(project, "start", "tdd-feature")
    one_line_error(sw(project, "start", "tdd-feature", check=False), "RUN_ACTIVE")
    one_line_error(sw(project, "history", "run_000000000000", check=False), "UNKNOWN_RUN")


def test_damaged_store_is_one_line(project):
    (project / ".statewright").mkdir()
    (project / ".statewright" / "state.db").write_bytes(b"garbage" * 200)
    line = one_line_error(sw(project, "status", check=False), "STORE_ERROR")
    assert "state.db" in line


def test_read_only_commands_create_nothing_and_find_the_git_root(tmp_path):
    """Run from a subdirectory of a git project with no store: the project is the git root
    (its workflows are found), and commands that only read create nothing anywhere."""
    root = tmp_path / "proj"
    sub = root / "src" / "deep"
    sub.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    (root / "workflows").mkdir()
    (root / "workflows" / "mini.json").write_text(json.dumps(
        {"id": "mini", "initial": "a",
         "states": {"a": {"on": {"GO": "b"}}, "b": {"type": "final"}}}))

    def run(*args):
        return subprocess.run([bin_path("statewright"), *args], capture_output=True, text=True,
                              cwd=sub, env=clean_env(COLUMNS="200"), timeout=60)

    assert run("runs").returncode == 0
    assert run("list").returncode == 0 and "mini" in run("list").stdout
    for args, code in ((("status",), "NO_ACTIVE_RUN"), (("history",), "NO_ACTIVE_RUN"),
                       (("history", "run_000000000000"), "UNKNOWN_RUN")):
        one_line_error(run(*args), code)
    assert not list(tmp_path.rglob(".statewright"))
    # a command that starts a run creates the store at the git root, not in the subdirectory
    assert run("start", "mini").returncode == 0
    assert (root / ".statewright" / "state.db").is_file() and not (sub / ".statewright").exists()


def test_end_closes_the_run_for_good_and_only_a_human_may(project):
    from statewright import errors
    from statewright.runtime import Runtime

    sw(project, "start", "tdd-feature")
    rt = Runtime.open(str(project))
    with pytest.raises(errors.StatewrightError) as ei:
        rt.end(None, "the agent wants out")  # the agent's actor: refused, and recorded
    assert ei.value.code == errors.TOOL_DENIED and "only a human" in ei.value.message
    ended = json.loads(sw(project, "end", "--reason", "abandoned", "--json").stdout)
    assert ended["status"] == "ended"
    history = json.loads(sw(project, "history", "--json").stdout)
    kinds = [(e["kind"], e["actor"]) for e in history]
    assert ("refused", "agent") in kinds and ("ended", "human") in kinds
    assert any(e["kind"] == "ended" and e["data"]["reason"] == "abandoned" for e in history)
    one_line_error(sw(project, "end", check=False), "NO_ACTIVE_RUN")  # nothing left to end
    # for good: not even a human's force-state revives it (recovery is a new run)
    one_line_error(sw(project, "force-state", "planning", check=False), "RUN_NOT_RUNNING")
    assert json.loads(sw(project, "start", "tdd-feature", "--json").stdout)["status"] == "running"
