"""Run the page: bind 127.0.0.1 only, print the one-time sign-in link on the terminal, say
where the page is in the store's directory (`runtime.page`) while it runs."""

from __future__ import annotations

import signal
import socket
import sys
from typing import TYPE_CHECKING

from ..errors import INVALID_ARGUMENTS, StatewrightError
from ..runtime.page import remove_address, write_address
from .app import build_app
from .guard import Secrets

if TYPE_CHECKING:  # pragma: no cover
    from ..runtime import Runtime

HOST = "127.0.0.1"  # never another interface: the page decides approvals


def bind(port: int) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.bind((HOST, port))
    except OSError as exc:
        sock.close()
        raise StatewrightError(INVALID_ARGUMENTS, f"--port: cannot listen on {HOST}:{port}: "
                               f"{exc.strerror or exc} (try another port, or 0 for any free "
                               "one)") from None
    sock.listen(64)
    sock.set_inheritable(True)
    return sock


def serve(rt: Runtime, port: int, approver: str | None = None) -> None:
    """Serve `rt`'s project until interrupted; decisions made on the page name `approver`."""
    import uvicorn

    sock = bind(port)
    port = sock.getsockname()[1]
    secrets = Secrets()
    base = f"http://{HOST}:{port}"
    store_dir = rt.config.store_dir_str
    write_address(store_dir, base)
    try:
        sys.stdout.write(
            f"statewright ui for {rt.root_dir}\n"
            f"  open (works once, only in your browser): {base}/#login={secrets.login_token}\n"
            f"  the page: {base}   (stop with Ctrl-C; Enter prints a new sign-in link)\n")
        sys.stdout.flush()
        _new_links_on_enter(secrets, base)
        config = uvicorn.Config(build_app(rt, secrets, port, approver), log_level="warning",
                                access_log=False, lifespan="off", timeout_graceful_shutdown=2,
                                server_header=False)
        # uvicorn shuts down on SIGTERM, then raises it again with the handler found before
        # it started: make that one an exit, so the address file is removed below
        signal.signal(signal.SIGTERM, _exit_on_signal)
        uvicorn.Server(config).run(sockets=[sock])
    finally:
        remove_address(store_dir)
        sock.close()


def _new_links_on_enter(secrets: Secrets, base: str) -> None:
    """Each line typed on this terminal prints a new one-time sign-in link (a second tab, a
    browser restarted): only whoever holds the terminal of `statewright ui` can ask, as only
    they saw the first link. Nothing when stdin is not readable (started detached)."""
    import threading

    stdin = sys.stdin
    if stdin is None or stdin.closed:
        return

    def read() -> None:
        try:
            for _line in stdin:
                sys.stdout.write(f"  new sign-in link (works once): {base}/#login="
                                 f"{secrets.new_login()}\n")
                sys.stdout.flush()
        except (OSError, ValueError):
            pass

    threading.Thread(target=read, name="statewright-ui-links", daemon=True).start()


def _exit_on_signal(signum: int, frame: object) -> None:
    raise SystemExit(128 + signum)
