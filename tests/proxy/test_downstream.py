"""The downstream manager against real MCP servers (no runtime involved)."""

from __future__ import annotations

import io
import os
import signal
import socket
import subprocess
import time
from pathlib import Path

import anyio
import pytest
from conftest import clean_env

from statewright.errors import StatewrightError
from statewright.proxy.downstream import (
    DownstreamError,
    DownstreamManager,
    Route,
    forwarded_name,
    parse_servers,
)

from .harness import EVERYTHING_JS, NODE, everything_server, fs_server, git_server

pytestmark = pytest.mark.e2e


# -- config ----------------------------------------------------------------------------------

def test_parse_servers_shapes_and_expansion(tmp_path):
    specs = parse_servers({
        "fs": {"command": "node", "args": ["${HOME}/x", "${NOPE:-fallback}"], "env": {"A": "${ZZ}"}},
        "remote": {"type": "http", "url": "http://127.0.0.1:1/mcp", "headers": {"Authorization": "Bearer ${TOKEN}"}},
        "rel": {"command": "srv", "cwd": "sub"},
    }, environ={"HOME": "/h", "ZZ": "zz", "TOKEN": "t0k"}, root=str(tmp_path))
    fs, remote, rel = specs
    assert (fs.kind, fs.command, fs.args, fs.env) == ("stdio", "node", ("/h/x", "fallback"), {"A": "zz"})
    assert (remote.kind, remote.url, remote.headers) == ("http", "http://127.0.0.1:1/mcp",
                                                         {"Authorization": "Bearer t0k"})
    assert rel.cwd == str(tmp_path / "sub")


def test_parse_servers_reports_every_problem_with_its_pointer():
    with pytest.raises(StatewrightError) as ei:
        parse_servers({
            "a": {"args": ["x"]},
            "b": {"command": "x", "args": "not-a-list"},
            "c": {"type": "http"},
            "bad name": {"command": "x"},
            "statewright": {"command": "x"},
            "d": {"command": "x", "env": {"K": 1}},
        })
    msg = ei.value.message
    assert ei.value.code == "INVALID_ARGUMENTS"
    for ptr in ("/mcpServers/a:", "/mcpServers/b/args", "/mcpServers/c/url", "/mcpServers/bad name",
                "/mcpServers/statewright:", "/mcpServers/d/env"):
        assert ptr in msg, (ptr, msg)


def test_forwarded_names_are_legal_unique_and_bounded():
    assert forwarded_name("github", "create_issue") == "github__create_issue"
    odd = forwarded_name("srv", "do thing/now")
    assert odd == "srv__do_thing_now"
    long_a = forwarded_name("s" * 60, "t" * 100)
    long_b = forwarded_name("s" * 60, "t" * 99 + "u")
    assert len(long_a) == len(long_b) == 128 and long_a != long_b
    assert forwarded_name("s" * 60, "t" * 100) == long_a  # stable
    taken = {"srv__do_thing_now"}
    clash = forwarded_name("srv", "do thing now", taken)
    assert clash not in taken and len(clash) <= 128


# -- real servers ----------------------------------------------------------------------------

def _pid_of(needle: str) -> int:
    me = os.getpid()
    for task in os.listdir(f"/proc/{me}/task"):
        for pid in open(f"/proc/{me}/task/{task}/children").read().split():
            if needle in open(f"/proc/{pid}/cmdline").read():
                return int(pid)
    raise AssertionError(f"no child process running {needle}")


