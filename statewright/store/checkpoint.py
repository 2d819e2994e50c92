"""A resident store's checkpointer (`Store(resident=True)`): a background thread that moves
the write-ahead log into the database so that no commit pays for it, and starts the log over
once it is long.

Under a continuous stream of commits a passive checkpoint never catches up (the writers append
while it syncs), so SQLite never starts the log over and it grows without end: every commit
then extends the file, which costs more than writing over pages already there. Once the log
holds `WAL_RESTART_FRAMES` frames, a round runs a RESTART checkpoint right after its passive
one (little is left to copy), holding the store's gate, which this process's writers pass
before BEGIN: they wait for it on a lock, not sleeping in SQLite's busy handler (1, 2, 5 ms
...). The next commit writes the log from its start. A RESTART checkpoint syncs the log before
copying and the database after, as any checkpoint does; another process's reader or writer
makes it give up after `RESTART_WAIT_S` (the next round tries again).
"""

from __future__ import annotations

import threading

from ..lean import TYPE_CHECKING, sqlite3

if TYPE_CHECKING:  # pragma: no cover
    from typing import Any

CHECKPOINT_EVERY_S = 0.1  # the interval between rounds (an idle round costs a few microseconds)
#: the log is started over from its beginning once it holds this many frames (about 16 MiB
#: with 4 KiB pages)
WAL_RESTART_FRAMES = 4096
RESTART_WAIT_S = 0.1  # how long a RESTART checkpoint waits for another process's reader or writer


def checkpoint_round(conn: sqlite3.Connection, gate: Any) -> bool:
    """One round on the checkpointer's own connection: a passive checkpoint, then, when the log
    holds `WAL_RESTART_FRAMES` frames or more, a RESTART one holding `gate`. Whether the log is
    now ready to be started over."""
    frames = conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()[1]
    if frames < WAL_RESTART_FRAMES:
        return False
    with gate:
        busy = conn.execute("PRAGMA wal_checkpoint(RESTART)").fetchone()[0]
    return not busy


def start(path: str, gate: Any) -> threading.Event:
    """Start the checkpointer thread of the store at `path` (a daemon); set the event returned
    to stop it."""
    stop = threading.Event()

    def loop() -> None:
        conn = None
        try:
            conn = sqlite3.connect(path, timeout=RESTART_WAIT_S, isolation_level=None,
                                   check_same_thread=False)
            while not stop.wait(CHECKPOINT_EVERY_S):
                try:
                    checkpoint_round(conn, gate)
                except sqlite3.Error:
                    pass  # busy or gone: the next round, or another process, does it
        except sqlite3.Error:
            pass
        finally:
            if conn is not None:
                conn.close()

    threading.Thread(target=loop, name="statewright-checkpoint", daemon=True).start()
    return stop
