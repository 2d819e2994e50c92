"""Counting by effect (DESIGN section 4, "Binding by the kernel"; checks 7 and 8).

A sandboxed line (a test runner, `make`, a script, a patch) can change files its text does not
name, so what it changed is found on disk: the project is scanned (`sandbox.scan`: inode, size,
ctime, mode of every entry) when the call is allowed, before it runs (`begin`, from
`authorize`), and again when its result is recorded (`finish`, from `record`); the difference
counts against the state's `max_files_per_state` and `max_edit_lines` and fires the watched-file
interrupts, in `enforcement.record`. Only calls in a state that has one of those limits, or in a
workflow with interrupts, are scanned.

**Where the scan before the call lives.** In a file under the store's directory,
`effects/pending/<key>.scan`, named by the session and the host's id of the call (Claude Code's
`tool_use_id`, the same in PreToolUse and PostToolUse; without one, the tool input): the
resident hook server may answer one hook event and the hook process the other, so neither's
memory can hold it, and two calls running at once each have their own. The store's directory is
hidden from sandboxed code by the kernel and from every tool by self-protection. `finish`
claims the file by renaming it (one result counts it once), and files left by calls whose
result never came (a call the user refused at the host's prompt) are removed after
`STALE_S`. The `pending` directory is removed when its last scan is taken, so a result of a
call that was not scanned (nearly all of them) costs one `stat`.

**Lines changed by a call nobody saw.** Counted as the Write tool's are (`edits.write_lines`:
the lines of the new text that differ from the old), which needs the old text. So a copy of
every regular file of at most `MAX_TEXT_BYTES` is kept in `effects/texts.db` (SQLite), each with
the signature it was read under, and brought up to date by `begin` (only the files whose
signature changed since the copy was made are read again: all of them the first time) and by
`finish` (the files the call changed, read anyway to count them). A copy whose signature is not
the one the scan before the call saw (a race with another process) is not used: the file's
lines then all count as changed (the larger figure). Files larger than `MAX_TEXT_BYTES` and
files that are not text (a NUL byte) count as files, never as lines; links and other
non-regular entries likewise.

Stdlib only; imported when a scanned call is decided or recorded, never otherwise.
"""

from __future__ import annotations

import marshal
import os
import stat as _stat
import time

from ..engine.run import AGENT
from ..lean import TYPE_CHECKING, dumps, sha256
from ..names import EFFECTS_DIR, OBSERVED, OVERRUN, PENDING_DIR
from ..sandbox.launcher import unwrap
from ..sandbox.scan import Changes, Scan, Sig, diff, scan
from .messages import agent_events
from .watch import SKIP_DIRS

if TYPE_CHECKING:  # pragma: no cover
    import sqlite3
    from collections.abc import Callable
    from typing import Any

    from ..definition.compiled import CompiledWorkflow, State
    from ..engine.run import Run
    from ..policy.types import Decision, ToolCall, ToolResult
    from .surface import Runtime

TEXTS_DB = "texts.db"
#: files up to this size are kept as text to count their changed lines; larger ones count as
#: files only (generated data, lock files, bundles)
MAX_TEXT_BYTES = 256 * 1024
#: a scan before a call whose result has not come after this long is removed
STALE_S = 24 * 3600.0
#: the longest one scan may take (a project of a few million files): the hook answers in time
#: (the resident hook server gives a decision 18 s, the host a hook 30 s), with a refusal
SCAN_LIMIT_S = 8.0
#: the longest `begin` spends copying text files (a large project's first call): what is left
#: is copied by the next calls (until then, a change to such a file counts all its lines)
COPY_LIMIT_S = 4.0
_FORMAT = 2
_SCAN = ".scan"


class Effect:
    """What one call changed, by effect: the paths (not directories) created, changed and
    removed (`files`: all of them, sorted), and the lines changed in text files (`lines`);
    `uncounted`: files whose lines cannot be counted (not text, or too large). `failure`: why
    what it changed could not be found (then nothing else is known)."""

    __slots__ = ("changes", "failure", "files", "line", "lines", "uncounted")

    def __init__(self, changes: Changes, lines: int = 0, uncounted: tuple[str, ...] = (),
                 failure: str | None = None, line: str | None = None) -> None:
        self.changes = changes
        self.files = changes.files()
        self.lines = lines
        self.uncounted = uncounted
        self.failure = failure
        self.line = line  # the shell line as the agent wrote it (before any rewriting)

    def __bool__(self) -> bool:  # (something to account)
        return bool(self.files) or self.failure is not None

    def __repr__(self) -> str:
        return (f"Effect(files={self.files!r}, lines={self.lines!r}, "
                f"uncounted={self.uncounted!r}, failure={self.failure!r})")


def wanted(state: State, wf: CompiledWorkflow) -> bool:
    """Whether an allowed sandboxed call in `state` is scanned: something would count what
    it changed."""
    return (state.max_files_per_state is not None or state.max_edit_lines is not None
            or bool(wf.interrupts) or bool(state.read_only))


def _read_only_hit(globs: tuple[str, ...], files: Any) -> tuple[str, str] | None:
    """The first (glob, file) of the state's `read_only` globs a changed file matches."""
    from ..policy.paths import glob_match

    for f in files:
        for g in globs:
            if glob_match(g, f):
                return g, f
    return None


def take(rt: Runtime, unlisted: set[str] | None = None) -> Scan:
    """The scan of `rt`'s project: every entry but what is under a directory that is never the
    project's own files (`watch.SKIP_DIRS`: version control's database, installed
    dependencies, caches, the store) or under the store's directory wherever it is. The
    directories it could not list go to `unlisted`; past `SCAN_LIMIT_S` it raises."""
    return scan(rt.root_dir, SKIP_DIRS, (rt.store_dir,), unlisted=unlisted,
                deadline=time.monotonic() + SCAN_LIMIT_S)


def call_key(session: str, call_id: object, tool_name: object, tool_input: object) -> str:
    """The name of a call's scan: its session and the host's id of the call (else its input)."""
    if isinstance(call_id, str) and call_id:
        ident = "id\0" + call_id
    else:
        ident = "input\0" + str(tool_name) + "\0" + dumps(tool_input, sort_keys=True,
                                                          default=repr)
    data = (str(session) + "\0" + ident).encode("utf-8", "surrogatepass")
    return sha256(data).hexdigest()[:40]


def effects_dir(rt: Runtime) -> str:
    return os.path.join(rt.store_dir, EFFECTS_DIR)


# -- accounting ---------------------------------------------------------------------------------

def account(run: Run, rows: tuple[Any, ...], state: State, effect: Effect, line: str | None,
            tool: object) -> tuple[Run, tuple[Any, ...], list[str]]:
    """The run with what a sandboxed call changed counted (checks 7 and 8 by effect, in
    `enforcement.record`'s transaction): its files join the state's `files_edited`; a limit
    it went over is kept under `_observed.overrun`, so every further call is refused until the
    run transitions (`gate`). Also `rows` with the history row saying what it changed, and
    what the agent must be told now. Pure."""
    edited = set(run.files_edited)
    files = effect.files
    new = [f for f in files if f not in edited]
    total = sorted(edited.union(files))
    if effect.line is not None:  # (the line the agent wrote, not the launcher's around it)
        line = effect.line
    elif line is not None:
        line = unwrap(line) or line
    what = (f"the command `{line[:200]}`" if line is not None else f"`{tool}`")
    shown = _listing(files)
    over: tuple[str, str] | None = None
    limit = state.max_files_per_state
    if effect.failure is not None:
        over = ("by_effect", f"statewright could not find what {what} changed "
                f"({effect.failure}), so it cannot vouch for this state's limits")
    elif limit is not None and new and len(total) > limit:
        over = ("max_files_per_state",
                f"{what} changed {len(files)} file(s) ({shown}), so {len(total)} files are "
                f"changed in this state ({_listing(total)}); max_files_per_state is {limit}")
    elif state.read_only and (hit := _read_only_hit(state.read_only, files)):
        # (a file a `read_only` glob matches that did not exist when the line started: the
        # sandbox froze only what existed)
        over = ("read_only", f"{what} changed `{hit[1]}`, which this state keeps read-only "
                f"(`{hit[0]}`)")
    elif state.max_edit_lines is not None and effect.lines > state.max_edit_lines:
        over = ("max_edit_lines",
                f"{what} changed {effect.lines} lines ({shown}); max_edit_lines is "
                f"{state.max_edit_lines} per call")
    ch = effect.changes
    dirs = ch.dirs
    data: dict[str, Any] = {
        "tool": tool, "created": [p for p in ch.created if p not in dirs],
        "changed": [p for p in ch.changed if p not in dirs],
        "removed": [p for p in ch.removed if p not in dirs], "lines": effect.lines}
    if line is not None:
        data["command"] = line[:1000]
    if effect.uncounted:
        data["lines_not_counted"] = list(effect.uncounted)
    if effect.failure is not None:
        data["failure"] = effect.failure
    told: list[str] = []
    ctx = run.context
    obs = ctx.get(OBSERVED)
    if over is not None and not (type(obs) is dict and type(obs.get(OVERRUN)) is dict):
        data["overrun"] = over[0]
        obs = dict(obs) if type(obs) is dict else {}
        obs[OVERRUN] = {"rule": over[0], "reason": f"{over[1]}; every call but statewright's "
                        "own tools is refused until the run transitions",
                        "files": list(files), "lines": effect.lines}
        ctx = {**ctx, OBSERVED: obs}
        told.append(f"[statewright] {over[1][0].upper()}{over[1][1:]}. Every further call but "
                    "statewright's own tools is refused until the run transitions; events "
                    f"available: {', '.join(agent_events(state)) or 'none'}.")
    row = {"kind": "changed_by_effect", "actor": AGENT, "data": data}
    return run.with_(files_edited=tuple(total), context=ctx), (*rows, row), told


def _listing(files: list[str] | tuple[str, ...], most: int = 10) -> str:
    shown = ", ".join(files[:most])
    return shown + (f" and {len(files) - most} more" if len(files) > most else "")


# -- before the call ------------------------------------------------------------------------------

def begin(rt: Runtime, session: str, call: ToolCall, line: str | None = None) -> None:
    """Scan the project before an allowed sandboxed call runs, keep the scan for its result
    (with `line`, the call's shell line as the agent wrote it), and bring the copies of text
    files up to date with it. Raises when the scan cannot be kept (the caller refuses the
    call: an uncounted call is not let through)."""
    d = effects_dir(rt)
    pending = os.path.join(d, PENDING_DIR)
    os.makedirs(d, mode=0o700, exist_ok=True)
    _sweep(pending)
    unlisted: set[str] = set()
    before = take(rt, unlisted)
    with _Texts(os.path.join(d, TEXTS_DB)) as texts:
        texts.refresh(rt.root_dir, before, time.monotonic() + COPY_LIMIT_S)
    from ..atomic import write_atomic  # (a line that is scanned: not every call's path)

    key = call_key(session, call.call_id, call.tool_name, call.tool_input)
    data = marshal.dumps((_FORMAT, time.time(), before, sorted(unlisted), line))
    for attempt in range(5):
        os.makedirs(pending, mode=0o700, exist_ok=True)
        try:
            write_atomic(os.path.join(pending, key + _SCAN), data)
            return
        except FileNotFoundError:  # (the directory, empty, was just removed by a result)
            if attempt == 4:
                raise


def _sweep(pending: str) -> None:
    """Remove scans of calls whose result never came."""
    limit = time.time() - STALE_S
    try:
        with os.scandir(pending) as it:
            for e in it:
                try:
                    if e.stat(follow_symlinks=False).st_mtime < limit:
                        os.unlink(e.path)
                except OSError:
                    pass
    except OSError:
        pass


# -- after the call -------------------------------------------------------------------------------

def collect(rt: Runtime, session: str, result: ToolResult,
            failed: Callable[[Runtime, BaseException], Decision],
            describe: Callable[[BaseException], str]) -> Effect | None:
    """`finish`, never raising: when what the call changed cannot be found, an `Effect` that
    says why (`describe`), which `account` records as an overrun (nothing vouches for the
    state's limits any more), unless `failed` (`enforcement.failure_decision`, where
    `fail_open` is honoured) lets a failure through."""
    try:
        return finish(rt, session, result)
    except Exception as exc:
        if failed(rt, exc).allowed:
            return None
        return Effect(Changes(), failure=describe(exc))


