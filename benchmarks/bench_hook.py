"""Hook start-up budget (DESIGN.md section 8): one PreToolUse decision as a whole process.

    .venv/bin/python benchmarks/bench_hook.py [--runs N] [--compare OTHER_CHECKOUT]

Measures, interleaved in one run with the same venv python, the median wall time of
- a bare `python -c pass` (the reference),
- `statewright-hook pre-tool-use` deciding a non-Bash call (Read),
- `statewright-hook pre-tool-use` deciding a compound Bash line (tree-sitter parse),
- `statewright-hook pre-tool-use` refusing a call (Edit in a state that forbids it),
- `statewright-hook pre-tool-use` deciding Read in a workflow whose interrupts watch files
  (`config/**/*.yml`, `**/*.env*`: the marks of the matching files are compared around each
  call, walking a project of ~300 files),
against a real project with a running workflow and a real store (every allowed call is
accounted, as in production), each two ways:
- **served**: as a session runs after its first hook event, with the project's resident hook
  server answering (`statewright.hook.resident`: the hook process forwards its input);
- **alone**: the hook process deciding itself (`STATEWRIGHT_HOOK_RESIDENT=0`), as the first
  event of a project does, and every event when the server is switched off;
- **native**: served, through the native client `statewright-hook-native` (no Python process:
  the client forwards the input to the same server), where it was built; and again as the
  project scope's files start it (the portable launcher: `sh`, the program found on PATH).
Prints `name | value | unit | budget` rows; exits 1 when a ratio is over its budget (non-Bash
<= 2.0x, compound Bash <= 3.0x; applied to both ways).

`--compare DIR` also times the hook of another checkout of statewright (e.g. a `git worktree` of
an older commit) in the same interleaved run, so a change's before/after figures share one
machine state. Both sides are then started the same way (`python -c` importing the package from
its checkout, deciding alone), which costs a little more than the installed console script.
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

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from statewright.hook import RESIDENT_ENV
from statewright.hook.resident import endpoint

HERE = Path(__file__).resolve().parent
PY = Path(sys.executable)
HOOK = PY.parent / "statewright-hook"
NATIVE = PY.parent / "statewright-hook-native"

WORKFLOW = {
    "id": "bench-hook",
    "initial": "work",
    "states": {
        "work": {
            "instructions": "benchmark state",
            "allowed_tools": ["Read", "Grep", "Bash"],
            "allowed_commands": ["pytest", "npm test", "git status", "git diff", "git rev-parse",
                                 "tee", "grep"],
            "blocked_env": ["AWS_SECRET_ACCESS_KEY"],
            "on": {"DONE": "done"},
        },
        "done": {"type": "final"},
    },
}
# what the hook cannot avoid before any statewright code runs: SQLite's C module (loading
# libsqlite3). json, dataclasses, typing, pathlib are no longer on the runtime/store side of the
# path (see docs/hooks.md "Start-up cost"); any still imported come from the policy layer.
FLOOR = "import _sqlite3"
# the hook of a given checkout, started like the console script does
_FROM_CHECKOUT = ("import sys; sys.path.insert(0, %r); import statewright.hook as h; "
                  "h.run() if hasattr(h, 'run') else sys.exit(h.main())")
COMPOUND = ("pytest -x tests/unit -q && npm test -- --silent | tee out.log; "
            "git status --short || git diff --stat $(git rev-parse HEAD) | grep -v vendor")


WATCHED = {**WORKFLOW, "id": "bench-watched",
           "interrupts": {"config": {"trigger": {"file_pattern": "config/**/*.yml"},
                                     "target": "done"},
                          "secrets": {"trigger": {"file_pattern": "**/*.env*"},
                                      "target": "done"}}}


def _setup(root: Path, workflow: dict = WORKFLOW) -> None:
    (root / "workflows").mkdir(parents=True)
    (root / "workflows" / f"{workflow['id']}.json").write_text(json.dumps(workflow))
    (root / "src").mkdir()
    (root / "src" / "app.py").write_text("print('hi')\n")
    if workflow is WATCHED:
        (root / "config" / "deploy").mkdir(parents=True)
        (root / "config" / "deploy" / "app.yml").write_text("replicas: 1\n")
        for d in range(15):
            pkg = root / "src" / f"pkg{d}"
            pkg.mkdir()
            for f in range(20):
                (pkg / f"mod{f}.py").write_text("x = 1\n")
    from statewright.runtime import Runtime

    Runtime.open(project=str(root)).start(workflow["id"], "default")


def _payload(root: Path, tool: str, tool_input: dict) -> bytes:
    return json.dumps({"session_id": "bench", "transcript_path": "/dev/null", "cwd": str(root),
                       "hook_event_name": "PreToolUse", "tool_name": tool,
                       "tool_input": tool_input, "tool_use_id": "toolu_bench"}).encode()


def _env(root: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("STATEWRIGHT_", "CLAUDE_"))}
    env["CLAUDE_PROJECT_DIR"] = str(root)
    return env


def _wait_for_server(env: dict[str, str]) -> None:
    """Until the project's resident hook server listens (the first hook event started it)."""
    ep = endpoint(env)
    deadline = time.monotonic() + 60
    while ep is None or not os.path.exists(ep.socket):
        if time.monotonic() > deadline:
            raise SystemExit(f"no resident hook server started for {env['CLAUDE_PROJECT_DIR']}")
        time.sleep(0.1)


