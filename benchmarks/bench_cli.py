"""CLI start-up budget (DESIGN.md section 8): `statewright --help` and `statewright status`
within 5x a bare `python -c pass` (DESIGN: 3x); `list`, `validate` of the shipped examples
and `transition` within 5x.

    .venv/bin/python benchmarks/bench_cli.py [--runs N]

Measures, interleaved in one run with the same venv python (like hyperfine's repeated runs,
after warm-up runs), the median wall time of the installed console script `statewright`:
`--help`, `--version`, `status` (a project with a running workflow and a real store),
`status --json`, `transition` (moving the run back and forth), `list` and `validate` of the
shipped examples (their verdicts remembered by the run before: the common case), the same two
answered by the typer app (`--strict` / a file that changes every time, for reference), and
`start --help` (a command the typer app answers), against `python -c pass`. Prints
`name | value | unit | budget` rows; exits 1 when a budgeted ratio is over its budget.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from table import exit_status, print_rows

PY = Path(sys.executable)
CLI = PY.parent / "statewright"
BUDGETS = {"--help": 5.0, "status": 5.0, "transition": 5.0, "list": 5.0,
           "validate (shipped)": 5.0}

WORKFLOW = {
    "id": "bench-cli",
    "initial": "a",
    "states": {
        "a": {"instructions": "first", "allowed_tools": ["Read"], "on": {"GO": "b"}},
        "b": {"instructions": "second", "allowed_tools": ["Read"],
              "on": {"BACK": "a", "DONE": "done"}},
        "done": {"type": "final"},
    },
}


def _time(cmd: list[str], env: dict[str, str]) -> float:
    t0 = time.perf_counter()
    r = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    elapsed = time.perf_counter() - t0
    if r.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed: {r.stderr.decode()}")
    return elapsed


def main(argv: list[str]) -> int:
    runs = int(argv[argv.index("--runs") + 1]) if "--runs" in argv else 31
    import compileall

    import statewright

    # an editable install run with PYTHONDONTWRITEBYTECODE would time the compiler otherwise
    compileall.compile_dir(str(Path(statewright.__file__).parent), quiet=2)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "proj"
        (root / "workflows").mkdir(parents=True)
        (root / "workflows" / "bench-cli.json").write_text(json.dumps(WORKFLOW))
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("STATEWRIGHT_", "CLAUDE_", "_STATEWRIGHT"))}
        env.update(CLAUDE_PROJECT_DIR=str(root), COLUMNS="80")
        _time([str(CLI), "start", "bench-cli"], env)
        from statewright.config import examples_dir

        shipped = str(examples_dir())
        changing = root / "changing.json"
        cases = {
            "python -c pass": [str(PY), "-c", "pass"],
            "--help": [str(CLI), "--help"],
            "--version": [str(CLI), "--version"],
            "status": [str(CLI), "status"],
            "status --json": [str(CLI), "status", "--json"],
            "transition": None,  # GO / BACK in turn
            "list": [str(CLI), "list"],
            "validate (shipped)": [str(CLI), "validate", shipped],
            "list --json": [str(CLI), "list", "--json"],
            "validate (a changed file: the validator runs)": [str(CLI), "validate",
                                                              str(changing)],
            "start --help (typer)": [str(CLI), "start", "--help"],
        }
        samples: dict[str, list[float]] = {k: [] for k in cases}
        moves = iter(["GO", "BACK"] * (runs + 3))
        for i in range(runs + 3):  # the first 3 rounds warm the page cache, not counted
            for name, cmd in cases.items():
                if cmd and str(changing) in cmd:  # new content: no verdict to recall
                    doc = json.loads(json.dumps(WORKFLOW))
                    doc["states"]["a"]["instructions"] = f"first (round {i})"
                    changing.write_text(json.dumps(doc))
                t = _time(cmd or [str(CLI), "transition", next(moves)], env)
                if i >= 3:
                    samples[name].append(t)
    med = {k: statistics.median(v) * 1000 for k, v in samples.items()}
    base = med["python -c pass"]
    rows = [("python -c pass (median)", round(base, 1), "ms", "reference")]
    for name in cases:
        if name == "python -c pass":
            continue
        budget = f"<= {BUDGETS[name]}" if name in BUDGETS else ""
        rows.append((f"statewright {name} (median)", round(med[name], 1), "ms", ""))
        rows.append((f"statewright {name} / python -c pass", round(med[name] / base, 2), "x",
                     budget))
    print_rows(rows)
    return exit_status(rows)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
