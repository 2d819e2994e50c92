"""The Host and Origin check of `statewright serve --http` (DNS rebinding)."""

from __future__ import annotations

from typing import Any


def local_host_check(host: str, port: int) -> Any:
    """The Host and Origin check of `serve --http` on a loopback address (DNS rebinding: a web
    page whose name resolves to this address must not drive the proxy): only this address and
    the usual local names, at this port. The MCP SDK checks only for `127.0.0.1`,
    `localhost` and `::1` by itself; another loopback address (`127.0.0.2`, a host name of
    this machine that resolves to `127.0.1.1`) would be left open. None (no check; bearer
    tokens and the warning at start-up are the guard) for an address other machines reach."""
    import ipaddress
    import socket

    from mcp.server.transport_security import TransportSecuritySettings

    try:
        addrs = {ipaddress.ip_address(host.split("%")[0])}
    except ValueError:
        try:
            addrs = {ipaddress.ip_address(str(i[4][0]).split("%")[0])
                     for i in socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)}
        except (OSError, ValueError):
            addrs = set()
    if not addrs or not all(a.is_loopback for a in addrs):
        return None
    names = dict.fromkeys([f"[{host}]" if ":" in host else host, "127.0.0.1", "localhost",
                           "[::1]"])
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=[f"{n}:{port}" for n in names],
        allowed_origins=[f"http://{n}:{port}" for n in names])
