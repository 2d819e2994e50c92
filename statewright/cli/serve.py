"""`statewright serve`: run the MCP proxy (stdio by default, or streamable HTTP)."""

from __future__ import annotations

import typer

from ..errors import INVALID_ARGUMENTS, StatewrightError
from .app import ProjectOpt, SessionOpt, app


def _parse_listen(value: str) -> tuple[str, int]:
    host, sep, port = value.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise StatewrightError(INVALID_ARGUMENTS,
                               f"--http expects HOST:PORT (e.g. 127.0.0.1:8765), got {value!r}")
    return host.strip("[]"), int(port)


@app.command("serve")
def serve(
    http: str | None = typer.Option(
        None, "--http", metavar="HOST:PORT",
        help="Serve streamable HTTP on HOST:PORT (endpoint /mcp) instead of stdio."),
    connect_timeout: float = typer.Option(30.0, "--connect-timeout", min=1.0,
                                          help="Seconds a downstream server may take to start."),
    session: str | None = SessionOpt,
    project: str | None = ProjectOpt,
) -> None:
    """Run the MCP proxy: statewright's tools plus the governed tools of `mcpServers`.

    Session: --session, else $STATEWRIGHT_SESSION, else $CLAUDE_CODE_SESSION_ID, else 'default'.
    """
    listen = _parse_listen(http) if http else None
    try:
        if listen:
            import anyio

            from ..proxy import build_proxy

            proxy = build_proxy(project=project, session=session, connect_timeout=connect_timeout)
            _check_port_free(*listen)
            anyio.run(proxy.run_http, *listen)
        else:
            from ..proxy import serve_stdio

            serve_stdio(project=project, session=session, connect_timeout=connect_timeout)
    except KeyboardInterrupt:
        pass


def _check_port_free(host: str, port: int) -> None:
    import socket

    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        raise StatewrightError(INVALID_ARGUMENTS,
                               f"--http: cannot resolve host {host!r}: {exc}") from None
    family, _, _, _, addr = infos[0]
    with socket.socket(family, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(addr)
        except OSError as exc:
            raise StatewrightError(INVALID_ARGUMENTS, f"--http: cannot listen on {host}:{port}: "
                                   f"{exc.strerror or exc}") from None
