"""The PostgreSQL store (teams; DESIGN.md section 5): runs, history, approvals and compiled
definitions in a database that several machines share, behind the same interface as the
SQLite store (`store.db`), with the same semantics.

Chosen by `statewright.json` `"store": "postgresql://..."` or `$STATEWRIGHT_STORE`; needs the
optional extra `statewright[postgres]` (psycopg 3), imported only here, only when a project
uses it. The hook process never opens it: a project with a PostgreSQL store is served by its
resident hook server (`statewright.hook.resident`), which keeps its connection.

**One store, many projects.** Every run names its project (`Config.project`: the config's
`"project"`, else the root directory's name, so two checkouts of one repository share their
runs) and the machine it was started on; every lookup by session, workflow or binding is
within this store's project. Listing may ask for every project (`all_projects=True`).

**Concurrency.** Every read-modify-write is one transaction (READ COMMITTED) on this thread's
connection: a write transaction locks each run it reads (`SELECT ... FOR UPDATE`, which also
returns the newest committed row), and a lookup by session first takes a transaction-level
advisory lock on (project, session), so two processes cannot both start a run for one session;
every update of a run checks the version read. A read transaction is one REPEATABLE READ
snapshot. Across transactions only a run this connection wrote is kept, checked by the server
wherever it is used (`pg_kept`).

**History** is append-only (a trigger refuses UPDATE and DELETE), hash-chained per run
(`store.chain`), each link computed under the run's lock.

**Failures.** A connection that cannot be made or is lost is a `STORE_ERROR` naming the server
(never the password); the decision it was for fails closed. One found broken when a transaction
begins is replaced once; one lost mid-transaction is rolled back by the server and replaced.
"""

from __future__ import annotations

import os
import re

from ..definition.compiled import CompiledWorkflow
from ..engine.run import PAUSED, RUNNING, Run
from ..errors import STORE_ERROR, UNKNOWN_RUN, StatewrightError
from ..lean import TYPE_CHECKING, allocate_lock, thread_local
from ..lean import loads as _loads
from .cache import RowCache
from .chain import canonical
from .pg_kept import Kept, KeptTx, keep_committed, write_kept
from .pg_listen import ChangeFeed, notice
from .pg_schema import migrate
from .pg_sql import (
    CHECKED,
    INSERT_EVENT,
    LOCK_RUN,
    LOCK_SESSION,
    NOTIFY,
    OPEN,
    RESOLVE_SESSION,
    SELECT_RUN,
    SOURCES,
    UPDATE_ALL,
    UPDATE_COUNTERS,
    UPDATE_LIVE,
    UPDATE_MOVED,
    VERSIONED,
    WITH_EVENT,
)
from .pg_tables import PgTables
from .tables import (
    DEF_CACHE,
    DEF_LOCK,
    DIGEST_AT,
    definition_digest,
    event_fields,
    file_sha256,
    files_json,
    moves_of,
    run_from_row,
    snapshot_of,
    structure_of,
)
from .tables import to_json as _dumps

if TYPE_CHECKING:  # pragma: no cover
    from collections.abc import Sequence
    from typing import Any

LOCK_TIMEOUT_MS = 30_000  # how long a statement waits for a lock (SQLite's busy timeout)
#: a transaction left open this long without a statement is ended by the server (a stopped
#: process holding a run's lock does not hold it for good)
IDLE_IN_TRANSACTION_MS = 120_000
CONNECT_TIMEOUT_S = 10
_FEED_LOCK = allocate_lock()


def redact(url: str) -> str:
    """`url` without its password (errors and listings name the server, never the secret)."""
    url = re.sub(r"^(\w+://[^/@:?]*):[^@/?]*@", r"\1:***@", url)
    return re.sub(r"(?i)(password=)[^&\s]*", r"\1***", url)


