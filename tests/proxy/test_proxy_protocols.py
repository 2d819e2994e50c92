"""Both protocol generations (handshake era and 2026-07-28), over stdio and streamable HTTP,
and the errors `statewright serve` gives for a bad configuration or a garbled stream."""

from __future__ import annotations

import json
import socket
import subprocess
import threading

import pytest
from mcp import Client

from .harness import (
    ProxyClient,
    bin_path,
    clean_env,
    everything_server,
    fs_server,
    make_project,
    payload,
    statewright,
    text_of,
)
from .workflows import SIMPLE

pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("proxy_protocols")]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def project(tmp_path):
    root = tmp_path / "proj"
    make_project(root, {"fs": fs_server(root), "every": everything_server()}, {"simple": SIMPLE})
    (root / "a.txt").write_text("a\n")
    return root


def _scenario(pc: ProxyClient, project) -> None:
    """load -> filtered list + notification; CLI transition -> notification; final -> all."""
    all_names = set(pc.tool_names())
    assert {"fs__write_file", "every__echo"} <= all_names
    n = pc.list_changed_count()
    r = pc.call("statewright_load_workflow", {"name": "simple"})
    assert not r.is_error, text_of(r)
    pc.wait_list_changed(n)
    names = set(pc.tool_names())
    assert "fs__read_text_file" in names and "fs__write_file" not in names and "every__echo" not in names
    r = pc.call("fs__write_file", {"path": str(project / "b.txt"), "content": "b\n"})
    assert r.is_error and "TOOL_DENIED" in text_of(r)
    n = pc.list_changed_count()
    statewright("transition", "NEXT", project=project)
    pc.wait_list_changed(n)
    assert "fs__write_file" in pc.tool_names()
    assert not pc.call("fs__write_file", {"path": str(project / "b.txt"), "content": "b\n"}).is_error
    n = pc.list_changed_count()
    r = pc.call("statewright_transition", {"event": "DONE"})
    assert payload(r)["status"] == "completed"
    pc.wait_list_changed(n)
    assert set(pc.tool_names()) == all_names


def test_modern_era_over_stdio(project):
    with ProxyClient(project, mode="auto") as pc:
        assert pc.client.protocol_version == "2026-07-28"
        assert pc.client.server_capabilities.tools.list_changed is True
        _scenario(pc, project)
        assert pc.listen_events and all(type(e).__name__ == "ToolsListChanged" for e in pc.listen_events)


def test_handshake_era_over_http_and_a_modern_client_alongside(project):
    port = _free_port()
    with ProxyClient(project, http=f"127.0.0.1:{port}", mode="legacy") as pc:
        assert pc.client.protocol_version in ("2025-11-25", "2025-06-18")
        # a second, 2026-era client on the same server sees the same governed list
        modern = Client(f"http://127.0.0.1:{port}/mcp", mode="auto", cache=None)
        with pc.portal.wrap_async_context_manager(modern) as m:
            assert m.protocol_version == "2026-07-28"
            _scenario(pc, project)
            tools = pc.portal.call(lambda: m.list_tools(cache_mode="bypass"))
            assert {t.name for t in tools.tools} == set(pc.tool_names())
            r = pc.portal.call(m.call_tool, "every__echo", {"message": "modern"})
            assert r.content[0].text.startswith("Echo: modern")


# -- configuration and stream errors ---------------------------------------------------------

