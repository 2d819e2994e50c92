"""The official MCP conformance suite (npm @modelcontextprotocol/conformance 0.1.16, on Node 22
from tests/npm-node22): every server scenario (`--suite all`) against a real
`statewright serve --http` in front of server-filesystem and server-everything, with the exact
baseline of expected failures in conformance-expected-failures.yml (each with its reason). The
suite exits 1 on an unexpected failure and on a listed scenario that passes.

The suite speaks streamable HTTP only; the stdio transport is checked with the Inspector
(test_inspector.py) and the SDK `Client` (the other tests)."""

from __future__ import annotations

from pathlib import Path

import pytest

from .harness import CONFORMANCE_JS, ServeHttp, everything_server, fs_server, make_project, node22

pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("proxy_conformance")]

BASELINE = Path(__file__).with_name("conformance-expected-failures.yml")


def test_server_scenarios_match_the_baseline(tmp_path):
    root = make_project(tmp_path / "proj", {"fs": fs_server(tmp_path / "proj"),
                                            "every": everything_server()})
    with ServeHttp(root) as server:
        cp = node22(CONFORMANCE_JS, "server", "--url", server.url, "--suite", "all",
                    "--expected-failures", str(BASELINE), "-o", str(tmp_path / "results"),
                    home=tmp_path, timeout=300)
    summary = cp.stdout[cp.stdout.find("=== SUMMARY"):]
    assert cp.returncode == 0, summary + cp.stderr[-2000:]
    for passing in ("server-initialize", "ping", "tools-list", "logging-set-level",
                    "resources-list", "prompts-list", "server-sse-multiple-streams",
                    "dns-rebinding-protection"):
        assert f"✓ {passing}:" in summary, summary


def _sse_events(text: str) -> list[dict[str, str]]:
    events, current = [], {}
    for line in text.splitlines():
        if not line:
            if current:
                events.append(current)
            current = {}
            continue
        key, _, value = line.partition(":")
        current[key] = current.get(key, "") + value.lstrip(" ")
    if current:
        events.append(current)
    return events


def test_sse_streams_are_primed_for_resumption(tmp_path):
    """A 2025-11-25 client gets, first on each POST stream, a priming event: an event id, empty
    data, and the `retry` interval (what the conformance scenario server-sse-polling looks for
    with its older protocol header)."""
    import httpx2

    root = make_project(tmp_path / "proj", {"every": everything_server()})
    headers = {"Accept": "application/json, text/event-stream",
               "Content-Type": "application/json"}
    with ServeHttp(root) as server, httpx2.Client(timeout=60) as http:
        r = http.post(server.url, headers=headers, json={
            "jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                       "clientInfo": {"name": "t", "version": "1"}}})
        first = _sse_events(r.text)
        headers |= {"mcp-session-id": r.headers["mcp-session-id"],
                    "mcp-protocol-version": "2025-11-25"}
        http.post(server.url, headers=headers,
                  json={"jsonrpc": "2.0", "method": "notifications/initialized"})
        r = http.post(server.url, headers=headers, json={
            "jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": "every__echo", "arguments": {"message": "hi"}}})
        second = _sse_events(r.text)
    for events in (first, second):
        assert events[0]["id"] and events[0].get("data", "") == "" and events[0]["retry"] == "1000"
        assert events[1]["id"] != events[0]["id"] and "result" in events[1]["data"]
    assert '"listChanged":true' in first[1]["data"].replace(" ", "")  # tools.listChanged over HTTP
    assert "Echo: hi" in second[1]["data"]
