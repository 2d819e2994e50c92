"""The direct stdio lane (`statewright.proxy.rawstdio.RawStdio`) against a real subprocess that
speaks line-delimited JSON-RPC, and pipelined fast-path calls through a real `statewright serve`."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import threading

import anyio
import pytest
from mcp import Client, MCPError

from statewright.proxy.rawstdio import ConnectionLost, RawStdio

from .harness import bin_path, clean_env, everything_server, make_project

pytestmark = pytest.mark.xdist_group("proxy-raw")

# A tiny MCP server: enough of the protocol for the SDK Client (initialize, tools/list), plus
# tools/call answers that exercise the direct lane: echo, a JSON-RPC error, a non-object
# result, a notification before the answer, and exiting mid-call.
SERVER = textwrap.dedent('''
    import json, sys
    def out(m):
        sys.stdout.write(json.dumps(m) + "\\n"); sys.stdout.flush()
    for line in sys.stdin:
        m = json.loads(line)
        rid, method, p = m.get("id"), m.get("method"), m.get("params") or {}
        if rid is None:
            continue
        if method == "initialize":
            out({"jsonrpc": "2.0", "id": rid, "result": {"protocolVersion": p["protocolVersion"],
                 "capabilities": {"tools": {}}, "serverInfo": {"name": "t", "version": "1"}}})
        elif method == "tools/list":
            out({"jsonrpc": "2.0", "id": rid, "result": {"tools": [{"name": "echo", "inputSchema": {"type": "object"}}]}})
        elif method == "tools/call":
            name, args = p["name"], p.get("arguments") or {}
            if name == "boom":
                out({"jsonrpc": "2.0", "id": rid, "error": {"code": -32602, "message": "no such thing"}})
            elif name == "odd":
                out({"jsonrpc": "2.0", "id": rid, "result": [1, 2]})
            elif name == "nested":
                out({"jsonrpc": "2.0", "id": rid, "result": {"content": [], "structuredContent": {"method": "GET", "id": 1}}})
            elif name == "die":
                sys.exit(3)
            else:
                out({"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "hi"}})
                out({"jsonrpc": "2.0", "id": rid, "result": {"content": [{"type": "text", "text": "id=%s %s" % (rid, args.get("message"))}]}})
    ''')


def test_direct_lane_beside_the_sdk_client(tmp_path):
    script = tmp_path / "srv.py"
    script.write_text(SERVER)
    logged: list[object] = []

    async def main() -> None:
        raw = RawStdio(sys.executable, [str(script)])

        async def on_message(msg: object) -> None:
            logged.append(msg)

        async with Client(raw, mode="legacy", cache=None, message_handler=on_message) as client:
            # the SDK lane works (handshake and listing went through it)
            assert [t.name for t in (await client.list_tools()).tools] == ["echo"]
            # the direct lane: raw results, its own ids, concurrent calls resolved by id
            results: dict[int, dict] = {}

            async def one(i: int) -> None:
                results[i] = await raw.request("tools/call", {"name": "echo", "arguments": {"message": f"m{i}"}})

            async with anyio.create_task_group() as tg:
                for i in range(20):
                    tg.start_soon(one, i)
            for i, r in results.items():
                text = r["content"][0]["text"]
                assert text.endswith(f" m{i}") and int(text.split()[0][3:]) >= 1_000_000_000
            # a result that itself carries "method"/"id" keys is still this call's answer
            r = await raw.request("tools/call", {"name": "nested"})
            assert r["structuredContent"] == {"method": "GET", "id": 1}
            with pytest.raises(MCPError, match="no such thing"):
                await raw.request("tools/call", {"name": "boom"})
            with pytest.raises(MCPError, match="non-object"):
                await raw.request("tools/call", {"name": "odd"})
            # the SDK lane still works after the direct traffic
            assert (await client.list_tools()).tools[0].name == "echo"
            # a server that dies mid-call fails the waiting call, and every later one
            with pytest.raises(ConnectionLost):
                await raw.request("tools/call", {"name": "die"})
            with pytest.raises(ConnectionLost):
                await raw.request("tools/call", {"name": "echo"})
            assert not raw.alive
        assert raw.returncode == 3

    anyio.run(main)
    # server notifications still reach the SDK's message handler
    assert any("notifications/message" in repr(m) or "LoggingMessage" in repr(m) for m in logged)


def test_pipelined_fast_path_calls_through_the_proxy(tmp_path):
    """Many forwarded calls written at once on the proxy's stdin, without waiting: each is
    answered once, under its own id, with its own text."""
    make_project(tmp_path, {"every": everything_server()})
    init = [
        {"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": "list", "method": "tools/list", "params": {}},
    ]
    calls = [{"jsonrpc": "2.0", "id": n, "method": "tools/call",
              "params": {"name": "every__echo", "arguments": {"message": f"n{n}"}}} for n in range(40)]
    proc = subprocess.Popen([bin_path("statewright"), "serve", "--project", str(tmp_path)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            text=True, env=clean_env())
    answers: dict[object, list[dict]] = {}
    listed = threading.Event()
    done = threading.Event()

    def read() -> None:
        for line in proc.stdout:
            msg = json.loads(line)
            if msg.get("id") is not None:
                answers.setdefault(msg["id"], []).append(msg)
            if "list" in answers:
                listed.set()
            if all(n in answers for n in range(40)):
                break
        done.set()

    threading.Thread(target=read, daemon=True).start()
    try:
        proc.stdin.write("".join(json.dumps(m) + "\n" for m in init))
        proc.stdin.flush()
        assert listed.wait(60)
        proc.stdin.write("".join(json.dumps(m) + "\n" for m in calls))
        proc.stdin.flush()
        assert done.wait(60), sorted(map(str, answers))
    finally:
        proc.stdin.close()
        proc.wait(30)
    for n in range(40):
        assert len(answers[n]) == 1
        assert answers[n][0]["result"]["content"][0]["text"] == f"Echo: n{n}"
