"""The resident hook server: the hook process forwards, one long-lived process decides.

A `statewright-hook` process per hook event pays for Python's start-up, then for importing the
runtime, the policy and SQLite, opening the store and, for a shell line, loading tree-sitter:
two such processes per tool call cost +114 to +140 ms in the real Claude Code, 2.7 to 3.3 times
a `python -c pass` hook (DESIGN section 8 allows 1.3 times). So the first hook event of a
project starts a **resident hook server** (`statewright.hook.server`) in the background, and
from then on each hook process only reads its input, hands it to that server over a Unix
socket, checks the answer and prints it. The server answers with the same
`statewright.hook.handlers` the hook process would have run, under the same environment, so
the answers are the same; when no server answers, or its answer is not proven to be its own,
the hook process decides itself, as before. The resident server never widens anything: it is
the same decision, made in another process.

This module is the hook process's side, and the wire format. It imports only what a bare
interpreter already holds (`os`, `sys`, `time`) and `statewright.lean` (its HMAC and socket
round trip on the C modules `_sha256` and `_socket`; `fcntl` too when it starts a server); the
store, the runtime and the policy are not imported at all when the server answers.

**Which server.** One per project, Python, installed package and the environment variables
that shape a process for good (`names_server`: statewright's own, the home, temp and XDG
directories, `PATH`, Python's and the locale's): its name is a digest of all of them, so a hook
whose code or lasting environment differs never talks to a server that would decide
differently. Every other variable (Claude Code gives each session a few of its own) is sent
with each request, and the server's environment is set to exactly the hook's for that
request. The server exits after
`IDLE_ENV` seconds without a request (default 600), when its files are taken away, or when the
code it runs changed on disk.

**Trust.** The socket lives in a private directory (`run_dir`: mode 0700, owned by this user).
Each server holds a random key in a file beside the store (`<state dir>/hook-<name>.key`), where
self-protection keeps every tool of the agent from reading or writing it, as it keeps them from
the store itself. A request carries an HMAC-SHA-256 under that key over its content, a fresh
nonce and the time; the server refuses a request whose MAC, age (`MAX_AGE_S`, less than the
hook waits) or nonce (seen before) is wrong, so another program cannot make it record a result
that did not happen or replay one that did. The answer carries an HMAC over the nonce and the
answer, so a program that took the socket's place cannot answer for statewright: the hook then
decides itself. The
server's own trust in what it reads is the hook's (the hook input comes from the host).

Switched off with `STATEWRIGHT_HOOK_RESIDENT=0` (every event decided in the hook process), and
never used without `$CLAUDE_PROJECT_DIR` (which Claude Code always sets for hooks) or in a
project without a store (nothing to enforce there, and nothing is started).
"""

from __future__ import annotations

import os
import sys
import time

from ..lean import TYPE_CHECKING, hmac_sha256, same_bytes, sha256, unix_request
from ..names import RESIDENT_ENV, run_dir

if TYPE_CHECKING:
    from collections.abc import Mapping

MAGIC = b"SWH1"
NONCE_BYTES = 16
MAC_BYTES = 32
KEY_BYTES = 32
#: the longest a hook process waits for the server's answer before deciding itself
ANSWER_TIMEOUT_S = 20.0
#: a request older than this is not served (nor one from the future): the hook that sent it may
#: be deciding itself by the time a busy server reads it, and it must not count twice
MAX_AGE_S = 15.0
#: the largest request the server reads (a hook input carries a tool's whole result)
MAX_REQUEST_BYTES = 256 * 1024 * 1024
IDLE_ENV = "STATEWRIGHT_HOOK_IDLE"
DEFAULT_IDLE_S = 600.0
#: variables that name a server rather than travel with each request: read once per process
#: (the home and temp directories behind cached paths, the locale, Python's own) or
#: statewright's (`STATEWRIGHT_*`, the project and Claude Code's config directory)
NAMING_ENV = frozenset({"CLAUDE_PROJECT_DIR", "CLAUDE_CONFIG_DIR", "HOME", "PATH", "TMPDIR",
                        "TMP", "TEMP", "LANG"})
NAMING_PREFIXES = ("STATEWRIGHT_", "XDG_", "PYTHON", "LC_")


def names_server(var: str) -> bool:
    return var in NAMING_ENV or var.startswith(NAMING_PREFIXES)


