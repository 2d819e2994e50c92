"""The stdio transport to a downstream server, with a direct lane for forwarded `tools/call`.

It is an MCP SDK transport (an async context manager yielding the read/write streams a
`Client` drives): the handshake, `tools/list`, notifications, pings and every other message go
through the SDK `Client` exactly as with the SDK's own `stdio_client`. On top of that,
`request()` sends a JSON-RPC request straight down the pipe and returns the raw response
object; the reader recognises the answer by its id and resolves it without handing it to the
SDK. That saves the SDK's per-message task hops and pydantic round trips on the hot path.

Direct-lane ids start at 1e9 (still inside int32), far from the SDK session's own counter, so
the two lanes never collide.

Process handling follows the SDK's: the server gets its own process group (so a kill reaches
its children), inherits our stderr, and on close gets its stdin closed, a grace period, then
SIGTERM and SIGKILL to the group.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
from contextlib import asynccontextmanager
from typing import Any, Callable

import anyio
import mcp_types as types
from mcp import MCPError
from mcp.client.stdio import get_default_environment
from mcp.shared.message import SessionMessage

_MAX_LINE = 64 * 1024 * 1024


def dump_line(obj: Any) -> bytes:
    """One JSON-RPC message as a UTF-8 line (lone surrogates, which UTF-8 cannot carry, are
    sent as JSON escapes)."""
    text = json.dumps(obj, ensure_ascii=False, separators=(",", ":"))
    try:
        return text.encode() + b"\n"
    except UnicodeEncodeError:
        return json.dumps(obj, separators=(",", ":")).encode() + b"\n"
_RAW_ID_BASE = 1_000_000_000
GRACE = 2.0  # seconds a server gets to exit after its stdin is closed (as the SDK)
KILL_WAIT = 2.0

try:  # the SDK's context-carrying streams, when present (they propagate contextvars)
    from mcp.shared._context_streams import create_context_streams as _streams
except Exception:  # noqa: BLE001  pragma: no cover
    _streams = None


class ConnectionLost(ConnectionError):
    """The server's pipes closed (it exited or was killed)."""


