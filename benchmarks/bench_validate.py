"""Benchmark: validate (schema + model + semantic checks + compile) a generated 500-state workflow.

Run alone: `.venv/bin/python benchmarks/bench_validate.py`. `main()` returns rows
`(name, value, unit, budget)` for `benchmarks/run.py`.
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from statewright.definition import validate

N_STATES = 500


def generate(n: int = N_STATES) -> dict:
    """A chain of n states using every transition form, guards, interrupts and budgets."""
    states: dict = {}
    guards = {f"g{i}": {"field": f"ctx.v{i}", "op": "gte", "value": i} for i in range(20)}
    for i in range(n - 3):
        nxt, alt = f"s{i + 1}" if i + 1 < n - 3 else "done", f"s{max(i - 1, 0)}"
        kind = i % 5
        on: dict[str, Any]
        if kind == 0:
            on = {"NEXT": nxt, "BACK": alt}
        elif kind == 1:
            on = {"NEXT": {"target": nxt, "guard": f"g{i % 20}", "requires_approval": i % 2 == 0}}
        elif kind == 2:
            on = {"NEXT": [{"target": nxt, "guards": [f"g{i % 20}"]}, {"target": alt}]}
        elif kind == 3:
            on = {"NEXT": {"invoke": "child", "on_complete": nxt, "on_fail": "failed",
                           "input": {"i": i}}}
        else:
            on = {"NEXT": nxt, "FAIL": "failed"}
        states[f"s{i}"] = {"allowed_tools": ["Read", "Edit", "Bash", "mcp__github__*"],
                           "allowed_commands": ["pytest", "npm test"],
                           "blocked_env": ["AWS_SECRET_ACCESS_KEY"],
                           "max_iterations": 10, "max_edit_lines": 20,
                           "context_budget_bytes": 100000,
                           "instructions": f"step {i}", "on": on}
    states["handler"] = {"allowed_tools": ["Read"], "on": {"BACK": "$return"}}
    states["done"] = {"type": "final"}
    states["failed"] = {"type": "final"}
    return {"id": "big", "initial": "s0", "guards": guards, "states": states,
            "interrupts": {"env": {"trigger": {"file_pattern": "**/*.env*"}, "target": "handler"}}}


def main() -> list[tuple[str, float, str, str]]:
    doc = generate()
    assert len(doc["states"]) == N_STATES
    first = validate(doc, resolver=lambda name: True)
    if not first.ok:
        raise SystemExit(f"generated workflow is invalid: {first.errors[:3]}")
    times = []
    for _ in range(7):
        t0 = time.perf_counter()
        r = validate(doc, resolver=lambda name: True)
        times.append(time.perf_counter() - t0)
        assert r.ok
    med = statistics.median(times) * 1000
    rows = [(f"validate {N_STATES}-state workflow (median of 7)", round(med, 1), "ms",
             "< 1000 ms"),
            (f"validate {N_STATES}-state workflow (worst of 7)", round(max(times) * 1000, 1), "ms",
             "< 1000 ms")]
    for row in rows:
        print(" | ".join(str(c) for c in row))
    return rows


if __name__ == "__main__":
    main()