def _psycopg() -> Any:
    try:
        import psycopg
    except ImportError:
        raise StatewrightError(
            STORE_ERROR, "this project's store is PostgreSQL, but psycopg is not installed: "
            "pip install 'statewright[postgres]'") from None
    return psycopg


def machine_name() -> str:
    """This machine's name, as runs and history record it (`$STATEWRIGHT_MACHINE` names it
    otherwise: CI runners whose host names are random)."""
    return os.environ.get("STATEWRIGHT_MACHINE") or os.uname().nodename or "unknown"


def _error(url: str, exc: BaseException) -> StatewrightError:
    msg = " ".join((str(exc) or type(exc).__name__).split())
    sqlstate = getattr(exc, "sqlstate", None) or ""
    if sqlstate in ("40001", "40P01"):
        hint = "another process changed the same run at the same moment; retry"
    elif sqlstate == "55P03":
        hint = "another process holds the run locked for too long; retry"
    elif sqlstate.startswith("08") or not sqlstate:
        hint = ("the PostgreSQL server could not be reached: check that it runs and that the "
                "`store` URL (statewright.json or $STATEWRIGHT_STORE) is right")
    elif sqlstate.startswith("28"):
        hint = "the server refused the credentials of the `store` URL"
    else:
        hint = "the store could not be used"
    return StatewrightError(STORE_ERROR, f"PostgreSQL store {redact(url)}: {msg} — {hint}")


