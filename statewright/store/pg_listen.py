"""Following a shared store's changes across machines (DESIGN.md section 5, "live updates by
LISTEN/NOTIFY"): the long-running front ends (the web page, `statewright serve`) learn that
another machine moved a run without reading the store over and over.

A write transaction of the PostgreSQL store that starts a run, moves one (a transition, a
pause, an end, a fork binding) or asks for or decides an approval sends `NOTIFY` on `CHANNEL`
in the same transaction (`store.pg`), so the notice goes out exactly when the change is
committed, and never for a transaction rolled back. A decision that only counts (a tool call
allowed or refused) does not notify: PostgreSQL serialises the commits of transactions that
notify, which would cost every decision; the page picks those rows up on its slower read.

`ChangeFeed` keeps one `LISTEN` connection in a thread of its own and counts the notices
(`generation`); a front end waits for the count to move (`wait`, `wait_async`) and then reads
the store afresh, as it did when polling. A notice is only a hint ("read again"): it carries
the project and run, never state. A notice sent while nobody listened is lost, so every
(re)connection also counts as a change: whoever waits reads the store again, and nothing
committed while the connection was down is missed. A connection that drops is made again,
waiting longer each time it fails (at most `MAX_BACKOFF_S`).
"""

from __future__ import annotations

import os
import threading
import time

from ..lean import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from typing import Any

#: the channel every change of a shared store is announced on
CHANNEL = "statewright_changes"
#: the `application_name` of the listening connection (what `pg_stat_activity` shows)
LISTEN_APPLICATION = "statewright-listen"
#: how often the listening thread wakes while nothing comes (to stop, and to check the line)
TICK_S = 1.0
#: an idle listening connection is checked with a query this often (a half-open TCP
#: connection would otherwise wait for notices that never come)
PING_S = 10.0
MAX_BACKOFF_S = 5.0
#: how often a front end that follows a shared store reads it even without a notice: for the
#: decisions, which are not announced (the web page's history rows and counters)
QUIET_READ_S = float(os.environ.get("STATEWRIGHT_QUIET_READ", "2.0"))
CONNECT_TIMEOUT_S = 10


def notice(project: str, run_id: str | None) -> str:
    """The payload of a change: project and run, tab-separated (a hint, never state)."""
    return f"{project}\t{run_id or ''}"


class ChangeFeed:
    """The notices of one shared store, counted by a listening thread (started by `start`)."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.generation = 0  # grows with every notice and every (re)connection
        self.connections = 0  # how many times the listening connection was made
        self.last_error: str | None = None
        self._cond = threading.Condition()
        self._stop = threading.Event()
        self._conn: Any = None
        self._thread = threading.Thread(target=self._run, name="statewright-listen",
                                        daemon=True)

    def start(self) -> ChangeFeed:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        conn = self._conn
        if conn is not None:
            try:
                conn.close()
            except Exception:
                pass
        self._thread.join(timeout=TICK_S + 1)

    # -- waiting ------------------------------------------------------------------------------
    def wait(self, seen: int, timeout: float) -> int:
        """The generation once it differs from `seen`, or after `timeout` seconds."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while self.generation == seen and not self._stop.is_set():
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                self._cond.wait(left)
            return self.generation

    async def wait_async(self, seen: int, timeout: float) -> int:
        """`wait` for an async front end: in worker threads, each waiting at most `TICK_S`
        (one given up on cancellation ends by itself soon after: a process that stops is
        never held by a waiting thread)."""
        import anyio

        deadline = time.monotonic() + timeout
        now = seen
        while now == seen and not self._stop.is_set():
            left = deadline - time.monotonic()
            if left <= 0:
                break
            now = await anyio.to_thread.run_sync(self.wait, seen, min(left, TICK_S),
                                                 abandon_on_cancel=True)
        return now

    def _bump(self) -> None:
        with self._cond:
            self.generation += 1
            self._cond.notify_all()

    # -- the listening thread -------------------------------------------------------------------
    def _run(self) -> None:
        import psycopg

        backoff = 0.1
        while not self._stop.is_set():
            try:
                conn = psycopg.connect(self.url, autocommit=True,
                                       connect_timeout=CONNECT_TIMEOUT_S,
                                       application_name=LISTEN_APPLICATION)
            except psycopg.Error as exc:
                self.last_error = " ".join(str(exc).split())
                self._stop.wait(backoff)
                backoff = min(backoff * 2, MAX_BACKOFF_S)
                continue
            self._conn = conn
            try:
                conn.execute(f"LISTEN {CHANNEL}")
                self.connections += 1
                self.last_error = None
                backoff = 0.1
                self._bump()  # whatever was committed while nobody listened: read it again
                pinged = time.monotonic()
                while not self._stop.is_set():
                    for _note in conn.notifies(timeout=TICK_S):
                        self._bump()
                    if time.monotonic() - pinged >= PING_S:
                        conn.execute("SELECT 1")
                        pinged = time.monotonic()
            except psycopg.Error as exc:
                self.last_error = " ".join(str(exc).split())
            finally:
                self._conn = None
                try:
                    conn.close()
                except Exception:
                    pass
            if not self._stop.is_set():
                self._bump()  # the line dropped: waiters read the store themselves meanwhile
                self._stop.wait(backoff)
                backoff = min(backoff * 2, MAX_BACKOFF_S)
