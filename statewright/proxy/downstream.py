"""Downstream MCP servers: parse `mcpServers`, connect to all of them in parallel, keep each
one's tool catalogue, forward calls, and restart a server that died on its next call.

Each server lives in its own long-running task (`Downstream._supervise`): the SDK's `Client`
is an async context manager built on task groups, so it must be entered and left by the same
task. A call that finds the connection broken marks the server `down` and gets a
`DownstreamError`; the next call asks the supervisor to reconnect and waits for it (bounded by
the connect timeout). A server that never starts is `failed`; it is reported in
`statewright_get_state` (`downstream`) and on stderr, never fatal for the proxy.
"""

from __future__ import annotations

import logging
import math
import os
import shutil
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import anyio
import mcp_types as types
from mcp import Client, MCPError

from .config import ServerSpec, forwarded_name, parse_servers, workflow_tool_name  # noqa: F401  (re-exported)
from .rawstdio import ConnectionLost, RawStdio

log = logging.getLogger("statewright.proxy")

DEFAULT_CONNECT_TIMEOUT = 30.0
RESTART_BACKOFF = 1.0  # seconds between two restart attempts of a server that keeps failing


def _http_client(headers: dict[str, str]) -> Any:
    """An HTTP client with the SDK transports' timeouts: 30 s, but 300 s to read, since a
    server may hold a response stream open."""
    import httpx2

    return httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30.0, read=300.0))


Progress = Callable[[float, float | None, str | None], None]
_PASSED_ON = (types.LoggingMessageNotification, types.ResourceListChangedNotification,
              types.PromptListChangedNotification)


class DownstreamError(Exception):
    """A forwarded call could not reach its server (it is down, failed, or broke mid-call)."""


# -- one downstream server -------------------------------------------------------------------

@dataclass
class DownstreamStatus:
    status: str  # connecting | up | down | failed | stopped
    tools: int
    error: str | None
    restarts: int
    protocol_version: str | None

    def to_dict(self) -> dict[str, Any]:
        return {"status": self.status, "tools": self.tools, "error": self.error,
                "restarts": self.restarts, "protocol_version": self.protocol_version}


