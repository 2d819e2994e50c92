"""Benchmark: the kernel tier's cost (DESIGN section 8).

- a sandboxed line's added cost: `bash -c LINE` against `bash -c` of the text the gate
  rewrites it to (the launcher with a realistic profile: every path check 1 protects, the store
  hidden, two blocked variables), interleaved round by round so load falls on both alike;
  budget +25 ms median (goal +10);
- a line that needs no sandbox pays nothing: the gate leaves it as it is (checked), and its
  decision costs what it did (decisions/s of a plain line against a sandboxed one, in process).

Run alone: `.venv/bin/python benchmarks/bench_sandbox.py`. `main()` returns rows
`(name, value, unit, budget)` for `benchmarks/run.py`.
"""

from __future__ import annotations

import itertools
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from table import Row, exit_status, print_rows, window_rates

from statewright.definition.compiled import State
from statewright.policy import Counters, GateContext, ToolCall, gate
from statewright.sandbox.probe import tier

ROUNDS = 60
STATE = State(name="green", allowed_commands=("pytest", "ls", "true", "python3"),
              blocked_env=("AWS_SECRET_ACCESS_KEY", "PROD_DB_URL"))
FREE = State(name="free", allowed_commands=("pytest", "ls", "true", "python3"))


def _project(base: Path) -> GateContext:
    root = base / "proj"
    for d in ("workflows", ".statewright", ".claude", ".git/hooks", "src"):
        (root / d).mkdir(parents=True, exist_ok=True)
    (root / "workflows" / "flow.json").write_text("{}\n")
    (root / ".claude" / "settings.json").write_text("{}\n")
    (root / ".git" / "config").write_text("[core]\n")
    return GateContext(str(root), str(root / ".statewright"),
                       frozenset({str(root / "workflows" / "flow.json")}))


def _decide(state: State, ctx: GateContext, line: str):
    return gate(state, Counters(), ToolCall("Bash", {"command": line}, cwd=ctx.project_root), ctx)


def _run(text: str, cwd: str) -> float:
    t0 = time.perf_counter()
    subprocess.run(["bash", "-c", text], cwd=cwd, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, check=False)
    return (time.perf_counter() - t0) * 1000


def main() -> list[Row]:
    rows: list[Row] = []
    found = tier()
    print(f"kernel tier: {found.kind} (Landlock ABI {found.landlock_abi}) {found.why}".rstrip())
    with tempfile.TemporaryDirectory() as tmp:
        ctx = _project(Path(tmp))
        root = ctx.project_root
        for line in ("true", "python3 -c pass"):
            d = _decide(STATE, ctx, line)
            assert d.allowed and d.sandboxed, (line, d.reason)
            wrapped = d.updated_input["command"]
            plain, boxed = [], []
            for _ in range(ROUNDS):
                plain.append(_run(line, root))
                boxed.append(_run(wrapped, root))
            added = statistics.median(boxed) - statistics.median(plain)
            print(f"  `{line}`: {statistics.median(plain):.2f} ms plain, "
                  f"{statistics.median(boxed):.2f} ms sandboxed (min {min(boxed):.2f})")
            rows.append((f"sandboxed `{line}`, added per line, median (goal 10)",
                         round(added, 2), "ms", "<= 25"))
        # a line that needs no sandbox is left as it is, and decided as fast as before
        d = _decide(FREE, ctx, "ls -la src")
        assert d.allowed and not d.sandboxed and d.updated_input is None, d
        it = (f"ls -la src/d{i}" for i in itertools.count())
        plain_rate = max(window_rates(lambda: _decide(FREE, ctx, next(it)), 3, 0.5))
        it2 = (f"pytest -q tests/t{i}.py" for i in itertools.count())
        boxed_rate = max(window_rates(lambda: _decide(FREE, ctx, next(it2)), 3, 0.5))
        rows.append(("plain line: left as it is, decisions/s", round(plain_rate), "/s",
                     "(info: no rewrite, no process)"))
        rows.append(("sandboxed line: decision with its rewrite, decisions/s", round(boxed_rate),
                     "/s", "(info)"))
    print_rows(rows)
    return rows


if __name__ == "__main__":
    sys.exit(exit_status(main()))