def test_parallel_start_forwarding_crash_and_restart(tmp_path):
    (tmp_path / "hello.txt").write_text("hello\n")
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    specs = parse_servers({
        "fs": fs_server(tmp_path), "every": everything_server(), "git": git_server(tmp_path),
        "broken": {"command": str(tmp_path / "no-such-server")},
    })
    log = io.StringIO()

    async def main() -> None:
        m = DownstreamManager(specs, connect_timeout=30, errlog=log)
        async with anyio.create_task_group() as tg:
            await m.run(tg)
            await m.wait_ready()
            status = m.status()
            assert {n: s["status"] for n, s in status.items()} == {
                "fs": "up", "every": "up", "git": "up", "broken": "failed"}
            assert "no-such-server" in status["broken"]["error"]
            names = {t.name for t, _ in m.tools()}
            assert {"fs__read_text_file", "every__echo", "git__git_status"} <= names
            route = m.route("every__echo")
            assert route.workflow_name == "mcp__every__echo"
            # the schema is forwarded unchanged
            tool = next(t for t, _ in m.tools() if t.name == "every__echo")
            assert tool.input_schema["properties"]["message"]["type"] == "string"

            r = await m.call(route, {"message": "hi"})
            assert r["content"][0]["text"] == "Echo: hi"
            r = await m.call(m.route("fs__read_text_file"), {"path": str(tmp_path / "hello.txt")})
            assert r["content"][0]["text"] == "hello\n"

            os.kill(_pid_of("server-everything"), signal.SIGKILL)
            with pytest.raises(DownstreamError, match="every"):
                for _ in range(50):  # the first call after the kill finds the pipe closed
                    await m.call(route, {"message": "x"})
                    await anyio.sleep(0.05)
            assert m.status()["every"]["status"] == "down"
            # the others keep working meanwhile
            r = await m.call(m.route("git__git_status"), {"repo_path": str(tmp_path)})
            assert not r.get("isError")
            # the next call restarts it
            r = await m.call(route, {"message": "back"})
            assert r["content"][0]["text"] == "Echo: back"
            assert m.status()["every"] == {**m.status()["every"], "status": "up", "restarts": 1}

            with pytest.raises(DownstreamError, match="broken"):
                await m.call(Route("broken", "anything", "mcp__broken__anything"), {})
            await m.stop()
            tg.cancel_scope.cancel()

    anyio.run(main)
    assert "'broken' could not start" in log.getvalue()
    assert "restarting downstream server 'every'" in log.getvalue()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_http_downstream_with_headers(tmp_path):
    port = _free_port()
    proc = subprocess.Popen([NODE, str(EVERYTHING_JS), "streamableHttp"], env={**os.environ, "PORT": str(port)},
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                time.sleep(0.05)
        specs = parse_servers({"web": {"type": "http", "url": f"http://127.0.0.1:{port}/mcp",
                                       "headers": {"X-Test": "1"}}})

        async def main() -> None:
            m = DownstreamManager(specs, connect_timeout=30, errlog=io.StringIO())
            async with anyio.create_task_group() as tg:
                await m.run(tg)
                await m.wait_ready()
                assert m.status()["web"]["status"] == "up", m.status()
                r = await m.call(m.route("web__echo"), {"message": "over http"})
                assert r["content"][0]["text"] == "Echo: over http"
                await m.stop()
                tg.cancel_scope.cancel()

        anyio.run(main)
    finally:
        proc.terminate()
        proc.wait(10)


def test_stdio_servers_run_under_the_kernel_sandbox(tmp_path: Path) -> None:
    """The proxy starts each stdio server through the launcher (DESIGN section 4): the real
    filesystem server works, in its own PID namespace, with no capability and no new
    privileges, and never holds a store's credentials."""
    from tests.proxy.harness import (
        ProxyClient,
        _children,
        cmdline,
        make_project,
        statewright,
        text_of,
    )
    from tests.proxy.workflows import SIMPLE

    root = tmp_path / "proj"
    make_project(root, {"fs": fs_server(root)}, {"simple": SIMPLE})
    (root / "notes.txt").write_text("hello\n")
    secret = "s3cr3t-" + os.urandom(4).hex()
    statewright("start", "simple", project=root)
    # (a shared store's address may carry its password: never inside a sandbox)
    env = clean_env(STATEWRIGHT_SESSION="default", PGPASSWORD=secret)
    with ProxyClient(root, env=env) as client:
        assert "hello" in text_of(client.call("fs__read_text_file",
                                              {"path": str(root / "notes.txt")}))
        todo, found = [client.proxy_pid()], []
        while todo:
            pid = int(todo.pop())
            kids = _children(pid)
            todo += kids
            if "server-filesystem" in cmdline(pid) and "swbox" not in cmdline(pid):
                found.append(pid)
        assert found, "no filesystem server below the proxy"
        status = Path(f"/proc/{found[0]}/status").read_text()
        assert "NoNewPrivs:\t1" in status and "CapEff:\t0000000000000000" in status
        nspid = next(line for line in status.splitlines() if line.startswith("NSpid:"))
        assert len(nspid.split()) == 3, nspid  # (its own PID namespace: two ids)
        environ = Path(f"/proc/{found[0]}/environ").read_bytes()
        assert secret.encode() not in environ
