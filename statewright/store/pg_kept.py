"""Kept runs of the PostgreSQL store (`store.pg`; schema 3): a connection that committed a
decision on a session's run keeps the run as it wrote it, and a transaction opened with
`optimistic=True` (the runtime's authorize and record) decides on it without reading it. The
decision is then written as one statement, its own durable transaction (`pg_sql.KEPT`), that
writes only if the run's `rev` and the project's mark are still those kept; else nothing is
written and `StaleRead` tells the caller to decide again in an ordinary transaction. Anything
else such a transaction reads first reads the kept run afresh under its locks (`_check`).
Nothing is trusted: every kept run is checked by the server where it is used."""

from __future__ import annotations

from ..engine.run import PAUSED, RUNNING, Run
from ..lean import TYPE_CHECKING
from .cache import StaleRead
from .chain import link
from .pg_sql import KEPT, MARK, OPEN
from .tables import DIGEST_AT, run_from_row

if TYPE_CHECKING:  # pragma: no cover
    from typing import Any

    from .cache import RowCache

#: how many sessions' runs a connection keeps
KEPT_SESSIONS = 64
#: after a kept run was found changed, the session's next decisions read it afresh, this many
#: (a run that several processes decide on at once is read under its lock, not guessed at)
COLD_AFTER_STALE = 16


class Kept:
    """A run as this connection last wrote it in a decision: the session lookup it was found
    by, the run, its definition's digest, its `rev` and chain head after the write, the
    workflow files in use and the project's mark (`pg_sql.MARK_OF`) from before the lookup."""

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


class KeptTx:
    """The kept-run side of a transaction (`store.pg.PgTx` has it)."""

    store: Any
    project: str
    cache: RowCache
    _queue: list[tuple[str, Any, Any]]
    _digests: dict[str, str]
    _locked_sessions: set[str]
    #: the kept run this transaction decides on without having read it (until `_check`)
    assumed: Kept | None
    #: the decision on the assumed run as one statement: (sql, args, the run kept after it)
    kept_write: tuple[str, tuple[Any, ...], Kept] | None
    #: (session, fallback) -> the run it resolved to in this transaction
    resolved: dict[tuple[str, str], str | None]
    #: the project's mark, read before this transaction's first session lookup
    mark: str | None

    def _later(self, sql: str, args: Any = None, then: Any = None) -> None:  # pragma: no cover
        raise NotImplementedError

    def _one(self, sql: str, args: Any = ()) -> Any:  # pragma: no cover
        raise NotImplementedError

    def _assume(self, lookup: tuple[str, str]) -> Run | None:
        """The session's kept run, assumed (None: none kept, or the session reads afresh)."""
        k = self.store.kept().get(lookup)
        if k is None:
            return None
        cold = self.store._local.cold
        if lookup in cold:
            cold[lookup] -= 1
            if cold[lookup] <= 0:
                del cold[lookup]
            return None
        # this connection wrote the session's run last: decided on as it was written, checked
        # when the decision is written (`KEPT`) or anything is read (`_check`)
        rid = k.run.run_id
        self.assumed = k
        self.mark = k.mark
        self.resolved[lookup] = rid
        self._digests[rid] = k.digest
        self.cache.runs[rid] = (k.run, k.digest)
        self.cache.sources = k.sources
        return k.run

    def _kept_decision(self, sql: str, args: tuple[Any, ...], cur: Run, now: float, actor: str,
                       kind: str, data: str, canon: str) -> None:
        """The decision on the assumed run as one statement, when its update can be (`sql`:
        the update it makes, with `args`)."""
        k = self.assumed
        if k is None or k.run.run_id != cur.run_id or sql not in KEPT:
            return
        rid, p = cur.run_id, self.project
        head = link(k.head, canon)
        self.kept_write = (KEPT[sql], (
            *args, k.rev, p, p, k.mark, rid, now, actor, kind, cur.version, cur.state,
            self.store.machine, data, k.head, head),
            Kept(k.key, cur, k.digest, k.rev + 1, head, k.sources, k.mark))

    def _marked(self, row: Any) -> None:
        self.mark = row[0]

    def _read_mark(self) -> None:
        """Before the transaction's first session lookup: the project's mark, to keep."""
        self._later(MARK, (self.project, self.project), self._marked)

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
        self._later(OPEN, (f"{len(self.project)}:{self.project}:{session}", self.project,
                           session, f, RUNNING, PAUSED, True), opened.append)
        rev = self._one("SELECT rev FROM runs WHERE run_id=%s", (rid,))
        self._queue = rest + self._queue
        row = opened[0]
        # (the row was locked by `OPEN`: its `rev` cannot move before this commits)
        if (row[0] is None or row[DIGEST_AT] != k.digest or rev is None or rev[0] != k.rev
                or run_from_row(row).run_id != rid or frozenset(row[-1] or ()) != k.sources):
            self.store._local.cold[k.key] = COLD_AFTER_STALE
            raise StaleRead(rid)


def write_kept(tx: Any, psycopg: Any, error: Any) -> bool:
    """At commit: the transaction's decision on a kept run, as one statement, when that is all
    it has to write (False: it has more; committed the ordinary way). `error(exc)`: the store's
    error for a psycopg one."""
    kw = tx.kept_write
    if kw is None or tx.assumed is None or tx.changed or len(tx._queue) != 2:
        return False
    store = tx.store
    store._local.cache.clear()  # (what is kept is `kept`, after this)
    try:
        n = tx.conn.execute(kw[0], kw[1]).fetchone()[0]
    except psycopg.Error as exc:
        store.kept().clear()
        if not (isinstance(exc, psycopg.OperationalError) and tx.conn.broken):
            raise error(exc) from None
        # the connection was lost (the server restarted, the network dropped while idle): on
        # a new one, whether the decision was written is its history row (its hash is its
        # own); written: done, else decided again (`StaleRead`)
        try:
            row = store._reconnect().execute(
                "SELECT 1 FROM events WHERE run_id=%s AND hash=%s",
                (kw[2].run.run_id, kw[2].head)).fetchone()
        except psycopg.Error as exc2:
            raise error(exc2) from None
        if row is None:
            raise StaleRead(kw[2].run.run_id) from None
        return True
    if n != 1:
        store.kept().clear()
        store._local.cold[kw[2].key] = COLD_AFTER_STALE
        raise StaleRead(kw[2].run.run_id)
    keep(store, {kw[2].key: kw[2]})
    return True


def keep_committed(tx: Any) -> None:
    """After an ordinary commit: the runs its decisions left, kept; its other session
    lookups, forgotten."""
    fresh: dict[tuple[str, str], Kept] = {}
    for key, rid in tx.resolved.items():
        d = tx.decided.get(rid) if rid is not None else None
        digest = tx._digests.get(rid) if rid is not None else None
        if d is not None and d[2] is not None and digest is not None \
                and tx.cache.sources is not None and tx.mark is not None:
            fresh[key] = Kept(key, d[0], digest, d[1], d[2], tx.cache.sources, tx.mark)
    keep(tx.store, fresh, tx.resolved)


def keep(store: Any, fresh: dict[tuple[str, str], Kept], resolved: Any = ()) -> None:
    kept = store.kept()
    for key in resolved:
        kept.pop(key, None)
    if len(kept) + len(fresh) > KEPT_SESSIONS:
        kept.clear()
    kept.update(fresh)