class RawStdio:
    """One downstream server process over stdio. Use as `Client(RawStdio(...))`."""

    def __init__(self, command: str, args: list[str], env: dict[str, str] | None = None,
                 cwd: str | None = None) -> None:
        self.command, self.args, self.env, self.cwd = command, list(args), env, cwd
        self.proc: asyncio.subprocess.Process | None = None
        self._pending: dict[int, Callable[[dict[str, Any] | None, BaseException | None], None]] = {}
        self._next_id = _RAW_ID_BASE
        self._lost: BaseException | None = None
        self._closing = False

    @property
    def alive(self) -> bool:
        return self.proc is not None and self._lost is None and not self._closing

    # ---- the SDK transport ----------------------------------------------------------------
    async def __aenter__(self) -> tuple[Any, Any]:
        self._cm = self._run()
        return await self._cm.__aenter__()

    async def __aexit__(self, *exc: Any) -> bool | None:
        return await self._cm.__aexit__(*exc)

    @asynccontextmanager
    async def _run(self) -> Any:
        env = get_default_environment() | (self.env or {})
        self.proc = proc = await asyncio.create_subprocess_exec(
            self.command, *self.args, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            stderr=None, env=env, cwd=self.cwd, start_new_session=sys.platform != "win32",
            limit=_MAX_LINE)
        if _streams is not None:
            read_send, read_recv = _streams[SessionMessage | Exception](0)
            write_send, write_recv = _streams[SessionMessage](0)
        else:  # pragma: no cover
            read_send, read_recv = anyio.create_memory_object_stream[SessionMessage | Exception](0)
            write_send, write_recv = anyio.create_memory_object_stream[SessionMessage](0)
        try:
            async with anyio.create_task_group() as tg:
                tg.start_soon(self._read_loop, proc.stdout, read_send)
                tg.start_soon(self._write_loop, write_recv)
                try:
                    yield read_recv, write_send
                finally:
                    self._closing = True
                    self._fail_pending(ConnectionLost("the connection is closing"))
                    with anyio.CancelScope(shield=True):
                        read_recv.close()
                        write_send.close()
                        await self._stop(proc)
                    tg.cancel_scope.cancel()
        finally:
            self._closing = True
            for s in (read_send, read_recv, write_send, write_recv):
                s.close()

    async def _read_loop(self, stdout: asyncio.StreamReader, read_send: Any) -> None:
        pending = self._pending
        try:
            while True:
                try:
                    line = await stdout.readuntil(b"\n")
                except asyncio.IncompleteReadError as exc:
                    line = exc.partial
                    if not line.strip():
                        break
                except asyncio.LimitOverrunError:
                    await stdout.read(_MAX_LINE)  # skip the oversized message
                    continue
                if self._closing:
                    continue  # drain: a server blocked on a full pipe could never exit
                try:
                    msg = json.loads(line)
                except ValueError:
                    msg = None
                if isinstance(msg, dict) and "method" not in msg:
                    waiter = pending.pop(msg.get("id"), None)  # type: ignore[arg-type]
                    if waiter is not None:
                        waiter(msg, None)
                        continue
                if not line.strip():
                    continue
                try:
                    item: Any = SessionMessage(types.jsonrpc_message_adapter.validate_json(line, by_name=False))
                except ValueError as exc:
                    item = exc
                try:
                    await read_send.send(item)
                except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                    pass  # the session is gone; keep draining
        except (ConnectionError, OSError) as exc:
            self._lost = exc
        finally:
            if self._lost is None:
                self._lost = ConnectionLost("the server closed its output (it exited)")
            self._fail_pending(self._lost)
            read_send.close()

    async def _write_loop(self, write_recv: Any) -> None:
        try:
            async for sm in write_recv:
                body = sm.message.model_dump_json(by_alias=True, exclude_unset=True)
                self._write((body + "\n").encode())
                await self.proc.stdin.drain()  # type: ignore[union-attr]
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, ConnectionError, OSError):
            pass

    def _write(self, data: bytes) -> None:
        stdin = self.proc.stdin if self.proc is not None else None
        if stdin is None or stdin.is_closing():
            raise ConnectionLost("the server's input is closed")
        stdin.write(data)

    def _fail_pending(self, exc: BaseException) -> None:
        waiters = list(self._pending.values())
        self._pending.clear()
        for waiter in waiters:
            waiter(None, exc)

    async def _stop(self, proc: asyncio.subprocess.Process) -> None:
        try:
            if proc.stdin is not None:
                proc.stdin.close()
        except Exception:  # noqa: BLE001
            pass
        if await _wait_exit(proc, GRACE):
            return
        for sig in (signal.SIGTERM, signal.SIGKILL):
            try:
                if sys.platform != "win32":
                    os.killpg(proc.pid, sig)
                else:  # pragma: no cover
                    proc.kill()
            except (ProcessLookupError, PermissionError):
                pass
            if await _wait_exit(proc, KILL_WAIT):
                return

    # ---- the direct lane ------------------------------------------------------------------
    def send(self, method: str, params: dict[str, Any],
             on_done: Callable[[dict[str, Any] | None, BaseException | None], None]) -> int:
        """Send one request now; `on_done(result, None)` or `on_done(None, error)` is called
        from the reader when it is answered (a JSON-RPC error answer gives `MCPError`, a dead
        connection `ConnectionLost`). Raises `ConnectionLost` when the connection is gone."""
        if self._lost is not None or self._closing or self.proc is None:
            raise ConnectionLost(str(self._lost or "the connection is closed"))
        rid = self._next_id
        self._next_id = rid + 1
        self._write(dump_line({"jsonrpc": "2.0", "id": rid, "method": method, "params": params}))
        self._pending[rid] = lambda msg, exc: _deliver(method, msg, exc, on_done)
        return rid

    async def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """`send` for a coroutine: the raw `result` object as it came on the wire."""
        fut: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()

        def done(result: dict[str, Any] | None, exc: BaseException | None) -> None:
            if fut.done():
                return
            if exc is not None:
                fut.set_exception(exc)
            else:
                fut.set_result(result)  # type: ignore[arg-type]

        rid = self.send(method, params, done)
        try:
            stdin = self.proc.stdin if self.proc is not None else None
            if stdin is not None and stdin.transport.get_write_buffer_size() > 65536:
                await stdin.drain()
            return await fut
        except asyncio.CancelledError:
            if self._pending.pop(rid, None) is not None:
                self._cancel_notice(rid)
            raise

    def _cancel_notice(self, rid: int) -> None:
        try:
            self._write(dump_line({"jsonrpc": "2.0", "method": "notifications/cancelled",
                                   "params": {"requestId": rid, "reason": "cancelled by the client"}}))
        except Exception:  # noqa: BLE001
            pass


def _deliver(method: str, msg: dict[str, Any] | None, exc: BaseException | None,
             on_done: Callable[[dict[str, Any] | None, BaseException | None], None]) -> None:
    if exc is None and msg is not None:
        if "result" in msg:
            result = msg["result"]
            if isinstance(result, dict):
                exc = None
                msg = result
            else:
                exc = MCPError(-32603, f"{method} answered with a non-object result")
        else:
            err = msg.get("error")
            if isinstance(err, dict):
                code = err.get("code")
                exc = MCPError(code if isinstance(code, int) else -32603, str(err.get("message", "error")),
                               err.get("data"))
            else:
                exc = MCPError(-32603, f"{method}: malformed answer")
    try:
        if exc is not None:
            on_done(None, exc)
        else:
            on_done(msg, None)
    except Exception as cb_exc:  # noqa: BLE001  a waiter's fault never stops the reader
        print(f"statewright: internal error handling a downstream answer: {cb_exc!r}",
              file=sys.stderr, flush=True)


async def _wait_exit(proc: asyncio.subprocess.Process, timeout: float) -> bool:
    with anyio.move_on_after(timeout):
        await proc.wait()
        return True
    return proc.returncode is not None
