"""A resident store's write-ahead log under a continuous stream of commits: the checkpointer
starts it over once it is long (`store.checkpoint.checkpoint_round`), and nothing committed is lost.

A stream is what keeps a passive checkpoint from catching up (a test alone is never fast
enough to), so a reader holding an old snapshot stands in for it here: while it reads, the
log can only grow, and the RESTART checkpoint gives up after `RESTART_WAIT_S`."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from statewright.runtime import Runtime
from statewright.store import checkpoint as db

LOOP = {"id": "loop", "initial": "a",
        "states": {"a": {"on": {"TICK": "a", "END": "z"}}, "z": {"type": "final"}}}


def test_a_long_wal_is_started_over_and_keeps_every_commit(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(db, "WAL_RESTART_FRAMES", 60)
    monkeypatch.setattr(db, "CHECKPOINT_EVERY_S", 3600.0)  # the test runs the rounds itself
    root = tmp_path / "proj"
    (root / "workflows").mkdir(parents=True)
    (root / "workflows" / "loop.json").write_text(json.dumps(LOOP))
    rt = Runtime.open(root, resident=True)
    run_id = rt.start("loop", "s")["run_id"]
    checkpointer = sqlite3.connect(rt.store_file, isolation_level=None,
                                   timeout=db.RESTART_WAIT_S)
    reader = sqlite3.connect(rt.store_file, isolation_level=None)

    def frames() -> int:  # what the WAL holds now (a passive checkpoint reports it)
        return int(checkpointer.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()[1])

    try:
        ticks = 0
        for _ in range(3):
            reader.execute("BEGIN")
            reader.execute("SELECT count(*) FROM events").fetchone()
            for _ in range(100):
                rt.transition("s", "TICK")
                ticks += 1
                if frames() >= 60:
                    break
            assert frames() >= 60
            # a reader on an old snapshot: the log cannot be started over yet
            assert db.checkpoint_round(checkpointer, rt.store._gate) is False
            reader.execute("COMMIT")
            assert db.checkpoint_round(checkpointer, rt.store._gate) is True
            rt.transition("s", "TICK")  # this commit writes the log from its start
            ticks += 1
            assert frames() < 10
            assert db.checkpoint_round(checkpointer, rt.store._gate) is False  # short: left
        state = rt.get_state("s")
        assert state["run_id"] == run_id and state["version"] == 1 + ticks
        assert len(rt.history(run_id)) == 1 + ticks
    finally:
        checkpointer.close()
        reader.close()
        rt.close()
