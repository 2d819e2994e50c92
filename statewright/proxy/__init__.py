"""The MCP proxy (`statewright serve`): statewright's own tools plus governed forwarding of the
tools of every downstream server in `statewright.json` `mcpServers`. See docs/proxy.md.

Importing this package is cheap; the MCP SDK (about 1.3 s to import) is loaded only when a
`Proxy` is built, after the configuration has been checked.
"""

from __future__ import annotations

from ..lean import TYPE_CHECKING, lazy_attributes
from .config import (
    ServerSpec,
    forwarded_name,
    parse_servers,
    resolve_session,
    workflow_tool_name,
)

if TYPE_CHECKING:
    from typing import Any

__all__ = ["DownstreamError", "DownstreamManager", "Proxy", "Route", "ServerSpec", "build_proxy",
           "forwarded_name", "parse_servers", "resolve_session", "serve_stdio",
           "workflow_tool_name"]

# lazy: these modules import the MCP SDK
__getattr__ = lazy_attributes(__name__, {
    "DownstreamError": "downstream", "DownstreamManager": "downstream", "Route": "downstream",
    "Proxy": "server",
})


def build_proxy(project: str | None = None, session: str | None = None, *,
                cwd: str | None = None, connect_timeout: float = 30.0, errlog: Any = None) -> Any:
    """Open the project's runtime, read `mcpServers`, and build the proxy (not started yet).
    A bad config raises `StatewrightError(INVALID_ARGUMENTS)` naming each problem, before the
    MCP SDK is imported."""
    from ..runtime import Runtime

    rt = Runtime.open(project=project, cwd=cwd, resident=True)
    specs = parse_servers(rt.config.mcp_servers, root=str(rt.root))
    from .server import Proxy

    return Proxy(rt, specs, session=session, connect_timeout=connect_timeout, errlog=errlog)


def serve_stdio(project: str | None = None, session: str | None = None, *,
                connect_timeout: float = 30.0) -> None:
    """`statewright serve` on stdio. Without downstream servers, and on real pipes, the host is
    answered by the early lane (`early.py`) while the MCP SDK loads in a thread."""
    import threading

    from ..runtime import Runtime
    from . import early

    rt = Runtime.open(project=project)
    specs = parse_servers(rt.config.mcp_servers, root=str(rt.root))
    lane = None
    if not specs and early.pipes_usable():
        from ..hook.handlers import preload
        from .hooktool import HookTool

        # (the lane's hook calls import nothing more while the thread below imports the SDK:
        # concurrent imports of one module can hand one thread a half-initialised module)
        preload()
        loaded = threading.Event()
        failure: list[BaseException] = []

        def load() -> None:
            try:
                from . import server  # noqa: F401 - the import is the work
            except BaseException as exc:
                failure.append(exc)
            finally:
                loaded.set()

        threading.Thread(target=load, name="statewright-sdk-import", daemon=True).start()
        lane = early.EarlyLane(rt, resolve_session(session), HookTool(rt))
        early.serve_early(lane, loaded)
        loaded.wait()
        if failure:
            raise failure[0]
    import anyio

    from .server import Proxy

    proxy = Proxy(rt, specs, session=session, connect_timeout=connect_timeout)
    if lane is not None:
        proxy.hook_tool = lane.hook_tool
        if lane.answered:
            proxy.mark_list_stale()
        anyio.run(proxy.run_stdio, bytes(lane.replay), lane.drop_ids, lane.acked)
    else:
        anyio.run(proxy.run_stdio)
