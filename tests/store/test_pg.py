"""The PostgreSQL store (teams), beyond the contract it shares with the SQLite store (the tests
of test_store.py that take `store_kind` run on both): two checkouts of one project on two
"machines" deciding on one run, a connection killed mid-transaction, connection errors that
fail closed, migrations, projects kept apart, and the real hook on a shared store."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import psycopg
import pytest
from conftest import bin_path
from hook.harness import Project, allowed, denied

from statewright import errors
from statewright.hook import resident
from statewright.runtime import Runtime
from statewright.store.pg import PgStore, redact
from statewright.store.pg_schema import PG_SCHEMA_VERSION

pytestmark = pytest.mark.e2e

WORKER = Path(__file__).with_name("worker.py")
REPO = Path(__file__).resolve().parents[2]
LOOP = {"id": "loop", "initial": "a",
        "states": {"a": {"on": {"TICK": "a", "END": "z"}}, "z": {"type": "final"}}}


def _checkout(root: Path, url: str, project: str | None = "shop") -> Path:
    """A checkout of the project at `root` whose config points at the shared store."""
    (root / "workflows").mkdir(parents=True)
    (root / "workflows" / "loop.json").write_text(json.dumps(LOOP))
    config: dict = {"store": url}
    if project is not None:
        config["project"] = project
    (root / "statewright.json").write_text(json.dumps(config))
    return root


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("STATEWRIGHT_", "CLAUDE_"))}
    env["PYTHONPATH"] = str(REPO)
    env.update(extra)
    return env


def test_eight_processes_on_two_checkouts_deciding_on_one_run_lose_nothing(tmp_path, pg_url):
    laptop = _checkout(tmp_path / "laptop" / "shop", pg_url)
    ci = _checkout(tmp_path / "ci-runner" / "work", pg_url)  # (another directory name)
    run_id = Runtime.open(laptop).start("loop", None)["run_id"]
    n = 12
    procs = []
    for i in range(8):
        root, machine = (laptop, "laptop") if i < 4 else (ci, "ci")
        procs.append(subprocess.Popen(
            [sys.executable, str(WORKER), "hammer", str(root), str(i), str(n)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            env=_env(STATEWRIGHT_MACHINE=machine)))
    for p in procs:
        assert p.stdout.readline().strip() == "ready", p.stderr.read()
    for p in procs:
        p.stdin.write("go\n")
        p.stdin.flush()
    for p in procs:
        out, err = p.communicate(timeout=180)
        assert p.returncode == 0, err
        assert "done" in out
    state = Runtime.open(ci).get_state(None)
    assert state == Runtime.open(laptop).get_state(None)  # one run, seen from both checkouts
    assert state["run_id"] == run_id
    assert state["version"] == 1 + 8 * n
    assert state["context"]["n"] == 8 * n
    for i in range(8):
        for k in range(n):
            assert state["context"][f"p{i}_{k}"] is True
    with Runtime.open(ci).store.read() as tx:
        hist = tx.history([run_id], chain=True)
    trans = [h for h in hist if h["kind"] == "transitioned"]
    assert len(trans) == 8 * n
    assert sorted(h["version"] for h in trans) == list(range(2, 2 + 8 * n))
    assert len([h for h in hist if h["kind"] == "tool_allowed"]) == 8 * n
    # each row names the machine it was written on, and the workers' own word agrees
    assert {h["machine"] for h in trans} == {"laptop", "ci"}
    assert all(h["machine"] == h["data"]["data"]["machine"] for h in trans)
    # the chain runs through every row, whichever machine wrote it
    assert [h["prev_hash"] for h in hist[1:]] == [h["hash"] for h in hist[:-1]]


def _terminate(admin_url: str, where: str) -> int:
    with psycopg.connect(admin_url, autocommit=True) as conn:
        rows = conn.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE"
                            f" application_name = 'statewright' AND {where}").fetchall()
    return len(rows)


def test_a_connection_killed_mid_transaction_loses_nothing(tmp_path, pg_server, pg_url):
    root = _checkout(tmp_path / "proj", pg_url)
    rt = Runtime.open(root)
    rid = rt.start("loop", None)["run_id"]
    rt.transition(None, "TICK")
    p = subprocess.Popen([sys.executable, str(WORKER), "hang", str(root)], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env())
    assert p.stdout.readline().strip() == "mid-transaction", p.stderr.read()
    # the run's row and a history row are written, not committed: the server drops the
    # connection (a network cut, a restart, an operator)
    assert _terminate(pg_server.admin_url(), "state = 'idle in transaction'") == 1
    out, err = p.communicate("go\n", timeout=60)
    assert p.returncode == 0 and "Traceback" not in err, err
    said = json.loads(out.strip().splitlines()[-1])
    assert said["error"] == errors.STORE_ERROR and "PostgreSQL store" in said["message"]
    state = rt.get_state(None)
    assert state["version"] == 2 and "crash" not in state["context"]
    assert [h["kind"] for h in rt.history(rid)] == ["started", "transitioned"]
    assert rt.transition(None, "TICK")["version"] == 3  # its lock went with its connection
    # a long-running process (serve, ui) whose idle connection was dropped reconnects
    assert _terminate(pg_server.admin_url(), "state = 'idle'") >= 1
    assert rt.transition(None, "TICK")["version"] == 4
    assert [h["version"] for h in rt.history(rid)] == [1, 2, 3, 4]


def test_connection_errors_fail_closed_with_a_clear_message(tmp_path, pg_server):
    dead = (f"postgresql://sw:hunter2@/statewright?host={pg_server.socket_dir}"
            f"&port={pg_server.port + 1 if pg_server.port < 65535 else 1}")
    assert "hunter2" not in redact(dead) and "sw:***@" in redact(dead)
    p = Project(tmp_path / "proj")
    (p.root / "statewright.json").write_text(json.dumps({"store": dead}))
    r = p.cli("status", check=False)
    assert r.returncode != 0 and "Traceback" not in r.stderr
    line = r.stderr.strip()
    assert line.startswith("error[STORE_ERROR]") and "\n" not in line, r.stderr
    assert "PostgreSQL store" in line and "could not be reached" in line
    assert "hunter2" not in r.stderr + r.stdout
    # the hook refuses the agent's call: a store it cannot reach is no licence
    reason = denied(p.pre("Read", {"file_path": p.path("README.md")}))
    assert "PostgreSQL store" in reason and "hunter2" not in reason


def test_without_psycopg_the_error_says_what_to_install(tmp_path, pg_url):
    root = _checkout(tmp_path / "proj", pg_url)
    code = ("import sys; sys.modules['psycopg'] = None\n"
            "from statewright.runtime import Runtime\n"
            "from statewright.errors import StatewrightError\n"
            f"try:\n    Runtime.open({str(root)!r}).get_state(None)\n"
            "except StatewrightError as e:\n    print(e.code, e.message)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=_env(), timeout=60)
    assert out.stdout.startswith("STORE_ERROR") and "statewright[postgres]" in out.stdout, out


def test_migrations_are_versioned_and_a_foreign_or_newer_schema_is_refused(pg_server, pg_url):
    store = PgStore.open(pg_url, "p")
    conn = store._conn()
    assert conn.execute("SELECT array_agg(version ORDER BY version) FROM statewright_schema"
                        ).fetchone()[0] == list(range(1, PG_SCHEMA_VERSION + 1))
    store.close()
    PgStore.open(pg_url, "p").close()  # a current schema: nothing to do
    with psycopg.connect(pg_url, autocommit=True) as c:
        assert c.execute("SELECT count(*) FROM statewright_schema").fetchone()[0] == \
            PG_SCHEMA_VERSION
        c.execute("INSERT INTO statewright_schema(version) VALUES (%s)", (PG_SCHEMA_VERSION + 7,))
    with pytest.raises(errors.StatewrightError) as ei:
        PgStore.open(pg_url, "p")
    assert "newer statewright" in ei.value.message
    other = pg_server.fresh_url()
    with psycopg.connect(other, autocommit=True) as c:
        c.execute("CREATE TABLE runs(id integer)")
    with pytest.raises(errors.StatewrightError) as ei:
        PgStore.open(other, "p")
    assert "not statewright's" in ei.value.message


def test_history_is_append_only(tmp_path, pg_url):
    root = _checkout(tmp_path / "proj", pg_url)
    Runtime.open(root).start("loop", None)
    with psycopg.connect(pg_url, autocommit=True) as c:
        for sql in ("UPDATE events SET actor = 'human'", "DELETE FROM events"):
            with pytest.raises(psycopg.errors.RaiseException, match="never changed"):
                c.execute(sql)
        assert c.execute("SELECT count(*) FROM events").fetchone()[0] == 1


def test_projects_of_one_store_are_kept_apart_and_listed_together(tmp_path, pg_url):
    a = _checkout(tmp_path / "a", pg_url, project="alpha")
    b = _checkout(tmp_path / "b", pg_url, project=None)  # named after its directory: "b"
    ra = Runtime.open(a).start("loop", None)["run_id"]
    assert Runtime.open(b).list_runs() == []  # session `default` of another project: nothing
    with pytest.raises(errors.StatewrightError) as ei:
        Runtime.open(b).transition(None, "TICK")
    assert ei.value.code == errors.NO_ACTIVE_RUN
    rb = Runtime.open(b).start("loop", None)["run_id"]
    assert Runtime.open(a).get_state(None)["run_id"] == ra
    assert Runtime.open(b).get_state(None)["run_id"] == rb
    with Runtime.open(a).store.read() as tx:
        assert [r.run_id for r in tx.list_runs()] == [ra]
        both = tx.list_runs(all_projects=True)
        assert {r.run_id for r in both} == {ra, rb}
        origins = tx.run_origins([ra, rb])
        assert origins[ra][0] == "alpha" and origins[rb][0] == "b"
        assert origins[ra][1] == origins[rb][1] == os.uname().nodename


WF = {"id": "team", "initial": "work",
      "states": {"work": {"allowed_tools": ["Read", "Bash"], "allowed_commands": ["echo"],
                          "on": {"DONE": "end"}},
                 "end": {"type": "final"}}}


def test_the_real_hook_on_a_shared_store_forwards_to_its_resident_server(tmp_path, pg_url):
    p = Project(tmp_path / "proj")
    (p.root / "statewright.json").write_text(json.dumps({"store": pg_url}))
    p.write_workflow(WF)
    run_id = p.start("team")["run_id"]
    assert "does not match any allowed command" in denied(p.pre("Bash", {"command": "rm -rf x"}))
    allowed(p.pre("Read", {"file_path": p.path("README.md")}))
    ep = resident.endpoint(p.env)
    assert ep is not None  # a project with a shared store is served by a resident server
    deadline = time.monotonic() + 60
    while not (os.path.exists(ep.socket) and os.path.exists(ep.key_file)):
        assert time.monotonic() < deadline, "no resident server listened"
        p.hook("stop", p.payload("Stop"))
        time.sleep(0.2)
    payload = p.payload("PreToolUse", tool_name="Bash", tool_input={"command": "curl x | sh"},
                        tool_use_id="toolu_02")
    r = subprocess.run([sys.executable, "-X", "importtime", bin_path("statewright-hook"),
                        "pre-tool-use"], input=json.dumps(payload).encode(),
                       capture_output=True, env=p.env, timeout=120)
    assert r.returncode == 0
    mods = {line.rsplit("|", 1)[1].strip() for line in r.stderr.decode().splitlines()
            if line.startswith("import time:") and "|" in line}
    # the hook process only forwarded: neither psycopg nor the deciding code was imported
    assert not {m for m in mods if m.startswith(("psycopg", "statewright.store",
                                                 "statewright.runtime"))}, sorted(mods)
    assert "curl" in denied(json.loads(r.stdout))
    state = p.status()
    assert state["run_id"] == run_id and state["counters"]["iterations"] == 1
    with psycopg.connect(pg_url) as c:
        denied_count = c.execute("SELECT denied FROM runs WHERE run_id=%s",
                                 (run_id,)).fetchone()[0]
    assert denied_count == 2  # both refusals are in the shared store


WATCHED = {"id": "watched", "initial": "work",
           "states": {"work": {"allowed_tools": ["Read"], "on": {"DONE": "end"}},
                      "review": {"allowed_tools": ["Read"], "on": {"REVIEWED": "$return"}},
                      "end": {"type": "final"}},
           "interrupts": {"config": {"trigger": {"file_pattern": "config/**"},
                                     "target": "review"}}}


def _watched_checkout(root: Path, url: str) -> Path:
    (root / "workflows").mkdir(parents=True)
    (root / "workflows" / "watched.json").write_text(json.dumps(WATCHED))
    (root / "config").mkdir()
    (root / "config" / "app.toml").write_text("debug = false\n")
    (root / "statewright.json").write_text(json.dumps({"store": url, "project": "shop"}))
    return root


def test_each_machine_compares_its_own_checkout_for_interrupts(tmp_path, pg_url, monkeypatch):
    """The files an interrupt watches are looked at per machine: two checkouts of the same
    files differ in inodes and times, and must not take each other's look for a change."""
    from statewright.policy.types import ToolCall

    laptop = _watched_checkout(tmp_path / "laptop" / "shop", pg_url)
    ci = _watched_checkout(tmp_path / "ci" / "shop", pg_url)
    monkeypatch.setenv("STATEWRIGHT_MACHINE", "laptop")
    on_laptop = Runtime.open(laptop)
    on_laptop.start("watched", None)
    monkeypatch.setenv("STATEWRIGHT_MACHINE", "ci")
    on_ci = Runtime.open(ci)
    for rt, root in ((on_laptop, laptop), (on_ci, ci)) * 3:
        assert rt.authorize(None, ToolCall("Read", {"file_path": str(root / "README")})).allowed
        assert rt.get_state(None)["state"] == "work"  # no change on either machine
    # a real change on one machine fires the interrupt, for everyone
    (ci / "config" / "app.toml").write_text("debug = true\n")
    on_ci.authorize(None, ToolCall("Read", {"file_path": str(ci / "README")}))
    assert on_laptop.get_state(None)["state"] == "review"
