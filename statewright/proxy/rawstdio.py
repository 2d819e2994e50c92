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
import collections
import json
import os
import signal
import subprocess
import sys
from collections.abc import Callable
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

import anyio
import mcp_types as types
from mcp import MCPError
from mcp.client.stdio import get_default_environment
from mcp.shared.message import SessionMessage

MAX_LINE = 64 * 1024 * 1024


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

def session_streams() -> tuple[Any, Any, Any, Any]:
    """The (read_send, read_recv, write_send, write_recv) memory streams an SDK session runs
    on (the SDK's stdio transport uses the same kind; ours carry no contextvars across)."""
    read_send, read_recv = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_send, write_recv = anyio.create_memory_object_stream[SessionMessage](0)
    return read_send, read_recv, write_send, write_recv


class ConnectionLost(ConnectionError):
    """The server's pipes closed (it exited or was killed)."""


TOO_LARGE = object()  # what `LineFeed.get` returns for a line over the size limit


class LineFeed:
    """Splits a byte stream into lines as the event loop delivers it. `hot(line)` sees each
    line at once, inside the pipe's callback (no task switch); a line it does not take (False)
    is queued for `get()`. Reading pauses while too many lines wait in the queue."""

    def __init__(self, hot: Callable[[bytes], bool], limit: int = MAX_LINE,
                 backlog: int = 32) -> None:
        self.hot = hot
        self.limit, self.backlog = limit, backlog
        self.pause: Callable[[], None] | None = None
        self.resume: Callable[[], None] | None = None
        self._buf = b""
        self._skipping = False
        self._queue: collections.deque[Any] = collections.deque()
        self._waiter: asyncio.Future[None] | None = None
        self._eof = False
        self._paused = False

    def feed(self, data: bytes) -> None:
        buf = self._buf + data if self._buf else data
        start = 0
        while True:
            nl = buf.find(b"\n", start)
            if nl < 0:
                break
            line, start = buf[start:nl + 1], nl + 1
            if self._skipping:  # the tail of an oversized line
                self._skipping = False
                continue
            self._line(line)
        self._buf = buf[start:] if start else buf
        if len(self._buf) > self.limit:
            self._buf = b""
            if not self._skipping:
                self._skipping = True
                self._push(TOO_LARGE)

    def _line(self, line: bytes) -> None:
        try:
            taken = self.hot(line)
        except Exception:
            taken = False
        if not taken:
            self._push(line)

    def feed_eof(self) -> None:
        if self._eof:
            return
        if self._buf.strip() and not self._skipping:
            self._line(self._buf)
        self._buf = b""
        self._eof = True
        self._wake()

    def _push(self, item: Any) -> None:
        self._queue.append(item)
        self._wake()
        if not self._paused and len(self._queue) > self.backlog and self.pause is not None:
            self._paused = True
            self.pause()

    def _wake(self) -> None:
        w = self._waiter
        if w is not None and not w.done():
            w.set_result(None)

    async def get(self) -> Any:
        """The next queued line (or `TOO_LARGE`); None at the end of the stream."""
        while not self._queue:
            if self._eof:
                return None
            self._waiter = asyncio.get_running_loop().create_future()
            try:
                await self._waiter
            finally:
                self._waiter = None
        item = self._queue.popleft()
        if self._paused and len(self._queue) <= self.backlog // 2 and self.resume is not None:
            self._paused = False
            self.resume()
        return item


class _ProcessProtocol(asyncio.streams.FlowControlMixin, asyncio.SubprocessProtocol):
    def __init__(self, owner: RawStdio) -> None:
        super().__init__()
        self.owner = owner
        self.exited = asyncio.Event()

    if TYPE_CHECKING:
        # CPython's FlowControlMixin has it (waits while the pipe is paused); typeshed leaves
        # out the mixin's private members
        async def _drain_helper(self) -> None: ...

    def pipe_data_received(self, fd: int, data: bytes) -> None:
        if fd == 1:
            self.owner.feed.feed(data)

    def pipe_connection_lost(self, fd: int, exc: Exception | None) -> None:
        if fd == 1:
            self.owner._eof(exc)
        elif fd == 0:
            self.connection_lost(exc)  # wake writers waiting for a drain

    def process_exited(self) -> None:
        self.exited.set()


