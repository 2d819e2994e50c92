"""`statewright serve`: run the MCP proxy (stdio by default, or streamable HTTP).

People who start it by hand are told what they are looking at, on stderr (stdout is the MCP
stream): on a terminal, that it speaks MCP on stdio and how to wire it; over HTTP, its URL, and
a warning when it listens beyond the loopback interface without tokens (what anyone who
can connect may then do, and how to close it).
"""

from __future__ import annotations

import sys

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
    # said first: loading the MCP SDK takes a while, and a silent terminal seems to hang
    loopback = True
    if listen:
        address = _check_port_free(*listen)
        loopback = _say_http(listen[0], listen[1], address)
    elif sys.stdin is not None and sys.stdin.isatty():
        _say(STDIO_NOTE)
    try:
        if listen:
            import anyio

            from ..proxy import build_proxy

            proxy = build_proxy(project=project, session=session, connect_timeout=connect_timeout)
            from ..proxy.bearer import tokens_required

            if tokens_required(proxy.rt):
                _say("statewright serve: every request needs a bearer token of this store "
                     "(`statewright token create --role agent --name NAME`); each token's "
                     "name is the session of the calls it carries")
            elif not loopback:
                _say(exposed_warning(listen[0], address, proxy.session,
                                     sorted(proxy.downstream.servers)))
            anyio.run(proxy.run_http, *listen)
        else:
            from .fast import serve_stdio

            serve_stdio(session=session, project=project, connect_timeout=connect_timeout)
    except KeyboardInterrupt:
        pass


STDIO_NOTE = ("statewright serve speaks MCP on stdio: an MCP client starts it, it is not typed "
              "into. Wire it with `statewright install claude` (or in .mcp.json: {\"command\": "
              "\"statewright\", \"args\": [\"serve\"]}); for a network endpoint use "
              "--http 127.0.0.1:8765. Ctrl-C stops it.")


def _say(line: str) -> None:
    sys.stderr.write(line + "\n")
    sys.stderr.flush()


def _say_http(host: str, port: int, address: str) -> bool:
    """Say where the proxy listens; whether that is the loopback interface only."""
    import ipaddress

    shown = f"[{host}]" if ":" in host else host
    _say(f"statewright serve: MCP (streamable HTTP) at http://{shown}:{port}/mcp")
    try:
        return ipaddress.ip_address(address.split("%")[0]).is_loopback
    except ValueError:
        return False


def exposed_warning(host: str, address: str, session: str, servers: list[str]) -> str:
    """What a proxy listening beyond the loopback interface without tokens gives away, and
    how to close it."""
    where = host if address == host else f"{host} ({address})"
    tools = (f"every tool of {', '.join(servers)} that the state allows" if servers
             else "statewright's own tools")
    return (f"warning: listening on {where}, reachable from other machines, and no token "
            "is required: anyone who can connect acts as session "
            f"{session!r} of this project: they read its run (state, context, history "
            f"summary), start, move, pause and resume its runs, and call {tools}, with this "
            "machine's files and credentials. To close it, bind 127.0.0.1 (--http "
            "127.0.0.1:PORT), or make this store's first token (`statewright token create "
            "--role admin --name NAME`): from then on every request needs a live token "
            "(give each client an agent token of its own).")


def _check_port_free(host: str, port: int) -> str:
    """Fail early when HOST:PORT cannot be listened on; the address it resolves to."""
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
    return str(addr[0])
