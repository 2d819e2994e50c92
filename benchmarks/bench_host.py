"""What statewright costs inside the real host (DESIGN.md section 8, "Real host").

    .venv/bin/python benchmarks/bench_host.py [--calls N] [--runs R]

Runs the real Claude Code CLI (tests/host/npm, pinned) offline with the scripted Messages API
stand-in of tests/host, in one project with a running workflow, under four wirings:
- `none`: no statewright at all (the reference);
- `mcp`: the default install (`mcp_tool` hooks answered by `statewright serve`);
- `process`: `install claude --hooks process` (a hook process per event: the native client
  `statewright-hook-native` where it was built, forwarding to the resident hook server);
- `python`: the same wiring naming the Python hook `statewright-hook` (the process form
  without the native client);
- `floor`: the process form's wiring with `python -c pass` as every hook's program, the floor
  of any process hook, measured the same way.
Each wiring runs sessions of N and 4N Bash calls, interleaved, R times; the marginal time per
call is the difference of the medians over 3N calls, so every fixed cost (start, first request,
exit) cancels. Session start is the time from the host's spawn to the model's first request
(the agent can start working), median of the sessions with no tool call, against `none`; the
whole no-call session is printed beside it (it also holds statewright's Stop reminder, a model
turn of its own, and the proxy's shutdown).

Process hooks run in a project whose resident hook server (`statewright.hook.resident`) is up,
as it is from a session's second hook event on; warm-up sessions start it.

The marginal time per call hides part of a hook's time (the host overlaps it with its own
per-call work: `python -c pass` hooks cost about nothing per call on a quiet machine), so the
process form is judged against the floor by what the host itself measures: the duration of
every PreToolUse and PostToolUse hook it ran, from its debug log (`--debug-file`), medians over
sessions of 4N calls in both wirings.
Prints `name | value | unit | budget` rows; exits 1 when a figure is over its budget.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))

from host.harness import Host  # noqa: E402 - the test harness is the one way to run the host
from host.standin import Text, ToolUse  # noqa: E402
from table import exit_status, print_rows  # noqa: E402

WORKFLOW = {
    "id": "bench-host",
    "initial": "work",
    "states": {
        "work": {"allowed_tools": ["Bash", "Read"], "allowed_commands": ["echo"],
                 "on": {"DONE": "done"}},
        "done": {"type": "final"},
    },
}
WIRINGS = ("none", "mcp", "process", "python", "floor")


def make_host(base: Path, wiring: str) -> Host:
    form = "process" if wiring in ("none", "floor", "python") else wiring
    host = Host(base / wiring, form, workflows={"bench-host": WORKFLOW})
    if wiring == "none":
        host.cli("install", "claude", "--uninstall")
    if wiring == "floor":
        # the process form's wiring (the proxy included), each hook's program `python -c pass`
        settings_file = host.root / ".claude" / "settings.local.json"
        settings = json.loads(settings_file.read_text())
        for groups in settings["hooks"].values():
            for group in groups:
                for hook in group["hooks"]:
                    hook["command"], hook["args"] = sys.executable, ["-c", "pass"]
        settings_file.write_text(json.dumps(settings))
    if wiring == "python":
        settings_file = host.root / ".claude" / "settings.local.json"
        settings = json.loads(settings_file.read_text())
        for groups in settings["hooks"].values():
            for group in groups:
                for hook in group["hooks"]:
                    hook["command"] = str(Path(hook["command"]).parent / "statewright-hook")
        settings_file.write_text(json.dumps(settings))
    host.start("bench-host")
    return host


def session_seconds(host: Host, calls: int) -> tuple[float, float]:
    """(whole session, spawn to the model's first request) in seconds."""
    steps = [ToolUse("Bash", {"command": f"echo {i}"}) for i in range(calls)]
    s = host.run([*steps, Text("done")], allowed_tools=("Bash",))
    results = s.results()
    if s.returncode != 0 or len(results) != calls or any(r[2] for r in results) \
            or s.started is None:
        raise SystemExit(f"session failed under {host.root.name}: rc={s.returncode} "
                         f"results={results[:3]} stderr={s.stderr[-500:]}")
    return s.seconds, s.started


_HOOK_DONE = re.compile(r"Hooks: (?:PreToolUse|PostToolUse):Bash \[.*\] finished with status "
                        r"\d+ \((\d+)ms\)")


def hook_durations(host: Host, calls: int, log: Path) -> list[int]:
    """Milliseconds of each per-call hook the host ran in one session, as it logged them."""
    steps = [ToolUse("Bash", {"command": f"echo {i}"}) for i in range(calls)]
    log.unlink(missing_ok=True)  # (the host appends to it)
    s = host.run([*steps, Text("done")], allowed_tools=("Bash",),
                 extra_args=("--debug-file", str(log)))
    found = [int(m.group(1)) for m in _HOOK_DONE.finditer(log.read_text())]
    if s.returncode != 0 or len(found) != 2 * calls:
        raise SystemExit(f"hook durations not found for {host.root.name}: rc={s.returncode}, "
                         f"{len(found)} of {2 * calls}")
    return found


def main(argv: list[str] | None = None) -> list[tuple[str, float, str, str]]:
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=4)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args(argv)
    n, big = args.calls, 4 * args.calls
    times: dict[tuple[str, int], list[float]] = {}
    starts: dict[str, list[float]] = {}
    hooks: dict[str, list[int]] = {"process": [], "python": [], "floor": []}
    load = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="sw-bench-host-") as tmp:
        hosts = {w: make_host(Path(tmp), w) for w in WIRINGS}
        for w in WIRINGS:  # warm-up: fill caches (binary pages, .pyc), start hook servers
            for _ in range(2):
                session_seconds(hosts[w], 1)
        for _ in range(args.runs):
            for w in WIRINGS:
                for calls in (0, n, big):
                    whole, started = session_seconds(hosts[w], calls)
                    times.setdefault((w, calls), []).append(whole)
                    if calls == 0:
                        starts.setdefault(w, []).append(started)
            for w in hooks:
                hooks[w] += hook_durations(hosts[w], big, Path(tmp) / f"{w}.debug.log")
    med = {k: statistics.median(v) for k, v in times.items()}
    hook_ms = {w: statistics.median(v) for w, v in hooks.items()}
    start = {w: statistics.median(v) for w, v in starts.items()}
    per_call = {w: (med[(w, big)] - med[(w, n)]) / (big - n) * 1000 for w in WIRINGS}
    floor_extra = per_call["floor"] - per_call["none"]
    process_extra = per_call["process"] - per_call["none"]
    rows = [
        ("per call, no statewright", round(per_call["none"], 1), "ms", "(reference)"),
        ("per call, mcp_tool hooks (default) - none", round(per_call["mcp"] - per_call["none"], 1),
         "ms", "<=25"),
        ("per call, process hooks (native client) - none", round(process_extra, 1), "ms",
         "<=25"),
        ("per call, process hooks (Python hook) - none",
         round(per_call["python"] - per_call["none"], 1), "ms", "(info)"),
        ("per call, python -c pass hooks - none", round(floor_extra, 1), "ms", "(info)"),
        ("process hook (native client), as the host times it (median)", hook_ms["process"],
         "ms", ""),
        ("process hook (Python hook), as the host times it (median)", hook_ms["python"], "ms",
         ""),
        ("python -c pass hook, as the host times it (median)", hook_ms["floor"], "ms", ""),
        ("process hooks / python -c pass hooks (host's timing)",
         round(hook_ms["process"] / hook_ms["floor"], 2), "x", "<=1.3"),
        ("session start (to the first model request), none", round(start["none"] * 1000), "ms",
         "(reference)"),
        ("session start, mcp - none", round((start["mcp"] - start["none"]) * 1000), "ms",
         "<=1000"),
        ("session start, process - none", round((start["process"] - start["none"]) * 1000),
         "ms", "(info)"),
        ("whole session without a call, mcp - none",
         round((med[("mcp", 0)] - med[("none", 0)]) * 1000), "ms", "(info: Stop reminder)"),
    ]
    print(f"sessions of {n} and {big} Bash calls, {args.runs} runs each, medians; load average "
          f"before: {load[0]:.2f}, after: {os.getloadavg()[0]:.2f}")
    print_rows(rows)
    return rows


if __name__ == "__main__":
    sys.exit(exit_status(main()))