class RawStdio:
    """One downstream server process over stdio. Use as `Client(RawStdio(...))`."""

    def __init__(self, command: str, args: list[str], env: dict[str, str] | None = None,
                 cwd: str | None = None) -> None:
        self.command, self.args, self.env, self.cwd = command, list(args), env, cwd
        self.transport: asyncio.SubprocessTransport | None = None
        self.returncode: int | None = None
        self.feed = LineFeed(self._hot)
        self._proto: _ProcessProtocol | None = None
        self._stdin: Any = None
        self._pending: dict[int, Callable[[dict[str, Any] | None, BaseException | None], None]] = {}
        # progress listeners of direct-lane requests, by progress token (= the request's id)
        self._progress: dict[int, Callable[[float, float | None, str | None], None]] = {}
        self._next_id = _RAW_ID_BASE
        self._lost: BaseException | None = None
        self._closing = False

    @property
    def alive(self) -> bool:
        return self._stdin is not None and self._lost is None and not self._closing

    @property
    def pid(self) -> int | None:
        return self.transport.get_pid() if self.transport is not None else None

    # ---- the SDK transport ----------------------------------------------------------------
    async def __aenter__(self) -> tuple[Any, Any]:
        self._cm = self._run()
        return await self._cm.__aenter__()

    async def __aexit__(self, *exc: Any) -> bool | None:
        return await self._cm.__aexit__(*exc)

    @asynccontextmanager
    async def _run(self) -> Any:
        loop = asyncio.get_running_loop()
        env = get_default_environment() | (self.env or {})
        transport, proto = await loop.subprocess_exec(
            lambda: _ProcessProtocol(self), self.command, *self.args, stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=None, env=env, cwd=self.cwd,
            start_new_session=sys.platform != "win32")
        self.transport, self._proto = transport, proto
        self._stdin = transport.get_pipe_transport(0)
        out = transport.get_pipe_transport(1)
        assert isinstance(out, asyncio.ReadTransport)  # stdout=PIPE: a read pipe, never None
        self.feed.pause, self.feed.resume = out.pause_reading, out.resume_reading
        read_send, read_recv, write_send, write_recv = session_streams()
        try:
            async with anyio.create_task_group() as tg:
                tg.start_soon(self._read_loop, read_send)
                tg.start_soon(self._write_loop, write_recv)
                try:
                    yield read_recv, write_send
                finally:
                    self._closing = True
                    self._fail_pending(ConnectionLost("the connection is closing"))
                    with anyio.CancelScope(shield=True):
                        read_recv.close()
                        write_send.close()
                        await self._stop(transport, proto)
                    tg.cancel_scope.cancel()
        finally:
            self._closing = True
            for s in (read_send, read_recv, write_send, write_recv):
                s.close()
            self.returncode = transport.get_returncode()
            transport.close()

    def _hot(self, line: bytes) -> bool:
        """An answer on the direct lane: resolve its waiter here, in the pipe callback."""
        if self._closing:
            return True  # drain: a server blocked on a full pipe could never exit
        if not self._pending:
            return False
        try:
            msg = json.loads(line)
        except ValueError:
            return False
        if not isinstance(msg, dict):
            return False
        if "method" in msg:
            return self._progress_note(msg) if self._progress else False
        rid = msg.get("id")
        waiter = self._pending.pop(rid, None) if isinstance(rid, int) else None
        if waiter is None:
            return False
        waiter(msg, None)
        return True

    def _progress_note(self, msg: dict[str, Any]) -> bool:
        """A `notifications/progress` for one of our direct-lane requests: tell its listener."""
        params = msg.get("params")
        if msg.get("method") != "notifications/progress" or not isinstance(params, dict):
            return False
        token = params.get("progressToken")
        listener = self._progress.get(token) if isinstance(token, int) else None
        progress = params.get("progress")
        if listener is None or not isinstance(progress, int | float):
            return False
        total, message = params.get("total"), params.get("message")
        try:
            listener(progress, total if isinstance(total, int | float) else None,
                     message if isinstance(message, str) else None)
        except Exception:
            pass
        return True

    def _eof(self, exc: BaseException | None) -> None:
        if self._lost is None:
            self._lost = ConnectionLost(f"the server closed its output ({exc or 'it exited'})")
        self._fail_pending(self._lost)
        self.feed.feed_eof()

    async def _read_loop(self, read_send: Any) -> None:
        """The SDK lane: every line the direct lane did not take."""
        try:
            while True:
                line = await self.feed.get()
                if line is None:
                    break
                if self._closing:
                    continue
                if line is TOO_LARGE:
                    item: Any = ValueError("a message from the server is too large")
                elif not line.strip():
                    continue
                else:
                    try:
                        item = SessionMessage(
                            types.jsonrpc_message_adapter.validate_json(line, by_name=False))
                    except ValueError as exc:
                        item = exc
                try:
                    await read_send.send(item)
                except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                    pass  # the session is gone; keep draining
        finally:
            read_send.close()

    async def _write_loop(self, write_recv: Any) -> None:
        try:
            async for sm in write_recv:
                body = sm.message.model_dump_json(by_alias=True, exclude_unset=True)
                self._write((body + "\n").encode())
                if self._proto is not None:
                    await self._proto._drain_helper()
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, ConnectionError, OSError):
            pass

    def _write(self, data: bytes) -> None:
        stdin = self._stdin
        if stdin is None or stdin.is_closing() or self._lost is not None:
            raise ConnectionLost(str(self._lost or "the server's input is closed"))
        stdin.write(data)

    def _fail_pending(self, exc: BaseException) -> None:
        waiters = list(self._pending.values())
        self._pending.clear()
        for waiter in waiters:
            waiter(None, exc)

    async def _stop(self, transport: asyncio.SubprocessTransport, proto: _ProcessProtocol) -> None:
        try:
            if self._stdin is not None:
                self._stdin.close()
        except Exception:
            pass
        if await _wait_exit(proto, GRACE):
            return
        pid = transport.get_pid()
        for sig in (signal.SIGTERM, signal.SIGKILL):
            try:
                if sys.platform != "win32":
                    os.killpg(pid, sig)
                else:  # pragma: no cover
                    transport.kill()
            except (ProcessLookupError, PermissionError):
                pass
            if await _wait_exit(proto, KILL_WAIT):
                return

    # ---- the direct lane ------------------------------------------------------------------
    def send(self, method: str, params: dict[str, Any],
             on_done: Callable[[dict[str, Any] | None, BaseException | None], None],
             progress: Callable[[float, float | None, str | None], None] | None = None) -> int:
        """Send one request now; `on_done(result, None)` or `on_done(None, error)` is called
        from the reader when it is answered (a JSON-RPC error answer gives `MCPError`, a dead
        connection `ConnectionLost`). Raises `ConnectionLost` when the connection is gone.
        With `progress`, the request asks for progress (its id is the token) and each
        `notifications/progress` for it calls `progress(progress, total, message)`."""
        if self._lost is not None or self._closing or self._stdin is None:
            raise ConnectionLost(str(self._lost or "the connection is closed"))
        rid = self._next_id
        self._next_id = rid + 1
        if progress is not None:
            meta = params.get("_meta")
            params = {**params, "_meta": {**(meta if isinstance(meta, dict) else {}),
                                          "progressToken": rid}}
        self._write(dump_line({"jsonrpc": "2.0", "id": rid, "method": method, "params": params}))
        if progress is None:
            self._pending[rid] = lambda msg, exc: _deliver(method, msg, exc, on_done)
        else:
            self._progress[rid] = progress

            def done(msg: dict[str, Any] | None, exc: BaseException | None) -> None:
                self._progress.pop(rid, None)
                _deliver(method, msg, exc, on_done)

            self._pending[rid] = done
        return rid

    async def request(self, method: str, params: dict[str, Any],
                      progress: Callable[[float, float | None, str | None], None] | None = None
                      ) -> dict[str, Any]:
        """`send` for a coroutine: the raw `result` object as it came on the wire."""
        fut: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()

        def done(result: dict[str, Any] | None, exc: BaseException | None) -> None:
            if fut.done():
                return
            if exc is not None:
                fut.set_exception(exc)
            else:
                fut.set_result(result)  # type: ignore[arg-type]

        rid = self.send(method, params, done, progress)
        try:
            stdin, proto = self._stdin, self._proto
            if stdin is not None and proto is not None and stdin.get_write_buffer_size() > 65536:
                await proto._drain_helper()
            return await fut
        except asyncio.CancelledError:
            self._progress.pop(rid, None)
            if self._pending.pop(rid, None) is not None:
                self._cancel_notice(rid)
            raise

    def _cancel_notice(self, rid: int) -> None:
        try:
            self._write(dump_line({"jsonrpc": "2.0", "method": "notifications/cancelled",
                                   "params": {"requestId": rid,
                                              "reason": "cancelled by the client"}}))
        except Exception:
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
                exc = MCPError(code if isinstance(code, int) else -32603,
                               str(err.get("message", "error")), err.get("data"))
            else:
                exc = MCPError(-32603, f"{method}: malformed answer")
    try:
        if exc is not None:
            on_done(None, exc)
        else:
            on_done(msg, None)
    except Exception as cb_exc:
        print(f"statewright: internal error handling a downstream answer: {cb_exc!r}",
              file=sys.stderr, flush=True)


async def _wait_exit(proto: _ProcessProtocol, timeout: float) -> bool:
    with anyio.move_on_after(timeout):
        await proto.exited.wait()
        return True
    return proto.exited.is_set()
