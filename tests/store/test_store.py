"""The SQLite store: schema, durability, concurrency across real processes, crash safety."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from statewright import errors
from statewright.config import Config
from statewright.runtime import Runtime
from statewright.store import APPLICATION_ID, SCHEMA_VERSION, Store
from statewright.store.schema import PAGE_SIZE

WORKER = Path(__file__).with_name("worker.py")
REPO = Path(__file__).resolve().parents[2]

LOOP = {"id": "loop", "initial": "a",
        "states": {"a": {"on": {"TICK": "a", "END": "z"}}, "z": {"type": "final"}}}


def _project(tmp_path: Path, docs=(LOOP,)) -> Path:
    root = tmp_path / "proj"
    (root / "workflows").mkdir(parents=True)
    for d in docs:
        (root / "workflows" / f"{d['id']}.json").write_text(json.dumps(d))
    return root


def together(argvs: list[list[str]], timeout: float) -> None:
    """Run a worker per argument list, released together once each says it is ready; each
    must end well and say it is done."""
    procs = [subprocess.Popen([sys.executable, str(WORKER), *argv], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              env=_env()) for argv in argvs]
    for p in procs:
        assert p.stdout.readline().strip() == "ready", p.stderr.read()
    for p in procs:  # release them together
        p.stdin.write("go\n")
        p.stdin.flush()
    for p in procs:
        out, err = p.communicate(timeout=timeout)
        assert p.returncode == 0 and "done" in out, err


def _env() -> dict[str, str]:
    """The workers' environment: no statewright or Claude variable of the developer's, but the
    store the test chose (`store_kind`)."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("STATEWRIGHT_", "CLAUDE_")) or k == "STATEWRIGHT_STORE"}
    env["PYTHONPATH"] = str(REPO)
    return env


def test_fresh_store_schema_and_pragmas(tmp_path):
    s = Store.open(tmp_path / "deep" / "dir" / "state.db")
    conn = s._conn()
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert conn.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID
    assert conn.execute("PRAGMA busy_timeout").fetchone()[0] >= 1000
    assert conn.execute("PRAGMA page_size").fetchone()[0] == PAGE_SIZE
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert {"runs", "events", "definitions", "approvals", "bindings"} <= tables
    s.close()
    # reopening a current store runs no DDL: the schema is untouched
    before = (tmp_path / "deep" / "dir" / "state.db").stat().st_mtime_ns
    with Store.open(tmp_path / "deep" / "dir" / "state.db").read() as tx:
        assert tx.list_runs() == []
    assert (tmp_path / "deep" / "dir" / "state.db").stat().st_mtime_ns == before


def test_a_store_made_with_other_pages_keeps_them_and_works(tmp_path):
    """The page size is fixed when a file is created: a store made with SQLite's default
    (4096, every store before `PAGE_SIZE`) opens, keeps its pages and records as before."""
    root = _project(tmp_path)
    path = Path(Config(root).store_file)
    path.parent.mkdir(parents=True)
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA page_size=4096")
    conn.execute("VACUUM")  # (an empty file takes the page size when first written)
    conn.close()
    rt = Runtime.open(root)
    run_id = rt.start("loop", "s")["run_id"]
    rt.transition("s", "TICK")
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA page_size").fetchone()[0] == 4096
    assert conn.execute("SELECT kind FROM events WHERE run_id=? ORDER BY seq",
                        (run_id,)).fetchall()[-1] == ("transitioned",)
    conn.close()


def test_store_location_follows_config(tmp_path, monkeypatch):
    root = _project(tmp_path)
    rt = Runtime.open(root)
    rt.start("loop", None)
    assert Config(root).store_file == str(root / ".statewright" / "state.db")
    assert (root / ".statewright" / "state.db").is_file()
    monkeypatch.setenv("STATEWRIGHT_HOME", str(tmp_path / "home"))
    Runtime.open(root).start("loop", "other")
    assert (tmp_path / "home" / "state.db").is_file()


def test_damaged_store_is_a_clear_error(tmp_path):
    p = tmp_path / "state.db"
    p.write_bytes(b"this is not sqlite at all" * 100)
    with pytest.raises(errors.StatewrightError) as ei:
        Store.open(p)
    assert ei.value.code == errors.STORE_ERROR and str(p) in ei.value.message
    assert "damaged" in ei.value.message
    assert p.read_bytes().startswith(b"this is not sqlite")  # nothing lost or overwritten


