"""Counting by effect (DESIGN.md section 8, kernel tier): the change scan on 5,000 files.

A generated project of 5,000 files of 40 lines in 261 directories (the shape of the research
measurement: 20 packages x 12 modules x ~21 files), plus a `.git` and a `node_modules` that the
scan skips. Measured, each the median of ROUNDS with its best:

- `scan`: one walk recording (inode, size, ctime, mode) of every entry (budget <= 25 ms,
  judged on the best round, the one least disturbed by other processes on a shared machine,
  as `timeit` takes the best; the median and the process's CPU time beside it);
- the same walk by `find -printf` (a native program printing the same fields), interleaved
  with the scan: a ratio that a loaded machine disturbs less than the milliseconds;
- `diff`: two scans compared (`_change`: five files changed);
- the two halves as a sandboxed call pays them, through `runtime.effects` on a real project
  (a `Runtime` on the temp tree; the store is not needed): `begin` (the scan before the call
  kept for its result, the copies of text files brought up to date: nothing changed since
  the last call) and `finish` (the scan after, the difference, the lines of the five
  changed files counted against their copies, the copies updated);
- the first `begin` of a project, which copies every text file once.

Both halves run in the hook (PreToolUse before the line starts, PostToolUse after it ended):
off the line's own latency, which the sandbox's budget measures.

    .venv/bin/python benchmarks/bench_scan.py

Prints `name | value | unit | budget` rows; exit status 1 when the scan is over budget.
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from table import exit_status, print_rows

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from statewright.policy.types import ToolCall, ToolResult
from statewright.runtime import Runtime, effects
from statewright.sandbox.scan import diff, scan

FILES = 5000
ROUNDS = 30
BUDGET_MS = 25.0


def generate(root: Path, files: int = FILES) -> None:
    n = 0
    for a in range(20):
        for b in range(13):
            d = root / f"pkg{a}" / f"mod{b}"
            d.mkdir(parents=True, exist_ok=True)
            for c in range(20):
                if n >= files:
                    break
                (d / f"f{c}.py").write_text("".join(f"value_{i} = {i} + {n}\n"
                                                    for i in range(40)))
                n += 1
    for skipped in (".git/objects/ab", "node_modules/left-pad"):
        (root / skipped).mkdir(parents=True)
        for i in range(50):
            (root / skipped / f"x{i}").write_text("x")


def _ms(samples: list[float]) -> tuple[float, float]:
    return round(statistics.median(samples) * 1e3, 2), round(min(samples) * 1e3, 2)


def _change(root: Path, k: int) -> None:
    """What a test run might do: three files appended to, one renamed away and back, one
    created and removed, one rewritten as it was (five files changed: a rename moves the
    file's ctime)."""
    for name in ("pkg1/mod1/f1.py", "pkg2/mod2/f2.py", "pkg3/mod3/f3.py"):
        with open(root / name, "a") as fh:
            fh.write(f"extra_{k} = {k}\n")
    os.rename(root / "pkg4/mod4/f4.py", root / f"pkg4/mod4/moved{k}.py")
    os.rename(root / f"pkg4/mod4/moved{k}.py", root / "pkg4/mod4/f4.py")
    (root / f"pkg5/new{k}.py").write_text("new = 1\n")
    (root / f"pkg5/new{k}.py").unlink()
    (root / "pkg6/mod6/f6.py").write_text((root / "pkg6/mod6/f6.py").read_text())


def main() -> list[tuple[str, float, str, str]]:
    tmp = Path(tempfile.mkdtemp(prefix="bench-scan-"))
    try:
        root = tmp / "proj"
        generate(root)
        skip = (".git", "node_modules", ".statewright")
        entries = len(scan(str(root), skip))
        scans, cpu, finds = [], [], []
        find = shutil.which("find")
        for _ in range(ROUNDS):
            t0, c0 = time.perf_counter(), time.process_time()
            scan(str(root), skip)
            scans.append(time.perf_counter() - t0)
            cpu.append(time.process_time() - c0)
            if find:  # the same walk by a native program, interleaved: a ratio load disturbs less
                t0 = time.perf_counter()
                subprocess.run([find, ".", "(", "-name", ".git", "-o", "-name", "node_modules",
                                ")", "-prune", "-o", "-printf", "%i %s %C@ %m\\n"],
                               cwd=root, stdout=subprocess.DEVNULL, check=True)
                finds.append(time.perf_counter() - t0)
        before = scan(str(root), skip)
        _change(root, 0)
        after = scan(str(root), skip)
        diffs = []
        for _ in range(ROUNDS):
            t0 = time.perf_counter()
            ch = diff(before, after)
            diffs.append(time.perf_counter() - t0)
        assert len(ch.files()) == 5, ch

        rt = Runtime(root)
        call = ToolCall("Bash", {"command": "python3 -m pytest -q"}, call_id="toolu_bench")
        result = ToolResult("Bash", call.tool_input, exit_code=0, call_id="toolu_bench")
        t0 = time.perf_counter()
        effects.begin(rt, "bench", call)
        first = time.perf_counter() - t0
        assert effects.finish(rt, "bench", result) is not None
        begins, finishes = [], []
        lines = 0
        for k in range(1, ROUNDS + 1):
            t0 = time.perf_counter()
            effects.begin(rt, "bench", call)
            begins.append(time.perf_counter() - t0)
            _change(root, k)
            t0 = time.perf_counter()
            eff = effects.finish(rt, "bench", result)
            finishes.append(time.perf_counter() - t0)
            assert eff is not None and len(eff.files) == 5, eff
            lines = eff.lines
        assert lines == 3, lines  # one line appended to three files; the others unchanged
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    scan_med, scan_min = _ms(scans)
    rows = [
        (f"scan of {FILES:,} files ({entries:,} entries), best of {ROUNDS}", scan_min, "ms",
         f"<= {BUDGET_MS:g}"),
        ("scan, median", scan_med, "ms", "(info)"),
        ("scan, CPU time of this process (median)", _ms(cpu)[0], "ms", "(info)"),
        ("scan / `find -printf` of the same fields, same tree, interleaved (medians)",
         round(statistics.median(scans) / statistics.median(finds), 2) if finds else "-", "x",
         "(info)"),
        ("diff of two scans (5 files changed)", _ms(diffs)[0], "ms", "(info)"),
        ("before a sandboxed call: scan kept, copies up to date (effects.begin)",
         _ms(begins)[0], "ms", "(info)"),
        ("after it: scan, diff, lines of 5 files counted (effects.finish)", _ms(finishes)[0],
         "ms", "(info)"),
        ("a project's first effects.begin (every text file copied once)",
         round(first * 1e3, 1), "ms", "(info)"),
    ]
    print_rows(rows)
    return rows


if __name__ == "__main__":
    sys.exit(exit_status(main()))
