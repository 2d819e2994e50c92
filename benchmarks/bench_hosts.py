"""What statewright costs per tool call inside the real Codex, Gemini CLI and Copilot CLI
(DESIGN.md section 8, "Other hosts": <= +25 ms median per call).

    .venv/bin/python benchmarks/bench_hosts.py [--calls N] [--runs R] [--hosts codex,gemini]

Runs each pinned host (tests/hosts/npm) offline with its scripted model stand-in of
tests/hosts, in one project with a running workflow, wired by the real `statewright install
<host>` (Codex in both its forms: `mcp_tool` hooks answered by the proxy, and the process
hook) and, as the reference, in the same kind of project with no statewright at all.

A call's time is read by the stand-in: from the moment it wrote the answer calling the tool to
the moment the request carrying the tool's result arrived (`Conversation.call_gaps`), which is
everything the host did for that call (its hooks, the tool, its own bookkeeping) and nothing
else: no process start, no model. Each session first runs `sleep` (so the session's start, the
proxy's start among it, is over before anything is timed) and WARM untimed calls, then N timed
shell calls. Each run is one session per wiring, in an order rotated from run to run; a
wiring's figure is the median over runs of (the median of its calls - the median of the no
statewright session's calls in the same run), so the machine's slower and faster moments fall
on both sides of each difference. The process hooks talk to the project's resident hook
server, which warm-up sessions start: through the native client (`process`: the files
`install` writes, which run `statewright-hook-native` from PATH where it is installed) and,
beside it, through the Python hook (`python`: the same files naming `statewright-hook` alone).
Two floors show what the host itself spends around a hook: `floor`, every hook's program
`python -c pass` (any Python process hook), and `true`, every hook the shell builtin `true`
(the host's own work for a hook that starts no program). The load average before and after is
printed: the machine may be shared. `--events` also times each per-call hook event inside the
host (`event_times`). Prints `name | value | unit | budget` rows; exits 1 when a
figure is over its budget.
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

from statewright.hostwiring import HOST_TAG  # noqa: E402

WORKFLOW = {
    "id": "bench-hosts",
    "initial": "work",
    "states": {
        "work": {"allowed_tools": ["Bash", "Read"], "allowed_commands": ["echo", "sleep"],
                 "on": {"DONE": "done"}},
        "done": {"type": "final"},
    },
}
#: host -> its wirings (None: no statewright; else the hook form `install` is given)
WIRINGS: dict[str, tuple[str | None, ...]] = {
    "codex": (None, "mcp", "process", "python", "floor", "true"),
    "gemini": (None, "process", "python", "floor", "true"),
    "copilot": (None, "process", "python", "floor", "true")}
#: the process hooks' files, each hook's program replaced (None: the Python hook alone)
REPLACED = ("floor", "python", "true")
LABELS = {"mcp": "mcp_tool hooks", "process": "process hooks (native client)",
          "python": "process hooks (Python hook)", "floor": "python -c pass hooks",
          "true": "`true` hooks"}
BUDGETS = {"mcp": "<=25", "process": "<=25", "python": "(info: without the native client)",
           "floor": "(info: the floor)", "true": "(info: the host's own work per hook)"}
#: seconds of `sleep` that open each session, so its start is over before anything is timed
SETTLE_S = 1.5
#: untimed calls after it
WARM = 2
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
    install_form = "process" if form in REPLACED else form
    p = HostProject(base / f"{host}-{form or 'none'}", host,
                    workflows={"bench-hosts": WORKFLOW},
                    form=install_form if host == "codex" else None, install=form is not None)
    if form in REPLACED:
        f = p.root / HOOK_FILES[host]
        doc = json.loads(f.read_text())
        floor = f"{sys.executable} -c pass" if form == "floor" else "true"
        for groups in doc["hooks"].values():
            for g in groups:
                for h in g.get("hooks", [g]):
                    for key in ("command", "bash"):
                        if key in h:
                            # python: the Python hook alone (the part after the native one)
                            h[key] = floor if form != "python" else h[key].split("; exec ")[-1]
        f.write_text(json.dumps(doc))
    p.start("bench-hosts")
    return p


def call_times(p: HostProject, calls: int, warm: int = WARM,
               settle: float = SETTLE_S) -> list[float]:
    """Milliseconds the host took over each of `calls` timed shell calls of one session."""
    steps = [*([shell(p.host, f"sleep {settle}")] if settle else []),
             *(shell(p.host, f"echo {i}") for i in range(warm + calls))]
    s = p.run([*steps, Text("done")])
    texts = [t for _n, t in s.results()]
    gaps = s.standin.main.call_gaps()
    if s.returncode != 0 or len(texts) != len(steps) or len(gaps) != len(steps) or any(
            "statewright refused" in t for t in texts):
        raise SystemExit(f"session failed under {p.root.name}: rc={s.returncode} "
                         f"results={texts[:3]} calls timed={len(gaps)} "
                         f"stderr={s.stderr[-500:]}")
    return [g * 1000 for g in gaps[len(steps) - calls:]]


#: each host's events run per tool call (the ones timed one by one)
PER_CALL_EVENTS = {"codex": ("PreToolUse", "PostToolUse"), "gemini": ("BeforeTool", "AfterTool"),
                   "copilot": ("preToolUse", "postToolUse")}


def event_times(base: Path, host: str, calls: int) -> str:
    """Milliseconds each per-call hook event takes inside the host, as the host's shell sees
    it (bash's `$EPOCHREALTIME` around the program): through the native client, for `python
    -c pass` and for `true`; one session each. (Not the installed wiring: the program is run
    in place of `exec`ed, so the shell can read the clock after it.)"""
    out = []
    for what in ("native client", "python -c pass", "true"):
        p = make_project(base / f"events-{what.split()[0]}", host, "process")
        f = p.root / HOOK_FILES[host]
        log = p.root.parent / f"events-{what.split()[0]}.log"
        doc = json.loads(f.read_text())
        for event, groups in doc["hooks"].items():
            for g in groups:
                for h in g.get("hooks", [g]):
                    for key in ("command", "bash"):
                        if key in h:
                            prog = {"native client": f"statewright-hook-native {HOST_TAG}{host} "
                                                     f"{event}",
                                    "python -c pass": f"{sys.executable} -c pass",
                                    "true": "true"}[what]
                            h[key] = (f"s=$EPOCHREALTIME; {prog}; r=$?; echo {event} $s "
                                      f"$EPOCHREALTIME >> {log}; exit $r")
        f.write_text(json.dumps(doc))
        call_times(p, 1, warm=0, settle=0)
        log.unlink(missing_ok=True)
        call_times(p, calls)
        spans: dict[str, list[float]] = {}
        for line in log.read_text().splitlines() if log.exists() else []:
            parts = line.split()
            try:
                spans.setdefault(parts[0], []).append((float(parts[2]) - float(parts[1])) * 1000)
            except (IndexError, ValueError):  # (a shell without $EPOCHREALTIME)
                continue
        out.append(what + ": " + ", ".join(
            f"{e} {statistics.median(spans[e]):.1f}" if e in spans else f"{e} (not read)"
            for e in PER_CALL_EVENTS[host]))
    return f"{host}: per event inside the host, ms: " + "; ".join(out)


def _q1(xs: list[float]) -> float:
    return statistics.quantiles(xs, n=4)[0]


def main(argv: list[str] | None = None) -> list[tuple[str, float, str, str]]:
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=20)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--hosts", default=",".join(WIRINGS))
    ap.add_argument("--events", action="store_true",
                    help="also time each per-call hook event inside the host (info)")
    args = ap.parse_args(argv)
    hosts = [h for h in args.hosts.split(",") if h]
    rows: list[tuple[str, float, str, str]] = []
    notes: list[str] = []
    load = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="sw-bench-hosts-") as tmp:
        for host in hosts:
            projects = {form: make_project(Path(tmp), host, form) for form in WIRINGS[host]}
            for p in projects.values():  # warm-up: caches, the resident hook server
                call_times(p, 1, warm=0, settle=0)
            order = list(projects)
            times: dict[str | None, list[list[float]]] = {f: [] for f in order}
            for run in range(args.runs):
                for f in order[run % len(order):] + order[:run % len(order)]:
                    times[f].append(call_times(projects[f], args.calls))
            diffs = {f: [statistics.median(times[f][r]) - statistics.median(times[None][r])
                         for r in range(args.runs)] for f in order}
            rows.append((f"{host}: per call, no statewright", round(statistics.median(
                [statistics.median(t) for t in times[None]]), 1), "ms", "(reference)"))
            pooled = {f: sorted(x for t in times[f] for x in t) for f in order}
            for form in order:
                if form is None:
                    continue
                rows.append((f"{host}: per call, {LABELS[form]} - none",
                             round(statistics.median(diffs[form]), 1), "ms", BUDGETS[form]))
                notes.append(f"{host} {form} - none: per run " + ", ".join(
                    f"{d:+.1f}" for d in diffs[form]) + "; all calls: median "
                    f"{statistics.median(pooled[form]) - statistics.median(pooled[None]):+.1f}, "
                    f"lower quartile {_q1(pooled[form]) - _q1(pooled[None]):+.1f} ms")
            if args.events:
                notes.append(event_times(Path(tmp), host, args.calls))
    print(f"{args.runs} runs of one session per wiring, {args.calls} timed shell calls each; "
          f"medians; load average before: {load[0]:.2f}, after: {os.getloadavg()[0]:.2f}")
    for line in notes:
        print(line)
    print_rows(rows)
    return rows


if __name__ == "__main__":
    sys.exit(exit_status(main()))