_SEP_FIELD, _SEP_ITEM, _SEP_PAIR = b"\0", b"\x1e", b"\x1f"
_SEPARATORS = ("\0", "\x1e", "\x1f")


class Endpoint:
    """Where one resident server listens and keeps its key."""

    __slots__ = ("key_file", "lock", "name", "root", "run_dir", "socket", "state_dir")

    def __init__(self, root: str, state_dir: str, run_dir: str, name: str) -> None:
        self.root, self.state_dir, self.run_dir, self.name = root, state_dir, run_dir, name
        self.socket = os.path.join(run_dir, name + ".sock")
        self.lock = os.path.join(run_dir, name + ".lock")
        self.key_file = os.path.join(state_dir, f"hook-{name}.key")


def open_lock(path: str) -> int:
    """The lock file's descriptor: created if need be, never through a link, and only a plain
    file of this user's with no other name (anything else in its place raises OSError)."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600)
    st = os.fstat(fd)
    if st.st_mode & 0o170000 != 0o100000 or st.st_uid != os.getuid() or st.st_nlink != 1:
        os.close(fd)
        raise OSError(f"{path} is not a lock file of this user's")
    return fd


def private_dir_ok(path: str) -> bool:
    """A real directory owned by this user that no one else may enter or write."""
    try:
        st = os.lstat(path)
    except OSError:
        return False
    return (st.st_mode & 0o170000 == 0o040000 and st.st_uid == os.getuid()
            and st.st_mode & 0o077 == 0)


def endpoint(environ: Mapping[str, str] | None = None) -> Endpoint | None:
    """This hook's resident server, or None when none is to be used (switched off, no
    `$CLAUDE_PROJECT_DIR`, no store in the project, no Unix sockets)."""
    env = os.environ if environ is None else environ
    project = env.get("CLAUDE_PROJECT_DIR")
    if not project or env.get(RESIDENT_ENV) == "0" or not hasattr(os, "getuid"):
        return None
    from ..names import STORE_FILE, state_dir_str

    root = os.path.realpath(os.path.expanduser(project))
    state_dir = state_dir_str(root, env)
    if not os.path.isfile(os.path.join(state_dir, STORE_FILE)) and not (
            os.path.isdir(state_dir) and shared_store(root, env)):
        return None
    # the interpreter, its venv, the package (the native client reads these from the facts
    # file `note_facts` writes)
    parts = [str(os.getuid()), *installation_facts(), root]
    parts += sorted(f"{k}={v}" for k, v in env.items() if names_server(k))
    digest = sha256("\0".join(parts).encode("utf-8", "surrogateescape")).hexdigest()
    return Endpoint(root, state_dir, run_dir(env), digest[:32])


def installation_facts() -> list[str]:
    """The Python installation's part of a resident server's name: the interpreter by what it
    is (`python` and `python3` in a venv are one), its prefix, statewright's package directory."""
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    return [os.path.realpath(sys.executable), sys.prefix, here]


def native_facts_file(state_dir: str) -> str:
    """Where the facts of the native client beside this `statewright-hook` are kept."""
    bindir = os.path.dirname(os.path.realpath(sys.argv[0] if sys.argv else ""))
    ident = sha256(bindir.encode("utf-8", "surrogateescape")).hexdigest()[:32]
    return os.path.join(state_dir, f"hook-native-{ident}.facts")


def note_facts(state_dir: str) -> None:
    """Write the facts for the native client (atomically, 0600) unless they are there already;
    never raises."""
    try:
        data = "\0".join(installation_facts()).encode("utf-8", "surrogateescape")
        path = native_facts_file(state_dir)
        try:
            with open(path, "rb") as f:
                if f.read() == data:
                    return
        except OSError:
            pass
        from ..atomic import write_atomic  # (the server's, once: not the client's path)

        write_atomic(path, data)
    except Exception:
        pass


def shared_store(root: str, env: Mapping[str, str]) -> bool:
    """Whether the project keeps its runs in a shared (PostgreSQL) store: `$STATEWRIGHT_STORE`,
    or a `store` in its config. (A look at the bytes, not a parse: a false yes only means the
    server decides, which it does exactly as this process would.)"""
    if env.get("STATEWRIGHT_STORE", "").strip():
        return True
    from ..names import CONFIG_FILE

    try:
        with open(os.path.join(root, CONFIG_FILE), "rb") as fh:
            return b'"store"' in fh.read()
    except OSError:
        return False


