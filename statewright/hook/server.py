"""The resident hook server (see `statewright.hook.resident` for why, and for the wire format).

Started in the background by a hook process (`resident._start_server`), once per project,
Python, installed package and environment. It holds a lock for its lifetime (so only one
starts), writes a fresh key beside the store, listens on its socket and answers one request
at a time with `statewright.hook.handlers.handle`, exactly what the hook process would have
run. One at a time is enough: an answer takes well under a millisecond once warm, and the
store serialises writers anyway.

It exits after `IDLE_ENV` seconds without a request (default 600); when its socket, key or
store directory is taken away or replaced (it can no longer be reached, or no longer trusted);
or when a module it runs changed on disk (an upgrade must not be served by old code): the
next hook event then decides itself and starts a new server.

A request it will not serve (a bad MAC, a stale time, a nonce seen before, a frame it cannot
read) gets no answer: the hook process then decides itself, so a refusal to serve costs time,
never a decision.
"""

from __future__ import annotations

import os
import sys
import time
from typing import Any

from ..atomic import write_atomic
from ..lean import hmac_sha256
from .resident import (
    ANSWER_TIMEOUT_S,
    DEFAULT_IDLE_S,
    IDLE_ENV,
    KEY_BYTES,
    MAC_BYTES,
    MAGIC,
    MAX_AGE_S,
    MAX_REQUEST_BYTES,
    NONCE_BYTES,
    Endpoint,
    endpoint,
    names_server,
    open_lock,
    private_dir_ok,
)

_HEAD = len(MAGIC) + NONCE_BYTES + 8
#: how often (seconds) the server looks whether it was taken away while no request comes
TICK_S = 1.0
#: at most this many runtimes are kept (one per environment: a session's, normally one or two)
MAX_RUNTIMES = 8
#: the longest a request may take to arrive, all of it
READ_TIMEOUT_S = 5.0
#: a decision running longer ends the server (the hook stops waiting at ANSWER_TIMEOUT_S)
DECISION_LIMIT_S = ANSWER_TIMEOUT_S - 2.0
SERVED, NOT_SERVED, STOP = "served", "not served", "stop"
#: `STATEWRIGHT_HOOK_LOG=path`: the server appends what it does there (docs/hooks.md)
LOG_ENV = "STATEWRIGHT_HOOK_LOG"


def main() -> None:
    """The server process's entry point: serve until told to stop, then end quietly."""
    try:
        ep = endpoint()
        if ep is not None:
            Server(ep).serve()
    except BaseException:  # (nobody reads a background process's traceback: end quietly)
        pass
    os._exit(0)


