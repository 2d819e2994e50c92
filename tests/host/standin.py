"""A scripted local stand-in of the Messages API, so the real Claude Code CLI runs offline.

The host sends its main conversation (requests that carry `tools`) here; the stand-in answers
each turn with the next scripted step: a tool call, or final text. It reads what the host sent
back (tool results, their `is_error`, hook context) so tests can assert what the model saw.
Requests without tools (titles, summaries) get a short text. Sub-agents are conversations of
their own: a script can be keyed by a marker that appears in the sub-agent's first prompt.

The step of a request is the number of assistant turns already in its messages, so a retried
request gets the same answer (no hidden counter).
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class ToolUse:
    name: str
    input: dict[str, Any]


@dataclass(frozen=True)
class Text:
    text: str


Step = ToolUse | Text


@dataclass
class ToolResult:
    tool_use_id: str
    name: str
    text: str
    is_error: bool


@dataclass
class Conversation:
    steps: list[Step]
    requests: list[dict[str, Any]] = field(default_factory=list)

    def results(self) -> list[ToolResult]:
        """The tool results of the latest request of this conversation, in order."""
        if not self.requests:
            return []
        names: dict[str, str] = {}
        out = []
        for msg in self.requests[-1].get("messages", []):
            content = msg.get("content")
            if not isinstance(content, list):
                continue
            for block in content:
                if block.get("type") == "tool_use":
                    names[block["id"]] = block["name"]
                elif block.get("type") == "tool_result":
                    out.append(ToolResult(block["tool_use_id"], names.get(block["tool_use_id"], ""),
                                          _text_of(block.get("content")),
                                          bool(block.get("is_error"))))
        return out

    def texts(self) -> list[str]:
        """Every text the host sent besides the model's own turns: prompts, tool results, hook
        context and reminders (the host sends hook context as `system` messages)."""
        out = []
        for req in self.requests[-1:]:
            for msg in req.get("messages", []):
                if msg.get("role") == "assistant":
                    continue
                content = msg.get("content")
                if isinstance(content, str):
                    out.append(content)
                elif isinstance(content, list):
                    out.extend(b.get("text", "") for b in content if b.get("type") == "text")
                    out.extend(_text_of(b.get("content")) for b in content
                               if b.get("type") == "tool_result")
        return out


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(b.get("text", "") for b in content if isinstance(b, dict))
    return ""


def _first_user_text(body: dict[str, Any]) -> str:
    for msg in body.get("messages", []):
        if msg.get("role") == "user":
            return _text_of(msg.get("content")) if not isinstance(msg.get("content"), str) \
                else msg["content"]
    return ""


class StandIn:
    """`with StandIn({"": [steps...], "[[marker]]": [steps...]}) as api: api.url`"""

    def __init__(self, scripts: dict[str, list[Step]] | list[Step]) -> None:
        if isinstance(scripts, list):
            scripts = {"": scripts}
        self.conversations = {k: Conversation(list(v)) for k, v in scripts.items()}
        self.side_requests = 0
        #: `time.monotonic()` when the first request of a conversation arrived (the session
        #: has started: its agent is at work)
        self.first_request_at: float | None = None
        self._lock = threading.Lock()
        self._ids = 0
        standin = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                path = self.path.split("?")[0]
                if path.endswith("/count_tokens"):
                    self._json({"input_tokens": 100})
                elif path.endswith("/v1/messages"):
                    standin._answer(self, body)
                else:
                    self._json({"type": "error", "error": {"type": "not_found_error",
                                                           "message": path}}, 404)

            def _json(self, obj: Any, status: int = 200) -> None:
                data = json.dumps(obj).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    @property
    def main(self) -> Conversation:
        return self.conversations[""]

    def __enter__(self) -> StandIn:
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._server.shutdown()
        self._server.server_close()

    # -- answering ---------------------------------------------------------------------------
    def _conversation(self, body: dict[str, Any]) -> Conversation | None:
        if not body.get("tools"):
            return None
        first = _first_user_text(body)
        for marker, conv in self.conversations.items():
            if marker and marker in first:
                return conv
        return self.conversations.get("")

    def _answer(self, handler: Any, body: dict[str, Any]) -> None:
        with self._lock:
            conv = self._conversation(body)
            self._ids += 1
            msg_id = f"msg_{self._ids:04d}"
            if conv is None:
                self.side_requests += 1
                step: Step = Text("ok")
            else:
                if self.first_request_at is None:
                    self.first_request_at = time.monotonic()
                conv.requests.append(body)
                turn = sum(1 for m in body.get("messages", []) if m.get("role") == "assistant")
                step = conv.steps[turn] if turn < len(conv.steps) else Text("done")
        if isinstance(step, ToolUse):
            block = {"type": "tool_use", "id": f"toolu_{self._ids:04d}", "name": step.name,
                     "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(step.input)}
            stop = "tool_use"
        else:
            block = {"type": "text", "text": ""}
            delta = {"type": "text_delta", "text": step.text}
            stop = "end_turn"
        model = body.get("model", "claude-standin")
        usage = {"input_tokens": 10, "output_tokens": 5, "cache_creation_input_tokens": 0,
                 "cache_read_input_tokens": 0}
        if not body.get("stream"):
            content = dict(block)
            if isinstance(step, ToolUse):
                content["input"] = step.input
            else:
                content["text"] = step.text
            handler._json({"id": msg_id, "type": "message", "role": "assistant", "model": model,
                           "content": [content], "stop_reason": stop, "stop_sequence": None,
                           "usage": usage})
            return
        events = [
            ("message_start", {"type": "message_start", "message": {
                "id": msg_id, "type": "message", "role": "assistant", "model": model,
                "content": [], "stop_reason": None, "stop_sequence": None, "usage": usage}}),
            ("content_block_start", {"type": "content_block_start", "index": 0,
                                     "content_block": block}),
            ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}),
            ("content_block_stop", {"type": "content_block_stop", "index": 0}),
            ("message_delta", {"type": "message_delta",
                               "delta": {"stop_reason": stop, "stop_sequence": None},
                               "usage": {"output_tokens": 5}}),
            ("message_stop", {"type": "message_stop"}),
        ]
        data = b"".join(f"event: {name}\ndata: {json.dumps(obj)}\n\n".encode()
                        for name, obj in events)
        handler.send_response(200)
        handler.send_header("content-type", "text/event-stream")
        handler.send_header("content-length", str(len(data)))
        handler.end_headers()
        handler.wfile.write(data)
