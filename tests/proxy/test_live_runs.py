"""Live runs through `statewright serve` with the SDK `Client` as the agent (DESIGN sections 3
and 5): statewright_fork and statewright_resume, a second session working a fork branch, and
evidence the agent cannot write."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import EXAMPLES

from .harness import ProxyClient, make_project, payload, text_of

pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("proxy_live")]

PAUSABLE = {
    "id": "pausable", "initial": "work", "meta": {"allow_agent_pause": True},
    "states": {"work": {"allowed_tools": ["Read"], "on": {"DONE": "end"}},
               "end": {"type": "final"}},
}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = make_project(tmp_path / "proj", {}, {"pausable": PAUSABLE})
    shutil.copy(EXAMPLES / "parallel-subagents.json", root / "workflows")
    shutil.copy(EXAMPLES / "verified-fix.json", root / "workflows")
    return root


def error_of(result) -> dict:
    assert result.is_error, text_of(result)
    return json.loads(text_of(result))["error"]


def test_fork_lists_and_binds_sessions_to_branches(project: Path) -> None:
    with ProxyClient(project, session="parent") as parent, \
            ProxyClient(project, session="helper") as helper:
        tools = set(parent.tool_names())
        assert {"statewright_fork", "statewright_resume"} <= tools
        assert error_of(parent.call("statewright_fork"))["code"] == "NO_ACTIVE_RUN"
        payload(parent.call("statewright_load_workflow", {"name": "parallel-subagents"}))
        payload(parent.call("statewright_transition", {"event": "PLAN_READY"}))
        payload(parent.call("statewright_transition", {"event": "SPLIT"}))

        listing = payload(parent.call("statewright_fork"))
        assert [b["branch"] for b in listing["branches"]] == ["docs", "tests"]
        assert all(b["held_by"] is None for b in listing["branches"])
        # meta.parallel_forks: the parent obeys its own state from the start (not a branch)
        assert payload(parent.call("statewright_get_state"))["state"] == "dispatching"

        bound = payload(helper.call("statewright_fork", {"branch": "docs"}))
        assert bound["state"] == "docs_writing" and bound["fork"]["branch"] == "docs"
        # one agent per branch, and no switching away from the one it holds
        err = error_of(parent.call("statewright_fork", {"branch": "docs"}))
        assert err["code"] == "TOOL_DENIED"
        assert error_of(helper.call("statewright_fork", {"branch": "tests"}))["code"] == "TOOL_DENIED"
        # parallel now: the parent obeys its own state
        assert payload(parent.call("statewright_get_state"))["state"] == "dispatching"
        held = {b["branch"]: b["held_by"] for b in payload(helper.call("statewright_fork"))["branches"]}
        assert held == {"docs": "helper", "tests": None}

        # the helper works its branch; the other one is taken by the parent's own binding
        payload(helper.call("statewright_transition", {"event": "DONE"}))
        payload(parent.call("statewright_fork", {"branch": "tests"}))
        err = error_of(parent.call("statewright_transition", {"event": "DONE"}))
        assert err["code"] == "GUARD_REJECTED" and "_observed.commands.pytest.ok" in err["message"]
        # data cannot fake the evidence
        err = error_of(parent.call("statewright_transition", {"event": "DONE", "data": {
            "_observed": {"commands": {"pytest": {"ok": True}}}}}))
        assert err["code"] == "GUARD_REJECTED"


def test_resume_without_a_name_resumes_the_session_run(project: Path) -> None:
    with ProxyClient(project, session="s1") as pc:
        err = error_of(pc.call("statewright_resume"))
        assert err["code"] == "NO_ACTIVE_RUN"
        run = payload(pc.call("statewright_load_workflow", {"name": "pausable"}))
        assert payload(pc.call("statewright_pause"))["status"] == "paused"
        resumed = payload(pc.call("statewright_resume"))
        assert resumed["status"] == "running" and resumed["run_id"] == run["run_id"]
        payload(pc.call("statewright_pause"))
    # another session resumes it by name (resume after pause across sessions)
    with ProxyClient(project, session="s2") as pc2:
        resumed = payload(pc2.call("statewright_resume", {"name": "pausable"}))
        assert resumed["run_id"] == run["run_id"] and resumed["status"] == "running"
        assert error_of(pc2.call("statewright_resume", {"name": 7}))["code"] == "INVALID_ARGUMENTS"


def _wait_for(fn, timeout: float = 20.0):
    import time

    end = time.monotonic() + timeout
    while True:
        value = fn()
        if value or time.monotonic() > end:
            return value
        time.sleep(0.1)


def test_a_workflow_file_edited_while_a_run_is_active(project: Path) -> None:
    path = project / "workflows" / "pausable.json"
    with ProxyClient(project, session="edit") as pc:
        payload(pc.call("statewright_load_workflow", {"name": "pausable"}))
        first = payload(pc.call("statewright_get_state"))
        assert first["definition"]["changed_since_start"] is False
        changed = dict(PAUSABLE, states={**PAUSABLE["states"], "work": {
            "allowed_tools": ["Read", "Grep"], "on": {"DONE": "end"}}})
        path.write_text(json.dumps(changed))
        state = payload(pc.call("statewright_get_state"))
        assert state["definition"]["changed_since_start"] is True
        assert state["allowed_tools"] == ["Read"]  # the running run keeps its definition
        assert "new runs use the file" in state["definition"]["advice"]
        payload(pc.call("statewright_transition", {"event": "DONE"}))
        fresh = payload(pc.call("statewright_load_workflow", {"name": "pausable"}))
        assert fresh["allowed_tools"] == ["Read", "Grep"]  # a new run gets the new definition
        assert payload(pc.call("statewright_get_state"))["definition"]["changed_since_start"] is False


def test_serve_fires_an_interrupt_when_an_outside_process_changes_a_file(project: Path) -> None:
    shutil.copy(EXAMPLES / "watched-files.json", project / "workflows")
    (project / "config").mkdir()
    (project / "config" / "app.yml").write_text("replicas: 1\n")
    with ProxyClient(project, session="watch") as pc:
        payload(pc.call("statewright_load_workflow", {"name": "watched-files"}))
        # another process (an editor, a background job) writes the file: no tool call at all
        (project / "config" / "app.yml").write_text("replicas: 9\n")
        state = _wait_for(lambda: (s := payload(pc.call("statewright_get_state")))["state"]
                          == "config_review" and s)
        assert state and state["interrupt"] == {"name": "config_changed",
                                                "return_to": "implementing"}
        # a lock file changes during the review: queued, fires at $return
        (project / "package-lock.json").write_text("{}\n")
        assert _wait_for(lambda: any(h["kind"] == "interrupt_queued"
                                     for h in _history(project, "watch")))
        back = payload(pc.call("statewright_transition", {"event": "REVIEWED"}))
        assert back["state"] == "dependency_review"


def _history(project: Path, session: str) -> list[dict]:
    from .harness import statewright

    return json.loads(statewright("history", "--json", project=project, session=session).stdout)
