"""Shared store benchmark (DESIGN.md section 8, "PostgreSQL: >= 1,000 durable
authorize+record/s over 8 connections on one machine"): 8 processes, each an agent session
with its own run of one project, each deciding a Bash line and recording its result (two
durable transactions per pair) as fast as it can for a few seconds, first on the project's
SQLite file, then on a PostgreSQL server started for the run (Debian's, `initdb` + `pg_ctl` in
a temp dir as in the tests; `fsync` and `synchronous_commit` on). Each process keeps its
runtime (and so its connection) open, as the resident servers do.

Besides the rates: the CPU time a pair costs, in the clients (the 8 processes' own CPU time
over their loops) and in the server (the PostgreSQL server started here, its postmaster and
every process under it, exited ones included), from the same run. On 2 cores the rate cannot
exceed 2 s / (client + server CPU per pair), whatever else runs.

    .venv/bin/python benchmarks/bench_teams.py

Prints `name | value | unit | budget` rows; exit status 1 when PostgreSQL misses its budget.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO))

WORK = {"id": "bench-work", "initial": "w",
        "states": {"w": {"allowed_tools": ["Read", "Grep", "Bash"],
                         "allowed_commands": ["pytest"], "on": {"DONE": "z"}},
                   "z": {"type": "final"}}}
PROCESSES = 8
SECONDS = 4.0
BUDGET = 1000  # durable authorize+record pairs/s on PostgreSQL over 8 connections


def worker(root: str, session: str, seconds: float) -> None:
    from statewright.policy.types import ToolCall, ToolResult
    from statewright.runtime import Runtime

    rt = Runtime.open(root, resident=True)
    rt.start("bench-work", session)
    bash = ToolCall("Bash", {"command": "pytest -q tests/"})
    result = ToolResult("Bash", {"command": "pytest -q tests/"}, output_bytes=40, exit_code=0)
    assert rt.authorize(session, bash).allowed
    print("ready", flush=True)
    sys.stdin.readline()
    n, start, cpu = 0, time.perf_counter(), time.process_time()
    while time.perf_counter() - start < seconds:
        rt.authorize(session, bash)
        rt.record(session, result)
        n += 1
    elapsed = time.perf_counter() - start
    cpu = time.process_time() - cpu
    state = rt.get_state(session)
    print(json.dumps({"pairs": n, "seconds": elapsed, "cpu": cpu,
                      "iterations": state["counters"]["iterations"]}), flush=True)
    rt.close()


def server_cpu(data_dir: Path | None) -> float:
    """CPU seconds of the PostgreSQL server whose data directory is `data_dir`: its postmaster
    (with the children it has reaped) and the processes under it now; 0 without one."""
    if data_dir is None:
        return 0.0
    try:
        root = int((data_dir / "postmaster.pid").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 0.0
    tick = os.sysconf("SC_CLK_TCK")
    total = 0
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(pid) == root:  # utime stime cutime cstime
            total += sum(int(x) for x in fields[11:15])
        elif int(fields[1]) == root:  # (its children: utime stime)
            total += int(fields[11]) + int(fields[12])
    return total / tick


def _stream(root: Path, env: dict[str, str], data_dir: Path | None = None
            ) -> tuple[float, int, float, float]:
    """(pairs/s of the 8 processes together, pairs lost, client and server CPU ms per pair):
    each counts its own pairs; the store must hold exactly that many iterations."""
    procs = [subprocess.Popen([sys.executable, __file__, "--worker", str(root), f"s{i}",
                               str(SECONDS)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              text=True, env=env) for i in range(PROCESSES)]
    for p in procs:
        line = p.stdout.readline().strip()  # type: ignore[union-attr]
        if line != "ready":
            raise SystemExit(f"a worker did not start: {line!r}")
    before = server_cpu(data_dir)
    for p in procs:
        p.stdin.write("go\n")  # type: ignore[union-attr]
        p.stdin.flush()  # type: ignore[union-attr]
    results = []
    for p in procs:
        out, _ = p.communicate(timeout=300)
        results.append(json.loads(out.strip().splitlines()[-1]))
    time.sleep(0.3)  # (the server's processes for these connections end and are reaped)
    server = server_cpu(data_dir) - before
    rate = sum(r["pairs"] / r["seconds"] for r in results)
    lost = sum(r["pairs"] + 1 - r["iterations"] for r in results)  # (+1: the warm-up call)
    pairs = sum(r["pairs"] for r in results)
    return rate, lost, 1000 * sum(r["cpu"] for r in results) / pairs, 1000 * server / pairs


def _project(base: Path, name: str) -> Path:
    root = base / name
    (root / "workflows").mkdir(parents=True)
    (root / "workflows" / "bench-work.json").write_text(json.dumps(WORK))
    return root


def main() -> list[tuple[str, float, str, str]]:
    sys.path.insert(0, str(REPO / "tests"))
    from pg_server import PgServer

    base = Path(tempfile.mkdtemp(prefix="sw-bench-teams-"))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("STATEWRIGHT_", "CLAUDE_"))}
    env["PYTHONPATH"] = str(REPO)
    server = PgServer().start()
    try:
        sqlite_rate, sqlite_lost, sqlite_cpu, _ = _stream(_project(base, "sqlite"), env)
        assert server.dir is not None
        pg_rate, pg_lost, pg_client, pg_server = _stream(
            _project(base, "pg"), {**env, "STATEWRIGHT_STORE": server.fresh_url()},
            server.dir / "data")
    finally:
        server.stop()
        shutil.rmtree(base, ignore_errors=True)
    return [
        ("PostgreSQL: durable authorize+record, 8 processes (8 connections)", round(pg_rate),
         "pairs/s", f">= {BUDGET}"),
        ("SQLite: durable authorize+record, 8 processes (one file), same run", round(sqlite_rate),
         "pairs/s", "-"),
        ("PostgreSQL / SQLite", round(pg_rate / sqlite_rate, 2), "x", "-"),
        ("pairs lost (PostgreSQL + SQLite)", pg_lost + sqlite_lost, "pairs", "0"),
        ("PostgreSQL: CPU a pair in the 8 clients", round(pg_client, 3), "ms", "-"),
        ("PostgreSQL: CPU a pair in the server", round(pg_server, 3), "ms", "-"),
        ("SQLite: CPU a pair in the 8 processes (the store's work included)",
         round(sqlite_cpu, 3), "ms", "-"),
        ("load average (1 min) at the end, 2 cores", round(os.getloadavg()[0], 1), "", "-"),
    ]


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        worker(sys.argv[2], sys.argv[3], float(sys.argv[4]))
        sys.exit(0)
    from table import print_rows

    rows = main()
    print_rows(rows)
    sys.exit(0 if rows[0][1] >= BUDGET and rows[3][1] == 0 else 1)
