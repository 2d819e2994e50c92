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
        # sequential until someone binds: the parent works the first branch
        assert payload(parent.call("statewright_get_state"))["state"] == "docs_writing"

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
