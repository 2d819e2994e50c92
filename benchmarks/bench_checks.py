"""Benchmark: the overhead a check adds over running its command directly.

A transition that names a check runs the check's command itself (`runtime.checks`): a process
group, the output read into a tail, the frozen paths fingerprinted, the outcome recorded and
the guards evaluated in one store transaction. Measured in process, against the same command
started with `subprocess.run`: the median of each over alternating rounds, and their
difference. DESIGN section 8 sets no budget for checks; the figure is information.

Run alone: `.venv/bin/python benchmarks/bench_checks.py`.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.table import Row, print_rows
from statewright.runtime import Runtime

COMMAND = "true"
ROUNDS = 30


def _project(root: Path, frozen: int) -> None:
    (root / "workflows").mkdir(parents=True)
    (root / "tests").mkdir()
    for i in range(frozen):
        (root / "tests" / f"test_{i}.py").write_text(f"def test_{i}():\n    assert True\n")
    doc = {"id": "bench", "initial": "a",
           "checks": {"c": {"run": COMMAND, "read_only": ["tests/**", "**/conftest.py"]}},
           "guards": {"ok": {"field": "_checks.c.ok", "op": "eq", "value": True}},
           "states": {"a": {"on": {"GO": {"target": "b", "guard": "ok", "checks": ["c"]}}},
                      "b": {"on": {"BACK": "a"}}, "z": {"type": "final"}}}
    # (z is reachable from nowhere: add the edge that validation needs)
    doc["states"]["b"]["on"]["END"] = "z"
    (root / "workflows" / "bench.json").write_text(json.dumps(doc))


def main() -> list[Row]:
    rows: list[Row] = []
    for frozen in (0, 200):
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            _project(root, frozen)
            rt = Runtime.open(root)
            rt.start("bench")
            direct, checked = [], []
            for _ in range(ROUNDS):
                t0 = time.perf_counter()
                subprocess.run(["/bin/sh", "-c", COMMAND], cwd=root, check=True)
                direct.append(time.perf_counter() - t0)
                t0 = time.perf_counter()
                rt.transition(None, "GO")
                checked.append(time.perf_counter() - t0)
                rt.transition(None, "BACK")
            rt.close()
        d, c = statistics.median(direct) * 1000, statistics.median(checked) * 1000
        what = f"`{COMMAND}`, {frozen} frozen files"
        rows.append((f"command alone ({what}), median", round(d, 2), "ms", "information"))
        rows.append((f"transition running it as a check ({what}), median", round(c, 2), "ms",
                     "information"))
        rows.append((f"overhead of the check ({what})", round(c - d, 2), "ms", "information"))
    print_rows(rows)
    return rows


if __name__ == "__main__":
    main()