def _serve(project, *args, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run([bin_path("statewright"), "serve", "--project", str(project), *args],
                          input=stdin, capture_output=True, text=True, env=clean_env(), timeout=60)


@pytest.mark.parametrize("config, expected", [
    ("{not json", "cannot read config"),
    (json.dumps({"mcpServers": {"fs": {"args": ["x"]}}}), "/mcpServers/fs"),
    (json.dumps({"mcpServers": {"statewright": {"command": "x"}}}), "reserved"),
    (json.dumps({"mcpServer": {}}), "/mcpServer"),
])
def test_bad_config_is_one_clear_line(tmp_path, config, expected):
    (tmp_path / "statewright.json").write_text(config)
    cp = _serve(tmp_path)
    assert cp.returncode == 2  # INVALID_ARGUMENTS: what it was given cannot be used
    assert expected in cp.stderr and "Traceback" not in cp.stderr
    assert len(cp.stderr.strip().splitlines()) == 1, cp.stderr
    assert cp.stdout == ""


def test_bad_http_address(tmp_path):
    cp = _serve(tmp_path, "--http", "nonsense")
    assert cp.returncode != 0 and "HOST:PORT" in cp.stderr and "Traceback" not in cp.stderr


def test_a_downstream_that_never_starts_is_reported_not_fatal(tmp_path):
    make_project(tmp_path, {"ghost": {"command": str(tmp_path / "missing-binary")},
                            "every": everything_server()})
    with ProxyClient(tmp_path) as pc:
        assert "every__echo" in pc.tool_names()
        data = payload(pc.call("statewright_get_state"))
        assert data["downstream"]["ghost"]["status"] == "failed"
        assert "missing-binary" in data["downstream"]["ghost"]["error"]
        assert data["downstream"]["every"]["status"] == "up"


def test_garbled_json_rpc_stream(tmp_path):
    """Raw lines on stdin: junk, wrong shapes and unknown methods get JSON-RPC errors or isError
    results (every request with an id gets an answer), and the server keeps answering the
    valid requests after them."""
    make_project(tmp_path, {})
    msgs = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        "this is not json",
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "statewright_get_state", "arguments": "oops"}},
        {"jsonrpc": "2.0", "id": 3, "method": "no/such/method", "params": {}},
        {"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"arguments": {}}},
        {"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "statewright_transition", "arguments": {"event": ["x"]}}},
        {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": "not an object"},
        {"jsonrpc": "2.0", "id": "eight", "method": 8, "params": {}},
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": "bad"},
        {"jsonrpc": "2.0", "id": 9, "method": "tools/list", "params": [1, 2]},
        {"jsonrpc": "2.0", "id": 6, "method": "tools/list", "params": {}},
    ]
    stdin = "".join((m if isinstance(m, str) else json.dumps(m)) + "\n" for m in msgs)
    proc = subprocess.Popen([bin_path("statewright"), "serve", "--project", str(tmp_path)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=clean_env())
    answers: dict[int | str, dict] = {}
    unaddressed: list[dict] = []
    done = threading.Event()
    expected = {m["id"] for m in msgs if isinstance(m, dict) and "id" in m}

    def read() -> None:  # answers come in any order (the first ones may come early)
        for line in proc.stdout:
            msg = json.loads(line)
            if "id" in msg and msg["id"] is not None:
                answers[msg["id"]] = msg
            elif "error" in msg:
                unaddressed.append(msg)
            if expected <= set(answers) and unaddressed:
                break
        done.set()

    t = threading.Thread(target=read, daemon=True)
    t.start()
    proc.stdin.write(stdin)
    proc.stdin.flush()
    assert done.wait(60), answers
    proc.stdin.close()
    proc.wait(30)
    assert "result" in answers[1]
    assert "error" in answers[2]  # arguments must be an object: invalid params
    assert answers[3]["error"]["code"] == -32601
    assert "error" in answers[4]
    r5 = answers[5]["result"]
    assert r5["isError"] is True and r5["structuredContent"]["error"]["code"] == "INVALID_ARGUMENTS"
    assert {t["name"] for t in answers[6]["result"]["tools"]} >= {"statewright_get_state"}
    # a request whose params are not an object, or whose method is not text, is an invalid
    # request answered to its id; the junk line is a parse error with no id
    for rid in (7, "eight", 9):
        assert answers[rid]["error"]["code"] in (-32600, -32602), answers[rid]
    assert [m["error"]["code"] for m in unaddressed] == [-32700], unaddressed