# -- the hook process's side -------------------------------------------------------------------

def request_body(args: list[str], stdin: bytes, environ: Mapping[str, str]) -> bytes | None:
    """The arguments, the variables that do not name the server and the hook input, as the
    server reads them; None when one cannot be framed (a separator inside it: then the hook
    decides itself)."""
    pairs = [(k, v) for k, v in environ.items() if not names_server(k)]
    texts = [*args, *(t for kv in pairs for t in kv)]
    if any(sep in t for t in texts for sep in _SEPARATORS):
        return None
    enc = "utf-8", "surrogateescape"
    argv = _SEP_ITEM.join(a.encode(*enc) for a in args)
    env = _SEP_ITEM.join(k.encode(*enc) + _SEP_PAIR + v.encode(*enc) for k, v in pairs)
    return argv + _SEP_FIELD + env + _SEP_FIELD + stdin


def ask(args: list[str], stdin: bytes, native: bool = False) -> str | None:
    """The resident server's answer to this hook event (the text to print, '' for nothing),
    or None when the hook process must decide itself. Starts the server when there is none,
    except on SessionStart: in the `mcp` form it is the only process hook, and a server would
    only compete with the session's start for the CPU. `native`: started by the native client,
    whose facts are noted (`note_facts`). Never raises."""
    try:
        ep = endpoint()
        if ep is None:
            return None
        if native:
            note_facts(ep.state_dir)
        return _ask(ep, args, stdin)
    except Exception:
        return None


def _ask(ep: Endpoint, args: list[str], stdin: bytes) -> str | None:
    start = not args or args[0].replace("-", "").replace("_", "").lower() != "sessionstart"

    try:
        with open(ep.key_file, "rb") as f:
            key = f.read()
    except OSError:
        key = b""
    if len(key) != KEY_BYTES or not private_dir_ok(ep.run_dir):
        if start:
            _start_server(ep)
        return None
    body = request_body(args, stdin, os.environ)
    if body is None:
        return None
    nonce = os.urandom(NONCE_BYTES)
    stamp = int(time.time() * 1000).to_bytes(8, "big")
    head = MAGIC + nonce + stamp
    frame = head + hmac_sha256(key, b"Q" + head + body) + body
    try:
        reply = unix_request(ep.socket, frame, ANSWER_TIMEOUT_S)
    except (FileNotFoundError, ConnectionRefusedError):
        if start:
            _start_server(ep)
        return None
    mac, out = reply[len(MAGIC):len(MAGIC) + MAC_BYTES], reply[len(MAGIC) + MAC_BYTES:]
    if not reply.startswith(MAGIC) or not same_bytes(mac, hmac_sha256(key, b"A" + nonce + out)):
        return None  # no answer, a refusal to serve, or not the server's: decide here
    return out.decode("ascii")


def _start_server(ep: Endpoint) -> None:
    """Start the resident server in the background unless one holds its lock (it may still be
    starting). This hook event is decided by the hook process itself."""
    import fcntl

    if not private_dir_ok(ep.run_dir):
        try:
            os.mkdir(ep.run_dir, 0o700)
        except FileExistsError:
            pass
        if not private_dir_ok(ep.run_dir):
            return  # someone else's or an open directory: never serve from it
    fd = open_lock(ep.lock)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return  # a server holds the lock
    finally:
        os.close(fd)  # (releases the lock: the server takes it for its lifetime)
    # The server imports from exactly the hook's `sys.path` (absolute entries only: it works
    # from `/`), so nothing comes before the standard library that does not come before it here:
    # a module the agent wrote into the project never shadows one the server imports later.
    # Started with `-P`: no working directory on the path before that.
    path = [os.path.abspath(p) for p in sys.path if p]
    code = ("import sys; sys.path[:] = sys.argv[1:]; "
            "from statewright.hook.server import main; main()")
    null = os.devnull
    os.posix_spawn(sys.executable, [sys.executable, "-P", "-c", code, *path],
                   os.environ, setsid=True,
                   file_actions=[(os.POSIX_SPAWN_OPEN, 0, null, os.O_RDONLY, 0),
                                 (os.POSIX_SPAWN_OPEN, 1, null, os.O_WRONLY, 0),
                                 (os.POSIX_SPAWN_OPEN, 2, null, os.O_WRONLY, 0)])