class Server:
    def __init__(self, ep: Endpoint) -> None:
        self.ep = ep
        try:
            self.idle = float(os.environ.get(IDLE_ENV, "") or DEFAULT_IDLE_S)
        except ValueError:
            self.idle = DEFAULT_IDLE_S
        if not 0 < self.idle < 7 * 86400:  # (nan and inf too: a server always ends)
            self.idle = DEFAULT_IDLE_S
        self.key = b""
        self.nonces: dict[bytes, float] = {}
        self.runtimes: dict[tuple[Any, ...], tuple[Any, Any]] = {}  # key -> (runtime, config mark)
        self.request_env: dict[str, str] | None = None
        self.env_key: tuple[Any, ...] = ()
        self.code: list[tuple[str, int]] = []
        self.modules_seen = 0
        self.socket_id: tuple[int, int] | None = None

    # -- life -------------------------------------------------------------------------------
    def serve(self) -> None:
        import fcntl

        ep = self.ep
        if not private_dir_ok(ep.run_dir):
            return
        lock = open_lock(ep.lock)
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return  # another server is starting or running
        os.ftruncate(lock, 0)  # (`open_lock`: a plain file of ours with no other name)
        os.write(lock, f"{os.getpid()}\n".encode())
        self.warm_up()
        listener = self.listen()
        try:
            self.loop(listener)
        finally:
            listener.close()
            self.withdraw()

    def warm_up(self) -> None:
        """Load what a decision needs before the first request (a shell line's parser
        included), and note the code's files, to notice an upgrade."""
        from .handlers import preload

        preload()
        self.note_code()

    def note_code(self) -> None:
        """Remember the files of the modules of ours (and tree-sitter's) loaded since the last
        look (a decision may load more: a program's rules, the definition pipeline), to notice
        an upgrade."""
        if len(sys.modules) == self.modules_seen:
            return
        self.modules_seen = len(sys.modules)
        known = {path for path, _ in self.code}
        for name, mod in list(sys.modules.items()):
            path = getattr(mod, "__file__", None)
            if name.startswith(("statewright", "tree_sitter")) and path and path not in known:
                try:
                    self.code.append((path, os.stat(path).st_mtime_ns))
                except OSError:
                    pass

    def listen(self) -> Any:
        import socket

        ep = self.ep
        self.key = os.urandom(KEY_BYTES)
        write_atomic(ep.key_file, self.key)
        try:
            os.unlink(ep.socket)  # a dead server's (the lock says none is alive)
        except FileNotFoundError:
            pass
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        old = os.umask(0o177)  # the socket is created 0600 (no chmod by name afterwards)
        try:
            listener.bind(ep.socket)
        finally:
            os.umask(old)
        st = os.lstat(ep.socket)
        self.socket_id = (st.st_dev, st.st_ino)
        listener.listen(64)
        listener.settimeout(TICK_S)
        os.chdir("/")  # hold no project directory open
        return listener

    def loop(self, listener: Any) -> None:
        self.log(f"started for {self.ep.root}")
        last = time.monotonic()
        while True:
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                if time.monotonic() - last > self.idle:
                    return self.log(f"stopped: no request for {self.idle:g} s")
                if not self.still_ours():
                    return self.log("stopped: its socket, key or store directory is gone")
                self.fire_timeouts()
                continue
            with conn:
                try:
                    outcome = self.answer(conn)
                except Exception as exc:  # (one bad connection never takes the server down)
                    self.log(f"a request failed: {type(exc).__name__}: {exc}")
                    continue
            if outcome == STOP:
                return self.log("stopped: its code changed on disk")
            if outcome == SERVED:  # (a connection that was not served keeps no server alive)
                last = time.monotonic()

    def fire_timeouts(self) -> None:
        """While no request comes: fire the state timeouts that are due (DESIGN section 2),
        whichever session's (`Runtime.fire_due_timeouts`); never fails."""
        held = list(self.runtimes.values())
        if not held:  # (started by a hook that decided itself: no request served yet)
            try:
                held = [(self.runtime((), None), None)]
            except Exception as exc:
                return self.log(f"timeouts could not be fired: {type(exc).__name__}: {exc}")
        for rt, _mark in held:
            try:
                for fired in rt.fire_due_timeouts():
                    self.log(f"timeout: run {fired['run_id']} {fired['state']} -> "
                             f"{fired['to']} ({fired['event']})")
            except Exception as exc:
                self.log(f"timeouts could not be fired: {type(exc).__name__}: {exc}")

    def log(self, line: str) -> None:
        """Append a line to `$STATEWRIGHT_HOOK_LOG` when it is set (what the server did, for
        whoever wonders which process answered); never fails."""
        path = os.environ.get(LOG_ENV)
        if not path:
            return
        try:
            with open(path, "a", encoding="utf-8") as f:
                f.write(f"{time.strftime('%Y-%m-%dT%H:%M:%S')} [{os.getpid()}] {line}\n")
        except OSError:
            pass

    def still_ours(self) -> bool:
        """Whether the server can still be reached and trusted where it started."""
        ep = self.ep
        try:
            st = os.lstat(ep.socket)
            with open(ep.key_file, "rb") as f:
                key = f.read()
        except OSError:
            return False
        return (st.st_dev, st.st_ino) == self.socket_id and key == self.key \
            and os.path.isdir(ep.state_dir)

    def code_changed(self) -> bool:
        for path, mtime in self.code:
            try:
                if os.stat(path).st_mtime_ns != mtime:
                    return True
            except OSError:
                return True
        return False

    def withdraw(self) -> None:
        """Remove the socket and the key, if they are still this server's."""
        ep = self.ep
        try:
            st = os.lstat(ep.socket)
            if (st.st_dev, st.st_ino) == self.socket_id:
                os.unlink(ep.socket)
        except OSError:
            pass
        try:
            with open(ep.key_file, "rb") as f:
                if f.read() == self.key:
                    os.unlink(ep.key_file)
        except OSError:
            pass

    # -- one request ------------------------------------------------------------------------
    def answer(self, conn: Any) -> str:
        """Serve one connection: SERVED, NOT_SERVED (the hook decides itself), or STOP (the
        code changed: not served, and the next hook event starts a server with the new code)."""
        try:
            frame = _read_all(conn, time.monotonic() + READ_TIMEOUT_S)
        except OSError:
            return NOT_SERVED
        parsed = self.verify(frame) if frame is not None else None
        if parsed is None:
            self.log("not served: a request without a valid key, fresh time and new nonce")
            return NOT_SERVED
        nonce, args, request_env, stdin = parsed
        if self.code_changed():
            return STOP
        t0 = time.perf_counter()
        import faulthandler

        # A decision that runs past the time the hook waits ends the server (releasing the
        # store's lock it may hold), as the host ends a hook process that runs past its timeout.
        faulthandler.dump_traceback_later(DECISION_LIMIT_S, exit=True)
        try:
            out = self.decide(args, request_env, stdin)
        finally:
            faulthandler.cancel_dump_traceback_later()
        self.note_code()
        if os.environ.get(LOG_ENV):
            verdict = "refused" if '"deny"' in out else "answered"
            self.log(f"served {' '.join(args) or '(event in input)'}: {verdict} in "
                     f"{(time.perf_counter() - t0) * 1000:.2f} ms")
        data = out.encode("ascii")
        try:
            conn.sendall(MAGIC + hmac_sha256(self.key, b"A" + nonce + data) + data)
        except OSError:
            pass
        return SERVED

    def verify(self, frame: bytes) -> tuple[bytes, list[str], dict[str, str], bytes] | None:
        """(nonce, args, the hook's environment but the naming variables, hook input) of a
        request made with this server's key, fresh and not seen before; None otherwise."""
        if len(frame) < _HEAD + MAC_BYTES or not frame.startswith(MAGIC):
            return None
        head, mac, body = frame[:_HEAD], frame[_HEAD:_HEAD + MAC_BYTES], frame[_HEAD + MAC_BYTES:]
        import hmac

        if not hmac.compare_digest(mac, hmac_sha256(self.key, b"Q" + head + body)):
            return None
        nonce = head[len(MAGIC):len(MAGIC) + NONCE_BYTES]
        sent = int.from_bytes(head[-8:], "big") / 1000
        now = time.time()
        if not -1.0 <= now - sent <= MAX_AGE_S or nonce in self.nonces:
            return None
        self.nonces = {n: t for n, t in self.nonces.items() if t > now - 2 * MAX_AGE_S} \
            if len(self.nonces) > 4096 else self.nonces
        self.nonces[nonce] = now
        try:
            argv, env, stdin = body.split(b"\0", 2)
            enc = "utf-8", "surrogateescape"
            args = [a.decode(*enc) for a in argv.split(b"\x1e")] if argv else []
            pairs = [p.split(b"\x1f", 1) for p in env.split(b"\x1e")] if env else []
            request_env = {k.decode(*enc): v.decode(*enc) for k, v in pairs}
        except ValueError:
            return None
        if any(names_server(k) for k in request_env):
            return None  # (its name says what these are: a hook never sends them)
        return nonce, args, request_env, stdin

    def decide(self, args: list[str], request_env: dict[str, str], stdin: bytes) -> str:
        """The hook's answer, with the server's environment made the hook's."""
        from . import crash_output, handle

        if request_env != self.request_env:
            for k in [k for k in os.environ if not names_server(k) and k not in request_env]:
                del os.environ[k]
            for k, v in request_env.items():
                if os.environ.get(k) != v:
                    os.environ[k] = v
            self.request_env = request_env
            self.env_key = tuple(sorted(request_env.items()))
        try:
            return handle(args, stdin, lambda data: self.runtime(self.env_key, data))
        except BaseException as exc:  # (as `statewright.hook.main` does)
            return crash_output(args, stdin, exc)

    def runtime(self, key: tuple[Any, ...], _data: dict[str, Any] | None) -> Any:
        """The runtime for this request: one per project root and environment, opened again
        when the config file changed."""
        from ..runtime import Runtime

        # the root the hook process would use: `$CLAUDE_PROJECT_DIR`, resolved where the server
        # started (the server's name holds it, so every hook it serves resolves it alike)
        root = self.ep.root
        k = (root, *key)
        held = self.runtimes.get(k)
        if held is not None:
            if held[1] == _config_mark(root):
                return held[0]
            held[0].close()
            del self.runtimes[k]
        elif len(self.runtimes) >= MAX_RUNTIMES:
            for rt, _ in self.runtimes.values():
                rt.close()
            self.runtimes.clear()
        rt = Runtime.open(project=root, resident=True)
        self.runtimes[k] = (rt, _config_mark(root))
        return rt


def _read_all(conn: Any, deadline: float) -> bytes | None:
    """The whole request (the client shuts its side down after sending); None when it is
    larger than `MAX_REQUEST_BYTES`. OSError (a timeout) past `deadline`: a client that sends
    slowly holds the server up for `READ_TIMEOUT_S` in all, not per read."""
    chunks: list[bytes] = []
    size = 0
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("the request took too long to arrive")
        conn.settimeout(left)
        chunk = conn.recv(1 << 20)
        if not chunk:
            return b"".join(chunks)
        size += len(chunk)
        if size > MAX_REQUEST_BYTES:
            return None
        chunks.append(chunk)


def _config_mark(root: str) -> Any:
    """The config file as it was read: a runtime is opened again when it changes (a store
    file put in the place of the one opened is the runtime's own business: `has_store`)."""
    from ..names import CONFIG_FILE

    try:
        st = os.stat(os.path.join(root, CONFIG_FILE))
    except OSError:
        return None
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns
