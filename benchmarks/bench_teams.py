"""Shared store benchmark (DESIGN.md section 8, "PostgreSQL: >= 1,000 durable
authorize+record/s over 8 connections on one machine"): 8 processes, each an agent session
with its own run of one project, each deciding a Bash line and recording its result (two
durable transactions per pair) as fast as it can for a few seconds, first on the project's
SQLite file, then on a PostgreSQL server started for the run (Debian's, `initdb` + `pg_ctl` in
a temp dir as in the tests; `fsync` and `synchronous_commit` on). Each process keeps its
runtime (and so its connection) open, as the resident servers do.

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
    n, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        rt.authorize(session, bash)
        rt.record(session, result)
        n += 1
    elapsed = time.perf_counter() - start
    state = rt.get_state(session)
    print(json.dumps({"pairs": n, "seconds": elapsed,
                      "iterations": state["counters"]["iterations"]}), flush=True)
    rt.close()


def _stream(root: Path, env: dict[str, str]) -> tuple[float, int]:
    """(pairs/s of the 8 processes together, pairs lost): each counts its own pairs; the store
    must hold exactly that many iterations."""
    procs = [subprocess.Popen([sys.executable, __file__, "--worker", str(root), f"s{i}",
                               str(SECONDS)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              text=True, env=env) for i in range(PROCESSES)]
    for p in procs:
        line = p.stdout.readline().strip()  # type: ignore[union-attr]
        if line != "ready":
            raise SystemExit(f"a worker did not start: {line!r}")
    for p in procs:
        p.stdin.write("go\n")  # type: ignore[union-attr]
        p.stdin.flush()  # type: ignore[union-attr]
    results = []
    for p in procs:
        out, _ = p.communicate(timeout=300)
        results.append(json.loads(out.strip().splitlines()[-1]))
    rate = sum(r["pairs"] / r["seconds"] for r in results)
    lost = sum(r["pairs"] + 1 - r["iterations"] for r in results)  # (+1: the warm-up call)
    return rate, lost


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
        sqlite_rate, sqlite_lost = _stream(_project(base, "sqlite"), env)
        pg_rate, pg_lost = _stream(_project(base, "pg"),
                                   {**env, "STATEWRIGHT_STORE": server.fresh_url()})
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
