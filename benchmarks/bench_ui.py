"""Web page benchmark (issue 14): how fast `statewright ui` answers for a project with 1,000
runs and 100,000 history events — the runs list and a run's page (its graph, answer and
newest history), over HTTP to a real `statewright ui` process, signed in like the browser.

    .venv/bin/python benchmarks/bench_ui.py

Prints `name | value | unit | budget` rows; exit status 1 when a median misses 100 ms.
"""

from __future__ import annotations

import http.client
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from statewright.runtime import Runtime

RUNS = 1_000
EVENTS = 100_000
BUDGET_MS = 100.0
SAMPLES = 40
BIN = Path(sys.executable).parent / "statewright"
LINK = re.compile(r"http://127\.0\.0\.1:(\d+)/#login=([A-Za-z0-9_-]+)")


def _fill(root: Path) -> str:
    """RUNS runs of two examples, one waiting for approval; EVENTS history rows in all (tool
    calls, as the hook records them). Returns the newest run's id."""
    rt = Runtime.open(root)
    ids = []
    for i in range(RUNS):
        a = rt.start("demo-proxy" if i % 2 else "tdd-feature", f"s{i}", actor="agent")
        ids.append(a["run_id"])
    rt.transition(f"s{RUNS - 1}", "PLAN_READY")
    rt.transition(f"s{RUNS - 1}", "DONE")  # parked: the page shows the approval
    with rt.store.transaction() as tx:
        have = tx.last_event_seq()
        per_run, extra = divmod(EVENTS - have, RUNS)
        now = time.time()
        rows = [(rid, now, "agent", "tool_allowed", 1, "explore",
                 json.dumps({"tool": "Read", "input": {"file_path": f"src/f{k}.py"}}))
                for i, rid in enumerate(ids) for k in range(per_run + (i < extra))]
        tx.conn.executemany("INSERT INTO events(run_id, at, actor, kind, version, state, data)"
                            " VALUES (?,?,?,?,?,?,?)", rows)
    return ids[-1]


def _get(port: int, path: str, key: str) -> tuple[int, bytes, float]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    t0 = time.perf_counter()
    conn.request("GET", path, headers={"X-Statewright-Key": key})
    resp = conn.getresponse()
    body = resp.read()
    ms = (time.perf_counter() - t0) * 1000
    conn.close()
    return resp.status, body, ms


def main() -> list[tuple[str, float, str, str]]:
    tmp = Path(tempfile.mkdtemp(prefix="sw-bench-ui-"))
    proc = None
    try:
        shutil.copytree(Path(__file__).resolve().parent.parent / "workflows", tmp / "workflows")
        t0 = time.perf_counter()
        newest = _fill(tmp)
        fill_s = time.perf_counter() - t0
        with Runtime.open(tmp).store.read() as tx:
            events = tx.last_event_seq()
        env = {k: v for k, v in os.environ.items() if not k.startswith(("STATEWRIGHT_",
                                                                        "CLAUDE_"))}
        proc = subprocess.Popen([str(BIN), "ui", "--port", "0", "--project", str(tmp)],
                                stdout=subprocess.PIPE, text=True, env=env)
        assert proc.stdout is not None
        m = None
        while m is None:
            line = proc.stdout.readline()
            if not line:
                raise RuntimeError("statewright ui ended")
            m = LINK.search(line)
        port, token = int(m.group(1)), m.group(2)
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        for _ in range(100):
            try:
                conn.request("POST", "/api/session", json.dumps({"token": token}),
                             {"Origin": f"http://127.0.0.1:{port}",
                              "Content-Type": "application/json"})
                break
            except OSError:
                time.sleep(0.05)
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        key = json.loads(conn.getresponse().read())["key"]
        conn.close()
        rows = [("ui: project size", RUNS, "runs", "-"),
                ("ui: project size", events, "history events", "-"),
                ("ui: filling the store", round(fill_s, 1), "s", "-")]
        for name, path, must in (("runs list (page 1 of 10)", "/api/runs", b"Waiting for you"),
                                 ("runs list (page 10 of 10)", "/api/runs?page=10", b"newer"),
                                 ("a run's page", f"/api/runs/{newest}", b"svg"),
                                 ("a run's page, oldest run", None, b"svg")):
            if path is None:
                with Runtime.open(tmp).store.read() as tx:
                    oldest = tx.runs_page(1, RUNS - 1)[0].run_id
                path = f"/api/runs/{oldest}"
            status, body, _ms = _get(port, path, key)
            assert status == 200 and must in body, (status, body[:200])
            times = [_get(port, path, key)[2] for _ in range(SAMPLES)]
            med = statistics.median(times)
            p95 = sorted(times)[int(len(times) * 0.95) - 1]
            rows.append((f"ui: {name} (median)", round(med, 1), "ms", f"<= {BUDGET_MS:.0f}"))
            rows.append((f"ui: {name} (p95)", round(p95, 1), "ms", "-"))
        _s, _b, wait_ms = _get(port, "/api/wait?since=-1", key)
        rows.append(("ui: live check, a change already there", round(wait_ms, 1), "ms", "-"))
        for r in rows:
            print(" | ".join(str(x) for x in r))
        return rows
    finally:
        if proc is not None:
            proc.terminate()
            proc.wait(timeout=30)
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    result = main()
    over = [r for r in result if r[3].startswith("<=") and r[1] > BUDGET_MS]
    sys.exit(1 if over else 0)