class PgTx(KeptTx, PgTables):
    """Operations inside one open transaction (see `PgStore.transaction`); the same methods as
    `store.db.Tx`."""

    def __init__(self, store: PgStore, conn: Any, cache: RowCache, write: bool,
                 begin: str) -> None:
        self.store = store
        self.conn = conn
        self.cache = cache
        self.write = write
        self.project = store.project
        self.machine = store.machine
        self._digests: dict[str, str] = {}
        self._locked_sessions: set[str] = set()
        #: the runs this transaction started or moved, announced when it commits (`pg_listen`)
        self.changed: dict[str, None] = {}
        #: statements whose answers nobody waits for (BEGIN, locks, writes): sent in one
        #: pipeline with the next statement whose answer is read, or with COMMIT
        self._queue: list[tuple[str, Any, Any]] = [(begin, None, None)]
        self.begun = False  # whether BEGIN has gone to the server
        #: opened with `optimistic=True`: a session's kept run may be decided on unread
        self.optimistic = False
        self.assumed = None  # (these four: `pg_kept.KeptTx`)
        self.kept_write = None
        self.resolved = {}
        self.mark = None
        #: run_id -> [run, rev, head] after a decision's write, while no later write touched it
        self.decided: dict[str, list[Any]] = {}

    def _later(self, sql: str, args: Any = None, then: Any = None) -> None:
        self._queue.append((sql, args, then))  # (`then`: called with its answer's first row)

    def announce(self, run_id: str | None) -> None:
        """Announce a change of run `run_id` to the other machines when this commits."""
        self.changed[run_id or ""] = None

    def flush(self, sql: str | None = None, args: Any = None) -> Any:
        """Send the queued statements and `sql` in one round trip; the cursor of `sql`."""
        if self.assumed is not None:
            self._check()
        queue, self._queue = self._queue, []
        if sql is not None:
            queue.append((sql, args, None))
        if not queue:
            return None
        first = not self.begun
        self.begun = True
        psycopg = _psycopg()
        try:
            return self._send(queue)
        except psycopg.OperationalError:
            if not first or not self.conn.broken:
                raise
        # the connection was broken before this transaction sent anything (the server
        # restarted, the network dropped while idle): once more on a new one
        self.conn = self.store._reconnect()
        return self._send(queue)

    def _send(self, queue: list[tuple[str, Any, Any]]) -> Any:
        if len(queue) == 1 and queue[0][2] is None:
            return self.conn.execute(queue[0][0], queue[0][1])
        cursors = []
        with self.conn.pipeline():
            for q, a, _ in queue:
                cursors.append(self.conn.execute(q, a))
        for (_, _, then), cur in zip(queue, cursors, strict=True):
            if then is not None:
                then(cur.fetchone())
        return cursors[-1]

    def _one(self, sql: str, args: Any = ()) -> Any:
        return self.flush(sql, args).fetchone()

    def _all(self, sql: str, args: Any = ()) -> list[Any]:
        return list(self.flush(sql, args).fetchall())

    def _run_row(self, row: Any) -> Run | None:
        if row is None:
            return None
        run = run_from_row(row)
        digest = row[DIGEST_AT]
        self._digests[run.run_id] = digest
        self.cache.runs[run.run_id] = (run, digest)
        return run

    def _lock_session(self, session: str) -> None:
        if self.write and session not in self._locked_sessions:
            self._locked_sessions.add(session)
            self._later(LOCK_SESSION, (f"{len(self.project)}:{self.project}:{session}",))

    # -- runs -------------------------------------------------------------------------------
    def get_run(self, run_id: str) -> Run | None:
        hit = self.cache.runs.get(run_id)
        if hit is not None:
            self._digests[run_id] = hit[1]
            return hit[0]
        return self._run_row(self._one(LOCK_RUN if self.write else SELECT_RUN, (run_id,)))

    def require_run(self, run_id: str) -> Run:
        run = self.get_run(run_id)
        if run is None:
            raise StatewrightError(UNKNOWN_RUN, f"no run with id {run_id}")
        return run

    def definition_of(self, run_id: str) -> CompiledWorkflow:
        digest = self._digests.get(run_id)
        if digest is None:
            row = self._one("SELECT def_digest FROM runs WHERE run_id=%s", (run_id,))
            if row is None:
                raise StatewrightError(UNKNOWN_RUN, f"no run with id {run_id}")
            digest = self._digests[run_id] = row[0]
        return self.definition(digest)

    def definition(self, digest: str) -> CompiledWorkflow:
        c = DEF_CACHE.get(digest)
        if c is not None:
            return c
        row = self._one("SELECT body FROM definitions WHERE digest=%s", (digest,))
        if row is None:
            raise StatewrightError(STORE_ERROR,
                                   f"definition {digest[:12]} is missing from the store")
        c = CompiledWorkflow.from_dict(_loads(row[0]))
        with DEF_LOCK:
            DEF_CACHE[digest] = c
        return c

    def definition_status(self, run_id: str) -> dict[str, Any] | None:
        row = self._one(
            "SELECT d.source_path, d.source_sha256 FROM runs r JOIN definitions d"
            " ON d.digest = r.def_digest WHERE r.run_id=%s", (run_id,))
        if row is None or not row[0] or row[1] is None:
            return None
        now = file_sha256(row[0])
        return {"source_path": row[0], "changed_since_start": now != row[1],
                "exists": now is not None}

    def put_definition(self, compiled: CompiledWorkflow) -> str:
        digest, body = definition_digest(compiled)
        self._later(
            "INSERT INTO definitions(digest, workflow, source_path, body, source_sha256)"
            " VALUES (%s,%s,%s,%s,%s) ON CONFLICT (digest) DO NOTHING",
            (digest, compiled.id, compiled.source_path, body, file_sha256(compiled.source_path)))
        with DEF_LOCK:
            DEF_CACHE.setdefault(digest, compiled)
        return digest

    def insert_run(self, run: Run, compiled: CompiledWorkflow) -> None:
        digest = self.put_definition(compiled)
        self._digests[run.run_id] = digest
        self.cache.runs[run.run_id] = (run, digest)
        self.announce(run.run_id)
        self._later(
            "INSERT INTO runs(run_id, project, machine, workflow, session, status, parent_run,"
            " version, def_digest, created_at, updated_at, snapshot, iterations, files_edited,"
            " bytes_read, denied, stop_reminders, context, state, transition_count)"
            " VALUES (%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s)",
            (run.run_id, self.project, self.store.machine, run.workflow, run.session,
             run.status, run.parent_run, run.version, digest, run.created_at, run.updated_at,
             snapshot_of(run), run.iterations, files_json(run.files_edited), run.bytes_read,
             run.denied, run.stop_reminders, _dumps(run.context), run.state,
             run.transition_count))

    def save_run(self, run: Run, expected_version: int | None = None,
                 before: Run | None = None) -> None:
        """As `store.db.Tx.save_run`: only what changed is written; the version is checked."""
        sql, args = self._update(run, before)
        self.decided.pop(run.run_id, None)
        if expected_version is not None:
            self._later(VERSIONED[sql], (*args, expected_version, run.run_id))
        else:
            self._later(CHECKED[sql], (*args, run.run_id))

    def _update(self, run: Run, before: Run | None) -> tuple[str, tuple[Any, ...]]:
        """The update that writes what changed from `before` to `run`, and its arguments."""
        counters = (run.iterations, files_json(run.files_edited), run.bytes_read, run.denied,
                    run.stop_reminders)
        args: tuple[Any, ...]
        if before is None or structure_of(before) != structure_of(run):
            sql = UPDATE_ALL
            args = (*moves_of(run), _dumps(run.context), *counters, snapshot_of(run), run.run_id)
            self.announce(run.run_id)
        elif moves_of(before) != moves_of(run):
            sql = UPDATE_MOVED
            args = (*moves_of(run), _dumps(run.context), *counters, run.run_id)
            self.announce(run.run_id)
        elif run.context is not before.context:
            sql, args = UPDATE_LIVE, (*counters, _dumps(run.context), run.run_id)
        else:
            sql, args = UPDATE_COUNTERS, (*counters, run.run_id)
        digest = self._digests.get(run.run_id)
        if digest is not None:
            self.cache.runs[run.run_id] = (run, digest)
        else:
            self.cache.runs.pop(run.run_id, None)
        return sql, args

    def _insert_events(self, rows: Sequence[tuple[str, float, str, str, str, int, str | None]]
                       ) -> None:
        machine = self.store.machine
        params = [{"r": rid, "at": at, "actor": actor, "kind": kind, "v": v, "st": st,
                   "m": machine, "data": data,
                   "canon": canonical(rid, at, actor, kind, v, st, machine, data)}
                  for rid, at, actor, kind, data, v, st in rows]
        for row in rows:
            self.decided.pop(row[0], None)
        for p in params:
            self._later(INSERT_EVENT, p)

    def save_with_events(self, run: Run, new: Run | None, events: Sequence[Any],
                         now: float | None = None) -> Run:
        cur = new if new is not None else run
        if new is not None and new is not run and len(events) == 1:
            # a decision: the run's versioned update and its history row in one statement
            sql, args = self._update(new, run)
            if now is None:
                from time import time

                now = time()
            actor, kind, data = event_fields(events[0])
            rid, machine = run.run_id, self.store.machine
            canon = canonical(rid, now, actor, kind, cur.version, cur.state, machine, data)
            if self.assumed is not None and len(self._queue) == 1:
                self._kept_decision(sql, args, cur, now, actor, kind, data, canon)
            decided = self.decided[rid] = [cur, None, None]

            def done(row: Any) -> None:
                decided[1:] = row[1:3]

            self._later(WITH_EVENT[sql], (*args, run.version, rid, now, actor, kind,
                                           cur.version, cur.state, machine, data, canon, rid,
                                           rid), done)
            return cur
        if new is not None and new is not run:
            self.save_run(new, expected_version=run.version, before=run)
        if events:
            if now is None:
                from time import time

                now = time()
            rows: list[tuple[str, float, str, str, str, int, str | None]] = []
            for ev in events:
                actor, kind, data = event_fields(ev)
                rows.append((run.run_id, now, actor, kind, data, cur.version, cur.state))
            self._insert_events(rows)
        return cur

    def append_event(self, run_id: str, kind: str, actor: str, data: dict[str, Any], at: float,
                     version: int, state: str | None) -> None:
        self._insert_events([(run_id, at, actor, kind, _dumps(data), version, state)])

    def resolve_session_run(self, session: str, fallback: str | None) -> Run | None:
        """As `store.db.Tx.resolve_session_run`; in a write transaction the session is locked
        first and the run found is locked and read afresh."""
        f = fallback if fallback is not None else session
        lookup = (session, f)
        if self.assumed is not None:
            self._check()  # (a second look: the kept run read afresh first)
        elif self.optimistic and not self.begun and len(self._queue) == 1:
            kept = self._assume(lookup)
            if kept is not None:
                return kept
        for _ in range(5):
            if self.write:
                # the session locked, the run found locked (the row returned is its newest
                # version) and the workflow files in use, which a decision protects: one
                # statement (`OPEN`)
                key = None
                if session not in self._locked_sessions:
                    self._locked_sessions.add(session)
                    key = f"{len(self.project)}:{self.project}:{session}"
                want = self.cache.sources is None
                if self.optimistic and not self.resolved and self.mark is None:
                    self._read_mark()
                row = self._one(OPEN, (key, self.project, session, f, RUNNING, PAUSED, want))
                if want:
                    self.cache.sources = frozenset(row[-1] or ())
                run = self._run_row(row if row[0] is not None else None)
            else:
                run = self._run_row(self._one(RESOLVE_SESSION, {
                    "p": self.project, "s": session, "f": f, "a": RUNNING, "b": PAUSED}))
            if run is None or run.status in (RUNNING, PAUSED):
                if self.write:
                    self.resolved[lookup] = run.run_id if run is not None else None
                return run
            self.cache.runs.pop(run.run_id, None)  # it ended while this waited for its lock
        raise StatewrightError(STORE_ERROR, f"the runs of session {session} keep changing; retry")

    def source_paths_in_use(self) -> frozenset[str]:
        if self.cache.sources is not None:
            return self.cache.sources
        rows = self._all(SOURCES, (self.project, RUNNING, PAUSED))
        self.cache.sources = frozenset(r[0] for r in rows)
        return self.cache.sources