class Downstream:
    """One server of `mcpServers` and its connection."""

    def __init__(self, spec: ServerSpec, *, connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
                 on_tools_changed: Callable[[], Awaitable[None]] | None = None,
                 on_notification: Callable[[str, Any], Awaitable[None]] | None = None,
                 errlog: Any = None) -> None:
        self.spec = spec
        # the server's notifications the clients should see (logging, resource and prompt
        # list changes): passed on by the proxy
        self.on_notification = on_notification
        self.name = spec.name
        self.connect_timeout = connect_timeout
        self.on_tools_changed = on_tools_changed
        self.errlog = errlog if errlog is not None else sys.stderr
        self.status = "connecting"
        self.error: str | None = None
        self.restarts = 0
        self._tools: list[types.Tool] = []  # last known catalogue (kept while the server is down)
        self.client: Client | None = None
        self.raw: RawStdio | None = None  # the stdio connection's direct lane (stdio servers)
        self.protocol_version: str | None = None
        self.capabilities: types.ServerCapabilities | None = None  # of the current connection
        self._want_up = anyio.Event()  # set: the supervisor should (re)connect
        self._drop = anyio.Event()  # set: the current connection is to be closed
        self._settled = anyio.Event()  # set when the current connect attempt is up or failed
        self._last_attempt = 0.0
        self._stopping = False
        self._refresh_pending = False
        self.withheld: frozenset[str] = frozenset()  # environment variables not passed on
        # the kernel sandbox's argv prefix for a stdio server, given `withheld` (None: none)
        self.launcher: Callable[[frozenset[str]], list[str] | None] | None = None

    catalogue_epoch = 0  # bumped whenever any server's catalogue is replaced (routing cache key)

    @property
    def tools(self) -> list[types.Tool]:
        return self._tools

    @tools.setter
    def tools(self, value: list[types.Tool]) -> None:
        self._tools = value
        Downstream.catalogue_epoch += 1

    # ---- lifecycle ------------------------------------------------------------------------
    def _transport(self) -> Any:
        s = self.spec
        self.raw = None
        if s.kind == "http":
            from mcp.client.streamable_http import streamable_http_client
            return streamable_http_client(s.url or "", http_client=_http_client(s.headers))
        # The SDK's default environment is minimal (HOME, PATH, ...): pass ours explicitly,
        # with the server's own `env` on top, as Claude Code does.
        # Variables a workflow blocks are withheld (DESIGN section 4, check 6: downstream
        # servers start without them); a variable the config gives the server itself stays.
        withheld = self.withheld
        env = {**{k: v for k, v in os.environ.items() if k not in withheld}, **s.env}
        # (under the kernel sandbox where the machine has one: DESIGN section 4; a command that
        # is not there is started as it is, to fail with its own error: nothing runs)
        command, args = s.command or "", list(s.args)
        there = os.path.exists(os.path.join(s.cwd or os.getcwd(), command)) if "/" in command \
            else shutil.which(command, path=env.get("PATH")) is not None
        prefix = self.launcher(withheld) if self.launcher is not None and there else None
        if prefix:
            command, args = prefix[0], [*prefix[1:], command, *args]
        self.raw = RawStdio(command, args, env=env, cwd=s.cwd)
        return self.raw

    # the parameter is named as in the SDK's MessageHandlerFnT protocol, which mypy checks
    async def _on_message(self, message: Any) -> None:
        if isinstance(message, types.ServerNotification):
            inner = getattr(message, "root", message)
            if isinstance(inner, types.ToolListChangedNotification):
                self._refresh_pending = True
                self._drop_event_for_refresh()
            elif self.on_notification is not None and isinstance(inner, _PASSED_ON):
                await self.on_notification(self.name, inner)

    def _drop_event_for_refresh(self) -> None:
        # The refresh happens in the supervisor task (it owns the client); wake it.
        self._drop.set()

    async def supervise(self) -> None:
        """Run for the life of the proxy: connect, wait until told the connection is bad,
        reconnect when a call asks for it."""
        self._want_up.set()
        while not self._stopping:
            await self._want_up.wait()
            if self._stopping:
                break
            self._want_up = anyio.Event()
            settled = self._settled  # this attempt's event (a caller may already wait on it)
            try:
                await self._connect_and_hold(settled)
            finally:
                settled.set()

    async def _connect_and_hold(self, settled: anyio.Event) -> None:
        self._last_attempt = time.monotonic()
        self.status = "connecting"
        connected = False
        # The deadline covers spawn + initialize + tools/list only; it is lifted once connected.
        # (The Client opens task groups, so it must live inside one scope for its whole life.)
        scope = anyio.CancelScope(deadline=anyio.current_time() + self.connect_timeout)
        try:
            with scope:
                async with Client(self._transport(), mode="legacy", cache=None,
                                  message_handler=self._on_message) as client:
                    self.tools = await self._list_all(client)
                    scope.deadline = math.inf
                    connected = True
                    self.client = client
                    self.protocol_version = client.protocol_version
                    self.capabilities = client.server_capabilities
                    self.status, self.error = "up", None
                    self._drop = anyio.Event()
                    settled.set()
                    if self.restarts and self.on_tools_changed:
                        await self.on_tools_changed()
                    await self._hold(client)
        except Exception as exc:
            if connected:
                self._mark_down(exc)
            else:
                self._fail(exc, "could not start")
        finally:
            self.client = None
        if not connected and scope.cancelled_caught and self.status != "failed":
            self._fail(TimeoutError(), f"did not start within {self.connect_timeout:g}s")
        elif self.status == "up":
            self.status = "stopped" if self._stopping else "down"

    async def _hold(self, client: Client) -> None:
        """Keep the connection until a call finds it broken, or the downstream's tool list
        changed (refresh it here: this task owns the client)."""
        while True:
            await self._drop.wait()
            self._drop = anyio.Event()
            if self._refresh_pending and self.status == "up" and not self._stopping:
                self._refresh_pending = False
                try:
                    self.tools = await self._list_all(client)
                except Exception as exc:
                    self._mark_down(exc)
                    return
                if self.on_tools_changed:
                    await self.on_tools_changed()
                continue
            return

    async def _list_all(self, client: Client) -> list[types.Tool]:
        caps = client.server_capabilities
        if caps is not None and caps.tools is None:
            return []  # a server of resources or prompts only
        tools: list[types.Tool] = []
        cursor: str | None = None
        for _ in range(100):
            page = await client.session.list_tools(
                params=types.PaginatedRequestParams(cursor=cursor))
            tools.extend(page.tools)
            cursor = page.next_cursor
            if not cursor:
                break
        return tools

    def _fail(self, exc: BaseException, what: str) -> None:
        self.status = "failed"
        self.error = f"{what}: {describe(exc)}"
        print(f"statewright: downstream server '{self.name}' {self.error}",
              file=self.errlog, flush=True)

    def _mark_down(self, exc: BaseException) -> None:
        if self.status == "up":
            self.status = "down"
            self.error = f"connection lost: {describe(exc)}"
            print(f"statewright: downstream server '{self.name}' {self.error}; "
                  "it will be restarted on its next call", file=self.errlog, flush=True)
        self._drop.set()

    async def stop(self) -> None:
        self._stopping = True
        self._drop.set()
        self._want_up.set()

    # ---- calls ----------------------------------------------------------------------------
    async def ensure_up(self) -> Client:
        """The live client, restarting the server first if it went down or never started."""
        client = self.client
        if client is not None and self.status == "up":
            return client
        if self.status == "connecting":
            await self._wait_attempt()
        elif self.status in ("down", "failed") and not self._stopping:
            wait = RESTART_BACKOFF - (time.monotonic() - self._last_attempt)
            if wait > 0 and self.status == "failed":
                raise DownstreamError(f"server '{self.name}' is not running ({self.error}); "
                                      f"retry in {wait:.1f}s")
            self.restarts += 1
            print(f"statewright: restarting downstream server '{self.name}'",
                  file=self.errlog, flush=True)
            self._settled = anyio.Event()
            self.status = "connecting"
            self._want_up.set()
            await self._wait_attempt()
        if self.client is None or self.status != "up":
            raise DownstreamError(f"server '{self.name}' is not running "
                                  f"({self.error or self.status})")
        return self.client

    async def _wait_attempt(self) -> None:
        # connect timeout, plus the time the previous connection may need to close
        with anyio.move_on_after(self.connect_timeout + 6):
            await self._settled.wait()

    async def wait_ready(self) -> None:
        """Wait until the first connection attempt has finished (up or failed)."""
        if self.status != "connecting":
            return
        await self._wait_attempt()

    async def call(self, tool: str, arguments: dict[str, Any] | None,
                   timeout: float | None = None, progress: Progress | None = None
                   ) -> dict[str, Any]:
        """Call `tool` and return the raw `CallToolResult` object as it came on the wire
        (camelCase keys). The proxy passes it through unchanged, so it is not re-validated
        here: the agent's own client validates what it receives. With `progress`, the call
        asks the server for progress and reports each notification to it."""
        client = await self.ensure_up()
        raw = self.raw
        try:
            if raw is not None and timeout is None:
                # stdio: straight down the pipe, the raw answer back (no SDK hops, no pydantic)
                return await raw.request("tools/call", {"name": tool, "arguments": arguments or {}},
                                         progress)
            session = client.session
            if progress is not None:
                report = progress

                # (parameter names as in the SDK's ProgressFnT protocol, which mypy checks)
                async def on_progress(progress: float, total: float | None,
                                      message: str | None) -> None:
                    report(progress, total, message)

                result = await session.call_tool(tool, arguments, read_timeout_seconds=timeout,
                                                 progress_callback=on_progress)
                return result.model_dump(by_alias=True, exclude_none=True, mode="json")
            send_raw = getattr(getattr(session, "_dispatcher", None), "send_raw_request", None)
            if send_raw is not None and timeout is None:
                # the dispatcher's raw request: no pydantic round trip on the hot path
                raw_result = await send_raw("tools/call",
                                            {"name": tool, "arguments": arguments or {}})
                if not isinstance(raw_result, dict):
                    raise DownstreamError(f"server '{self.name}' answered tools/call "
                                          "with a non-object")
                return raw_result
            result = await session.call_tool(tool, arguments, read_timeout_seconds=timeout)
            return result.model_dump(by_alias=True, exclude_none=True, mode="json")
        except (MCPError, anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream,
                OSError) as exc:
            raise self._call_error(exc) from None

    def send_now(self, tool: str, arguments: dict[str, Any],
                 on_done: Callable[[dict[str, Any] | None, BaseException | None], None]) -> bool:
        """Send a call straight down a live stdio connection without waiting; `on_done(result,
        None)` or `on_done(None, error)` follows (errors as `call` raises them). False when
        that is not possible now (not up, not stdio): use `call`, which also restarts."""
        raw = self.raw
        if raw is None or self.client is None or self.status != "up" or not raw.alive:
            return False

        def done(result: dict[str, Any] | None, exc: BaseException | None) -> None:
            if exc is not None and isinstance(exc, (MCPError, OSError)):
                exc = self._call_error(exc)
            on_done(result, exc)

        try:
            raw.send("tools/call", {"name": tool, "arguments": arguments}, done)
        except ConnectionLost:
            return False
        return True

    def _call_error(self, exc: BaseException) -> BaseException:
        """A connection failure marks the server down and becomes a `DownstreamError`; a
        JSON-RPC error answer is returned as it is."""
        if isinstance(exc, MCPError):
            if not _is_connection_error(exc):
                return exc
            self._mark_down(exc)
            return DownstreamError(f"server '{self.name}' stopped answering ({exc.message}); "
                                   "it is being restarted, retry the call")
        self._mark_down(exc)
        return DownstreamError(f"server '{self.name}' stopped answering ({describe(exc)}); "
                               "it is being restarted, retry the call")

    def snapshot(self) -> DownstreamStatus:
        return DownstreamStatus(self.status, len(self.tools), self.error, self.restarts,
                                self.protocol_version)


def _is_connection_error(exc: MCPError) -> bool:
    msg = (exc.message or "").lower()
    return ((exc.code == -32000 and ("closed" in msg or "connection" in msg))
            or "connection closed" in msg)


def describe(exc: BaseException) -> str:
    """One line for an exception, unwrapping exception groups (the SDK raises them)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    if isinstance(exc, TimeoutError):
        return "timed out"
    text = str(exc).strip() or type(exc).__name__
    if isinstance(exc, FileNotFoundError):
        return f"command not found ({text})"
    return text.splitlines()[0][:300]


# -- all downstream servers ------------------------------------------------------------------

@dataclass(frozen=True)
class Route:
    server: str
    tool: str
    workflow_name: str  # mcp__<server>__<tool>: what authorize() sees


class DownstreamManager:
    """Every server of `mcpServers`: parallel start, routing table, status."""

    def __init__(self, specs: list[ServerSpec], *,
                 connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
                 on_tools_changed: Callable[[], Awaitable[None]] | None = None,
                 on_notification: Callable[[str, Any], Awaitable[None]] | None = None,
                 errlog: Any = None,
                 launcher: Callable[[frozenset[str]], list[str] | None] | None = None) -> None:
        self._on_tools_changed = on_tools_changed
        self.servers: dict[str, Downstream] = {
            s.name: Downstream(s, connect_timeout=connect_timeout, on_tools_changed=self._changed,
                               on_notification=on_notification, errlog=errlog) for s in specs}
        for d in self.servers.values():
            d.launcher = launcher
        self._routes: dict[str, Route] = {}
        self._tools: list[tuple[types.Tool, Route]] = []
        self._schemas: dict[str, dict[str, Any]] = {}
        self._generation = -1

    def withhold(self, names: frozenset[str]) -> None:
        """Start every stdio server without these environment variables from now on; a server
        already running with one of them is restarted (on its next call)."""
        for d in self.servers.values():
            new = names - d.withheld
            d.withheld = d.withheld | names
            if new & set(os.environ) and d.spec.kind != "http" and d.status == "up":
                d._drop.set()

    async def _changed(self) -> None:
        self._generation = -1
        if self._on_tools_changed:
            await self._on_tools_changed()

    async def run(self, task_group: anyio.abc.TaskGroup) -> None:
        """Start every supervisor in `task_group` (they connect in parallel)."""
        for d in self.servers.values():
            task_group.start_soon(d.supervise, name=f"downstream:{d.name}")

    async def wait_ready(self) -> None:
        async with anyio.create_task_group() as tg:
            for d in self.servers.values():
                tg.start_soon(d.wait_ready)

    async def stop(self) -> None:
        for d in self.servers.values():
            await d.stop()

    def _rebuild(self) -> None:
        gen = Downstream.catalogue_epoch
        if gen == self._generation:
            return
        routes: dict[str, Route] = {}
        tools: list[tuple[types.Tool, Route]] = []
        for d in self.servers.values():
            for t in d.tools:
                if t.name.startswith("statewright_"):
                    # `statewright_*` names are always allowed by the policy: a downstream tool
                    # must never borrow that privilege.
                    continue
                name = forwarded_name(d.name, t.name, routes.keys())
                route = Route(d.name, t.name, workflow_tool_name(d.name, t.name))
                routes[name] = route
                tools.append((t.model_copy(update={"name": name}), route))
        self._schemas = {t.name: t.input_schema for t, _ in tools}
        self._routes, self._tools, self._generation = routes, tools, gen

    def route(self, forwarded: str) -> Route | None:
        self._rebuild()
        return self._routes.get(forwarded)

    def tools(self) -> list[tuple[types.Tool, Route]]:
        """Every forwarded tool (renamed copy, route), in config order."""
        self._rebuild()
        return self._tools

    def tool_schema(self, forwarded: str) -> dict[str, Any] | None:
        self._rebuild()
        return self._schemas.get(forwarded)

    async def call(self, route: Route, arguments: dict[str, Any] | None,
                   timeout: float | None = None, progress: Progress | None = None
                   ) -> dict[str, Any]:
        return await self.servers[route.server].call(route.tool, arguments, timeout, progress)

    def send_now(self, route: Route, arguments: dict[str, Any],
                 on_done: Callable[[dict[str, Any] | None, BaseException | None], None]) -> bool:
        return self.servers[route.server].send_now(route.tool, arguments, on_done)

    def can_send_now(self, route: Route) -> bool:
        d = self.servers[route.server]
        return d.raw is not None and d.client is not None and d.status == "up" and d.raw.alive

    def status(self) -> dict[str, Any]:
        return {n: d.snapshot().to_dict() for n, d in self.servers.items()}