def test_foreign_sqlite_file_is_refused(tmp_path):
    p = tmp_path / "state.db"
    conn = sqlite3.connect(p)
    conn.execute("CREATE TABLE customers(id INTEGER)")
    conn.execute("INSERT INTO customers VALUES (1)")
    conn.commit()
    conn.close()
    with pytest.raises(errors.StatewrightError) as ei:
        Store.open(p)
    assert ei.value.code == errors.STORE_ERROR and "not a statewright store" in ei.value.message
    conn = sqlite3.connect(p)
    assert conn.execute("SELECT count(*) FROM customers").fetchone()[0] == 1


def test_newer_schema_is_refused(tmp_path):
    p = tmp_path / "state.db"
    Store.open(p).close()
    conn = sqlite3.connect(p)
    conn.execute(f"PRAGMA user_version={SCHEMA_VERSION + 5}")
    conn.commit()
    conn.close()
    with pytest.raises(errors.StatewrightError) as ei:
        Store(p)._conn()
    assert "newer statewright" in ei.value.message


def test_corrupted_pages_are_a_clear_error(tmp_path):
    root = _project(tmp_path)
    rt = Runtime.open(root)
    rt.start("loop", None)
    for _ in range(20):
        rt.transition(None, "TICK", {"pad": "x" * 500})
    rt.store.close()
    db = Path(Config(root).store_file)
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    raw = bytearray(db.read_bytes())
    # overwrite every page after the first (which keeps the header and the schema): b-tree
    # pages of an impossible type, which SQLite always reports as malformed. (Scribbling on
    # scattered bytes was flaky: a hit in a row's text can leave a readable page that merely
    # no longer matches, and the run ids are random.)
    raw[4096:] = b"\xff" * (len(raw) - 4096)
    db.write_bytes(bytes(raw))
    with pytest.raises(errors.StatewrightError) as ei:
        Runtime.open(root).get_state(None)
    assert ei.value.code == errors.STORE_ERROR


def _get_run(rt, run_id):
    with rt.store.read() as tx:
        return tx.get_run(run_id)


def test_a_counter_update_is_atomic_and_does_not_bump_version(tmp_path, store_kind):
    root = _project(tmp_path)
    rt = Runtime.open(root)
    rid = rt.start("loop", None)["run_id"]
    with rt.store.transaction() as tx:
        run = tx.require_run(rid)
        new = tx.save_with_events(run, run.with_(iterations=run.iterations + 1),
                                  [{"kind": "tool_allowed", "actor": "agent", "data": {"t": 1}}])
    assert new.iterations == 1 and new.version == 1
    assert rt.history(rid)[-1]["kind"] == "tool_allowed"

    with pytest.raises(RuntimeError), rt.store.transaction() as tx:
        run = tx.require_run(rid)
        tx.save_with_events(run, run.with_(iterations=run.iterations + 1), ())
        raise RuntimeError("failed after the write")
    assert _get_run(rt, rid).iterations == 1  # rolled back, nothing half-written
    with pytest.raises(errors.StatewrightError) as ei, rt.store.transaction() as tx:
        tx.require_run("run_nope")
    assert ei.value.code == errors.UNKNOWN_RUN


def test_run_keeps_its_definition_when_the_file_changes(tmp_path, store_kind):
    root = _project(tmp_path)
    rt = Runtime.open(root)
    rt.start("loop", None)
    changed = dict(LOOP, states={"a": {"on": {"END": "z"}}, "z": {"type": "final"}})
    (root / "workflows" / "loop.json").write_text(json.dumps(changed))
    rt2 = Runtime.open(root)
    assert rt2.transition(None, "TICK")["state"] == "a"  # still the definition it started with
    _run, c = rt2.effective_run(None)
    assert "TICK" in c.states["a"].on
    assert c.source_path == str(root / "workflows" / "loop.json")


