"""`statewright serve --http` on a loopback address answers only requests addressed to it
(DNS rebinding): a web page whose name resolves to the proxy's address must not drive the
agent's tools. The real `statewright serve --http HOST:PORT` process, raw HTTP requests."""

from __future__ import annotations

import http.client
import json
from pathlib import Path

import pytest

from .harness import ServeHttp

pytestmark = pytest.mark.e2e

INIT = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {},
    "clientInfo": {"name": "probe", "version": "1"}}})


def post(srv: ServeHttp, host_header: str, origin: str | None = None) -> tuple[int, bytes]:
    conn = http.client.HTTPConnection(srv.host, srv.port, timeout=30)
    headers = {"Host": host_header, "Content-Type": "application/json",
               "Accept": "application/json, text/event-stream"}
    if origin is not None:
        headers["Origin"] = origin
    try:
        conn.request("POST", "/mcp", INIT, headers)
        r = conn.getresponse()
        return r.status, r.read()
    finally:
        conn.close()


# (127.0.0.2: a loopback address the MCP SDK does not check by itself)
@pytest.mark.parametrize("bind", ["127.0.0.1", "127.0.0.2"])
def test_a_loopback_proxy_refuses_other_hosts_and_origins(tmp_path: Path, bind: str) -> None:
    (tmp_path / "proj").mkdir()
    with ServeHttp(tmp_path / "proj", host=bind) as srv:
        port = srv.port
        # attacks: a rebound name, with and without the page's Origin; the right Host with a
        # foreign Origin
        for host, origin in ((f"evil.example:{port}", None),
                             (f"evil.example:{port}", "http://evil.example"),
                             (f"{bind}:{port}", f"http://evil.example:{port}")):
            status, body = post(srv, host, origin)
            assert status in (403, 421), (host, origin, status, body)
            assert b'"result"' not in body
        # legitimate clients: the address itself, the usual local names, a local page
        for host, origin in ((f"{bind}:{port}", None), (f"localhost:{port}", None),
                             (f"127.0.0.1:{port}", f"http://127.0.0.1:{port}")):
            status, body = post(srv, host, origin)
            assert status == 200 and b'"result"' in body, (host, origin, status, body)