def _time(cmd: list[str], stdin: bytes, env: dict[str, str]) -> tuple[float, bytes]:
    t0 = time.perf_counter()
    r = subprocess.run(cmd, input=stdin, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    return time.perf_counter() - t0, r.stdout


def main(argv: list[str] | None = None) -> list[tuple[str, float, str, str]]:
    argv = sys.argv[1:] if argv is None else argv
    runs = int(argv[argv.index("--runs") + 1]) if "--runs" in argv else 41
    other = Path(argv[argv.index("--compare") + 1]).resolve() if "--compare" in argv else None
    # a pip install ships compiled bytecode; an editable checkout run with
    # PYTHONDONTWRITEBYTECODE may not, which would time the compiler instead of the hook
    import compileall

    import statewright

    compileall.compile_dir(str(Path(statewright.__file__).parent), quiet=2)
    if other is not None:
        compileall.compile_dir(str(other / "statewright"), quiet=2)
    print(f"byte-compiled {Path(statewright.__file__).parent} first (an editable install run with "
          f"PYTHONDONTWRITEBYTECODE={os.environ.get('PYTHONDONTWRITEBYTECODE', '')!r} would "
          "otherwise time the compiler, not the hook)")
    load = os.getloadavg()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "proj"
        _setup(root)
        watched = Path(tmp) / "watched"
        _setup(watched, WATCHED)
        env = _env(root)
        wenv = _env(watched)
        alone = {**env, RESIDENT_ENV: "0"}
        walone = {**wenv, RESIDENT_ENV: "0"}
        app = root / "src" / "app.py"
        hook = [str(HOOK), "pre-tool-use"]
        read = _payload(root, "Read", {"file_path": str(app)})
        bash = _payload(root, "Bash", {"command": COMPOUND})
        edit = _payload(root, "Edit", {"file_path": str(app), "old_string": "hi",
                                       "new_string": "yo"})
        wread = _payload(watched, "Read", {"file_path": str(watched / "src/app.py")})
        cases: dict[str, tuple[list[str], bytes, dict[str, str]]] = {
            "python -c pass": ([str(PY), "-c", "pass"], b"", env),
            "stdlib floor": ([str(PY), "-c", FLOOR], b"", env),
        }
        ways = [("served", hook, env, wenv), ("alone", hook, alone, walone)]
        if NATIVE.exists():
            ways.append(("native", [str(NATIVE), "pre-tool-use"], env, wenv))
            # as a team's committed files run it: the portable launcher, the program from PATH
            from statewright.wiring import PORTABLE_LAUNCHER

            path = {"PATH": f"{HOOK.parent}{os.pathsep}{env.get('PATH', '')}"}
            ways.append(("native, portable launcher",
                         ["sh", "-c", PORTABLE_LAUNCHER, "statewright-hook", "pre-tool-use"],
                         {**env, **path}, {**wenv, **path}))
        for way, program, e, we in ways:
            cases[f"{way}: Read"] = (program, read, e)
            cases[f"{way}: compound Bash"] = (program, bash, e)
            cases[f"{way}: Edit denied"] = (program, edit, e)
            cases[f"{way}: Read, watched files"] = (program, wread, we)
        if other is not None:
            this = Path(statewright.__file__).parent.parent
            for label, tree in (("this", this), ("other", other)):
                launch = [str(PY), "-c", _FROM_CHECKOUT % str(tree), "pre-tool-use"]
                cases[f"{label}: hook Read"] = (launch, read, alone)
                cases[f"{label}: hook compound Bash"] = (launch, bash, alone)
        # sanity: the decisions are the ones we mean to time, every way
        for way, *_rest in ways:
            assert _time(*cases[f"{way}: Read"])[1].strip() == b""
            assert b'"deny"' not in _time(*cases[f"{way}: compound Bash"])[1]
            assert b'"deny"' in _time(*cases[f"{way}: Edit denied"])[1]
            assert _time(*cases[f"{way}: Read, watched files"])[1].strip() == b""
        _wait_for_server(env)
        _wait_for_server(wenv)
        samples: dict[str, list[float]] = {k: [] for k in cases}
        for _ in range(3):  # warm the page cache
            for case in cases.values():
                _time(*case)
        for _ in range(runs):
            for name, case in cases.items():
                samples[name].append(_time(*case)[0])
    med = {k: statistics.median(v) * 1000 for k, v in samples.items()}
    base = med["python -c pass"]
    rows = [
        ("python -c pass (median)", round(base, 1), "ms", "reference"),
        ("stdlib floor / python -c pass", round(med["stdlib floor"] / base, 2), "x", f"({FLOOR})"),
    ]
    for way, *_rest in ways:
        rows += [
            (f"{way}: hook Read (median)", round(med[f"{way}: Read"], 1), "ms", ""),
            (f"{way}: hook compound Bash (median)", round(med[f"{way}: compound Bash"], 1), "ms",
             ""),
            (f"{way}: hook non-Bash / python -c pass", round(med[f"{way}: Read"] / base, 2), "x",
             "<= 2.0"),
            (f"{way}: hook denied / python -c pass", round(med[f"{way}: Edit denied"] / base, 2),
             "x", "<= 2.0"),
            (f"{way}: hook compound Bash / python -c pass",
             round(med[f"{way}: compound Bash"] / base, 2), "x", "<= 3.0"),
            (f"{way}: hook Read, interrupts watch files / python -c pass",
             round(med[f"{way}: Read, watched files"] / base, 2), "x", "<= 2.0"),
        ]
    if other is not None:
        for what in ("hook Read", "hook compound Bash"):
            rows.append((f"{what}: this checkout (median)", round(med[f"this: {what}"], 1), "ms",
                         ""))
            rows.append((f"{what}: {other.name} (median)", round(med[f"other: {what}"], 1), "ms",
                         ""))
            rows.append((f"{what}: this / {other.name}",
                         round(med[f"this: {what}"] / med[f"other: {what}"], 2), "x", ""))
    print(f"runs per case: {runs} (interleaved); load average before: {load[0]:.2f}, after: "
          f"{os.getloadavg()[0]:.2f}")
    print_rows(rows)
    return rows


if __name__ == "__main__":
    sys.exit(exit_status(main()))