def test_eight_processes_lose_nothing(tmp_path, store_kind):
    root = _project(tmp_path)
    Runtime.open(root).start("loop", None)
    n = 15
    together([["hammer", str(root), str(i), str(n)] for i in range(8)], timeout=120)
    rt = Runtime.open(root)
    state = rt.get_state(None)
    assert state["version"] == 1 + 8 * n
    assert state["context"]["n"] == 8 * n
    for i in range(8):
        for k in range(n):
            assert state["context"][f"p{i}_{k}"] is True
    hist = rt.history()
    trans = [h for h in hist if h["kind"] == "transitioned"]
    assert len(trans) == 8 * n
    keys = [next(iter(h["data"]["data"])) for h in trans]
    assert len(set(keys)) == len(keys) == 8 * n  # every accepted event exactly once
    assert sorted(h["version"] for h in trans) == list(range(2, 2 + 8 * n))
    assert len([h for h in hist if h["kind"] == "tool_allowed"]) == 8 * n


def test_sigkill_mid_transition_leaves_the_run_before_the_event(tmp_path, store_kind):
    root = _project(tmp_path)
    rt = Runtime.open(root)
    rid = rt.start("loop", None)["run_id"]
    rt.transition(None, "TICK")
    p = subprocess.Popen([sys.executable, str(WORKER), "hang", str(root)], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env())
    assert p.stdout.readline().strip() == "mid-transaction", p.stderr.read()
    p.send_signal(signal.SIGKILL)
    p.wait(timeout=30)
    rt2 = Runtime.open(root)
    state = rt2.get_state(None)
    assert state["version"] == 2 and "crash" not in state["context"]
    assert [h["kind"] for h in rt2.history(rid)] == ["started", "transitioned"]
    assert rt2.transition(None, "TICK")["version"] == 3  # the lock died with the process


def test_sigkill_during_a_flurry_never_leaves_a_run_between_events(tmp_path, store_kind):
    root = _project(tmp_path)
    rid = Runtime.open(root).start("loop", None)["run_id"]
    for delay in (0.05, 0.2, 0.35):
        p = subprocess.Popen([sys.executable, str(WORKER), "flurry", str(root)],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env())
        assert p.stdout.readline().strip() == "ready", p.stderr.read()
        # wait until the worker is really streaming transitions (however loaded the machine),
        # then let it run a little longer and kill it mid-stream
        start_version = _get_run(Runtime.open(root), rid).version
        deadline = time.monotonic() + 30
        while (_get_run(Runtime.open(root), rid).version < start_version + 4
               and time.monotonic() < deadline):
            time.sleep(0.01)
        time.sleep(delay)
        p.send_signal(signal.SIGKILL)
        p.wait(timeout=30)
        rt = Runtime.open(root)
        run = _get_run(rt, rid)
        hist = rt.history(rid)
        trans = [h for h in hist if h["kind"] == "transitioned"]
        assert run.version == 1 + len(trans) == run.transition_count + 1
        assert [h["version"] for h in trans] == list(range(2, 2 + len(trans)))
        if trans:
            assert run.context["k"] == trans[-1]["data"]["data"]["k"]
    assert len(trans) > 10  # the workers really were killed mid-stream


