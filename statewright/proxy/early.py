"""The first second of `statewright serve` on stdio: answering the host before the MCP SDK is
loaded (importing it takes about 1.3 s, and a host that waits for its servers at start waits for
that).

While a background thread imports the SDK, the main thread reads the pipe. The requests a host
sends first are answered here from the same data the SDK server answers from (`tools.py`):
`server/discover` (2026 era) or `initialize` (handshake era), the acknowledgement of a 2026-era
`subscriptions/listen` (the host waits for it before listing tools), `tools/list`, and calls of
the hook tool (Claude Code's `mcp_tool` hooks, which only need the runtime). Every line except
hook-tool calls is then replayed to the SDK server in order, so its connection state is exactly
what it would have been, and its own answers to requests already answered here (and its
acknowledgement of a subscription acknowledged here) are dropped.
A hook-tool call is answered once, here, and not replayed (it has effects: counters, records).

The lane is used only when the project has no downstream servers: their capabilities and tools
are unknown until they have started, so with downstreams everything waits for the SDK.
`tests/proxy/test_early.py` checks that each early answer equals the SDK's own.
"""

from __future__ import annotations

import os
import select
import stat
import threading

from ..lean import TYPE_CHECKING, dumps, loads
from ..names import HOOK_TOOL
from . import tools as own
from .hooktool import HookTool

if TYPE_CHECKING:
    from typing import Any

#: the protocol versions of the two eras, as the SDK's `mcp_types.version` lists them
#: (tests/proxy/test_early.py checks they agree)
MODERN_VERSIONS = ("2026-07-28",)
HANDSHAKE_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
SERVER_INFO_KEY = "io.modelcontextprotocol/serverInfo"
SUBSCRIPTION_KEY = "io.modelcontextprotocol/subscriptionId"
ACKNOWLEDGED = "notifications/subscriptions/acknowledged"
SERVER_NAME = "statewright"
#: the capabilities the SDK server advertises for the proxy without downstream servers
CAPABILITIES: dict[str, Any] = {"tools": {"listChanged": True}}


def pipes_usable() -> bool:
    """fd 0 and 1 are pipes or sockets (what MCP clients give; a terminal is not)."""
    try:
        for fd in (0, 1):
            mode = os.fstat(fd).st_mode
            if not (stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)):
                return False
    except OSError:
        return False
    return True