def open_shared(url: str, rt: Any) -> PgStore:
    """The shared store of runtime `rt`'s project. Its state directory still holds this
    machine's own files (the resident hook server's key, its log): made here, as the SQLite
    store makes it."""
    from .db import write_gitignore

    store = PgStore.open(url, rt.config.project_name, resident=rt.resident)
    try:
        os.makedirs(rt.store_dir, exist_ok=True)
    except OSError:
        pass
    write_gitignore(rt.store_dir)
    return store


class PgStore:
    """A PostgreSQL store for one project: a connection per thread, opened lazily."""

    kind = "postgresql"

    def __init__(self, url: str, project: str, machine: str | None = None,
                 resident: bool = False) -> None:
        self.url = url
        self.file = redact(url)  # what messages name (the SQLite store's file)
        self.project = project
        self.machine = machine or machine_name()
        self.resident = resident
        self._local = thread_local()
        self.identity = None
        self._feed: ChangeFeed | None = None

    @classmethod
    def open(cls, url: str, project: str, machine: str | None = None,
             resident: bool = False) -> PgStore:
        store = cls(url, project, machine, resident)
        store._conn()  # connect and migrate now: a bad URL is reported at open
        return store

    def _conn(self) -> Any:
        conn = getattr(self._local, "conn", None)
        if conn is not None and not conn.closed:
            return conn
        conn = self._connect()
        self._local.conn = conn
        self._local.cache = RowCache()
        self._local.kept = {}
        self._local.cold = {}  # (session, fallback) -> decisions left to read afresh
        return conn

    def kept(self) -> dict[tuple[str, str], Kept]:
        """This thread's connection's kept runs, by the session lookup that found each."""
        kept: dict[tuple[str, str], Kept] = self._local.kept
        return kept

    def _connect(self) -> Any:
        psycopg = _psycopg()
        try:
            conn = psycopg.connect(
                self.url, autocommit=True, connect_timeout=CONNECT_TIMEOUT_S,
                application_name="statewright")
        except psycopg.Error as exc:
            raise _error(self.url, exc) from None
        try:
            conn.execute(f"SET lock_timeout = {LOCK_TIMEOUT_MS}")
            conn.execute(f"SET idle_in_transaction_session_timeout = {IDLE_IN_TRANSACTION_MS}")
            migrate(conn, self.file)
        except StatewrightError:
            conn.close()
            raise
        except psycopg.Error as exc:
            conn.close()
            raise _error(self.url, exc) from None
        return conn

    def still_here(self) -> bool:
        return True  # (a server, not a file that can be moved away)

    def change_feed(self) -> ChangeFeed:
        """The store's changes as they are committed, by any machine (`pg_listen`): one
        listening connection per store, opened on first use."""
        feed = self._feed
        if feed is None:
            with _FEED_LOCK:
                feed = self._feed
                if feed is None:
                    feed = self._feed = ChangeFeed(self.url).start()
        return feed

    def close(self) -> None:
        feed, self._feed = self._feed, None
        if feed is not None:
            feed.stop()
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            try:
                conn.close()
            finally:
                self._local.conn = None

    def _reconnect(self) -> Any:
        self._drop_connection()
        return self._conn()

    def _drop_connection(self) -> None:
        conn = getattr(self._local, "conn", None)
        self._local.conn = None
        if conn is not None:
            try:
                conn.close()
            except Exception:
                pass

    def transaction(self, write: bool = True, optimistic: bool = False) -> _PgTransaction:
        """A transaction (`PgTx`); `optimistic`: a session's run this connection wrote last
        may be decided on without reading it, checked when written (the caller then catches
        `StaleRead` and decides again without it)."""
        return _PgTransaction(self, write, optimistic)

    def read(self) -> _PgTransaction:
        return _PgTransaction(self, False, False)


