"""The MCP proxy (`statewright serve`): statewright's own tools plus governed forwarding of the
tools of every downstream server in `statewright.json` `mcpServers`. See docs/proxy.md.

Importing this package is cheap; the MCP SDK (about 1.3 s to import) is loaded only when a
`Proxy` is built, after the configuration has been checked.
"""

from __future__ import annotations

from typing import Any

from ..lean import lazy_attributes
from .config import ServerSpec, forwarded_name, parse_servers, workflow_tool_name

__all__ = ["DownstreamError", "DownstreamManager", "Proxy", "Route", "ServerSpec", "build_proxy",
           "forwarded_name", "parse_servers", "resolve_session", "workflow_tool_name"]

# lazy: these modules import the MCP SDK
__getattr__ = lazy_attributes(__name__, {
    "DownstreamError": "downstream", "DownstreamManager": "downstream", "Route": "downstream",
    "Proxy": "server", "resolve_session": "server",
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
