"""The stdio transport of `statewright serve`, with a fast path for forwarded `tools/call`.

The SDK's `stdio_server` reads and writes through worker threads (one thread hop per line read,
two per line written). A proxy pays that on every forwarded call, so this transport reads and
writes the pipes with asyncio directly and splits lines inside the read callback. The hot
request -- a handshake-era `tools/call` of a forwarded tool with only `name` and `arguments` --
is handled right there by `Proxy.forward_now` (argument check, `authorize`, the request written
down the downstream's pipe; `record` and the reply happen in the downstream's read callback),
or, when the downstream is not directly reachable, in a task through `Proxy.forward_raw`. Both
are the governed path the SDK handler uses too. Everything else (initialize, tools/list,
statewright tools, 2026-era requests, anything unusual) is parsed with the SDK's own message
adapter and handed to the SDK server unchanged.

Like the SDK transport, it points fd 0 at /dev/null and fd 1 at stderr while serving, so stray
output of handlers or child processes can never corrupt the protocol stream.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import mcp_types as types
from mcp.shared.message import SessionMessage
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from ..names import HOOK_TOOL
from .early import ACKNOWLEDGED, SUBSCRIPTION_KEY, pipes_usable
from .rawstdio import MAX_LINE, TOO_LARGE, LineFeed, dump_line, session_streams

usable = pipes_usable  # the fast transport needs real pipes/sockets on fd 0 and 1


def invalid_message_error(line: bytes) -> dict[str, Any] | None:
    """The JSON-RPC error for a line that is not a valid message, when it deserves one: text
    that is not JSON is a parse error (-32700, id null); a request with a usable id whose shape
    is wrong (params that are not an object, a method that is not text, ...) is an invalid
    request (-32600) answered to that id. Anything else (a malformed notification or response)
    gets no answer, as JSON-RPC says."""
    try:
        obj = json.loads(line)
    except ValueError:
        return {"jsonrpc": "2.0", "id": None,
                "error": {"code": -32700, "message": "Parse error: the line is not JSON"}}
    if not isinstance(obj, dict) or "method" not in obj:
        return None
    rid = obj.get("id")
    if isinstance(rid, bool) or not isinstance(rid, int | str):
        return None
    return {"jsonrpc": "2.0", "id": rid,
            "error": {"code": -32600, "message": "Invalid request: a request needs a text "
                      "`method` and, if given, `params` that are an object"}}


#: the `_meta` key of a 2026-era request naming its protocol version
PROTOCOL_VERSION_KEY = "io.modelcontextprotocol/protocolVersion"


class FastStdio:
    def __init__(self, proxy: Any, prefeed: bytes = b"", drop_ids: set[Any] | None = None,
                 drop_acks: set[Any] | None = None) -> None:
        self.proxy = proxy
        # what the early lane read before the SDK was loaded, and the ids of the requests it
        # already answered (the SDK's answers to those are not written again)
        self.prefeed = prefeed
        self.drop_ids = drop_ids if drop_ids is not None else set()
        self.drop_acks = drop_acks if drop_acks is not None else set()
        self.era: str | None = None  # "legacy" once `initialize` passed; "modern" for 2026 requests
        self.ready = False  # legacy connection initialized: the fast path may answer
        self._writer: asyncio.StreamWriter | None = None
        self._tg: Any = None

    @asynccontextmanager
    async def streams(self) -> AsyncIterator[tuple[Any, Any]]:
        loop = asyncio.get_running_loop()
        in_fd, out_fd = os.dup(0), os.dup(1)
        saved_in, saved_out = os.dup(0), os.dup(1)
        devnull = os.open(os.devnull, os.O_RDONLY)
        os.dup2(devnull, 0)
        os.close(devnull)
        os.dup2(2, 1)  # stray prints go to stderr, never into the protocol stream
        reader_file = os.fdopen(in_fd, "rb", buffering=0)
        writer_file = os.fdopen(out_fd, "wb", buffering=0)
        feed = LineFeed(self._hot, limit=MAX_LINE)
        # what the early lane read comes first: queued before the pipe can deliver a new line
        # (none of it is hot: its hook calls were answered, and it has no forwarded tools)
        feed.feed(self.prefeed)
        r_transport, _ = await loop.connect_read_pipe(lambda: _FeedProtocol(feed), reader_file)
        feed.pause, feed.resume = r_transport.pause_reading, r_transport.resume_reading
        w_transport, w_protocol = await loop.connect_write_pipe(
            lambda: asyncio.streams.FlowControlMixin(loop=loop), writer_file)
        self._writer = asyncio.StreamWriter(w_transport, w_protocol, None, loop)
        read_send, read_recv, write_send, write_recv = session_streams()
        try:
            async with anyio.create_task_group() as tg:
                self._tg = tg
                tg.start_soon(self._read_loop, feed, read_send)
                tg.start_soon(self._write_loop, write_recv)
                yield read_recv, write_send
                tg.cancel_scope.cancel()
        finally:
            r_transport.close()
            w_transport.close()
            os.dup2(saved_in, 0)
            os.dup2(saved_out, 1)
            os.close(saved_in)
            os.close(saved_out)

    async def _write_line(self, data: bytes) -> None:
        w = self._writer
        if w is None or w.is_closing():
            return
        w.write(data)
        await w.drain()

    async def _write_loop(self, write_recv: Any) -> None:
        async with write_recv:
            async for sm in write_recv:
                if self.drop_ids:
                    rid = getattr(getattr(sm.message, "root", sm.message), "id", None)
                    if rid in self.drop_ids:
                        self.drop_ids.discard(rid)
                        continue  # answered by the early lane already
                body = sm.message.model_dump_json(by_alias=True, exclude_unset=True)
                if self.drop_acks and ACKNOWLEDGED in body and self._acked_early(body):
                    continue
                try:
                    await self._write_line(body.encode() + b"\n")
                except (ConnectionError, OSError):
                    return

    def _acked_early(self, body: str) -> bool:
        """Whether `body` is the SDK's acknowledgement of a subscription the early lane
        acknowledged already (dropped, once)."""
        msg = json.loads(body)
        sub = ((msg.get("params") or {}).get("_meta") or {}).get(SUBSCRIPTION_KEY)
        if msg.get("method") == ACKNOWLEDGED and sub in self.drop_acks:
            self.drop_acks.discard(sub)
            return True
        return False

    def _hot(self, line: bytes) -> bool:
        """Called for every line as it arrives: a fast-path request is answered from here (a
        live stdio downstream: admitted and sent without a task; otherwise in a task). False
        leaves the line to the SDK lane (`_read_loop`)."""
        fast = self._fast_request(line)
        if fast is None:
            return False
        if fast[2] is None:  # the hook tool: answered right here, from the runtime
            body: dict[str, Any] = {"content": [{"type": "text",
                                                 "text": self.proxy.hook_answer(fast[3])}],
                                    "isError": False}
            if fast[4] < 0:  # a 2026-era request: that era's result envelope
                body = {**body, "resultType": "complete", "_meta": self.proxy.server_meta()}
            self._reply(fast[0], body, keep_result_type=True)
            return True
        rid = fast[0]
        try:
            if not self.proxy.forward_now(fast[2], fast[1], fast[3], fast[4],
                                          lambda body: self._reply(rid, body), self._tg.start_soon):
                self._tg.start_soon(self._answer, *fast)
        except Exception as exc:
            self._reply(rid, None, exc)
        return True

    async def _read_loop(self, feed: LineFeed, read_send: Any) -> None:
        """The SDK lane: every line the fast path did not take, parsed by the SDK's adapter."""
        async with read_send:
            while True:
                line = await feed.get()
                if line is None:
                    return
                if line is TOO_LARGE:
                    await read_send.send(ValueError("message too large"))
                    continue
                if not line.strip():
                    continue
                try:
                    message = types.jsonrpc_message_adapter.validate_json(line, by_name=False)
                except Exception as exc:
                    answer = invalid_message_error(line)
                    if answer is None:
                        await read_send.send(exc)
                    else:
                        await self._write_line(dump_line(answer))
                    continue
                self._track_era(message)
                await read_send.send(SessionMessage(message))

    def _track_era(self, message: Any) -> None:
        inner = getattr(message, "root", message)
        method = getattr(inner, "method", None)
        if self.era is None and method is not None and hasattr(inner, "id"):
            params = getattr(inner, "params", None)
            meta = None
            if isinstance(params, dict):
                meta = params.get("_meta")
            self.era = "legacy" if method == "initialize" or not meta else "modern"
        if method == "notifications/initialized" and self.era == "legacy":
            self.ready = True

    def _fast_request(self, line: bytes) -> tuple[Any, str, Any, dict[str, Any], int] | None:
        """(id, tool name, route, arguments, line size) when this line is a plain handshake-era
        `tools/call` of a forwarded tool (or of the hook tool: route None); None to let the SDK
        handle it."""
        if b'"tools/call"' not in line or not (self.ready or self.era == "modern"):
            return None
        try:
            msg = json.loads(line)
        except ValueError:
            return None
        if (not isinstance(msg, dict) or msg.get("method") != "tools/call"
                or msg.get("jsonrpc") != "2.0"):
            return None
        rid = msg.get("id")
        params = msg.get("params")
        if not isinstance(rid, (int, str)) or isinstance(rid, bool) or not isinstance(params, dict):
            return None
        name, args = params.get("name"), params.get("arguments", {})
        if args is None:
            args = {}
        if not isinstance(name, str) or not isinstance(args, dict):
            return None
        if name == HOOK_TOOL:
            return self._hook_request(rid, params, args)
        if set(params) - {"name", "arguments"} or self.era != "legacy":
            return None  # _meta (progress tokens, ...) and extensions: the SDK path
        route = self.proxy.downstream.route(name)
        if route is None:
            return None
        return rid, name, route, args, len(line)

    def _hook_request(self, rid: Any, params: dict[str, Any], args: dict[str, Any]
                      ) -> tuple[Any, str, Any, dict[str, Any], int] | None:
        """A hook-tool call the fast path answers: in the connection's era, with nothing but
        `name`, `arguments` (and, in the 2026 era, the `_meta` envelope every request carries).
        The size slot says the era: -1 for 2026-era requests."""
        if not self.proxy.serve_hook_tool:
            return None
        extra = set(params) - {"name", "arguments"}
        if self.era == "legacy" and self.ready and not extra:
            return rid, HOOK_TOOL, None, args, 0
        meta = params.get("_meta")
        if (self.era == "modern" and extra == {"_meta"} and isinstance(meta, dict)
                and meta.get(PROTOCOL_VERSION_KEY) in MODERN_PROTOCOL_VERSIONS):
            return rid, HOOK_TOOL, None, args, -1
        return None

    async def _answer(self, rid: Any, name: str, route: Any, args: dict[str, Any],
                      size: int) -> None:
        try:
            body = await self.proxy.forward_raw(route, name, args, size_hint=size)
        except Exception as exc:
            self._reply(rid, None, exc)
            return
        self._reply(rid, body)

    def _reply(self, rid: Any, body: dict[str, Any] | None,
               exc: BaseException | None = None, keep_result_type: bool = False) -> None:
        """Write the JSON-RPC answer of a fast-path request (the transport buffers it)."""
        if body is not None:
            if not keep_result_type:
                body.pop("resultType", None)  # not part of handshake-era results
            out = {"jsonrpc": "2.0", "id": rid, "result": body}
        else:
            out = {"jsonrpc": "2.0", "id": rid,
                   "error": {"code": -32603, "message": f"statewright: {exc}"}}
        w = self._writer
        if w is None or w.is_closing():
            return
        try:
            w.write(dump_line(out))
        except (ConnectionError, OSError, RuntimeError):
            pass


class _FeedProtocol(asyncio.Protocol):
    def __init__(self, feed: LineFeed) -> None:
        self.feed = feed

    def data_received(self, data: bytes) -> None:
        self.feed.feed(data)

    def eof_received(self) -> bool:
        self.feed.feed_eof()
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        self.feed.feed_eof()


@asynccontextmanager
async def stdio_streams(proxy: Any, prefeed: bytes = b"", drop_ids: set[Any] | None = None,
                        drop_acks: set[Any] | None = None) -> AsyncIterator[tuple[Any, Any]]:
    """The fast transport when fd 0/1 are pipes or sockets, else the SDK's `stdio_server`."""
    if usable() and sys.platform != "win32":
        async with FastStdio(proxy, prefeed, drop_ids, drop_acks).streams() as s:
            yield s
    else:
        from mcp.server.stdio import stdio_server

        async with stdio_server() as s:
            yield s