class _PgTransaction:
    __slots__ = ("optimistic", "store", "tx", "write")

    def __init__(self, store: PgStore, write: bool, optimistic: bool) -> None:
        self.store = store
        self.write = write
        self.optimistic = optimistic and write
        self.tx: PgTx | None = None

    def __enter__(self) -> PgTx:
        store = self.store
        conn = store._conn()
        cache = store._local.cache
        cache.clear()  # another machine may have written since this connection last looked
        begin = "BEGIN" if self.write else "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"
        tx = self.tx = PgTx(store, conn, cache, self.write, begin)  # (BEGIN goes with the first
        tx.optimistic = self.optimistic                             # statement: `PgTx.flush`)
        return tx

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: object) -> None:
        tx, self.tx = self.tx, None
        assert tx is not None, "__exit__ without __enter__"
        store = self.store
        psycopg = _psycopg()
        if exc_type is not None:
            store._local.cache.clear()
            store.kept().clear()
            if tx.begun:
                try:
                    tx.conn.execute("ROLLBACK")
                except psycopg.Error:
                    store._drop_connection()
            if isinstance(exc, psycopg.Error):
                raise _error(store.url, exc) from None
            return
        if not tx.begun and len(tx._queue) == 1:
            return  # nothing was asked of the server: no BEGIN, no COMMIT
        if write_kept(tx, psycopg, lambda exc: _error(store.url, exc)):
            return
        for run_id in tx.changed:  # (delivered by the server when, and only if, this commits)
            tx._later(NOTIFY, (notice(store.project, run_id),))
        try:
            tx.flush("COMMIT")
        except psycopg.Error as exc2:
            store._local.cache.clear()
            store.kept().clear()
            try:
                tx.conn.execute("ROLLBACK")
            except psycopg.Error:
                store._drop_connection()
            raise _error(store.url, exc2) from None
        if tx.write:
            keep_committed(tx)
