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
snapshot. Nothing is cached across transactions (another machine may have written meanwhile).

**History** is append-only (a trigger refuses UPDATE and DELETE) and hash-chained per run
(`store.chain`); the chain's link is computed by the server in the INSERT itself, under the
run's lock.

**Failures.** A connection that cannot be made or is lost is a `STORE_ERROR` naming the server
(never the password), and the decision it was for fails closed. A connection found broken
when a transaction begins is replaced once; one lost mid-transaction is rolled back by the
server (nothing half-written) and replaced on the next transaction.
"""

from __future__ import annotations

import os
import re

from ..definition.compiled import CompiledWorkflow
from ..engine.run import PAUSED, RUNNING, Run
from ..errors import STORE_ERROR, UNKNOWN_RUN, StatewrightError
from ..lean import TYPE_CHECKING, allocate_lock, thread_local
from ..lean import loads as _loads
from .cache import RowCache, StaleRead
from .chain import canonical, link
from .pg_listen import CHANNEL, ChangeFeed, notice
from .pg_schema import migrate
from .pg_tables import PgTables
from .tables import (
    DEF_CACHE,
    DEF_LOCK,
    DIGEST_AT,
    RUN_COLUMNS,
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

#: how long a statement waits for a lock another transaction holds (SQLite's busy timeout)
LOCK_TIMEOUT_MS = 30_000
#: a transaction left open this long without a statement is ended by the server (a process
#: stopped while holding a run's lock does not hold it for good)
IDLE_IN_TRANSACTION_MS = 120_000
CONNECT_TIMEOUT_S = 10
_FEED_LOCK = allocate_lock()

_COLS = f"{RUN_COLUMNS}, def_digest"
_R_COLS = ", ".join(f"r.{c.strip()}" for c in _COLS.split(","))
_SELECT_RUN = f"SELECT {_COLS} FROM runs WHERE run_id=%s"
_LOCK_RUN = f"SELECT {_COLS} FROM runs WHERE run_id=%s FOR UPDATE"
_LOCK_SESSION = "SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))"
_RESOLVE_SESSION = (
    f"SELECT {_COLS} FROM runs WHERE run_id = (SELECT run_id FROM ("
    " SELECT r.run_id, 0 AS prio, 0::float8 AS t, 0::bigint AS o FROM bindings b"
    "  JOIN runs r ON r.run_id = b.run_id WHERE b.project = %(p)s AND b.session = %(s)s"
    "  AND r.status IN (%(a)s, %(b)s)"
    " UNION ALL"
    " SELECT run_id, 1, created_at, ord FROM runs WHERE project = %(p)s AND session = %(s)s"
    "  AND parent_run IS NULL AND status IN (%(a)s, %(b)s)"
    " UNION ALL"
    " SELECT run_id, 2, created_at, ord FROM runs WHERE project = %(p)s AND session = %(f)s"
    "  AND parent_run IS NULL AND status IN (%(a)s, %(b)s)"
    ") x ORDER BY prio, t DESC, o DESC LIMIT 1)")
# writing: the session's lock, the workflow files in use (when asked for) and the session's
# run, locked and read afresh, in one statement (`pg_schema`, version 2)
_OPEN = "SELECT * FROM statewright_open(%s, %s, %s, %s, %s, %s, %s)"
# a history row and its link in the run's chain, computed by the server from the run's last
# row (under the run's lock): one round trip
_INSERT_EVENT = (
    "WITH b AS (UPDATE runs SET rev=rev+1 WHERE run_id=%(r)s)"
    " INSERT INTO events(run_id, at, actor, kind, version, state, machine, data, prev_hash, hash)"
    " SELECT %(r)s, %(at)s, %(actor)s, %(kind)s, %(v)s, %(st)s, %(m)s, %(data)s, h.prev,"
    " encode(sha256(decode(h.prev, 'hex') || convert_to(%(canon)s, 'UTF8')), 'hex')"
    " FROM (SELECT coalesce((SELECT hash FROM events WHERE run_id = %(r)s"
    " ORDER BY seq DESC LIMIT 1), repeat('0', 64)) AS prev) h")
# the same with its arguments in order (one statement with a run's update: `_WITH_EVENT`)
_EVENT_VALUES = (
    "INSERT INTO events(run_id, at, actor, kind, version, state, machine, data, prev_hash, hash)"
    " SELECT %s, %s, %s, %s, %s, %s, %s, %s, h.prev,"
    " encode(sha256(decode(h.prev, 'hex') || convert_to(%s, 'UTF8')), 'hex')"
    " FROM (SELECT coalesce((SELECT hash FROM events WHERE run_id = %s"
    " ORDER BY seq DESC LIMIT 1), repeat('0', 64)) AS prev) h")
_SET_COUNTERS = "iterations=%s, files_edited=%s, bytes_read=%s, denied=%s, stop_reminders=%s"
# (every change of a run's row adds one to its `rev`, as does a history row added to it: what a
# kept run is checked by, `_KEPT`)
_UPDATE_COUNTERS = f"UPDATE runs SET {_SET_COUNTERS}, rev=rev+1 WHERE run_id=%s"
_UPDATE_LIVE = f"UPDATE runs SET {_SET_COUNTERS}, context=%s, rev=rev+1 WHERE run_id=%s"
_UPDATE_MOVED = ("UPDATE runs SET version=%s, status=%s, session=%s, updated_at=%s, state=%s, "
                 f"transition_count=%s, context=%s, {_SET_COUNTERS}, rev=rev+1 WHERE run_id=%s")
_UPDATE_ALL = ("UPDATE runs SET version=%s, status=%s, session=%s, updated_at=%s, state=%s, "
               f"transition_count=%s, context=%s, {_SET_COUNTERS}, snapshot=%s, rev=rev+1"
               " WHERE run_id=%s")
# each update must change exactly the one row (the version read): checked by the server, so
# that a queued update that missed aborts the transaction before its COMMIT (`PgTx._later`)
_VERSIONED = {sql: ("WITH u AS (" + sql + " AND version=%s RETURNING 1)"
                    " SELECT statewright_one_row(count(*), %s) FROM u")
              for sql in (_UPDATE_COUNTERS, _UPDATE_LIVE, _UPDATE_MOVED, _UPDATE_ALL)}
_CHECKED = {sql: ("WITH u AS (" + sql + " RETURNING 1)"
                  " SELECT statewright_one_row(count(*), %s) FROM u")
            for sql in (_UPDATE_COUNTERS, _UPDATE_LIVE, _UPDATE_MOVED, _UPDATE_ALL)}
_NOTIFY = f"SELECT pg_notify('{CHANNEL}', %s)"
# a run's versioned update and its one history row: one statement (a decision's writes); it
# answers the run's `rev` and its chain's head after it (what the run is kept with)
_WITH_EVENT = {sql: ("WITH u AS (" + sql + " AND version=%s RETURNING rev), e AS ("
                     + _EVENT_VALUES + " RETURNING hash) SELECT statewright_one_row(count(*), %s),"
                     " max(u.rev), (SELECT max(hash) FROM e) FROM u")
               for sql in (_UPDATE_COUNTERS, _UPDATE_LIVE, _UPDATE_MOVED, _UPDATE_ALL)}
# a decision on a kept run (`_Kept`), the whole transaction in one statement: the update
# happens only when the run's `rev` is still the one this connection wrote (the row lock taken,
# the newest row version compared) and the project's session lookups have not changed since
# the run was looked up (the project's mark, `_MARK_OF`, schema 3); its history row is written
# only with the update, linked to the head this connection wrote. 0 rows: nothing written.
_MARK_OF = ("concat_ws(':', (SELECT max(lookup_seq) FROM runs WHERE project = %s),"
            " (SELECT max(lookup_seq) FROM bindings WHERE project = %s),"
            " (SELECT max(n) FROM statewright_removals))")
_KEPT = {sql: ("WITH u AS (" + sql + " AND rev=%s AND " + _MARK_OF + " = %s RETURNING 1),"
               " e AS (INSERT INTO events(run_id, at, actor, kind, version, state, machine,"
               " data, prev_hash, hash) SELECT %s, %s, %s, %s, %s, %s, %s, %s, %s, %s FROM u)"
               " SELECT count(*) FROM u")
         for sql in (_UPDATE_COUNTERS, _UPDATE_LIVE)}
_MARK = "SELECT " + _MARK_OF
#: how many sessions' runs a connection keeps (`_Kept`)
KEPT_SESSIONS = 64
#: after a kept run was found changed, the session's next decisions read it afresh, this many
#: (a run that several processes decide on at once is read under its lock, not guessed at)
COLD_AFTER_STALE = 16
_SOURCES = ("SELECT DISTINCT d.source_path FROM runs r JOIN definitions d ON d.digest ="
            " r.def_digest WHERE r.project=%s AND r.status IN (%s, %s)"
            " AND d.source_path IS NOT NULL")


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


class _Kept:
    """A run as this connection last wrote it in a decision (`_KEPT`): the session lookup it
    was found by, the run, its definition's digest, its `rev` and chain head after the write,
    and the workflow files in use then."""

    __slots__ = ("digest", "head", "key", "mark", "rev", "run", "sources")

    def __init__(self, key: tuple[str, str], run: Run, digest: str, rev: int, head: str,
                 sources: frozenset[str], mark: str) -> None:
        self.key = key
        self.mark = mark
        self.run = run
        self.digest = digest
        self.rev = rev
        self.head = head
        self.sources = sources


class PgTx(PgTables):
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
        #: the kept run this transaction decides on without having read it (until `_check`)
        self.assumed: _Kept | None = None
        #: the decision on the assumed run as one statement (`_KEPT`): (sql, args, kept after)
        self.kept_write: tuple[str, tuple[Any, ...], _Kept] | None = None
        #: (session, fallback) -> the run it resolved to in this transaction
        self.resolved: dict[tuple[str, str], str | None] = {}
        #: run_id -> [run, rev, head] after a decision's write, while no later write touched it
        self.decided: dict[str, list[Any]] = {}
        #: the project's mark (`_MARK_OF`), read before this transaction's first session
        #: lookup (what a run it decides on is kept with)
        self.mark: str | None = None

    def _later(self, sql: str, args: Any = None, then: Any = None) -> None:
        self._queue.append((sql, args, then))

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
        if len(queue) == 1:
            return self.conn.execute(queue[0][0], queue[0][1])
        cursors = []
        with self.conn.pipeline():
            for q, a, _ in queue:
                cursors.append(self.conn.execute(q, a))
        for (_, _, then), cur in zip(queue, cursors, strict=True):
            if then is not None:
                then(cur.fetchone())
        return cursors[-1]

    def _marked(self, row: Any) -> None:
        self.mark = row[0]

    def _check(self) -> None:
        """The assumed kept run read afresh, as a transaction that did not assume it would
        have begun (the session locked, the run locked and read, the files in use): the
        transaction goes on when nothing changed; `StaleRead` when anything did."""
        k, self.assumed = self.assumed, None
        self.kept_write = None
        assert k is not None
        self.mark = k.mark  # (if the mark moved since, the next kept decision is redone)
        session, f = k.key
        rid = k.run.run_id
        self._locked_sessions.add(session)
        rest, self._queue = self._queue[1:], self._queue[:1]  # (what was decided on it waits)
        opened: list[Any] = []
        self._later(_OPEN, (f"{len(self.project)}:{self.project}:{session}", self.project,
                            session, f, RUNNING, PAUSED, True), opened.append)
        rev = self._one("SELECT rev FROM runs WHERE run_id=%s", (rid,))
        self._queue = rest + self._queue
        row = opened[0]
        # (the row was locked by `_OPEN`: its `rev` cannot move before this commits)
        if (row[0] is None or row[DIGEST_AT] != k.digest or rev is None or rev[0] != k.rev
                or run_from_row(row).run_id != rid or frozenset(row[-1] or ()) != k.sources):
            self.store._local.cold[k.key] = COLD_AFTER_STALE
            raise StaleRead(rid)

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
            self._later(_LOCK_SESSION, (f"{len(self.project)}:{self.project}:{session}",))

    # -- runs -------------------------------------------------------------------------------
    def get_run(self, run_id: str) -> Run | None:
        hit = self.cache.runs.get(run_id)
        if hit is not None:
            self._digests[run_id] = hit[1]
            return hit[0]
        return self._run_row(self._one(_LOCK_RUN if self.write else _SELECT_RUN, (run_id,)))

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
            self._later(_VERSIONED[sql], (*args, expected_version, run.run_id))
        else:
            self._later(_CHECKED[sql], (*args, run.run_id))

    def _update(self, run: Run, before: Run | None) -> tuple[str, tuple[Any, ...]]:
        """The update that writes what changed from `before` to `run`, and its arguments."""
        counters = (run.iterations, files_json(run.files_edited), run.bytes_read, run.denied,
                    run.stop_reminders)
        args: tuple[Any, ...]
        if before is None or structure_of(before) != structure_of(run):
            sql = _UPDATE_ALL
            args = (*moves_of(run), _dumps(run.context), *counters, snapshot_of(run), run.run_id)
            self.announce(run.run_id)
        elif moves_of(before) != moves_of(run):
            sql = _UPDATE_MOVED
            args = (*moves_of(run), _dumps(run.context), *counters, run.run_id)
            self.announce(run.run_id)
        elif run.context is not before.context:
            sql, args = _UPDATE_LIVE, (*counters, _dumps(run.context), run.run_id)
        else:
            sql, args = _UPDATE_COUNTERS, (*counters, run.run_id)
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
            self._later(_INSERT_EVENT, p)

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
            k = self.assumed
            if k is not None and k.run.run_id == rid and sql in _KEPT and len(self._queue) == 1:
                # (the run was kept, not read: the whole decision may go as one statement)
                head = link(k.head, canon)
                p = self.project
                self.kept_write = (_KEPT[sql], (
                    *args, k.rev, p, p, k.mark, rid, now, actor, kind, cur.version, cur.state,
                    machine, data, k.head, head),
                    _Kept(k.key, cur, k.digest, k.rev + 1, head, k.sources, k.mark))
            self.decided.pop(rid, None)
            decided = self.decided[rid] = [cur, None, None]

            def done(row: Any) -> None:
                decided[1:] = row[1:3]

            self._later(_WITH_EVENT[sql], (*args, run.version, rid, now, actor, kind,
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
            k = self.store.kept().get(lookup)
            cold = self.store._local.cold
            if k is not None and lookup in cold:
                cold[lookup] -= 1
                if cold[lookup] <= 0:
                    del cold[lookup]
                k = None
            if k is not None:
                # this connection wrote the session's run last: decided on as it was written,
                # checked when the decision is written (`_KEPT`) or anything is read (`_check`)
                rid = k.run.run_id
                self.assumed = k
                self.mark = k.mark
                self.resolved[lookup] = rid
                self._digests[rid] = k.digest
                self.cache.runs[rid] = (k.run, k.digest)
                self.cache.sources = k.sources
                return k.run
        for _ in range(5):
            if self.write:
                # the session locked, the run found locked (the row returned is its newest
                # version) and the workflow files in use, which a decision protects: one
                # statement (`_OPEN`)
                key = None
                if session not in self._locked_sessions:
                    self._locked_sessions.add(session)
                    key = f"{len(self.project)}:{self.project}:{session}"
                want = self.cache.sources is None
                if self.optimistic and not self.resolved and self.mark is None:
                    self._later(_MARK, (self.project, self.project), self._marked)
                row = self._one(_OPEN, (key, self.project, session, f, RUNNING, PAUSED, want))
                if want:
                    self.cache.sources = frozenset(row[-1] or ())
                run = self._run_row(row if row[0] is not None else None)
            else:
                run = self._run_row(self._one(_RESOLVE_SESSION, {
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
        rows = self._all(_SOURCES, (self.project, RUNNING, PAUSED))
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

    def kept(self) -> dict[tuple[str, str], _Kept]:
        """This thread's connection's kept runs, by the session lookup that found each."""
        kept: dict[tuple[str, str], _Kept] = self._local.kept
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
        kw = tx.kept_write
        if kw is not None and tx.assumed is not None and not tx.changed and len(tx._queue) == 2:
            # a decision on a kept run and nothing else: one statement, its own transaction
            store._local.cache.clear()  # (what is kept is `kept`, after this)
            try:
                n = tx.conn.execute(kw[0], kw[1]).fetchone()[0]
            except psycopg.Error as exc2:
                store.kept().clear()
                if not (isinstance(exc2, psycopg.OperationalError) and tx.conn.broken):
                    raise _error(store.url, exc2) from None
                # the connection was lost (the server restarted, the network dropped while
                # idle): on a new one, whether the decision was written is its history row
                # (its hash is its own); written: done, else decided again (`StaleRead`)
                try:
                    row = store._reconnect().execute(
                        "SELECT 1 FROM events WHERE run_id=%s AND hash=%s",
                        (kw[2].run.run_id, kw[2].head)).fetchone()
                except psycopg.Error as exc3:
                    raise _error(store.url, exc3) from None
                if row is None:
                    raise StaleRead(kw[2].run.run_id) from None
                return
            if n != 1:
                store._local.cache.clear()
                store.kept().clear()
                store._local.cold[kw[2].key] = COLD_AFTER_STALE
                raise StaleRead(kw[2].run.run_id)
            self._keep(tx, {kw[2].key: kw[2]})
            return
        for run_id in tx.changed:  # (delivered by the server when, and only if, this commits)
            tx._later(_NOTIFY, (notice(store.project, run_id),))
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
            fresh: dict[tuple[str, str], _Kept] = {}
            for key, rid in tx.resolved.items():
                d = tx.decided.get(rid) if rid is not None else None
                digest = tx._digests.get(rid) if rid is not None else None
                if d is not None and d[2] is not None and digest is not None \
                        and tx.cache.sources is not None and tx.mark is not None:
                    fresh[key] = _Kept(key, d[0], digest, d[1], d[2], tx.cache.sources,
                                       tx.mark)
            self._keep(tx, fresh, tx.resolved)

    def _keep(self, tx: PgTx, fresh: dict[tuple[str, str], _Kept],
              resolved: Any = ()) -> None:
        """After a commit: the runs this transaction's decisions left, kept; the other
        session lookups it made, forgotten."""
        kept = self.store.kept()
        for key in resolved:
            kept.pop(key, None)
        if len(kept) + len(fresh) > KEPT_SESSIONS:
            kept.clear()
        kept.update(fresh)
