"""The one way the benchmarks print their rows and judge them against DESIGN.md section 8.

A row is `(name, value, unit, budget)`; a budget `<= X` is a ceiling (a value that is not a
number, such as a ratio over a zero floor, is over it); any other budget text is information.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable

Row = tuple[str, float, str, str]


def window_rates(step: Callable[[], object], windows: int, seconds: float,
                 batch: int = 1) -> list[float]:
    """Calls of `step` per second in each of `windows` back-to-back windows of `seconds`
    (the clock read every `batch` calls). The best window is the one least disturbed by other
    processes on a shared machine, as `timeit` takes the best; the median shows the spread."""
    out = []
    for _ in range(windows):
        n, start = 0, time.perf_counter()
        while True:
            for _ in range(batch):
                step()
            n += batch
            el = time.perf_counter() - start
            if el >= seconds:
                out.append(n / el)
                break
    return out


def print_rows(rows: list[Row]) -> None:
    width = max(len(r[0]) for r in rows)
    for name, value, unit, budget in rows:
        print(f"{name:<{width}} | {value:>8} | {unit:<2} | {budget}")
    sys.stdout.flush()


def over_budget(rows: list[Row]) -> list[str]:
    out = []
    for name, value, _unit, budget in rows:
        if budget.startswith("<=") and not value <= float(budget[2:]):
            out.append(f"{name}: {value} > {budget[2:].strip()}")
    return out


def exit_status(rows: list[Row]) -> int:
    """Print what is over budget on stderr; 1 if anything is, else 0."""
    over = over_budget(rows)
    if over:
        print("OVER BUDGET: " + "; ".join(over), file=sys.stderr)
    return 1 if over else 0