def _rewrite_as_old_store(root: Path, version: int) -> sqlite3.Connection:
    """Rewrite the project's store as statewright of schema `version` left it: the tables that
    schema's DDL made (the migrations are append-only, so theirs is exactly what it ran), each
    run as one JSON snapshot with its counters and context inside, and the history numbered by
    AUTOINCREMENT. The runs, definitions and history are those the current code stored."""
    from statewright.store.schema import MIGRATIONS

    db = root / ".statewright" / "state.db"
    with Runtime.open(root).store.read() as tx:
        runs = tx.list_runs()
        events = tx.history()
    cur = sqlite3.connect(db)
    defs = cur.execute("SELECT digest, workflow, source_path, body, source_sha256"
                       " FROM definitions").fetchall()
    other = cur.execute("SELECT run_id, workflow, session, status, parent_run, version,"
                        " def_digest, created_at, updated_at FROM runs").fetchall()
    cur.close()
    for suffix in ("", "-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    conn = sqlite3.connect(db)
    for v in range(1, version + 1):
        for stmt in MIGRATIONS[v].split(";"):
            if stmt.strip():
                conn.execute(stmt)
    for d in defs:
        conn.execute("INSERT INTO definitions(digest, workflow, source_path, body) VALUES"
                     " (?,?,?,?)", d[:4])
        if version >= 3:
            conn.execute("UPDATE definitions SET source_sha256=? WHERE digest=?", (d[4], d[0]))
    snapshots = {r.run_id: json.dumps(r.to_dict()) for r in runs}
    for row in other:
        conn.execute("INSERT INTO runs(run_id, workflow, session, status, parent_run, version,"
                     " def_digest, created_at, updated_at, snapshot) VALUES (?,?,?,?,?,?,?,?,?,?)",
                     (*row, snapshots[row[0]]))
    for e in events:
        conn.execute("INSERT INTO events(seq, run_id, at, actor, kind, version, state, data)"
                     " VALUES (?,?,?,?,?,?,?,?)", (e["seq"], e["run_id"], e["at"], e["actor"],
                                                   e["kind"], e["version"], e["state"],
                                                   json.dumps(e["data"])))
    if version >= 4:  # (schema 4 keeps counters and context in columns of their own)
        from statewright.store.tables import split_run_rows

        split_run_rows(conn)
    conn.execute(f"PRAGMA application_id={APPLICATION_ID}")
    conn.execute(f"PRAGMA user_version={version}")
    conn.commit()
    conn.execute("PRAGMA journal_mode=WAL")
    return conn


def _counted_run(root: Path) -> tuple[str, dict]:
    """A run with something in every part of it: counters, context, evidence, history."""
    from statewright.policy.types import ToolCall, ToolResult

    rt = Runtime.open(root)
    run_id = rt.start("work", "s", input={"ticket": 7})["run_id"]
    (root / "a.py").write_text("print('a')\n")
    assert rt.authorize("s", ToolCall("Read", {"file_path": str(root / "a.py")})).allowed
    assert not rt.authorize("s", ToolCall("Write", {"file_path": str(root / "b.py"),
                                                    "content": "x"})).allowed
    assert rt.authorize("s", ToolCall("Bash", {"command": "pytest -q"})).allowed
    rt.record("s", ToolResult("Bash", {"command": "pytest -q"}, output_bytes=90, exit_code=0))
    rt.stop_reminder("s")
    state = rt.get_state("s")
    rt.store.close()
    return run_id, state


WORK = {"id": "work", "initial": "w",
        "states": {"w": {"allowed_tools": ["Read", "Bash"], "allowed_commands": ["pytest"],
                         "on": {"DONE": "z"}}, "z": {"type": "final"}}}


@pytest.mark.parametrize("version", [1, 3, 4])
def test_an_older_store_is_migrated_on_open_keeping_its_runs(tmp_path, version):
    """Schema 2 adds the indexes the web page reads by, schema 3 the file marks and the workflow
    file's hash, schema 4 the counters and context in columns of their own and the history
    without AUTOINCREMENT, schema 5 the history's hash chain, who asked for an approval and the
    tokens table. A store written by an older schema gets them when it is next opened, and its
    runs (counters, context, evidence) and history are kept, with their numbers; the history
    already there is chained, and the rows added after continue the chain."""
    from statewright.store.chain import GENESIS, row_hash
    from statewright.store.db import MIGRATIONS

    assert SCHEMA_VERSION == 5 and set(MIGRATIONS) == {1, 2, 3, 4, 5}
    root = _project(tmp_path, (LOOP, WORK))
    run_id, before = _counted_run(root)
    assert before["counters"]["iterations"] == 2 and before["context"]["ticket"] == 7
    assert before["context"]["_observed"]["commands"]["pytest"]["ok"] is True
    history = Runtime.open(root).history(run_id)
    _rewrite_as_old_store(root, version).close()

    rt2 = Runtime.open(root)
    after = rt2.get_state("s")
    if version < 3:  # (a definition stored before schema 3 has no file hash to compare)
        assert "definition" not in after
        after["definition"] = before["definition"]
    assert after == before
    assert rt2.history(run_id) == history
    with rt2.store.read() as tx:
        assert tx.require_run(run_id).denied == 1 and tx.require_run(run_id).stop_reminders == 1
    rt2.transition("s", "DONE")
    new_history = rt2.history(run_id)
    added = new_history[len(history):]
    assert new_history[:len(history)] == history and added
    assert all(e["seq"] > history[-1]["seq"] for e in added)
    db = root / ".statewright" / "state.db"
    conn = sqlite3.connect(db)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    indexes = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='index'")}
    assert {"runs_by_created", "approvals_by_status", "events_by_run"} <= indexes
    assert conn.execute("SELECT count(*) FROM marks").fetchone()[0] == 0
    assert conn.execute("SELECT count(*) FROM sqlite_sequence WHERE name='events'"
                        ).fetchone()[0] == 0
    snapshot = json.loads(conn.execute("SELECT snapshot FROM runs WHERE run_id=?",
                                       (run_id,)).fetchone()[0])
    # moved to columns of their own
    assert not {"context", "iterations", "state", "version"} & set(snapshot)
    plan = " ".join(r[3] for r in conn.execute(
        "EXPLAIN QUERY PLAN SELECT snapshot FROM runs ORDER BY created_at DESC LIMIT 5"))
    assert "runs_by_created" in plan
    chain = conn.execute("SELECT prev_hash, hash FROM events WHERE run_id=? ORDER BY seq",
                         (run_id,)).fetchall()
    conn.close()
    prev = GENESIS
    for row, (p, h) in zip(new_history, chain, strict=True):
        assert p == prev and h == row_hash(prev, {**row, "machine": None})
        prev = h


def _changed_fields():
    """A new value for every field of a run that an update may change (schema 4 writes each
    part of the row only when it changed: this checks that every field lands somewhere)."""
    from statewright.engine.run import Fork, ForkBranch, Invoke, PendingApproval

    fork = Fork("SPLIT", "all", "z", None, ("b1",),
                {"b1": ForkBranch("run_child0000", "a", "z", holder="s#agent=x")}, parallel=True)
    return {
        "state": "z", "status": "paused", "session": "s2", "version": 9, "updated_at": 5.5,
        "transition_count": 4, "context": {"k": [1, True], "_observed": {"last_tool": None}},
        "iterations": 3, "files_edited": ("a.py", "b/c.py"), "bytes_read": 10, "denied": 2,
        "stop_reminders": 1, "interrupt_return": "a", "interrupt": "env",
        "pending_approval": PendingApproval("ap_1", "END", {"x": 1}, "why", "z", 2.0),
        "fork": fork, "child_run": "run_child0001",
        "invoke": Invoke("CALL", "loop", "a", None, "run_child0001"), "branch": "b1",
        "branch_terminal": "z", "interrupt_queue": (("env", ".env"),),
        "interrupt_counters": {"iterations": 2, "files_edited": ["a.py"], "bytes_read": 5,
                               "denied": 1},
        "entered_at": 4.5,
    }


@pytest.mark.parametrize("field", sorted(_changed_fields()))
def test_every_field_of_a_run_is_stored_whatever_else_changed(tmp_path, field, store_kind):
    """Change one field (then that field with a counter, then with the context) and read the
    run back through a new connection: it is the run that was saved."""
    from statewright.engine.run import Run

    root = _project(tmp_path)
    rt = Runtime.open(root)
    rid = rt.start("loop", "s", input={"k": 0})["run_id"]
    value = _changed_fields()[field]
    for extra in ({}, {"iterations": 7}, {"context": {"other": "x"}}):
        with rt.store.transaction() as tx:
            run = tx.require_run(rid)
            changes = {**extra, field: value}
            new = tx.save_with_events(run, run.with_(**changes), ())
        with Runtime.open(root).store.read() as tx:  # (a new connection: nothing cached)
            stored = tx.require_run(rid)
        assert stored == new and isinstance(stored, Run)
        assert getattr(stored, field) == value
        rt.store.close()
        # back to where it was, for the next round
        with rt.store.transaction() as tx:
            cur = tx.require_run(rid)
            tx.save_with_events(cur, run, ())


def test_the_parts_of_a_run_row_cover_every_field_once():
    """`store.tables` splits a run's fields between `snapshot` and columns of their own, and
    both stores compare them by hand-written tuples: a field added to `Run` must be placed."""
    from statewright.engine.run import Run
    from statewright.store.tables import COUNTERS, MOVES, SPLIT, STRUCTURE, moves_of, structure_of

    assert set(STRUCTURE) | SPLIT == set(Run._fields) and not set(STRUCTURE) & SPLIT
    assert SPLIT == {*COUNTERS, "context", *MOVES}
    values = {f: object() for f in Run._fields}
    run = Run.__new__(Run)
    for f, v in values.items():
        object.__setattr__(run, f, v)
    assert structure_of(run) == tuple(values[f] for f in STRUCTURE)
    assert moves_of(run) == tuple(values[f] for f in MOVES)
    # every field an update may change is exercised by the test above
    assert set(_changed_fields()) | {"run_id", "workflow", "parent_run", "created_at"} == \
        set(Run._fields)
