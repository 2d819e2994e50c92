"""The web page's routes (starlette). A front end like the others: it reads the runtime's
answers (`Runtime.runs_overview`, `run_view`, `change_mark`) and decides approvals through
`Runtime.approve` / `Runtime.reject` as the human; it implements no rule of its own.

    GET  /, /runs/{id}                   the page (no data: the script loads it with the key)
    GET  /static/ui.js, /static/ui.css   shipped with the package
    POST /api/session {token}            the one-time sign-in token -> {key}
    GET  /api/runs?page=N, /api/runs/{id}   the page's content, as HTML      (key)
    GET  /api/wait?since=N               returns when any run changed, else after a while (key)
    POST /api/approvals/{id}/approve|reject {reason?}                         (key)

Who may do what is `guard.py`'s: the Host/Origin/method checks wrap every request, and the
routes marked (key) need the session key in `X-Statewright-Key`.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route

from ..engine.run import HUMAN
from ..errors import UNKNOWN_RUN, StatewrightError
from ..runtime import views
from ..store.pg_listen import QUIET_READ_S
from . import pages
from .guard import KEY_HEADER, RequestGuard, Secrets

if TYPE_CHECKING:  # pragma: no cover
    from starlette.types import ASGIApp

    from ..runtime import Runtime

    Handler = Callable[[Request], Awaitable[Response]]

STATIC_DIR = Path(__file__).resolve().parent / "static"
STATIC_FILES = {"ui.js": "text/javascript; charset=utf-8", "ui.css": "text/css; charset=utf-8"}
#: the page's icon (browsers ask for /favicon.ico whatever the page says): a state graph's node
FAVICON = (b'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><circle cx="8" cy="8" '
           b'r="6" fill="none" stroke="#2563eb" stroke-width="3"/></svg>')
WAIT_SECONDS = 20.0  # a long poll answers at the latest after this long
POLL_SECONDS = 0.2  # how often a long poll looks at the store
MAX_BODY = 16_384
MAX_REASON = 2_000

log = logging.getLogger("statewright.ui")


def _error(status: int, code: str, message: str) -> JSONResponse:
    return JSONResponse({"error": {"code": code, "message": message}}, status_code=status)


class _Routes:
    """The route handlers of one page: the runtime they read and the secrets they check."""

    def __init__(self, rt: Runtime, secrets: Secrets, approver: str | None = None) -> None:
        self.approver = approver  # who decides from this page (on a shared store: required)
        self.rt = rt
        self.secrets = secrets

    def keyed(self, handler: Handler) -> Handler:
        """`handler` for the signed-in tab only; a refusal or failure as JSON, never a
        traceback."""
        async def checked(request: Request) -> Response:
            if not self.secrets.knows(request.headers.get(KEY_HEADER)):
                return _error(401, "SIGN_IN", "sign in with the link `statewright ui` printed")
            try:
                return await handler(request)
            except StatewrightError as exc:
                status = 404 if exc.code == UNKNOWN_RUN else 409
                return JSONResponse(exc.to_dict(), status_code=status)
            except Exception as exc:  # one line in the log, never a traceback in the page
                log.error("statewright ui: %s: %s", type(exc).__name__, exc)
                return _error(500, "INTERNAL", f"{type(exc).__name__}: {exc}")
        return checked

    async def page(self, request: Request) -> Response:
        return HTMLResponse(pages.shell("statewright"))

    async def static(self, request: Request) -> Response:
        name = request.path_params["name"]
        if name not in STATIC_FILES:
            return _error(404, "NOT_FOUND", "no such file")
        return Response((STATIC_DIR / name).read_bytes(), media_type=STATIC_FILES[name])

    async def favicon(self, request: Request) -> Response:
        return Response(FAVICON, media_type="image/svg+xml")

    async def sign_in(self, request: Request) -> Response:
        body = await _json_body(request)
        key = self.secrets.sign_in(body.get("token") if isinstance(body, dict) else None)
        if key is None:
            return _error(401, "SIGN_IN", "this sign-in link is not valid or was already "
                          "used; press Enter in the terminal of `statewright ui` for a new one")
        return JSONResponse({"key": key})

    async def runs(self, request: Request) -> Response:
        try:
            page_no = max(1, int(request.query_params.get("page", "1")))
        except ValueError:
            page_no = 1
        overview = await anyio.to_thread.run_sync(lambda: self.rt.runs_overview(
            pages.RUNS_PER_PAGE, (page_no - 1) * pages.RUNS_PER_PAGE))
        return _partial(pages.runs_html(overview, page_no), overview["mark"])

    async def run(self, request: Request) -> Response:
        run_id = request.path_params["run_id"]
        view = await anyio.to_thread.run_sync(
            lambda: self.rt.run_view(run_id, pages.HISTORY_SHOWN))
        return _partial(pages.run_html(view), view["mark"])

    async def wait(self, request: Request) -> Response:
        try:
            since = int(request.query_params.get("since", "-1"))
        except ValueError:
            since = -1
        mark = since
        # a shared store announces what other machines commit (LISTEN/NOTIFY): the page waits
        # for a notice, reading the store anyway now and then for the decisions, which are not
        # announced; a project's SQLite file is looked at every POLL_SECONDS
        feed = await anyio.to_thread.run_sync(views.change_feed, self.rt)
        seen = feed.generation if feed is not None else 0
        with anyio.move_on_after(WAIT_SECONDS):
            while True:
                mark = await anyio.to_thread.run_sync(self.rt.change_mark)
                if mark != since or await request.is_disconnected():
                    break
                if feed is None:
                    await anyio.sleep(POLL_SECONDS)
                else:
                    seen = await feed.wait_async(seen, QUIET_READ_S)
        return JSONResponse({"mark": mark})

    async def decide(self, request: Request) -> Response:
        aid, decision = request.path_params["approval_id"], request.path_params["decision"]
        body = await _json_body(request)
        reason = body.get("reason") if isinstance(body, dict) else None
        if not isinstance(reason, str) or not reason.strip():
            reason = None
        elif len(reason) > MAX_REASON:
            return _error(400, "INVALID_ARGUMENTS", f"the reason is over {MAX_REASON} characters")
        rt = self.rt
        if decision == "approve":
            answer = await anyio.to_thread.run_sync(
                lambda: rt.approve(None, aid, actor=HUMAN, approver=self.approver))
        elif decision == "reject":
            answer = await anyio.to_thread.run_sync(
                lambda: rt.reject(None, aid, reason, actor=HUMAN, approver=self.approver))
        else:
            return _error(404, "NOT_FOUND", "decide with approve or reject")
        return JSONResponse({"decision": decision, "state": answer["state"],
                             "status": answer["status"], "run_id": answer["run_id"]})


def build_app(rt: Runtime, secrets: Secrets, port: int,
              approver: str | None = None) -> ASGIApp:
    """The page's ASGI application for `rt`'s project, served on 127.0.0.1:`port`."""
    r = _Routes(rt, secrets, approver)
    app = Starlette(routes=[
        Route("/", r.page), Route("/runs/{run_id}", r.page),
        Route("/static/{name}", r.static), Route("/favicon.ico", r.favicon),
        Route("/api/session", r.sign_in, methods=["POST"]),
        Route("/api/runs", r.keyed(r.runs)), Route("/api/runs/{run_id}", r.keyed(r.run)),
        Route("/api/wait", r.keyed(r.wait)),
        Route("/api/approvals/{approval_id}/{decision}", r.keyed(r.decide), methods=["POST"]),
    ])
    return RequestGuard(app, port)


def _partial(html: str, mark: int) -> Response:
    return HTMLResponse(html, headers={"X-Statewright-Mark": str(mark)})


async def _json_body(request: Request) -> Any:
    body = b""
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_BODY:
            return None
    try:
        return json.loads(body or b"null")
    except ValueError:
        return None
