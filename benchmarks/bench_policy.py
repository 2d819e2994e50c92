"""In-process decision throughput of `statewright.policy.gate` (DESIGN.md section 8).

Run alone: `.venv/bin/python benchmarks/bench_policy.py`. Prints rows
`name | value | unit | budget`; `main()` returns them for `benchmarks/run.py`.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from statewright.definition.compiled import State  # noqa: E402
from statewright.policy import Counters, GateContext, ToolCall, gate  # noqa: E402

STATE = State(name="implement", allowed_tools=("Bash", "Read", "Edit", "Write", "mcp__github__*"),
              allowed_commands=("pytest", "npm test", "git status", "git diff", "ls", "cat",
                                "echo"),
              blocked_env=("AWS_SECRET_ACCESS_KEY", "PROD_DB_URL"), max_edit_lines=50,
              max_files_per_state=10, max_iterations=1000)
NON_BASH = ToolCall("Edit", {"file_path": "src/app.py", "old_string": "a\nb",
                             "new_string": "c\nd\ne"})
BASH = ToolCall("Bash", {"command": 'pytest -q tests/unit 2>&1 | cat && npm test -- --silent '
                                    '|| echo "tests failed: $(git status --short)" > out.txt'})


def _rate(call: ToolCall, ctx: GateContext, seconds: float = 1.0) -> float:
    counters = Counters(iterations=3, files_edited=frozenset({"src/app.py"}))
    d = gate(STATE, counters, call, ctx)
    assert d.allowed, d.reason  # benchmark an allowed, fully checked decision
    n, start = 0, time.perf_counter()
    while True:
        for _ in range(200):
            gate(STATE, counters, call, ctx)
        n += 200
        el = time.perf_counter() - start
        if el >= seconds:
            return n / el


def main() -> list[tuple[str, float, str, str]]:
    root = tempfile.mkdtemp(prefix="sw-bench-")
    ctx = GateContext(project_root=root, store_dir=root + "/.statewright",
                      events=("TESTS_PASS",), read_text=lambda p: None)
    rows = [
        ("policy: non-Bash decisions", round(_rate(NON_BASH, ctx)), "decisions/s", ">= 50000"),
        ("policy: compound Bash decisions", round(_rate(BASH, ctx)), "decisions/s", ">= 5000"),
    ]
    for r in rows:
        print(" | ".join(str(x) for x in r))
    return rows


if __name__ == "__main__":
    main()
