"""In-process decision throughput of `statewright.policy.gate` (DESIGN.md section 8).

Run alone: `.venv/bin/python benchmarks/bench_policy.py`. Prints rows
`name | value | unit | budget`; `main()` returns them for `benchmarks/run.py`.

Each figure is the best of 30 rounds of 0.1 s (wall clock), since the machine may be shared
(the least disturbed round is the truest figure, as with `timeit`); the median is printed
beside it. Rows:
- non-Bash: an Edit of an existing project file in a state with edit limits (path resolved,
  self-protection, allowed_tools, max_edit_lines, max_files_per_state);
- compound Bash, distinct lines: a new line each time (tree-sitter parse + full walk, no
  analysis cache hit), the cost a fresh `statewright-hook` process pays: DESIGN's ">= 5,000
  distinct (uncached) Bash decisions/s";
- compound Bash, nothing in common (info): a new line each time whose every command is new too
  (`git status --short t17`, `cat -n17`): what no per-word or per-command memo of a
  long-running process can shorten, closest to a fresh process's decision;
- compound Bash, same line (info): the same line decided again and again (the shell analysis
  of a line is cached, as in the long-running proxy; every path check is redone each time);
- non-Bash, new file: a Write to a path that does not exist yet.

A budget (`>= N`) is met when the best round reaches it. The last line says which budget rows
passed; run alone, the script exits 1 when one is missed (as the other benches do).
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
from pathlib import Path

from table import window_rates

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from statewright.definition.compiled import State
from statewright.policy import Counters, GateContext, ToolCall, gate

STATE = State(name="implement", allowed_tools=("Bash", "Read", "Edit", "Write", "mcp__github__*"),
              allowed_commands=("pytest", "npm test", "git status", "git diff", "ls", "cat",
                                "echo"),
              blocked_env=("AWS_SECRET_ACCESS_KEY", "PROD_DB_URL"), max_edit_lines=50,
              max_files_per_state=10, max_iterations=1000)
NON_BASH = ToolCall("Edit", {"file_path": "src/app.py", "old_string": "a\nb",
                             "new_string": "c\nd\ne"})
NEW_FILE = ToolCall("Write", {"file_path": "src/new/mod.py", "content": "x = 1\ny = 2\n"})
BASH_LINE = ('pytest -q tests/unit 2>&1 | cat && npm test -- --silent '
             '|| echo "tests failed: $(git status --short)" > out.txt')
BASH = ToolCall("Bash", {"command": BASH_LINE})
ROUNDS = 30


def _all_new(i: int) -> str:
    """`BASH_LINE` with a word of its own in every command (none met before)."""
    return (f"pytest -q tests/u{i} 2>&1 | cat -n{i} && npm test -- --silent --shard={i} "
            f'|| echo "tests failed {i}: $(git status --short t{i})" > out{i}.txt')


def _rates(calls, ctx: GateContext, rounds: int = ROUNDS, seconds: float = 0.1) -> list[float]:
    """Decisions per second in each of `rounds` short rounds (the best round is the one least
    disturbed by other processes; the median shows the spread)."""
    counters = Counters(iterations=3, files_edited=frozenset({"src/app.py"}))
    for call in calls[:3]:
        d = gate(STATE, counters, call, ctx)
        assert d.allowed, d.reason  # benchmark an allowed, fully checked decision
    k = [0]

    def step() -> None:
        gate(STATE, counters, calls[k[0] % len(calls)], ctx)
        k[0] += 1

    return window_rates(step, rounds, seconds, batch=50)


def _row(name: str, rates: list[float], budget: str) -> tuple[str, float, str, str]:
    return (name, round(max(rates)), f"decisions/s (best of {len(rates)}; median "
            f"{round(statistics.median(rates))})", budget)


def main() -> list[tuple[str, float, str, str]]:
    root = tempfile.mkdtemp(prefix="sw-bench-")
    os.makedirs(os.path.join(root, "src"))
    os.makedirs(os.path.join(root, ".statewright"))
    Path(root, "src", "app.py").write_text("a\nb\nc\n")
    ctx = GateContext(project_root=root, store_dir=root + "/.statewright",
                      events=("TESTS_PASS",), read_text=lambda p: None)
    rows = [
        _row("policy: non-Bash decisions", _rates([NON_BASH], ctx), ">= 50000"),
        _row("policy: compound Bash, same line (analysis cached)", _rates([BASH], ctx),
             "(info)"),
        _row("policy: non-Bash, Write to a new file", _rates([NEW_FILE], ctx), "(info)"),
    ]
    # built last: 20,000 live calls would slow the garbage collector for the rows above
    distinct = [ToolCall("Bash", {"command": BASH_LINE.replace("tests/unit", f"tests/u{i}")})
                for i in range(20_000)]
    rows.insert(1, _row("policy: compound Bash, distinct lines (uncached)",
                        _rates(distinct, ctx), ">= 5000"))
    del distinct
    fresh = [ToolCall("Bash", {"command": _all_new(i)}) for i in range(20_000)]
    rows.insert(2, _row("policy: compound Bash, nothing in common (info)", _rates(fresh, ctx),
                        "(info)"))
    for r in rows:
        print(" | ".join(str(x) for x in r))
    return rows


def budget_verdicts(rows: list[tuple[str, float, str, str]]) -> list[tuple[str, bool]]:
    """(row name, met) for every row with a `>= N` budget."""
    return [(name, value >= float(budget[2:])) for name, value, _unit, budget in rows
            if budget.startswith(">=")]


if __name__ == "__main__":
    verdicts = budget_verdicts(main())
    missed = [n for n, ok in verdicts if not ok]
    print("budgets: " + "; ".join(f"{n}: {'passed' if ok else 'MISSED'}" for n, ok in verdicts)
          + (" -- all passed" if not missed else f" -- {len(missed)} missed"))
    sys.exit(1 if missed else 0)
