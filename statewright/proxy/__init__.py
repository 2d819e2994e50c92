"""The MCP proxy (`statewright serve`): statewright's own tools plus governed forwarding of the
tools of every downstream server in `statewright.json` `mcpServers`. See docs/proxy.md."""

from __future__ import annotations

from typing import Any

from .downstream import (DownstreamError, DownstreamManager, Route, ServerSpec, forwarded_name,
                         parse_servers, workflow_tool_name)
from .server import Proxy, resolve_session

__all__ = ["DownstreamError", "DownstreamManager", "Proxy", "Route", "ServerSpec", "build_proxy",
           "forwarded_name", "parse_servers", "resolve_session", "workflow_tool_name"]


def build_proxy(project: str | None = None, session: str | None = None, *,
                cwd: str | None = None, connect_timeout: float = 30.0, errlog: Any = None) -> Proxy:
    """Open the project's runtime, read `mcpServers`, and build the proxy (not started yet).
    A bad config raises `StatewrightError(INVALID_ARGUMENTS)` naming each problem."""
    from ..runtime import Runtime

    rt = Runtime.open(project=project, cwd=cwd)
    specs = parse_servers(rt.config.mcp_servers, root=str(rt.root))
    return Proxy(rt, specs, session=session, connect_timeout=connect_timeout, errlog=errlog)
