"""The durable store: one SQLite file per project (DESIGN.md sections 1 and 3). Stdlib only.

Layout (schema version `SCHEMA_VERSION`, kept in `PRAGMA user_version`; the file is marked as
ours with `PRAGMA application_id`):

- `definitions(digest PK, workflow, source_path, body, source_sha256)` — compiled workflows
  (JSON of `CompiledWorkflow.to_dict`), keyed by the sha256 of that JSON, with the sha256 of the
  source file's bytes (schema 3). A run points at the definition it started with, so it keeps
  its rules when the file changes (`definition_status` tells).
- `runs(run_id PK, workflow, session, status, parent_run, version, def_digest, snapshot,
  created_at, updated_at, iterations, files_edited, bytes_read, denied, stop_reminders,
  context, state, transition_count)` — `snapshot` is `Run.to_dict()` as JSON without the
  fields that have columns of their own (schema 4, `store.tables`: a call that only counts
  writes a few integers, a plain transition no JSON but the context); `workflow`,
  `parent_run` and `created_at` are copies for lookups.
- `events(seq PK, run_id, at, actor, kind, version, state, data)` — append-only history;
  `seq` is the rowid (schema 4 dropped AUTOINCREMENT, whose `sqlite_sequence` row was one more
  page written by every commit: rows are never deleted, so `seq` still only grows).
- `approvals(approval_id PK, run_id, event, message, target, data, status, requested_at,
  decided_at, decided_by, reason)` — `status` is pending / approved / rejected / dropped.
- `bindings(session PK, run_id, bound_at)` — a session (or a sub-agent's key) bound to a fork
  branch's child run.
- `marks(run_id PK, marks, notices)` (schema 3) — the files matching a run's interrupt patterns
  as last seen by the hook's processes (`runtime.watch`), and interrupt messages not yet told.

Schema 2 adds the indexes the web page reads by: runs newest first (`runs_by_created`) and
the pending approvals (`approvals_by_status`); an older store is migrated on open
(`store.schema`).

Every read-modify-write happens inside one `BEGIN IMMEDIATE` transaction (`Store.transaction`);
WAL mode lets readers proceed meanwhile. Opening is cheap: when
`user_version` is current no DDL runs and only `synchronous` is set (the busy timeout is set by
`sqlite3.connect`).

Import cost matters (every hook process opens the store): SQLite, JSON and thread locals come
from `statewright.lean` (the C modules, without `sqlite3`'s `datetime`, `json`'s `re` or
`threading`); `hashlib` is imported only when a definition is stored.
"""

from __future__ import annotations

import os

from ..definition.compiled import CompiledWorkflow
from ..engine.run import PAUSED, RUNNING, Run
from ..errors import STORE_ERROR, UNKNOWN_RUN, StatewrightError
from ..lean import TYPE_CHECKING, allocate_lock, sqlite3, thread_local
from ..lean import loads as _loads
from .cache import RowCache
from .chain import GENESIS, canonical, link
from .schema import APPLICATION_ID, BUSY_TIMEOUT_MS, MIGRATIONS, PAGE_SIZE, SCHEMA_VERSION
from .tables import (
    DEF_CACHE,
    DEF_LOCK,
    DIGEST_AT,
    R_RUN_COLUMNS,
    RUN_COLUMNS,
    TxTables,
    chain_history,
    definition_digest,
    event_fields,
    file_sha256,
    files_json,
    moves_of,
    run_from_row,
    snapshot_of,
    split_run_rows,
    structure_of,
)
from .tables import to_json as _dumps

if TYPE_CHECKING:  # pragma: no cover
    from collections.abc import Callable, Sequence
    from typing import Any



_INSERT_EVENT = ("INSERT INTO events(run_id, at, actor, kind, data, version, state, prev_hash,"
                 " hash) VALUES (?,?,?,?,?,?,?,?,?)")
_CHAIN_HEAD = "SELECT hash FROM events WHERE run_id=? ORDER BY seq DESC LIMIT 1"
_SELECT_RUN = f"SELECT {RUN_COLUMNS}, def_digest FROM runs WHERE run_id=?"
_RESOLVE_SESSION = (
    f"SELECT {RUN_COLUMNS}, def_digest FROM ("
    f" SELECT {R_RUN_COLUMNS}, r.def_digest, 0 AS prio, 0 AS t, 0 AS rid FROM bindings b"
    "  JOIN runs r ON r.run_id = b.run_id WHERE b.session = ?1 AND r.status IN (?3, ?4)"
    " UNION ALL"
    f" SELECT {RUN_COLUMNS}, def_digest, 1, created_at, rowid FROM runs"
    "  WHERE session = ?1 AND parent_run IS NULL AND status IN (?3, ?4)"
    " UNION ALL"
    f" SELECT {RUN_COLUMNS}, def_digest, 2, created_at, rowid FROM runs"
    "  WHERE session = ?2 AND parent_run IS NULL AND status IN (?3, ?4)"
    ") ORDER BY prio, t DESC, rid DESC LIMIT 1")
_SET_COUNTERS = "iterations=?, files_edited=?, bytes_read=?, denied=?, stop_reminders=?"
# save_run's statements, by what changed (the same text each time: sqlite3 reuses the
# prepared statement); each checks the version read, `_VERSIONED` appended
_UPDATE_COUNTERS = f"UPDATE runs SET {_SET_COUNTERS} WHERE run_id=?"
_UPDATE_LIVE = f"UPDATE runs SET {_SET_COUNTERS}, context=? WHERE run_id=?"
_UPDATE_MOVED = ("UPDATE runs SET version=?, status=?, session=?, updated_at=?, state=?, "
                 f"transition_count=?, context=?, {_SET_COUNTERS} WHERE run_id=?")
_UPDATE_ALL = ("UPDATE runs SET version=?, status=?, session=?, updated_at=?, state=?, "
               f"transition_count=?, context=?, {_SET_COUNTERS}, snapshot=? WHERE run_id=?")
_VERSIONED = {sql: sql + " AND version=?"
              for sql in (_UPDATE_COUNTERS, _UPDATE_LIVE, _UPDATE_MOVED, _UPDATE_ALL)}


def _store_error(path: str | os.PathLike[str], exc: BaseException) -> StatewrightError:
    msg = str(exc) or type(exc).__name__
    if "not a database" in msg or "malformed" in msg or "disk image" in msg:
        hint = ("the file is damaged or is not a statewright store; move it aside "
                "(it is only run state) and statewright will create a fresh one")
    elif "locked" in msg or "busy" in msg:
        hint = "another process holds the store locked for too long; retry"
    elif "readonly" in msg or "unable to open" in msg or "permission" in msg.lower():
        hint = "check that the directory exists and is writable"
    else:
        hint = "the store could not be used"
    return StatewrightError(STORE_ERROR, f"{path}: {msg} — {hint}")


class Tx(TxTables):
    """Operations inside one open transaction (see `Store.transaction`)."""

    def __init__(self, store: Store, conn: sqlite3.Connection, cache: RowCache,
                 run: Callable[..., sqlite3.Cursor]) -> None:
        self.store = store
        self.conn = conn
        self.cache = cache
        self.run = run  # the connection's own cursor's `execute` (see `Store._conn`)
        self._digests: dict[str, str] = {}  # run_id -> definition digest, seen in this transaction

    def _run_row(self, row: Any) -> Run | None:
        """The run of a row of `RUN_COLUMNS` and `def_digest`, remembered."""
        if row is None:
            return None
        run = run_from_row(row)
        digest = row[DIGEST_AT]
        self._digests[run.run_id] = digest
        self.cache.runs[run.run_id] = (run, digest)
        return run

    def _cached(self, run_id: str) -> Run | None:
        hit = self.cache.runs.get(run_id)
        if hit is None:
            return None
        self._digests[run_id] = hit[1]
        return hit[0]

    # -- runs -------------------------------------------------------------------------------
    def get_run(self, run_id: str) -> Run | None:
        hit = self._cached(run_id)
        if hit is not None:
            return hit
        return self._run_row(self.conn.execute(
            _SELECT_RUN, (run_id,)).fetchone())

    def require_run(self, run_id: str) -> Run:
        run = self.get_run(run_id)
        if run is None:
            raise StatewrightError(UNKNOWN_RUN, f"no run with id {run_id}")
        return run

    def definition_of(self, run_id: str) -> CompiledWorkflow:
        digest = self._digests.get(run_id)
        if digest is None:
            row = self.conn.execute("SELECT def_digest FROM runs WHERE run_id=?",
                                    (run_id,)).fetchone()
            if row is None:
                raise StatewrightError(UNKNOWN_RUN, f"no run with id {run_id}")
            digest = self._digests[run_id] = row[0]
        return self.definition(digest)

    def definition(self, digest: str) -> CompiledWorkflow:
        c = DEF_CACHE.get(digest)
        if c is not None:
            return c
        row = self.conn.execute("SELECT body FROM definitions WHERE digest=?", (digest,)).fetchone()
        if row is None:
            raise StatewrightError(STORE_ERROR,
                                   f"definition {digest[:12]} is missing from the store")
        c = CompiledWorkflow.from_dict(_loads(row[0]))
        with DEF_LOCK:
            DEF_CACHE[digest] = c
        return c

    def definition_status(self, run_id: str) -> dict[str, Any] | None:
        """Whether the workflow file of run `run_id`'s definition changed since the run started
        (DESIGN section 3): `{source_path, changed_since_start}`; None without a source file."""
        row = self.conn.execute(
            "SELECT d.source_path, d.source_sha256 FROM runs r JOIN definitions d"
            " ON d.digest = r.def_digest WHERE r.run_id=?", (run_id,)).fetchone()
        if row is None or not row[0] or row[1] is None:
            return None  # (no source file, or stored before schema 3: unknown)
        now = file_sha256(row[0])
        return {"source_path": row[0], "changed_since_start": now != row[1],
                "exists": now is not None}

    def put_definition(self, compiled: CompiledWorkflow) -> str:
        digest, body = definition_digest(compiled)
        self.conn.execute(
            "INSERT OR IGNORE INTO definitions(digest, workflow, source_path, body, source_sha256)"
            " VALUES (?,?,?,?,?)",
            (digest, compiled.id, compiled.source_path, body,
             file_sha256(compiled.source_path)))
        with DEF_LOCK:
            DEF_CACHE.setdefault(digest, compiled)
        return digest

    def _event_args(self, run_id: str, at: float, actor: str, kind: str, data: str,
                    version: int, state: str | None) -> tuple[Any, ...]:
        prev = self.cache.heads.get(run_id)  # (the row's link in its run's chain: `store.chain`)
        if prev is None:
            row = self.run(_CHAIN_HEAD, (run_id,)).fetchone()
            prev = row[0] if row is not None and row[0] else GENESIS
        h = self.cache.heads[run_id] = link(prev, canonical(run_id, at, actor, kind, version, state,
                                                       None, data))
        return (run_id, at, actor, kind, data, version, state, prev, h)

    def insert_run(self, run: Run, compiled: CompiledWorkflow) -> None:
        digest = self.put_definition(compiled)
        self._digests[run.run_id] = digest
        self.cache.heads[run.run_id] = GENESIS
        self.cache.runs[run.run_id] = (run, digest)
        self.cache.lookups_changed()
        self.conn.execute(
            "INSERT INTO runs(run_id, workflow, session, status, parent_run, version, def_digest,"
            " created_at, updated_at, snapshot, iterations, files_edited, bytes_read, denied,"
            " stop_reminders, context, state, transition_count)"
            " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (run.run_id, run.workflow, run.session, run.status, run.parent_run, run.version,
             digest, run.created_at, run.updated_at, snapshot_of(run), run.iterations,
             files_json(run.files_edited), run.bytes_read, run.denied, run.stop_reminders,
             _dumps(run.context), run.state, run.transition_count))

    def save_run(self, run: Run, expected_version: int | None = None,
                 before: Run | None = None) -> None:
        """Write `run` over its row. With `expected_version`, the stored version must match.
        `before` (the run as stored, read in this transaction) says what changed, and only
        that is written: the counters (a call counted), the context (evidence recorded), the
        state, version and times (a plain transition), the snapshot only when something in it
        changed (a fork, an approval, an interrupt, ...)."""
        counters = (run.iterations, files_json(run.files_edited), run.bytes_read, run.denied,
                    run.stop_reminders)
        args: tuple[Any, ...]
        if before is None or structure_of(before) != structure_of(run):
            sql = _UPDATE_ALL
            args = (*moves_of(run), _dumps(run.context), *counters, snapshot_of(run), run.run_id)
        elif moves_of(before) != moves_of(run):
            sql = _UPDATE_MOVED
            args = (*moves_of(run), _dumps(run.context), *counters, run.run_id)
        elif run.context is not before.context:  # (not ==: 1 == True, yet their JSON differs)
            sql, args = _UPDATE_LIVE, (*counters, _dumps(run.context), run.run_id)
        else:
            sql, args = _UPDATE_COUNTERS, (*counters, run.run_id)
        if before is None or before.status != run.status or before.session != run.session:
            self.cache.lookups_changed()
        if expected_version is not None:
            sql = _VERSIONED[sql]
            args += (expected_version,)
        cur = self.run(sql, args)
        if cur.rowcount != 1:
            raise StatewrightError(STORE_ERROR, f"run {run.run_id} changed underneath this "
                                   "transaction (lost update prevented); retry")
        digest = self._digests.get(run.run_id)
        if digest is not None:
            self.cache.runs[run.run_id] = (run, digest)
        else:
            self.cache.runs.pop(run.run_id, None)

    def save_with_events(self, run: Run, new: Run | None, events: Sequence[Any],
                         now: float | None = None) -> Run:
        """Persist `new` (read as `run` in this transaction; None or `run` itself: unchanged)
        and append `events` (`engine.Event`s, `{kind, actor, data}` dicts, or `EventRow`s)
        for it, with the resulting version and state. Returns the run as stored."""
        cur = new if new is not None else run
        if new is not None and new is not run:
            self.save_run(new, expected_version=run.version, before=run)
        if events:
            if now is None:
                from time import time

                now = time()
            if len(events) == 1:  # (a call's: one row, on the transaction's own cursor)
                self.run(_INSERT_EVENT, self._event_args(
                    run.run_id, now, *event_fields(events[0]), cur.version, cur.state))
            else:
                self.conn.executemany(_INSERT_EVENT, [
                    self._event_args(run.run_id, now, *event_fields(ev), cur.version, cur.state)
                    for ev in events])
        return cur

    def append_event(self, run_id: str, kind: str, actor: str, data: dict[str, Any], at: float,
                     version: int, state: str | None) -> None:
        self.conn.execute(_INSERT_EVENT, self._event_args(run_id, at, actor, kind, _dumps(data),
                                                          version, state))

    def resolve_session_run(self, session: str, fallback: str | None) -> Run | None:
        """In one query: the running/paused run `session` is bound to (a fork branch), else the
        session's newest running/paused top-level run, else `fallback`'s."""
        key = (session, fallback)
        if key in self.cache.sessions:
            rid = self.cache.sessions[key]
            hit = self._cached(rid) if rid is not None else None
            if rid is None or hit is not None:
                return hit
        row = self.conn.execute(
            _RESOLVE_SESSION,
            (session, fallback if fallback is not None else session, RUNNING, PAUSED)).fetchone()
        run = self._run_row(row)
        self.cache.sessions[key] = run.run_id if run is not None else None
        return run

    def source_paths_in_use(self) -> frozenset[str]:
        """Source files of the definitions that running or paused runs use."""
        if self.cache.sources is not None:
            return self.cache.sources
        rows = self.conn.execute(
            "SELECT DISTINCT d.source_path FROM runs r"
            " JOIN definitions d ON d.digest = r.def_digest"
            " WHERE r.status IN (?, ?) AND d.source_path IS NOT NULL", (RUNNING, PAUSED)).fetchall()
        self.cache.sources = frozenset(r[0] for r in rows)
        return self.cache.sources


