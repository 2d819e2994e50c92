"""The host: a stand-in for Claude Code, run as its own process whose environment holds the fake
secrets (so an ancestor's `/proc/<pid>/environ` holds them, as Claude Code's does).

It reads one JSON request a line on stdin and answers one JSON line on stdout:

- `{"op": "hook", "argv": [...], "stdin": "..."}`: runs the hook program as the host does (its
  environment is this process's) -> `{"rc", "out", "err"}`;
- `{"op": "bash", "command": "...", "cwd": "...", "timeout": s, "wait": s, "fds": [[path,
  flags]]}`: runs `bash -c COMMAND` as the host's Bash tool does, then waits `wait` seconds
  (a detached process that would act later gets its chance), then lists and kills every
  process the line left behind -> `{"rc", "out", "err", "left": [[pid, cmdline], ...]}`.
  This process is a child subreaper, so whatever the line started and detached (`setsid`,
  `nohup`, a double fork) is reparented to it and found;
- `{"op": "exit"}`.

Stdlib only; started with the test venv's interpreter.
"""

from __future__ import annotations

import ctypes
import json
import os
import signal
import subprocess
import sys
import time

PR_SET_CHILD_SUBREAPER = 36
#: processes that are statewright's own and outlive a hook call by design
RESIDENT = b"statewright.hook.server"


def _children_of(pids: set[int]) -> list[tuple[int, str]]:
    """Every process descended from `pids` (not themselves), with its command line."""
    procs: dict[int, tuple[int, bytes]] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as fh:
                stat = fh.read()
            with open(f"/proc/{name}/cmdline", "rb") as fh:
                cmd = fh.read()
        except OSError:
            continue
        ppid = int(stat[stat.rindex(b")") + 2:].split()[1])
        procs[int(name)] = (ppid, cmd)
    found: list[tuple[int, str]] = []
    frontier = set(pids)
    while frontier:
        nxt = set()
        for pid, (ppid, cmd) in procs.items():
            if ppid in frontier and pid not in pids and all(pid != f for f, _ in found):
                if RESIDENT in cmd:
                    continue
                found.append((pid, cmd.replace(b"\0", b" ").decode(errors="replace")[:200]))
                nxt.add(pid)
        frontier = nxt
    return found


def _reap() -> None:
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def run_bash(req: dict) -> dict:
    fds = []
    for path, flags in req.get("fds", []):
        fd = os.open(path, flags)
        os.set_inheritable(fd, True)
        fds.append(fd)
    try:
        proc = subprocess.Popen(["bash", "-c", req["command"]], cwd=req["cwd"],
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, pass_fds=fds)
    finally:
        for fd in fds:
            os.close(fd)
    timed_out = False
    try:
        out, err = proc.communicate(timeout=req.get("timeout", 120))
    except subprocess.TimeoutExpired:
        timed_out = True
        proc.kill()
        out, err = proc.communicate()
    time.sleep(req.get("wait", 0))
    me = os.getpid()
    left = _children_of({me})
    for pid, _ in left:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    time.sleep(0.05 if left else 0)
    _reap()
    return {"rc": proc.returncode, "out": out.decode(errors="replace"),
            "err": err.decode(errors="replace"), "left": left, "timed_out": timed_out}


def run_hook(req: dict) -> dict:
    r = subprocess.run(req["argv"], input=req["stdin"].encode(), capture_output=True,
                       timeout=req.get("timeout", 120))
    _reap()
    return {"rc": r.returncode, "out": r.stdout.decode(errors="replace"),
            "err": r.stderr.decode(errors="replace")}


def main() -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        raise SystemExit("prctl(PR_SET_CHILD_SUBREAPER) failed")
    for line in sys.stdin:
        req = json.loads(line)
        if req["op"] == "exit":
            break
        try:
            ans = run_hook(req) if req["op"] == "hook" else run_bash(req)
        except Exception as exc:  # reported to the test, which fails with it
            ans = {"error": f"{type(exc).__name__}: {exc}"}
        sys.stdout.write(json.dumps(ans) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