def finish(rt: Runtime, session: str, result: ToolResult) -> Effect | None:
    """What the call of `result` changed since its scan before it ran; None when it has no
    such scan (it was not scanned, or its result was already counted)."""
    d = effects_dir(rt)
    pending = os.path.join(d, PENDING_DIR)
    key = call_key(session, result.call_id, result.tool_name, result.tool_input)
    path = os.path.join(pending, key + _SCAN)
    claimed = f"{path}.{os.getpid()}.{os.urandom(4).hex()}.claimed"
    try:
        os.rename(path, claimed)  # (one result counts it: a second finds nothing)
    except FileNotFoundError:
        return None
    try:
        with open(claimed, "rb") as fh:
            fmt, _at, before, unlisted_before, line = marshal.loads(fh.read())
    finally:
        try:
            os.unlink(claimed)
            os.rmdir(pending)  # (only when no other call's scan waits there)
        except OSError:
            pass
    if fmt != _FORMAT or not isinstance(before, dict):
        raise ValueError(f"the scan kept before the call ({path}) is not in a known format")
    unlisted: set[str] = set()
    after = take(rt, unlisted)
    for p in sorted(unlisted):
        # a directory that cannot be listed, and changed during the call (or became unlistable):
        # what changed in it cannot be named, and is not taken for nothing
        if p not in unlisted_before or before.get(p) != after.get(p):
            raise PermissionError(f"the directory {p or '.'} cannot be listed, and it changed "
                                  "during the call")
    changes = diff(before, after)
    if not changes:
        return Effect(changes, line=line)
    with _Texts(os.path.join(d, TEXTS_DB)) as texts:
        lines, uncounted = texts.count(rt.root_dir, changes, before, after)
    return Effect(changes, lines, uncounted, line=line)


# -- the copies of text files ---------------------------------------------------------------------

_ABSENT, _UNKNOWN, _NOT_TEXT = object(), object(), object()


def _sig_text(sig: Sig) -> str:
    return f"{sig[0]}:{sig[1]}:{sig[2]}:{sig[3]}"


def _textual(sig: Sig | None) -> bool:
    """A regular file small enough to be kept as text."""
    return sig is not None and _stat.S_ISREG(sig[3]) and sig[1] <= MAX_TEXT_BYTES


