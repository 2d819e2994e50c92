"""Bearer tokens in front of `statewright serve --http` (DESIGN section 5, "Teams").

A proxy whose project keeps its runs in a shared store, or whose store holds any live token,
answers only requests that carry `Authorization: Bearer <token>` of a live token
(`runtime.people`: any role; an agent's token is what an agent's client is given). Anything
else is 401 with `WWW-Authenticate: Bearer`. The header is removed before the request reaches
the MCP server: no handler, and so no downstream server, ever sees the client's token
(downstream servers get their own credentials from `mcpServers`). A token is looked up again
after `RECHECK_S`, so a revoked one stops working within that.

**Who calls.** Behind the gate, the token's subject is the session of every request it
carries (`calling`): the run it starts and moves is that subject's, the history and the audit
name it, and an approval it asks for is requested by it, so the same person's token cannot
decide it (`runtime.people.named`). Without a gate (a proxy on one machine) the proxy's own
session applies.
"""

from __future__ import annotations

import json
import time
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

import anyio

if TYPE_CHECKING:  # pragma: no cover
    from collections.abc import Iterator

    from starlette.types import ASGIApp, Receive, Scope, Send

    from ..runtime import Runtime

RECHECK_S = 5.0
#: the session of the request being handled: its bearer token's subject (None: the proxy's own)
CALLER: ContextVar[str | None] = ContextVar("statewright_caller", default=None)


@contextmanager
def calling(ctx: Any) -> Iterator[None]:
    """While handling MCP request `ctx`: `CALLER` is the subject of the token its HTTP request
    carried (set by `BearerGate`), else None."""
    state = getattr(getattr(ctx, "request", None), "scope", {}).get("state") or {}
    subject = state.get("statewright_subject")
    token = CALLER.set(subject if isinstance(subject, str) and subject else None)
    try:
        yield
    finally:
        CALLER.reset(token)


def tokens_required(rt: Runtime) -> bool:
    """Whether `serve --http` asks for bearer tokens: a shared store, or any token made."""
    if rt.store_url is not None:
        return True
    from ..runtime.people import list_tokens

    return any(t["revoked_at"] is None for t in list_tokens(rt))


def gated(app: ASGIApp, rt: Runtime) -> ASGIApp:
    """`app` behind the gate where tokens are required (`tokens_required`), else `app`."""
    return BearerGate(app, rt) if tokens_required(rt) else app


class BearerGate:
    """ASGI middleware: a live token on every HTTP request; its header never passed on."""

    def __init__(self, app: ASGIApp, rt: Runtime) -> None:
        self.app = app
        self.rt = rt
        self._seen: dict[str, tuple[float, tuple[str, str] | None]] = {}

    def _identify(self, raw: str) -> tuple[str, str] | None:
        from ..errors import StatewrightError
        from ..runtime.people import identify, token_hash

        key = token_hash(raw)
        hit = self._seen.get(key)
        now = time.monotonic()
        if hit is not None and now - hit[0] < RECHECK_S:
            return hit[1]
        try:
            who: tuple[str, str] | None = identify(self.rt, raw)
        except StatewrightError:
            who = None
        if len(self._seen) > 1024:
            self._seen.clear()
        self._seen[key] = (now, who)
        return who

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        raw = None
        kept = []
        for k, v in scope.get("headers", ()):
            if k.lower() == b"authorization":
                scheme, _, value = v.decode("latin-1").partition(" ")
                if scheme.lower() == "bearer" and value.strip():
                    raw = value.strip()
                continue  # (never passed on)
            kept.append((k, v))
        who = await anyio.to_thread.run_sync(self._identify, raw) if raw else None
        if who is None:
            body = json.dumps({"error": {"code": "UNAUTHORIZED", "message": (
                "this statewright proxy needs a bearer token (Authorization: Bearer ...): "
                "`statewright token create --role agent --name NAME` makes one" if raw is None
                else "the bearer token is unknown or revoked")}}).encode()
            await send({"type": "http.response.start", "status": 401, "headers": [
                (b"content-type", b"application/json"),
                (b"www-authenticate", b'Bearer realm="statewright"'),
                (b"content-length", str(len(body)).encode())]})
            await send({"type": "http.response.body", "body": body})
            return
        state: dict[str, Any] = dict(scope.get("state") or {})
        state["statewright_subject"], state["statewright_role"] = who
        await self.app({**scope, "headers": kept, "state": state}, receive, send)
