"""The early lane of `statewright serve` (statewright/proxy/early.py) answers the host's first
requests before the MCP SDK is loaded. Each of its answers must equal the SDK server's own: the
same requests are sent again once the SDK lane is live, and the results compared."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from statewright.proxy import early

from .harness import bin_path, clean_env, make_project, statewright

pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("proxy_early")]

META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {}}
DEBUG_WF = {"id": "dbg", "initial": "a", "meta": {"debug": True},
            "states": {"a": {"on": {"GO": "b"}}, "b": {"type": "final"}}}


class Raw:
    """`statewright serve` driven line by line (no SDK on our side)."""

    def __init__(self, project: Path) -> None:
        self.p = subprocess.Popen([bin_path("statewright"), "serve", "--project", str(project)],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  env=clean_env(STATEWRIGHT_SESSION="s"))
        self.lines: list[bytes] = []

    def send(self, msg: dict[str, Any]) -> None:
        assert self.p.stdin is not None
        self.p.stdin.write((json.dumps(msg) + "\n").encode())
        self.p.stdin.flush()

    def answer(self, rid: Any) -> tuple[bytes, dict[str, Any]]:
        assert self.p.stdout is not None
        for line in self.lines:
            if json.loads(line).get("id") == rid:
                return line, json.loads(line)
        while True:
            line = self.p.stdout.readline()
            assert line, f"serve closed before answering {rid!r}"
            self.lines.append(line)
            if json.loads(line).get("id") == rid:
                return line, json.loads(line)

    def close(self) -> list[bytes]:
        assert self.p.stdin is not None and self.p.stdout is not None
        self.p.stdin.close()
        rest = self.p.stdout.read().splitlines(keepends=True)
        self.p.wait(30)
        return self.lines + rest


def test_protocol_versions_agree_with_the_sdk() -> None:
    from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS

    assert tuple(early.MODERN_VERSIONS) == tuple(MODERN_PROTOCOL_VERSIONS)
    assert tuple(early.HANDSHAKE_VERSIONS) == tuple(HANDSHAKE_PROTOCOL_VERSIONS)


@pytest.mark.parametrize("debug_run", [False, True])
def test_2026_era_early_answers_equal_the_sdks(tmp_path: Path, debug_run: bool) -> None:
    root = make_project(tmp_path / "p", {}, {"dbg": DEBUG_WF})
    if debug_run:  # force_state is listed only for a running debug workflow
        statewright("start", "dbg", project=root, session="s")
    raw = Raw(root)
    try:
        raw.send({"jsonrpc": "2.0", "id": "d1", "method": "server/discover",
                  "params": {"_meta": META}})
        raw.send({"jsonrpc": "2.0", "id": "listen:0", "method": "subscriptions/listen",
                  "params": {"_meta": META, "notifications": {"toolsListChanged": True}}})
        raw.send({"jsonrpc": "2.0", "id": "l1", "method": "tools/list", "params": {"_meta": META}})
        early_discover, d1 = raw.answer("d1")
        early_list, l1 = raw.answer("l1")
        # a request only the SDK answers: once it is answered, the SDK lane is live
        raw.send({"jsonrpc": "2.0", "id": "g", "method": "tools/call", "params": {
            "name": "statewright_list_workflows", "arguments": {}, "_meta": META}})
        raw.answer("g")
        raw.send({"jsonrpc": "2.0", "id": "d2", "method": "server/discover",
                  "params": {"_meta": META}})
        raw.send({"jsonrpc": "2.0", "id": "l2", "method": "tools/list", "params": {"_meta": META}})
        sdk_discover, d2 = raw.answer("d2")
        sdk_list, l2 = raw.answer("l2")
    finally:
        lines = raw.close()
    assert d1["result"] == d2["result"] and l1["result"] == l2["result"]
    names = [t["name"] for t in l1["result"]["tools"]]
    assert ("statewright_force_state" in names) == debug_run
    # different bytes, same answers: the first came from the early lane, the second from the SDK
    assert early_discover != sdk_discover and early_list != sdk_list
    ids = [json.loads(x).get("id") for x in lines]
    assert ids.count("d1") == 1 and ids.count("l1") == 1  # the SDK's own answers were dropped
    # the subscription is acknowledged once (early; the SDK's own acknowledgement dropped), and
    # the stream stays open (the SDK owns it: closing stdin ends it with an error answer)
    acks = [json.loads(x) for x in lines
            if json.loads(x).get("method") == "notifications/subscriptions/acknowledged"]
    assert acks == [{"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged",
                     "params": {"_meta": {"io.modelcontextprotocol/subscriptionId": "listen:0"},
                                "notifications": {"toolsListChanged": True}}}]


def _legacy(raw: Raw) -> tuple[dict[str, Any], dict[str, Any]]:
    raw.send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"}}})
    _, init = raw.answer(1)
    raw.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    raw.send({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
    _, listed = raw.answer(2)
    return init, listed


def test_handshake_era_early_answers_equal_the_sdks(tmp_path: Path) -> None:
    root = make_project(tmp_path / "p", {}, {"dbg": DEBUG_WF})
    first = Raw(root)
    try:
        early_init, early_list = _legacy(first)
    finally:
        first.close()
    second = Raw(root)
    try:
        second.send({"jsonrpc": "2.0", "id": 0, "method": "ping"})  # the SDK lane answers
        second.answer(0)
        sdk_init, sdk_list = _legacy(second)
    finally:
        second.close()
    assert early_init["result"] == sdk_init["result"]
    assert early_init["result"]["protocolVersion"] == "2025-06-18"
    assert early_list["result"] == sdk_list["result"]


def test_with_downstream_servers_everything_waits_for_the_sdk(tmp_path: Path) -> None:
    """Downstream capabilities and tools are unknown before they start: no early answers."""
    from .harness import everything_server

    root = make_project(tmp_path / "p", {"every": everything_server()})
    raw = Raw(root)
    try:
        _init, listed = _legacy(raw)
    finally:
        raw.close()
    assert any(t["name"].startswith("every__") for t in listed["result"]["tools"])


def test_the_early_lane_answers_before_the_heavy_modules_load() -> None:
    """`statewright serve` on stdio answers its first requests from the early lane while the
    SDK loads in a thread: what the lane needs imports none of the slow standard modules (the
    SDK thread pays for them, off the host's path) nor the CLI's typer app."""
    code = ("import sys; import statewright.cli.fast, statewright.proxy, statewright.proxy.early,"
            " statewright.runtime; heavy = [m for m in ('typing', 'dataclasses', 'json', 're',"
            " 'hashlib', 'typer', 'mcp') if m in sys.modules]; print(heavy)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=60, check=True).stdout.strip()
    assert out == "[]", out