def _read(root: str, rel: str, sig: Sig) -> bytes | None:
    """The content of file `rel`, provided it still has signature `sig` before and after it is
    read (so the content is the one the scan saw); None otherwise."""
    try:
        fd = os.open(os.path.join(root, rel), os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if (st.st_ino, st.st_size, st.st_ctime_ns, st.st_mode) != sig:
            return None
        chunks = []
        left = MAX_TEXT_BYTES + 1
        while left > 0:
            b = os.read(fd, min(left, 1 << 20))
            if not b:
                break
            chunks.append(b)
            left -= len(b)
        st = os.fstat(fd)
        if (st.st_ino, st.st_size, st.st_ctime_ns, st.st_mode) != sig:
            return None
        return b"".join(chunks)
    except OSError:
        return None
    finally:
        os.close(fd)


class _Texts:
    """`texts.db`: path -> (signature, content; NULL content: not text), and the scan the
    copies were last brought up to date with (`known`), in one SQLite file so both change in
    one transaction.

    A cache, not a record: nothing is synced to the disk (a commit that waits for the disk
    costs 20 ms and more; a rollback journal still keeps a killed process from leaving half a
    transaction), and a file SQLite finds damaged is started afresh (its copies are then read
    again by the next `begin`; until then the lines of a changed file all count)."""

    def __init__(self, path: str) -> None:
        import sqlite3

        self.path = path
        try:
            self.conn = self._open(path)
        except sqlite3.DatabaseError:
            for f in (path, path + "-journal"):
                try:
                    os.unlink(f)
                except FileNotFoundError:
                    pass
            self.conn = self._open(path)

    @staticmethod
    def _open(path: str) -> sqlite3.Connection:
        import sqlite3

        c = sqlite3.connect(path, timeout=30.0, isolation_level=None)
        try:
            os.chmod(path, 0o600)
            c.execute("PRAGMA journal_mode=TRUNCATE")
            c.execute("PRAGMA synchronous=OFF")
            c.execute("CREATE TABLE IF NOT EXISTS texts (path TEXT PRIMARY KEY, "
                      "sig TEXT NOT NULL, body BLOB)")
            c.execute("CREATE TABLE IF NOT EXISTS known (id INTEGER PRIMARY KEY "
                      "CHECK (id = 1), scan BLOB NOT NULL)")
        except BaseException:
            c.close()
            raise
        return c

    def __enter__(self) -> _Texts:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.conn.close()

    def _known(self) -> Scan:
        row = self.conn.execute("SELECT scan FROM known WHERE id = 1").fetchone()
        if row is None:
            return {}
        try:
            got = marshal.loads(row[0])
        except (EOFError, ValueError, TypeError):
            return {}
        return got if isinstance(got, dict) else {}

    def _save(self, rows: list[tuple[str, str, bytes | None]], drop: list[str],
              known: Scan) -> None:
        c = self.conn
        if rows:
            c.executemany("INSERT OR REPLACE INTO texts (path, sig, body) VALUES (?, ?, ?)",
                          rows)
        if drop:
            c.executemany("DELETE FROM texts WHERE path = ?", [(p,) for p in drop])
        c.execute("INSERT OR REPLACE INTO known (id, scan) VALUES (1, ?)",
                  (marshal.dumps(known),))

    def refresh(self, root: str, now: Scan, deadline: float) -> None:
        """Bring the copies up to date with scan `now`: read again what changed since the
        scan they were last brought up to date with (until `deadline`, a `time.monotonic()`
        value: what is left is read next time)."""
        c = self.conn
        c.execute("BEGIN IMMEDIATE")
        try:
            known = self._known()
            ch = diff(known, now)
            if not ch:
                c.execute("COMMIT")
                return
            rows: list[tuple[str, str, bytes | None]] = []
            drop = [p for p in ch.removed if _textual(known[p])]
            unread: list[str] = []
            late = False
            for i, p in enumerate((*ch.created, *ch.changed)):
                sig = now[p]
                if not _textual(sig):
                    if _textual(known.get(p)):
                        drop.append(p)
                    continue
                if not late and i & 63 == 63:
                    late = time.monotonic() > deadline
                body = None if late else _read(root, p, sig)
                if body is None:
                    drop.append(p)  # (changed while read, or no time left: no copy)
                    unread.append(p)
                    continue
                rows.append((p, _sig_text(sig), None if b"\0" in body else body))
            if unread:  # (left out of the scan the copies are of: read again next time)
                now = dict(now)
                for p in unread:
                    del now[p]
            self._save(rows, drop, now)
            c.execute("COMMIT")
        except BaseException:
            c.execute("ROLLBACK")
            raise

    def _old(self, sig: Sig | None, path: str) -> object:
        """The text of `path` as the scan before the call saw it (`sig`), or a marker."""
        if sig is None:
            return _ABSENT
        if not _textual(sig):
            return _NOT_TEXT
        row = self.conn.execute("SELECT sig, body FROM texts WHERE path = ?",
                                (path,)).fetchone()
        if row is None or row[0] != _sig_text(sig):
            return _UNKNOWN
        return _NOT_TEXT if row[1] is None else row[1]

    def count(self, root: str, changes: Changes, before: Scan,
              after: Scan) -> tuple[int, tuple[str, ...]]:
        """The lines the call changed in the files of `changes`, and the files whose lines
        cannot be counted; the copies of those files are brought up to date with `after`."""
        from ..policy.edits import count_lines, write_lines

        c = self.conn
        c.execute("BEGIN IMMEDIATE")
        try:
            rows: list[tuple[str, str, bytes | None]] = []
            drop: list[str] = []
            total = 0
            uncounted: list[str] = []
            for p in changes.files():
                old = self._old(before.get(p), p)
                sig = after.get(p)
                new: object = _ABSENT
                if sig is not None:
                    new = _NOT_TEXT
                    if _textual(sig):
                        body = _read(root, p, sig)
                        if body is None:
                            new = _UNKNOWN
                            drop.append(p)
                        else:
                            rows.append((p, _sig_text(sig), None if b"\0" in body else body))
                            if b"\0" not in body:
                                new = body
                    else:
                        drop.append(p)
                else:
                    drop.append(p)
                n = _lines(old, new, count_lines, write_lines)
                if n is None:
                    uncounted.append(p)
                else:
                    total += n
            # the copies are now those of `after`: the unchanged files' were of `before`,
            # the same; a file that could not be read is left out, to be read next time
            known = after
            if drop:
                known = dict(after)
                for p in drop:
                    known.pop(p, None)
            self._save(rows, drop, known)
            c.execute("COMMIT")
        except BaseException:
            c.execute("ROLLBACK")
            raise
        return total, tuple(uncounted)


def _text(b: object) -> str:
    assert isinstance(b, bytes)
    return b.decode("utf-8", "replace")


def _lines(old: object, new: object, count_lines: Any, write_lines: Any) -> int | None:
    """Lines changed from `old` to `new` (each the content, or a marker); None when they cannot
    be counted (neither side is text)."""
    old_text = isinstance(old, bytes)
    new_text = isinstance(new, bytes)
    if old_text and new_text:
        return int(write_lines(_text(new), _text(old)))
    if new_text:  # created, or its old text is not known: every line of it
        return int(count_lines(_text(new)))
    if old_text:  # removed (or no longer text): every line it had
        return int(count_lines(_text(old)))
    return None