class EarlyLane:
    """Answers what it can before the SDK is loaded; remembers what to replay and drop."""

    def __init__(self, rt: Any, session: str, hook_tool: HookTool) -> None:
        self.rt = rt
        self.session = session
        self.hook_tool = hook_tool
        self.era: str | None = None
        self.replay = bytearray()  # lines for the SDK server, in order
        self.drop_ids: set[Any] = set()  # requests answered here that the SDK will answer too
        self.answered = False  # a tools/list or hook call was answered here
        self.acked: set[Any] = set()  # subscriptions/listen acknowledged here (the SDK's own
        #                               acknowledgement of the replayed request is dropped)
        self.version = own.server_version()

    # -- the wire ----------------------------------------------------------------------------
    def take(self, line: bytes) -> bytes | None:
        """One line from the host: the answer to write now, or None."""
        answer, replay = self._answer(line)
        if replay:
            self.replay += line if line.endswith(b"\n") else line + b"\n"
        return answer

    def _answer(self, line: bytes) -> tuple[bytes | None, bool]:
        try:
            msg = loads(line)
        except ValueError:
            return None, True
        if not isinstance(msg, dict) or not isinstance(msg.get("method"), str):
            return None, True
        rid, method, params = msg.get("id"), msg["method"], msg.get("params")
        params = params if isinstance(params, dict) else {}
        modern = self._is_modern(params)
        if self.era is None and "id" in msg:
            self.era = "modern" if modern and method != "initialize" else "legacy"
        if rid is None or isinstance(rid, bool) or not isinstance(rid, int | str) or \
                (modern != (self.era == "modern")):
            return None, True  # notifications, odd ids, the other era: the SDK answers
        result: dict[str, Any] | None = None
        if method == "subscriptions/listen" and modern:
            return self._acknowledge(rid, params.get("notifications")), True
        if method == "tools/call" and params.get("name") == HOOK_TOOL and \
                isinstance(params.get("arguments", {}), dict):
            self.answered = True
            text = self.hook_tool.answer(params.get("arguments") or {}, params.get("_meta"))
            result = {"content": [{"type": "text", "text": text}], "isError": False}
            return self._reply(rid, result), False
        if method == "server/discover" and modern:
            result = {"cacheScope": "private", "capabilities": CAPABILITIES,
                      "instructions": own.INSTRUCTIONS, "supportedVersions": list(MODERN_VERSIONS),
                      "ttlMs": 0}
        elif method == "initialize" and self.era == "legacy":
            asked = params.get("protocolVersion")
            result = {"capabilities": CAPABILITIES, "instructions": own.INSTRUCTIONS,
                      "protocolVersion": asked if asked in HANDSHAKE_VERSIONS
                      else HANDSHAKE_VERSIONS[-1],
                      "serverInfo": {"name": SERVER_NAME, "version": self.version}}
        elif method == "tools/list" and not params.get("cursor"):
            self.answered = True
            result = {"tools": [own.tool_dict(n) for n in self._listed()]}
            if modern:
                result.update(cacheScope="private", ttlMs=0)
        if result is None:
            return None, True
        self.drop_ids.add(rid)
        return self._reply(rid, result), True

    def _acknowledge(self, rid: Any, asked: Any) -> bytes | None:
        """The acknowledgement of a 2026-era `subscriptions/listen` (the host waits for it
        before it lists tools), when all it asks for is what this proxy sends: tool-list
        changes. The stream itself is the SDK server's, once loaded."""
        if not isinstance(asked, dict) or set(asked) != {"toolsListChanged"} or \
                asked["toolsListChanged"] is not True:
            return None
        self.acked.add(rid)
        note = {"jsonrpc": "2.0", "method": ACKNOWLEDGED,
                "params": {"_meta": {SUBSCRIPTION_KEY: rid},
                           "notifications": {"toolsListChanged": True}}}
        return dumps(note, separators=(",", ":")).encode() + b"\n"

    def _listed(self) -> list[str]:
        try:
            return own.listed_names(own.debug_listed(self.rt, self.session))
        except Exception:
            return own.listed_names(False)  # what the SDK lane lists when the store fails

    @staticmethod
    def _is_modern(params: dict[str, Any]) -> bool:
        meta = params.get("_meta")
        return isinstance(meta, dict) and meta.get(VERSION_KEY) in MODERN_VERSIONS

    def _reply(self, rid: Any, result: dict[str, Any]) -> bytes:
        if self.era == "modern":
            result = {**result, "resultType": "complete",
                      "_meta": {SERVER_INFO_KEY: {"name": SERVER_NAME, "version": self.version}}}
        body = {"jsonrpc": "2.0", "id": rid, "result": result}
        return dumps(body, separators=(",", ":")).encode() + b"\n"


def serve_early(lane: EarlyLane, loaded: threading.Event, fd_in: int = 0,
                fd_out: int = 1) -> None:
    """Read fd_in and answer through `lane` until `loaded` is set (the SDK is imported); the
    bytes of an unfinished line are left in `lane.replay` for the SDK lane to continue."""
    pending = b""
    while not loaded.is_set():
        ready, _, _ = select.select([fd_in], [], [], 0.02)
        if not ready:
            continue
        data = os.read(fd_in, 65536)
        if not data:
            break  # the host closed the pipe: the SDK lane sees the end too
        pending += data
        *lines, pending = pending.split(b"\n")
        for line in lines:
            if not line.strip():
                continue
            answer = lane.take(line)
            if answer:
                view = memoryview(answer)
                while view:
                    view = view[os.write(fd_out, view):]
    lane.replay += pending
