"""Scripted local stand-ins of three model APIs, so the real Codex, Gemini CLI and Copilot CLI
run offline: OpenAI's Responses API (Codex), the Gemini API (Gemini CLI) and OpenAI's Chat
Completions (Copilot CLI with its own provider, `COPILOT_OFFLINE`).

Each answers the host's main conversation turn by turn from a script of steps (a tool call or
final text: the `ToolUse` / `Text` of tests/host/standin.py), keeps every request, and reads
back what the host sent the model (tool results) so tests assert what the model really saw.
It also times the main conversation (`Conversation.timings`): when each request arrived and
when its answer was written, so a benchmark reads how long the host took over each tool call
between the model's answer calling it and the request carrying its result (`call_gaps`).
The step of a request is the number of model turns already in it, so a retried request gets
the same answer. A script may be keyed by a marker of a sub-agent's first prompt.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from host.standin import Outside, Step, Text, ToolUse

__all__ = ["ChatStandIn", "GeminiStandIn", "ResponsesStandIn", "Text", "ToolUse"]


class Conversation:
    def __init__(self, steps: list[Step]) -> None:
        self.steps = steps
        self.requests: list[dict[str, Any]] = []
        #: per request: [model turns in it, arrived, answered] (time.monotonic seconds)
        self.timings: list[list[float]] = []

    def call_gaps(self) -> list[float]:
        """Seconds the host took over each scripted tool call: from the answer calling it to
        the first request carrying one more model turn (a retried request is not counted)."""
        answered: dict[int, float] = {}
        arrived: dict[int, float] = {}
        for turns, at, done in self.timings:
            arrived.setdefault(int(turns), at)
            answered.setdefault(int(turns), done)
        return [arrived[t + 1] - answered[t] for t in sorted(answered)
                if t + 1 in arrived and t < len(self.steps) and isinstance(
                    self.steps[t].then if isinstance(self.steps[t], Outside) else self.steps[t],
                    ToolUse)]


class _StandIn:
    """The HTTP server, the scripts and the bookkeeping; subclasses speak one API."""

    def __init__(self, scripts: dict[str, list[Step]] | list[Step]) -> None:
        if isinstance(scripts, list):
            scripts = {"": scripts}
        self.conversations = {k: Conversation(list(v)) for k, v in scripts.items()}
        self.side_requests = 0
        self.all_requests: list[tuple[str, Any]] = []
        self.first_request_at: float | None = None
        self._lock = threading.Lock()
        self._local = threading.local()
        self._ids = 0
        standin = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                with standin._lock:
                    standin.all_requests.append((self.path, None))
                standin.get(self)

            def do_POST(self) -> None:
                timing = standin._local.timing = [-1.0, time.monotonic(), 0.0]
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length) or b"{}"
                try:
                    body = json.loads(raw)
                except ValueError:
                    body = {}
                with standin._lock:
                    standin.all_requests.append((self.path, body))
                standin.post(self, self.path, body)
                timing[2] = time.monotonic()

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    @property
    def main(self) -> Conversation:
        return self.conversations[""]

    def __enter__(self) -> _StandIn:
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._server.shutdown()
        self._server.server_close()

    def everything_sent(self) -> str:
        """All the host sent the stand-in, every request (to prove a secret never went)."""
        return json.dumps(self.all_requests)

    # -- helpers for subclasses ----------------------------------------------------------------
    def next_step(self, body: dict[str, Any], first_text: str, turns: int) -> Step | None:
        """The scripted step for a main-conversation request (None: a side request)."""
        with self._lock:
            self._ids += 1
            conv = None
            for marker, c in self.conversations.items():
                if marker and marker in first_text:
                    conv = c
                    break
            if conv is None:
                conv = self.conversations.get("")
            if conv is None:
                return None
            if self.first_request_at is None:
                self.first_request_at = time.monotonic()
            conv.requests.append(body)
            timing = getattr(self._local, "timing", None)
            if timing is not None:
                timing[0] = turns
                conv.timings.append(timing)
            step = conv.steps[turns] if turns < len(conv.steps) else Text("done")
        if isinstance(step, Outside):
            step.act()
            step = step.then
        return step

    def call_id(self) -> str:
        with self._lock:
            self._ids += 1
            return f"call_{self._ids:04d}"

    @staticmethod
    def send(handler: Any, status: int, ctype: str, data: bytes) -> None:
        handler.send_response(status)
        handler.send_header("content-type", ctype)
        handler.send_header("content-length", str(len(data)))
        handler.end_headers()
        handler.wfile.write(data)

    def send_json(self, handler: Any, obj: Any, status: int = 200) -> None:
        self.send(handler, status, "application/json", json.dumps(obj).encode())

    def get(self, handler: Any) -> None:
        self.send_json(handler, {"data": [], "object": "list"})

    def post(self, handler: Any, path: str, body: dict[str, Any]) -> None:  # pragma: no cover
        raise NotImplementedError


def _sse(events: list[Any], named: bool = False) -> bytes:
    out = []
    for ev in events:
        if named:
            out.append(f"event: {ev['type']}\ndata: {json.dumps(ev)}\n\n")
        else:
            out.append(f"data: {ev if isinstance(ev, str) else json.dumps(ev)}\n\n")
    return "".join(out).encode()


# -- Codex: the Responses API ----------------------------------------------------------------------

class ResponsesStandIn(_StandIn):
    """`POST /v1/responses` (streamed). A step `ToolUse(name, args)` is a `function_call`; for a
    freeform tool (Codex's `apply_patch` for the models it knows) pass `args={"input": text}`
    and the name of a tool the request lists as `custom`."""

    def post(self, handler: Any, path: str, body: dict[str, Any]) -> None:
        if not path.split("?")[0].endswith("/responses"):
            self.send_json(handler, {"error": {"message": f"no {path}"}}, 404)
            return
        items = body.get("input") or []
        turns = sum(1 for it in items if isinstance(it, dict) and (
            it.get("type") in ("function_call", "custom_tool_call", "local_shell_call")
            or (it.get("type") == "message" and it.get("role") == "assistant")))
        step = self.next_step(body, _responses_first_user_text(body), turns)
        rid = f"resp_{self.call_id()}"
        if step is None:
            step = Text("ok")
        if isinstance(step, ToolUse):
            custom = any(t.get("type") == "custom" and t.get("name") == step.name
                         for t in body.get("tools") or [] if isinstance(t, dict))
            cid = self.call_id()
            if custom:
                item = {"type": "custom_tool_call", "id": f"ctc_{cid}", "call_id": cid,
                        "name": step.name, "input": step.input.get("input", "")}
            else:
                namespace, _, name = step.name.rpartition(".")
                item = {"type": "function_call", "id": f"fc_{cid}", "call_id": cid,
                        "name": name, "arguments": json.dumps(step.input)}
                if namespace:  # a tool of a namespace (`collaboration.spawn_agent`)
                    item["namespace"] = namespace
        else:
            item = {"type": "message", "role": "assistant", "id": f"msg_{rid}",
                    "content": [{"type": "output_text", "text": step.text}]}
        usage = {"input_tokens": 10, "input_tokens_details": None, "output_tokens": 5,
                 "output_tokens_details": None, "total_tokens": 15}
        events = [
            {"type": "response.created", "response": {"id": rid}},
            {"type": "response.output_item.done", "item": item},
            {"type": "response.completed", "response": {"id": rid, "usage": usage}},
        ]
        self.send(handler, 200, "text/event-stream", _sse(events, named=True))

    def results(self, conv: Conversation | None = None) -> list[tuple[str, str]]:
        """(tool name, output text) of every tool result in the latest request."""
        conv = conv or self.main
        if not conv.requests:
            return []
        names: dict[str, str] = {}
        out = []
        for it in conv.requests[-1].get("input") or []:
            if not isinstance(it, dict):
                continue
            if it.get("type") in ("function_call", "custom_tool_call"):
                names[it.get("call_id", "")] = it.get("name", "")
            elif it.get("type") in ("function_call_output", "custom_tool_call_output"):
                output = it.get("output")
                if isinstance(output, dict):
                    output = output.get("content") or json.dumps(output)
                if isinstance(output, list):
                    output = "".join(p.get("text", "") for p in output if isinstance(p, dict))
                out.append((names.get(it.get("call_id", ""), ""), str(output)))
        return out


def _responses_first_user_text(body: dict[str, Any]) -> str:
    texts = []
    for it in body.get("input") or []:
        # (a sub-agent's task comes as an `agent_message`, its text as `encrypted_content`)
        if isinstance(it, dict) and (it.get("type") == "agent_message" or (
                it.get("type") == "message" and it.get("role") == "user")):
            content = it.get("content")
            if isinstance(content, str):
                texts.append(content)
            elif isinstance(content, list):
                texts += [c.get("text") or c.get("encrypted_content") or ""
                          for c in content if isinstance(c, dict)]
    return "\n".join(texts)


# -- Gemini CLI: the Gemini API ----------------------------------------------------------------------

class GeminiStandIn(_StandIn):
    """`POST /v1beta/models/{model}:streamGenerateContent?alt=sse` (and `:generateContent`,
    `:countTokens` for the host's side requests)."""

    def post(self, handler: Any, path: str, body: dict[str, Any]) -> None:
        p = path.split("?")[0]
        if p.endswith(":countTokens"):
            self.send_json(handler, {"totalTokens": 10})
            return
        main = bool(body.get("tools")) and (p.endswith(":streamGenerateContent")
                                            or p.endswith(":generateContent"))
        contents = body.get("contents") or []
        turns = sum(1 for c in contents if isinstance(c, dict) and c.get("role") == "model")
        step = self.next_step(body, _gemini_first_user_text(body), turns) if main else None
        if step is None:
            with self._lock:
                self.side_requests += 1
            # side requests (a next-speaker check, a summary): a JSON-shaped text answer
            step = Text('{"reasoning": "done", "next_speaker": "user"}')
        if isinstance(step, ToolUse):
            part: dict[str, Any] = {"functionCall": {"name": step.name, "args": step.input}}
        else:
            part = {"text": step.text}
        chunk = {"candidates": [{"content": {"role": "model", "parts": [part]},
                                 "finishReason": "STOP", "index": 0}],
                 "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5,
                                   "totalTokenCount": 15},
                 "modelVersion": "gemini-standin"}
        if p.endswith(":streamGenerateContent"):
            self.send(handler, 200, "text/event-stream", _sse([chunk]))
        else:
            self.send_json(handler, chunk)

    def results(self, conv: Conversation | None = None) -> list[tuple[str, str]]:
        """(tool name, response text) of every function response in the latest request."""
        conv = conv or self.main
        if not conv.requests:
            return []
        out = []
        for c in conv.requests[-1].get("contents") or []:
            for part in c.get("parts") or [] if isinstance(c, dict) else []:
                fr = part.get("functionResponse") if isinstance(part, dict) else None
                if isinstance(fr, dict):
                    resp = fr.get("response")
                    if isinstance(resp, dict) and isinstance(resp.get("output") or
                                                             resp.get("error"), str):
                        text = resp.get("output") or resp.get("error")
                    else:
                        text = json.dumps(resp) if not isinstance(resp, str) else resp
                    out.append((fr.get("name", ""), text))
        return out


def _gemini_first_user_text(body: dict[str, Any]) -> str:
    for c in body.get("contents") or []:
        if isinstance(c, dict) and c.get("role") == "user":
            return "\n".join(p.get("text", "") for p in c.get("parts") or []
                             if isinstance(p, dict))
    return ""


# -- Copilot CLI: Chat Completions ----------------------------------------------------------------

class ChatStandIn(_StandIn):
    """`POST /v1/chat/completions` (streamed, or not)."""

    def post(self, handler: Any, path: str, body: dict[str, Any]) -> None:
        p = path.split("?")[0]
        if not p.endswith("/chat/completions"):
            self.send_json(handler, {"error": {"message": f"no {path}"}}, 404)
            return
        messages = body.get("messages") or []
        turns = sum(1 for m in messages if isinstance(m, dict) and m.get("role") == "assistant")
        first = next((m.get("content") for m in messages
                      if isinstance(m, dict) and m.get("role") == "user"), "")
        if isinstance(first, list):
            first = "".join(c.get("text", "") for c in first if isinstance(c, dict))
        step = self.next_step(body, str(first or ""), turns) if body.get("tools") else None
        if step is None:
            with self._lock:
                self.side_requests += 1
            step = Text("ok")
        cid = self.call_id()
        created = int(time.time())
        model = body.get("model", "standin")
        if isinstance(step, ToolUse):
            delta: dict[str, Any] = {"role": "assistant", "content": None, "tool_calls": [{
                "index": 0, "id": cid, "type": "function",
                "function": {"name": step.name, "arguments": json.dumps(step.input)}}]}
            message: dict[str, Any] = {"role": "assistant", "content": None,
                                       "tool_calls": [{k: v for k, v in
                                                       delta["tool_calls"][0].items()
                                                       if k != "index"}]}
            finish = "tool_calls"
        else:
            delta = {"role": "assistant", "content": step.text}
            message = {"role": "assistant", "content": step.text}
            finish = "stop"
        usage = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
        if not body.get("stream"):
            self.send_json(handler, {"id": f"chatcmpl-{cid}", "object": "chat.completion",
                                     "created": created, "model": model,
                                     "choices": [{"index": 0, "message": message,
                                                  "finish_reason": finish}], "usage": usage})
            return
        base = {"id": f"chatcmpl-{cid}", "object": "chat.completion.chunk", "created": created,
                "model": model}
        events: list[Any] = [
            {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]},
            {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}],
             "usage": usage},
            "[DONE]",
        ]
        self.send(handler, 200, "text/event-stream", _sse(events))

    def results(self, conv: Conversation | None = None) -> list[tuple[str, str]]:
        """(tool name, content) of every tool message in the latest request."""
        conv = conv or self.main
        if not conv.requests:
            return []
        names: dict[str, str] = {}
        out = []
        for m in conv.requests[-1].get("messages") or []:
            if not isinstance(m, dict):
                continue
            for tc in m.get("tool_calls") or []:
                names[tc.get("id", "")] = (tc.get("function") or {}).get("name", "")
            if m.get("role") == "tool":
                content = m.get("content")
                if isinstance(content, list):
                    content = "".join(c.get("text", "") for c in content if isinstance(c, dict))
                out.append((names.get(m.get("tool_call_id", ""), ""), str(content)))
        return out
