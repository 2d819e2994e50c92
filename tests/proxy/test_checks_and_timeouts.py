"""Checks and state timeouts through a real `statewright serve`, with the MCP SDK's `Client` as
the agent: a check's progress arrives as MCP progress notifications before the answer, and a
state times out with no call at all (serve fires it while it waits)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from .harness import ProxyClient, make_project, payload, statewright

pytestmark = pytest.mark.e2e

SLOW = {
    "id": "slow-check", "initial": "work",
    "checks": {"suite": {"run": "for i in 1 2 3 4; do echo line $i; sleep 1; done",
                         "timeout_s": 30}},
    "guards": {"suite_ok": {"field": "_checks.suite.ok", "op": "eq", "value": True}},
    "states": {"work": {"on": {"DONE": {"target": "done", "guard": "suite_ok",
                                         "checks": ["suite"]}}},
               "done": {"type": "final"}},
}
TIMED = {
    "id": "timed", "initial": "waiting",
    "states": {"waiting": {"timeout_s": 1, "on_timeout": "EXPIRE",
                           "allowed_tools": ["Read"],
                           "on": {"EXPIRE": "expired", "GO": "done"}},
               "expired": {"on": {"RETRY": "waiting"}},
               "done": {"type": "final"}},
}


def test_a_check_reports_progress_to_the_caller(tmp_path: Path) -> None:
    root = make_project(tmp_path / "p", {}, {"slow-check": SLOW})
    with ProxyClient(root, session="s1") as client:
        payload(client.call("statewright_load_workflow", {"name": "slow-check"}))
        seen: list[tuple[float, float | None, str | None]] = []

        async def call() -> object:
            async def on_progress(progress: float, total: float | None,
                                  message: str | None) -> None:
                seen.append((progress, total, message))

            return await client.client.session.call_tool(
                "statewright_transition", {"event": "DONE"}, progress_callback=on_progress)

        result = client.portal.call(call)
        answer = json.loads(result.content[0].text)
        assert answer["state"] == "done" and answer["checks"]["suite"]["ok"] is True
        assert "line 4" in answer["context"]["_checks"]["suite"]["output_tail"]
        assert len(seen) >= 2, seen
        assert all(total == 30 for _, total, _ in seen)
        assert [p for p, _, _ in seen] == sorted(p for p, _, _ in seen)
        assert any(m and m.startswith("check suite:") and "line" in m for _, _, m in seen)


def test_a_state_times_out_while_serve_waits(tmp_path: Path) -> None:
    root = make_project(tmp_path / "p", {}, {"timed": TIMED})
    with ProxyClient(root, session="s1"):
        statewright("start", "timed", project=root, session="s1")
        deadline = time.monotonic() + 30
        state = None
        while time.monotonic() < deadline:
            state = json.loads(statewright("status", "--json", project=root,
                                           session="s1").stdout)["state"]
            if state == "expired":
                break
            time.sleep(0.2)
        assert state == "expired"
        history = json.loads(statewright("history", "--json", project=root,
                                         session="s1").stdout)
        kinds = [(h["kind"], h["actor"]) for h in history]
        assert ("timed_out", "system") in kinds and ("transitioned", "system") in kinds


def test_claims_through_the_proxy_do_not_pass_a_check(tmp_path: Path) -> None:
    """`statewright_transition` with the outcome claimed in its data, `load_workflow` input
    that names the reserved keys: without effect; the check statewright runs decides."""
    root = make_project(tmp_path / "p", {}, {"failing": {
        **SLOW, "id": "failing",
        "checks": {"suite": {"run": "echo 1 failed; exit 1", "read_only": ["conftest.py"]}}}})
    with ProxyClient(root, session="s1") as client:
        started = payload(client.call("statewright_load_workflow", {
            "name": "failing", "input": {"_checks": {"suite": {"ok": True}},
                                         "_frozen": {"suite": {}}}}))
        assert "_checks" not in started["context"]
        assert started["context"]["_frozen"] == {"suite": {}}  # statewright's own, not the input's
        result = client.call("statewright_transition", {
            "event": "DONE", "data": {"_checks": {"suite": {"ok": True, "exit_code": 0}},
                                      "suite_ok": True}})
        assert result.is_error
        err = json.loads(result.content[0].text)
        assert err["error"]["code"] == "GUARD_REJECTED" and "1 failed" in err["error"]["message"]
        assert err["state"] == "work" and "_checks" not in err["context"]
        (root / "conftest.py").write_text("# the agent's\n")
        err = json.loads(client.call("statewright_transition", {"event": "DONE"}).content[0].text)
        assert "frozen paths changed" in err["error"]["message"]