#: the store directory's own `.gitignore` (DESIGN section 5): git counts everything in it as
#: ignored, so `git clean -fd` and `git stash -u` leave the store alone; only the options that
#: remove ignored files reach it (`-x`, `-X`, `--all`), and self-protection refuses those
STORE_GITIGNORE = "# statewright's store: never committed, never cleaned\n*\n"


def write_gitignore(directory: str) -> None:
    """Give the store directory its `.gitignore` unless it has one."""
    if not directory:
        return
    path = os.path.join(directory, ".gitignore")
    if os.path.exists(path):
        return
    try:
        with open(path, "x", encoding="utf-8") as fh:
            fh.write(STORE_GITIGNORE)
    except OSError:
        pass  # (a read-only or shared directory: the store works without it)


class Store:
    """The project's state.db. Connections are per thread and opened lazily.

    `resident=True` (a long-running process: `statewright serve`, `ui`): its connections never
    checkpoint the WAL inside a commit; a background thread does (`store.checkpoint`), so the
    fsyncs of a checkpoint are not paid on the path of a decision or a transition, and starts
    the WAL over once it is long; while it does, this process's writers wait on `_gate` before
    BEGIN. Durability is the same: a commit is in the WAL either way."""

    def __init__(self, path: str | os.PathLike[str], resident: bool = False) -> None:
        self.file = os.fspath(path)  # the database file, as a str
        self._local = thread_local()
        self.resident = resident
        self._checkpointer: Any = None
        self._gate: Any = None  # see above: a lock while the checkpointer thread runs
        self.identity: tuple[int, int] | None = None  # (st_dev, st_ino) of the file opened

    @classmethod
    def open(cls, path: str | os.PathLike[str], resident: bool = False) -> Store:
        store = cls(path, resident)
        store._conn()  # validate now: a damaged file is reported at open
        st = os.stat(store.file)
        store.identity = (st.st_dev, st.st_ino)
        if resident:
            store._start_checkpointer()
        return store

    def _start_checkpointer(self) -> None:
        from .checkpoint import start  # (only long-running processes: the hook never gets here)

        self._gate = allocate_lock()
        self._checkpointer = start(self.file, self._gate)

    # -- connection -------------------------------------------------------------------------
    def _conn(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            return conn
        conn = self._connect()
        self._local.conn = conn
        self._local.cache = RowCache()
        # one cursor per connection runs the statements of every transaction's frame and of
        # `save_run` / `save_with_events` (each `conn.execute` builds and drops a cursor):
        # each is stepped at once, none leaves rows to read later
        self._local.run = conn.cursor().execute
        return conn

    def _connect(self) -> sqlite3.Connection:
        parent = os.path.dirname(self.file)
        if parent and not os.path.isdir(parent):
            try:
                os.makedirs(parent, exist_ok=True)
            except OSError as exc:
                raise _store_error(self.file, exc) from None
        try:
            # `timeout` is SQLite's busy timeout: no separate PRAGMA busy_timeout needed
            conn = sqlite3.connect(self.file, timeout=BUSY_TIMEOUT_MS / 1000,
                                   isolation_level=None, check_same_thread=False)
        except sqlite3.Error as exc:
            raise _store_error(self.file, exc) from None
        try:
            version, app_id = conn.execute(
                "SELECT user_version, application_id FROM pragma_user_version, "
                "pragma_application_id").fetchone()
            if version != SCHEMA_VERSION or app_id != APPLICATION_ID:
                self._initialise(conn, version, app_id)
                write_gitignore(parent)
            # WAL survives process crashes with NORMAL; the journal mode itself is persistent.
            conn.execute("PRAGMA synchronous=NORMAL")
            if self.resident:
                conn.execute("PRAGMA wal_autocheckpoint=0")  # the checkpointer thread does it
        except StatewrightError:
            conn.close()
            raise
        except sqlite3.Error as exc:
            conn.close()
            raise _store_error(self.file, exc) from None
        return conn

    def _initialise(self, conn: sqlite3.Connection, version: int, app_id: int) -> None:
        """Create or migrate the schema, or refuse a file that is not ours."""
        if version == 0 and app_id == 0:  # a new file: no page written yet
            conn.execute(f"PRAGMA page_size={PAGE_SIZE}")
        conn.execute("BEGIN IMMEDIATE")
        try:
            version, app_id = conn.execute(
                "SELECT user_version, application_id FROM pragma_user_version, "
                "pragma_application_id").fetchone()
            tables = conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
            if app_id != APPLICATION_ID and (app_id != 0 or version != 0 or tables):
                raise StatewrightError(
                    STORE_ERROR, f"{self.file} is not a statewright store (it holds other data); "
                    "move it aside or set STATEWRIGHT_HOME to another directory")
            if version > SCHEMA_VERSION:
                raise StatewrightError(
                    STORE_ERROR, f"{self.file} was written by a newer statewright (schema "
                    f"{version} > {SCHEMA_VERSION}); upgrade statewright")
            for v in range(version + 1, SCHEMA_VERSION + 1):
                # one statement at a time: executescript() would COMMIT our transaction
                for stmt in MIGRATIONS[v].split(";"):
                    if stmt.strip():
                        conn.execute(stmt)
                if v == 4 and version > 0:  # the rows already there (a new store has none)
                    split_run_rows(conn)
                if v == 5 and version > 0:
                    chain_history(conn)
            conn.execute(f"PRAGMA application_id={APPLICATION_ID}")
            conn.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        mode = conn.execute("PRAGMA journal_mode=WAL").fetchone()[0]
        if str(mode).lower() != "wal":  # e.g. a filesystem without shared memory
            conn.execute("PRAGMA journal_mode=DELETE")

    def still_here(self) -> bool | None:
        """Whether the file this store opened is still at its path: True; another file put in
        its place (moved away and replaced: its open connections would write the old one):
        False; no file there: None."""
        try:
            st = os.stat(self.file)
        except OSError:
            return None
        return (st.st_dev, st.st_ino) == self.identity

    def close(self) -> None:
        if self._checkpointer is not None:
            self._checkpointer.set()
            self._checkpointer = None
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None

    # -- transactions -----------------------------------------------------------------------
    def transaction(self, write: bool = True, optimistic: bool = False) -> _Transaction:
        """One SQLite transaction, as a context manager yielding a `Tx`: BEGIN IMMEDIATE
        (write) or a plain read snapshot. COMMIT on success, ROLLBACK on any exception.
        (`optimistic`: as `store.pg`'s; this store checks what it keeps when the transaction
        begins, under its lock, and never raises `StaleRead`.)"""
        return _Transaction(self, write)

    def read(self) -> _Transaction:
        return _Transaction(self, False)


class _Transaction:
    """`Store.transaction()`: a small context manager (not `contextlib`, which the hook would
    have to import)."""

    __slots__ = ("conn", "run", "store", "write")

    def __init__(self, store: Store, write: bool) -> None:
        self.store = store
        self.write = write
        self.conn: sqlite3.Connection | None = None

    def __enter__(self) -> Tx:
        store = self.store
        conn = store._conn()
        local = store._local
        cache = local.cache
        run = self.run = local.run
        gate = store._gate
        if gate is not None and self.write:  # the checkpointer's RESTART: wait until it is done
            gate.acquire()
            gate.release()
        try:
            run("BEGIN IMMEDIATE" if self.write else "BEGIN")
            # another connection committed since this one last looked: forget what it read
            version = run("PRAGMA data_version").fetchall()[0][0]
        except sqlite3.Error as exc:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise _store_error(store.file, exc) from None
        if version != cache.data_version:
            cache.clear()
            cache.data_version = version
        self.conn = conn
        return Tx(store, conn, cache, run)

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: object) -> None:  # (None: an exception inside the block propagates)
        conn = self.conn
        self.conn = None
        assert conn is not None, "__exit__ without __enter__"
        if exc_type is not None:
            cache = self.store._local.cache
            cache.clear()  # what this transaction wrote was rolled back
            cache.data_version = None
            try:
                conn.execute("ROLLBACK")
            except sqlite3.Error:
                pass
            if isinstance(exc, sqlite3.Error):
                raise _store_error(self.store.file, exc) from None
            return
        try:
            self.run("COMMIT")
        except sqlite3.Error as exc2:
            cache = self.store._local.cache
            cache.clear()
            cache.data_version = None
            try:
                conn.execute("ROLLBACK")
            except sqlite3.Error:
                pass
            raise _store_error(self.store.file, exc2) from None
