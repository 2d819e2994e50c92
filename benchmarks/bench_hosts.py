"""What statewright costs per tool call inside the real Codex, Gemini CLI and Copilot CLI
(DESIGN.md section 8, "Other hosts": <= +25 ms median per call).

    .venv/bin/python benchmarks/bench_hosts.py [--calls N] [--runs R] [--hosts codex,gemini]

Runs each pinned host (tests/hosts/npm) offline with its scripted model stand-in of
tests/hosts, in one project with a running workflow, wired by the real `statewright install
<host>` (Codex in both its forms: `mcp_tool` hooks answered by the proxy, and the process
hook) and, as the reference, in the same kind of project with no statewright at all. Each
wiring runs sessions of N and 4N shell calls, interleaved, R times; the marginal time per call
is the difference of the medians over 3N calls, so every fixed cost (start, first request, exit)
cancels. The process hooks talk to the project's resident hook server, which warm-up sessions
start: through the native client (`process`: the files `install` writes, which run
`statewright-hook-native` from PATH where it is installed) and, beside it, through the Python
hook (`python`: the same files naming `statewright-hook` alone). A `floor` wiring, the process
hooks' files with `python -c pass` as every hook's program, shows what any Python process hook
costs per call in that host. The load average before and after is printed: the machine may be
shared. Prints `name | value | unit | budget` rows; exits 1 when a figure is over its budget.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))

from hosts.harness import HostProject  # noqa: E402 - the test harness is the one way to run them
from hosts.standins import Text, ToolUse  # noqa: E402
from table import exit_status, print_rows  # noqa: E402

WORKFLOW = {
    "id": "bench-hosts",
    "initial": "work",
    "states": {
        "work": {"allowed_tools": ["Bash", "Read"], "allowed_commands": ["echo"],
                 "on": {"DONE": "done"}},
        "done": {"type": "final"},
    },
}
#: host -> its wirings (None: no statewright; else the hook form `install` is given)
WIRINGS: dict[str, tuple[str | None, ...]] = {
    "codex": (None, "mcp", "process", "python", "floor"),
    "gemini": (None, "process", "python", "floor"),
    "copilot": (None, "process", "python", "floor")}
#: the file holding each host's hook commands (project scope)
HOOK_FILES = {"codex": ".codex/hooks.json", "gemini": ".gemini/settings.json",
              "copilot": ".github/hooks/statewright.json"}


def shell(host: str, line: str) -> ToolUse:
    if host == "codex":
        return ToolUse("exec_command", {"cmd": line})
    if host == "gemini":
        return ToolUse("run_shell_command", {"command": line})
    return ToolUse("bash", {"command": line, "description": "run"})


def make_project(base: Path, host: str, form: str | None) -> HostProject:
    install_form = "process" if form in ("floor", "python") else form
    p = HostProject(base / f"{host}-{form or 'none'}", host,
                    workflows={"bench-hosts": WORKFLOW},
                    form=install_form if host == "codex" else None, install=form is not None)
    if form in ("floor", "python"):
        f = p.root / HOOK_FILES[host]
        doc = json.loads(f.read_text())
        floor = f"{sys.executable} -c pass"
        for groups in doc["hooks"].values():
            for g in groups:
                for h in g.get("hooks", [g]):
                    for key in ("command", "bash"):
                        if key in h:
                            # python: the Python hook alone (the part after the native one)
                            h[key] = floor if form == "floor" else h[key].split("; exec ")[-1]
        f.write_text(json.dumps(doc))
    p.start("bench-hosts")
    return p


def session_seconds(p: HostProject, calls: int) -> float:
    steps = [shell(p.host, f"echo {i}") for i in range(calls)]
    s = p.run([*steps, Text("done")])
    texts = [t for _n, t in s.results()]
    if s.returncode != 0 or len(texts) != calls or any("statewright refused" in t
                                                       for t in texts):
        raise SystemExit(f"session failed under {p.root.name}: rc={s.returncode} "
                         f"results={texts[:3]} stderr={s.stderr[-500:]}")
    return s.seconds


def main(argv: list[str] | None = None) -> list[tuple[str, float, str, str]]:
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=3)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--hosts", default=",".join(WIRINGS))
    args = ap.parse_args(argv)
    n, big = args.calls, 4 * args.calls
    hosts = [h for h in args.hosts.split(",") if h]
    rows: list[tuple[str, float, str, str]] = []
    load = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="sw-bench-hosts-") as tmp:
        for host in hosts:
            projects = {form: make_project(Path(tmp), host, form) for form in WIRINGS[host]}
            for p in projects.values():  # warm-up: caches, the resident hook server
                session_seconds(p, 1)
            times: dict[tuple[str | None, int], list[float]] = {}
            for _ in range(args.runs):
                for form, p in projects.items():
                    for calls in (n, big):
                        times.setdefault((form, calls), []).append(session_seconds(p, calls))
            med = {k: statistics.median(v) for k, v in times.items()}
            per_call = {f: (med[(f, big)] - med[(f, n)]) / (big - n) * 1000
                        for f in projects}
            rows.append((f"{host}: per call, no statewright", round(per_call[None], 1), "ms",
                         "(reference)"))
            for form in projects:
                if form is None:
                    continue
                label = {"mcp": "mcp_tool hooks", "process": "process hooks (native client)",
                         "python": "process hooks (Python hook)",
                         "floor": "python -c pass hooks"}[form]
                rows.append((f"{host}: per call, {label} - none",
                             round(per_call[form] - per_call[None], 1), "ms",
                             "(info: the floor)" if form == "floor" else
                             "(info: without the native client)" if form == "python" else
                             "<=25"))
    print(f"sessions of {n} and {big} shell calls, {args.runs} runs each, medians; load "
          f"average before: {load[0]:.2f}, after: {os.getloadavg()[0]:.2f}")
    print_rows(rows)
    return rows


if __name__ == "__main__":
    sys.exit(exit_status(main()))
