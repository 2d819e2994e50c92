"""Who may use the web page (DESIGN section 5, "Web page"): only the human who started
`statewright ui`, from a page of this server, in a browser on this machine.

- **The secret.** Each `statewright ui` makes a one-time sign-in token and prints it on its
  terminal in the URL's fragment (`#login=...`: a fragment is never sent to any server, nor in
  a Referer). The page trades it once (POST /api/session) for a session key that lives in the
  tab's `sessionStorage` (scoped to this origin, port included) and goes with every data
  request as the `X-Statewright-Key` header. Nothing is written to disk: the secrets live in
  this process's memory and die with it, so there is no file for an agent to read, and a
  sign-in link found later (browser history, scrollback) is spent. No cookie: browsers send a
  cookie to every port of the host, so another local server the human visits would get it.
- **Host** must be `127.0.0.1:PORT` or `localhost:PORT` (no DNS rebinding).
- **Origin**, when a browser sends one, must be this server's; a POST must carry it.
  `Sec-Fetch-Site`, when sent, must be `same-origin` for a POST.
- Only GET/HEAD read and POST changes; a POST's body must be JSON (a cross-site form cannot
  send that without a preflight, which is refused).

Every response forbids framing, inline scripts and caching.
"""

from __future__ import annotations

import hmac
import secrets
from typing import TYPE_CHECKING

from starlette.responses import JSONResponse

if TYPE_CHECKING:  # pragma: no cover
    from starlette.types import ASGIApp, Message, Receive, Scope, Send

KEY_HEADER = "x-statewright-key"
TOKEN_BYTES = 32
SECURITY_HEADERS = [
    (b"content-security-policy",
     b"default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
     b"connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"),
    (b"x-frame-options", b"DENY"),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"cache-control", b"no-store"),
    (b"cross-origin-opener-policy", b"same-origin"),
    (b"cross-origin-resource-policy", b"same-origin"),
]


class Secrets:
    """The one-time sign-in token and the session keys it was traded for (memory only)."""

    def __init__(self) -> None:
        self.login_token: str | None = secrets.token_urlsafe(TOKEN_BYTES)
        self._keys: list[str] = []

    def new_login(self) -> str:
        """A fresh one-time sign-in token (the unspent one, if any, stops working)."""
        self.login_token = secrets.token_urlsafe(TOKEN_BYTES)
        return self.login_token

    def sign_in(self, token: object) -> str | None:
        """A new session key for the sign-in token, once; None for anything else."""
        expected = self.login_token
        if (expected is None or not isinstance(token, str)
                or not hmac.compare_digest(token.encode(), expected.encode())):
            return None
        self.login_token = None  # spent
        key = secrets.token_urlsafe(TOKEN_BYTES)
        self._keys.append(key)
        return key

    def knows(self, key: str | None) -> bool:
        if not key:
            return False
        found = False
        for k in self._keys:  # no early exit: the time taken says nothing about the key
            found |= hmac.compare_digest(key.encode(), k.encode())
        return found


def _refusal(status: int, code: str, message: str) -> JSONResponse:
    return JSONResponse({"error": {"code": code, "message": message}}, status_code=status,
                        headers={k.decode(): v.decode() for k, v in SECURITY_HEADERS})


class RequestGuard:
    """ASGI middleware: the Host, Origin and method checks of every HTTP request, and the
    security headers of every response."""

    def __init__(self, app: ASGIApp, port: int) -> None:
        self.app = app
        self.hosts = {f"127.0.0.1:{port}", f"localhost:{port}"}

    def problem(self, scope: Scope) -> tuple[int, str] | None:
        headers: dict[bytes, bytes] = {}
        for k, v in scope.get("headers", ()):
            if k in headers:  # a repeated Host/Origin header is not something a browser sends
                return 400, f"repeated {k.decode('latin-1')} header"
            headers[k] = v
        host = headers.get(b"host", b"").decode("latin-1")
        if host not in self.hosts:
            return 403, "this page answers only to 127.0.0.1 / localhost on its own port"
        origin = headers.get(b"origin")
        if origin is not None and origin.decode("latin-1") != f"http://{host}":
            return 403, "requests from another origin are refused"
        method = scope.get("method", "")
        if method in ("GET", "HEAD"):
            return None
        if method != "POST":
            return 405, f"method {method} is not allowed"
        if origin is None:
            return 403, "a change needs the Origin header a browser sends"
        site = headers.get(b"sec-fetch-site")
        if site is not None and site != b"same-origin":
            return 403, "a change must come from this page"
        ctype = headers.get(b"content-type", b"").split(b";")[0].strip().lower()
        if ctype != b"application/json":
            return 415, "a change is sent as JSON"
        return None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        problem = self.problem(scope)
        if problem is not None:
            await _refusal(problem[0], "REFUSED", problem[1])(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                names = {k.lower() for k, _ in message.get("headers", [])}
                message["headers"] = [*message.get("headers", []),
                                      *(h for h in SECURITY_HEADERS if h[0] not in names)]
            await send(message)

        await self.app(scope, receive, send_with_headers)
