"""A process that decided on a run last decides its next call on the run as it wrote it, without
reading it again (the PostgreSQL store's kept runs; the SQLite store keeps its rows while no
other connection commits): on both stores, a run changed by anyone else in between (its
counters, its state, which run the session resolves to, the workflow files in use, its history)
is never decided on stale, counters and evidence stay exact and the hash chain intact, and 8
processes deciding on one run lose nothing. On PostgreSQL also: a schema 2 store is migrated
with its runs, and a connection lost between two decisions loses and doubles nothing."""

from __future__ import annotations

import json
import os
from pathlib import Path

import psycopg
import pytest

from statewright.engine.run import HUMAN
from statewright.policy.types import ToolCall, ToolResult
from statewright.runtime import Runtime
from statewright.store.chain import GENESIS, row_hash
from statewright.store.pg import PgStore
from statewright.store.pg_schema import PG_SCHEMA_VERSION
from tests.store.test_store import together

pytestmark = pytest.mark.e2e

WORKER = Path(__file__).with_name("worker.py")
REPO = Path(__file__).resolve().parents[2]
WORK = {"id": "work", "initial": "build",
        "states": {"build": {"allowed_tools": ["Read", "Edit", "Bash"],
                             "allowed_commands": ["pytest"], "on": {"DONE": "review"}},
                   "review": {"allowed_tools": ["Read"], "on": {"END": "z"}},
                   "z": {"type": "final"}}}
OTHER = {"id": "other", "initial": "a",
         "states": {"a": {"on": {"END": "z"}}, "z": {"type": "final"}}}
BASH = ToolCall("Bash", {"command": "pytest -q"})
RESULT = ToolResult("Bash", {"command": "pytest -q"}, output_bytes=10, exit_code=0)


def _project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    (root / "workflows").mkdir(parents=True)
    for d in (WORK, OTHER):
        (root / "workflows" / f"{d['id']}.json").write_text(json.dumps(d))
    return root


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("STATEWRIGHT_", "CLAUDE_")) or k == "STATEWRIGHT_STORE"}
    env["PYTHONPATH"] = str(REPO)
    return env


def _pairs(rt: Runtime, session: str, n: int) -> None:
    for _ in range(n):
        assert rt.authorize(session, BASH).allowed
        rt.record(session, RESULT)


def _chain_intact(rt: Runtime, run_id: str) -> int:
    """The run's history rows, each linked to the one before it (what `audit verify` checks)."""
    with rt.store.read() as tx:
        rows = tx.history([run_id], chain=True)
    prev = GENESIS
    for r in rows:
        assert r["prev_hash"] == prev and r["hash"] == row_hash(prev, r), r
        prev = r["hash"]
    return len(rows)


def test_a_run_changed_elsewhere_is_never_decided_on_stale(tmp_path, store_kind):
    root = _project(tmp_path)
    mine = Runtime.open(root, resident=True)  # the resident proxy: decides call after call
    rid = mine.start("work", "s1")["run_id"]
    _pairs(mine, "s1", 3)
    other = Runtime.open(root)  # another process (another machine) on the same run
    _pairs(other, "s1", 2)
    _pairs(mine, "s1", 1)  # counted after the other's: nothing lost
    state = mine.get_state("s1")
    assert state["counters"]["iterations"] == 6
    assert state["context"]["_observed"]  # the evidence of every recorded call is kept
    # the other moves the run on: the next call is decided under the new state's rules
    other.transition("s1", "DONE")
    d = mine.authorize("s1", BASH)
    assert not d.allowed and "review" in d.reason
    with mine.store.read() as tx:
        assert tx.get_run(rid).denied == 1  # (counted in the new state, whose counters began at 0)
    assert _chain_intact(mine, rid) == len(mine.history(rid))


def test_a_decision_on_a_kept_run_is_one_statement(tmp_path, pg_url, monkeypatch):
    """The path the budget rests on is the one taken: after the first pair, every decision of
    a process deciding alone is written by the kept run's one statement, which the server
    accepts (`write_kept` says written), and the counters and chain come out exact."""
    from statewright.store import pg as pg_mod

    monkeypatch.setenv("STATEWRIGHT_STORE", pg_url)
    root = _project(tmp_path)
    mine = Runtime.open(root, resident=True)
    rid = mine.start("work", "s1")["run_id"]
    written: list[bool] = []
    real = pg_mod.write_kept

    def counted(*a, **k):
        written.append(real(*a, **k))
        return written[-1]

    monkeypatch.setattr(pg_mod, "write_kept", counted)
    _pairs(mine, "s1", 10)
    assert written.count(True) >= 18, written  # (20 decisions; the first pair reads the run)
    with mine.store.read() as tx:
        assert tx.get_run(rid).iterations == 10
    assert _chain_intact(mine, rid) == len(mine.history(rid))


def test_a_new_run_for_the_session_and_files_newly_in_use_are_seen(tmp_path, store_kind):
    root = _project(tmp_path)
    mine = Runtime.open(root, resident=True)
    first = mine.start("work", "s1")["run_id"]
    edit = ToolCall("Edit", {"file_path": str(root / "workflows" / "other.json"),
                             "old_string": "a", "new_string": "b"})
    assert mine.authorize("s1", edit).allowed  # (no run uses `other` yet)
    _pairs(mine, "s1", 2)
    other = Runtime.open(root)
    other.start("other", "s2")  # another session's run makes other.json a file in use
    d = mine.authorize("s1", edit)
    assert not d.allowed and d.rule == "self_protection"
    # the session's run ends and a new one starts elsewhere: decisions go to the new run
    other.end("s1", actor=HUMAN)  # (as `statewright end` in a terminal)
    second = other.start("work", "s1")["run_id"]
    assert second != first
    _pairs(mine, "s1", 1)
    assert mine.get_state("s1")["run_id"] == second
    assert mine.get_state("s1")["counters"]["iterations"] == 1
    with mine.store.read() as tx:
        assert tx.get_run(first).iterations == 3  # (the first run: 3 and no more)
    assert _chain_intact(mine, first) == len(mine.history(first))
    assert _chain_intact(mine, second) == len(mine.history(second))


