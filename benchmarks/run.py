"""Run every benchmark of DESIGN.md section 8 and print its figures.

    make bench            # or: .venv/bin/python benchmarks/run.py [name ...]

Each `benchmarks/bench_*.py` is a standalone script (runnable alone too) that prints a table of
`name | value | unit | budget` rows measured in one run, as ratios where the budget is a ratio.
They run one after another in their own processes so one cannot skew another's timings.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main(argv: list[str]) -> int:
    wanted = set(argv)
    scripts = sorted(p for p in HERE.glob("bench_*.py")
                     if not wanted or p.stem.removeprefix("bench_") in wanted or p.stem in wanted)
    if not scripts:
        print(f"no benchmark matches {' '.join(argv)}", file=sys.stderr)
        return 2
    failed = []
    for script in scripts:
        print(f"\n=== {script.stem} ===", flush=True)
        t0 = time.perf_counter()
        rc = subprocess.call([sys.executable, str(script)], cwd=HERE.parent)
        print(f"--- {script.stem}: exit {rc} in {time.perf_counter() - t0:.1f} s", flush=True)
        if rc != 0:
            failed.append(script.stem)
    if failed:
        print(f"\nbenchmarks over budget or failing: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
