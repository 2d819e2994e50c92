"""Answer first, account after (the stdio fast path): a forwarded call that edits no file, in a
state without budgets, is replied before `record` runs -- but `record` still runs in the same
callback, so it is accounted before the proxy reads the next request. States with budgets keep
record-then-answer, so a next call sent the moment an answer arrives is judged on the updated
counters. A raw line client drives a real `statewright serve` in front of server-everything."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from .harness import bin_path, clean_env, everything_server, make_project, statewright

pytestmark = pytest.mark.xdist_group("proxy-answer-first")

WF = {
    "id": "af",
    "initial": "free",
    "states": {
        # no budget: forwarded echo calls take the early answer
        "free": {"allowed_tools": ["mcp__every__echo"], "on": {"TIGHT": "tight", "WARN": "warn"}},
        # a byte budget one echo result exhausts: record-then-answer
        "tight": {"allowed_tools": ["mcp__every__echo"], "context_budget_bytes": 20, "on": {"DONE": "end"}},
        # 8 bytes of "Echo: hi" pass 80 % of 9 bytes (a warning), not 100 %
        "warn": {"allowed_tools": ["mcp__every__echo"], "context_budget_bytes": 9, "on": {"DONE": "end"}},
        "end": {"type": "final"},
    },
}


class Raw:
    """A line-at-a-time JSON-RPC client on a real proxy process."""

    def __init__(self, project: Path, session: str, **env: str) -> None:
        self.proc = subprocess.Popen(
            [bin_path("statewright"), "serve", "--project", str(project)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            env=clean_env(STATEWRIGHT_SESSION=session, **env))
        self.n = 0
        self.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                     "clientInfo": {"name": "raw", "version": "0"}})
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        self.request("tools/list", {})

    def send(self, msg: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(msg).encode() + b"\n")
        self.proc.stdin.flush()

    def write_call(self, tool: str, args: dict[str, Any]) -> int:
        self.n += 1
        self.send({"jsonrpc": "2.0", "id": self.n, "method": "tools/call",
                   "params": {"name": tool, "arguments": args}})
        return self.n

    def read_answer(self, rid: int) -> dict[str, Any]:
        assert self.proc.stdout is not None
        while True:
            line = self.proc.stdout.readline()
            assert line, "the proxy closed its output"
            msg = json.loads(line)
            if msg.get("id") == rid:
                return msg

    def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self.n += 1
        self.send({"jsonrpc": "2.0", "id": self.n, "method": method, "params": params})
        return self.read_answer(self.n)

    def call(self, tool: str, args: dict[str, Any]) -> dict[str, Any]:
        return self.read_answer(self.write_call(tool, args))["result"]

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:  # pragma: no cover
            self.proc.kill()


def texts(result: dict[str, Any]) -> list[str]:
    return [b.get("text", "") for b in result.get("content", [])]


def state_of(raw: Raw) -> dict[str, Any]:
    r = raw.call("statewright_get_state", {})
    assert not r.get("isError"), r
    return r["structuredContent"]


@pytest.fixture()
def project(tmp_path: Path) -> Path:
    return make_project(tmp_path / "p", {"every": everything_server()}, {"af": WF})


def test_early_answers_are_accounted_before_the_next_request(project):
    """In a state without budgets each answer goes out before `record`; a request written the
    moment the answer arrives still finds the previous call accounted (bytes and iterations)."""
    raw = Raw(project, "s1")
    try:
        assert not raw.call("statewright_load_workflow", {"name": "af"}).get("isError")
        per_call = len("Echo: ping")
        for _ in range(25):
            r = raw.call("every__echo", {"message": "ping"})
            assert texts(r) == ["Echo: ping"]  # no statewright text: nothing to say
        # written at once after the last answer: it is read only after the last record
        counters = state_of(raw)["counters"]
        assert counters["iterations"] == 25
        assert counters["bytes"] == 25 * per_call
    finally:
        raw.close()


def test_next_call_sent_on_the_answer_is_refused_once_the_byte_budget_is_spent(project):
    raw = Raw(project, "s2")
    try:
        assert not raw.call("statewright_load_workflow", {"name": "af"}).get("isError")
        assert not raw.call("statewright_transition", {"event": "TIGHT"}).get("isError")
        first = raw.call("every__echo", {"message": "x" * 30})  # 36 bytes > 20
        # cut at the budget (DESIGN section 4, check 4), flagged as not delivered whole
        assert first.get("isError") is True and texts(first)[0] == "Echo: " + "x" * 14
        assert any("output cut" in t for t in texts(first)), texts(first)
        assert any("context budget" in t and "used up" in t for t in texts(first)), texts(first)
        # the very next request, written as soon as the answer was read
        second = raw.call("every__echo", {"message": "y"})
        assert second.get("isError") is True
        assert "TOOL_DENIED" in texts(second)[0] and "DONE" in texts(second)[0]
        assert state_of(raw)["counters"]["bytes"] == 36
    finally:
        raw.close()


def test_a_warning_is_never_lost_when_another_process_moved_the_run(project):
    """The proxy learns of a state change made elsewhere by polling; until it does, it may
    take a budget state for a quiet one and answer first. `record`'s warning then goes out with
    the next forwarded result -- at most one call late, never lost."""
    raw = Raw(project, "s3", STATEWRIGHT_POLL_INTERVAL="3600")  # the poll never runs here
    try:
        assert not raw.call("statewright_load_workflow", {"name": "af"}).get("isError")
        statewright("transition", "WARN", project=project, session="s3")  # another process
        first = raw.call("every__echo", {"message": "hi"})  # 8 of 9 bytes: a warning
        second = raw.call("every__echo", {"message": "hi"})  # 16 of 9: used up
        warned = [t for t in texts(first) + texts(second) if "8 of 9 bytes" in t]
        assert len(warned) == 1, (texts(first), texts(second))
        assert any("used up" in t for t in texts(second)), texts(second)
        third = raw.call("every__echo", {"message": "hi"})
        assert third.get("isError") is True and "TOOL_DENIED" in texts(third)[0]
    finally:
        raw.close()