def test_eight_processes_deciding_on_one_run_lose_nothing(tmp_path, store_kind):
    root = _project(tmp_path)
    rt = Runtime.open(root)
    rid = rt.start("work", None)["run_id"]
    n = 25
    together([["decide", str(root), str(n)] for _ in range(8)], timeout=300)
    state = rt.get_state(None)
    assert state["counters"]["iterations"] == 8 * n
    hist = rt.history(rid)
    assert sum(1 for h in hist if h["kind"] == "tool_allowed") == 8 * n
    assert _chain_intact(rt, rid) == len(hist)


def _catalog(url: str) -> tuple[list, list]:
    """The columns of this schema's tables and its functions, triggers, sequences, indexes."""
    with psycopg.connect(url, autocommit=True) as c:
        cols = c.execute("SELECT table_name, column_name, data_type, column_default"
                         " FROM information_schema.columns WHERE table_schema = current_schema()"
                         " ORDER BY 1, 2").fetchall()
        objs = c.execute(
            "SELECT 'f', proname::text FROM pg_proc WHERE pronamespace = current_schema()::regnamespace"
            " UNION ALL SELECT 'c' || relkind::text, relname::text FROM pg_class"
            " WHERE relnamespace = current_schema()::regnamespace"
            " UNION ALL SELECT 't', tgname::text FROM pg_trigger t JOIN pg_class r ON r.oid = t.tgrelid"
            " WHERE r.relnamespace = current_schema()::regnamespace AND NOT t.tgisinternal"
            " ORDER BY 1, 2").fetchall()
    return cols, objs


def test_a_schema_2_store_is_migrated_with_its_runs(tmp_path, pg_server, pg_url, monkeypatch):
    from statewright.store import pg_schema

    assert PG_SCHEMA_VERSION == 3
    monkeypatch.setenv("STATEWRIGHT_STORE", pg_url)
    root = _project(tmp_path)
    rt = Runtime.open(root, resident=True)
    rid = rt.start("work", "s1")["run_id"]
    _pairs(rt, "s1", 2)
    rt.close()
    # the store as schema 2 left it: what version 3 adds, taken away (the same catalog as a
    # store made by schema 2's statewright, checked)
    with psycopg.connect(pg_url, autocommit=True) as c:
        c.execute("ALTER TABLE runs DROP COLUMN rev, DROP COLUMN lookup_seq")
        c.execute("ALTER TABLE bindings DROP COLUMN lookup_seq")
        c.execute("DROP TABLE statewright_removals")
        c.execute("DROP FUNCTION statewright_run_moved, statewright_binding_moved,"
                  " statewright_lookup_removed CASCADE")
        c.execute("DROP SEQUENCE statewright_lookup_seq")
        c.execute("DELETE FROM statewright_schema WHERE version = 3")
    two = pg_server.fresh_url()
    with monkeypatch.context() as m:
        m.setattr(pg_schema, "PG_SCHEMA_VERSION", 2)
        with psycopg.connect(two, autocommit=True) as c:
            pg_schema.migrate(c, "two")
    assert _catalog(pg_url) == _catalog(two)
    rt = Runtime.open(root, resident=True)  # migrated to 3 on open
    _pairs(rt, "s1", 3)  # the first decision reads the run; the next ones keep it
    other = Runtime.open(root)
    _pairs(other, "s1", 1)
    _pairs(rt, "s1", 1)
    assert rt.get_state("s1")["counters"]["iterations"] == 7
    assert _chain_intact(rt, rid) == len(rt.history(rid))
    fresh = pg_server.fresh_url()
    PgStore.open(fresh, "x").close()
    cols, objs = _catalog(pg_url)  # migrated: the same schema as a store made by this version
    assert (cols, objs) == _catalog(fresh)
    with psycopg.connect(pg_url, autocommit=True) as c:
        assert c.execute("SELECT max(version) FROM statewright_schema").fetchone()[0] == 3
        assert c.execute("SELECT rev FROM runs WHERE run_id = %s", (rid,)).fetchone()[0] > 0


def test_a_connection_lost_between_decisions_loses_and_doubles_nothing(tmp_path, pg_server,
                                                                         pg_url, monkeypatch):
    monkeypatch.setenv("STATEWRIGHT_STORE", pg_url)
    root = _project(tmp_path)
    rt = Runtime.open(root, resident=True)
    rid = rt.start("work", "s1")["run_id"]
    _pairs(rt, "s1", 2)
    with psycopg.connect(pg_server.admin_url(), autocommit=True) as c:
        killed = c.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE"
                           " application_name = 'statewright' AND state = 'idle'").fetchall()
    assert killed
    _pairs(rt, "s1", 2)  # on a new connection, each decision written once
    assert rt.get_state("s1")["counters"]["iterations"] == 4
    assert sum(1 for h in rt.history(rid) if h["kind"] == "tool_allowed") == 4
    assert _chain_intact(rt, rid) == len(rt.history(rid))
