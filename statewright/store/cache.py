"""`RowCache`: what one store connection last read or wrote of the runs (see its docstring)."""

from __future__ import annotations

from ..engine.run import Run


class RowCache:
    """What one connection last read or wrote of the runs, valid while no OTHER connection has
    committed since: `PRAGMA data_version` (checked at the start of every transaction, after
    BEGIN) changes exactly then. A process deciding call after call (the resident proxy) then
    reads nothing twice: no query, no JSON parse. Runs are immutable, so sharing them is safe.
    A rolled-back transaction empties it (what it wrote never happened)."""

    __slots__ = ("data_version", "heads", "runs", "sessions", "sources")

    def __init__(self) -> None:
        self.data_version: int | None = None
        self.runs: dict[str, tuple[Run, str]] = {}  # run_id -> (run, definition digest)
        self.sessions: dict[tuple[str, str | None], str | None] = {}  # resolve_session_run
        self.sources: frozenset[str] | None = None  # source_paths_in_use
        self.heads: dict[str, str] = {}  # run_id -> its last history row's hash (store.chain)

    def clear(self) -> None:
        self.runs.clear()
        self.heads.clear()
        self.lookups_changed()

    def lookups_changed(self) -> None:
        """A run's status, session or bindings changed: which run a session resolves to, and
        which definitions are in use, must be read again."""
        self.sessions.clear()
        self.sources = None


class StaleRead(Exception):
    """A transaction opened with `optimistic=True` decided on a run its connection kept from
    an earlier transaction, and the store found that run changed since (`store.pg`, kept
    runs): nothing was written; the caller makes the decision again, in a transaction opened
    without it (which reads afresh under the run's lock, and never raises this). The SQLite
    store checks what it keeps when the transaction begins and never raises it."""
