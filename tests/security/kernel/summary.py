"""Counts per class and what is still open, from a run with `KCORPUS_RESULTS=DIR`:

    KCORPUS_RESULTS=/tmp/kc .venv/bin/python -m pytest tests/security/kernel -n 2 -q
    .venv/bin/python -m tests.security.kernel.summary /tmp/kc [--open]

A case passes "refused early" (the hook refused it, nothing changed), "under the launcher"
(the rewritten line ran in statewright's sandbox) or "as sent"; `[scan]` marks findings that
wait for counting by effect."""

from __future__ import annotations

import json
import sys
from collections import Counter, defaultdict
from pathlib import Path


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__)
        return 2
    rows = [json.loads(p.read_text()) for p in sorted(Path(argv[0]).glob("*.json"))]
    per: dict[tuple[str, str], Counter[str]] = defaultdict(Counter)
    for r in rows:
        c = per[(r["cls"], r["kind"])]
        c["cases"] += 1
        if r["findings"]:
            c["open"] += 1
            if any("[scan]" in f for f in r["findings"]):
                c["open [scan]"] += 1
        elif r["decision"] == "deny":
            c["refused early"] += 1
        elif r.get("sandboxed"):
            c["passed under the launcher"] += 1
        else:
            c["passed as sent"] += 1
    for (cls, kind), c in sorted(per.items()):
        print(f"{cls} {kind:8} " + ", ".join(f"{k} {v}" for k, v in c.items()))
    if "--open" in argv:
        for r in rows:
            if r["findings"]:
                print(f"{r['id']}: {r['line'][:80]!r}\n    " + "\n    ".join(
                    f[:300] for f in r["findings"]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
