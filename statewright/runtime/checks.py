"""Checks: commands statewright runs itself (DESIGN section 2), never the agent.

When an event whose transition names checks fires, `Runtime.transition` asks the engine which
checks it needs (`engine.checks_needed`), runs each here (I/O: outside any store transaction),
and hands the outcomes to the pure engine, which records them under `context._checks.<name>`
before it evaluates guards:

    {ok, exit_code, at, duration_ms, summary, output_tail, timed_out, sandbox[, error]}

- the command runs as `/bin/sh -c RUN` in the check's `cwd`, in a process group of its own;
  at `timeout_s` the whole group is killed (TERM, then KILL) and the check fails; whatever it
  left running is killed when it ends;
- under the kernel tier's launcher where this machine has one (`sandbox.launcher.argv`), with
  the check's `read_only` paths frozen and the store hidden; `sandbox` in the outcome says
  which (`"none"` where there is no kernel tier: never claimed);
- the paths of `read_only` are fingerprinted when the run starts (`fingerprints`, kept under
  `context._frozen`): a check whose frozen paths changed since then fails without running (a
  `conftest.py` written by the agent, a test it deleted);
- the environment is the statewright process's, less the variables that change what a test
  runner runs or loads (`SCRUBBED`, `SCRUBBED_PREFIXES`): a transition fired through the
  agent's own shell must not hand the check `PYTEST_ADDOPTS='-k not failing'`; and it reads
  no cache the agent's lines could have written (`fresh_caches`): its temporary files go to a
  fresh directory of its own, and a planted `__pycache__/test_x.*.pyc` beside a frozen test is
  never what runs (the sandbox hides those directories; without it, every module is compiled
  afresh);
- `summary` is parsed from the JUnit XML report the check names (`report`), written afresh
  (a report left from before is removed first); a check that names one is ok only if this run
  wrote it and, for an exit status of 0, it agrees (`report_problem`): the project's code can
  end the process with any status before a test ran, but then it wrote no report;
- `progress(elapsed_s, timeout_s, line)` is called about twice a second while it runs (the
  CLI's progress bar, the proxy's MCP progress notifications).
"""

from __future__ import annotations

import hashlib
import os
import signal
import subprocess
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Any

from ..definition.compiled import Check, CompiledWorkflow
from ..names import CHECKS, FROZEN

#: the output kept in an outcome: the last lines, at most this many characters
TAIL_CHARS = 4000
TAIL_LINES = 60
#: a JUnit report larger than this is not parsed (summary null)
MAX_REPORT_BYTES = 32 * 1024 * 1024
#: variables that change what a test runner or an interpreter runs or loads
SCRUBBED = frozenset({
    "PYTEST_ADDOPTS", "PYTEST_PLUGINS", "PYTEST_DISABLE_PLUGIN_AUTOLOAD", "PYTHONSTARTUP",
    "PYTHONPATH", "PYTHONHOME", "PYTHONINSPECT", "PYTHONUSERBASE", "PYTHONNOUSERSITE",
    "NODE_OPTIONS", "NODE_PATH", "BASH_ENV", "ENV", "SHELLOPTS", "BASHOPTS", "PS4",
    "LD_PRELOAD", "LD_LIBRARY_PATH", "LD_AUDIT", "DYLD_INSERT_LIBRARIES", "PERL5OPT",
    "PERL5LIB", "RUBYOPT", "RUBYLIB", "GOFLAGS", "RUSTFLAGS", "RUSTC_WRAPPER",
    "CARGO_BUILD_RUSTC_WRAPPER", "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "MAKEFLAGS", "MFLAGS",
    "GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT", "PROMPT_COMMAND"})
SCRUBBED_PREFIXES = ("npm_config_", "NPM_CONFIG_", "JEST_", "VITEST_", "BASH_FUNC_",
                     "COV_CORE_", "STATEWRIGHT_")

Progress = Callable[[float, float, str], None]


# -- frozen paths ------------------------------------------------------------------------------

def fingerprint(root: str, globs: tuple[str, ...]) -> dict[str, str]:
    """The content hash (sha256, 16 hex) of every file under `root` that one of `globs`
    matches, by project-relative path."""
    from .watch import take_marks

    out: dict[str, str] = {}
    for rel in sorted(take_marks(root, globs)):
        h = hashlib.sha256()
        try:
            with open(os.path.join(root, rel), "rb") as fh:
                for block in iter(lambda: fh.read(1 << 16), b""):
                    h.update(block)
        except OSError:
            continue
        out[rel] = h.hexdigest()[:16]
    return out


def fingerprints(root: str, compiled: CompiledWorkflow) -> dict[str, dict[str, str]]:
    """The fingerprints of every check's frozen paths (taken when a run starts)."""
    return {n: fingerprint(root, c.read_only) for n, c in compiled.checks.items() if c.read_only}


def frozen_changes(before: dict[str, str], now: dict[str, str]) -> list[str]:
    """The frozen files created, changed or removed between two fingerprints."""
    return sorted(k for k in before.keys() | now.keys() if before.get(k) != now.get(k))


# -- running -------------------------------------------------------------------------------------

def check_environment(environ: dict[str, str] | None = None) -> dict[str, str]:
    """The environment a check runs with: this process's, less what changes what runs."""
    env = dict(os.environ if environ is None else environ)
    for k in list(env):
        if k in SCRUBBED or k.startswith(SCRUBBED_PREFIXES):
            del env[k]
    return env


#: the variables `fresh_caches` points at a new private directory: the check's temporary files,
#: and, where it runs without the kernel sandbox, its interpreter's compiled modules
TMP_ENV, PYCACHE_ENV = "TMPDIR", "PYTHONPYCACHEPREFIX"
BYTECODE_DIR = "__pycache__"


def fresh_caches(env: dict[str, str], sandboxed: bool) -> str:
    """Point the check's caches at a new private directory; its path (removed when the check
    ends). A frozen test is frozen by its source, but what runs may be a compiled form beside
    it (`__pycache__/test_x.*.pyc`, which pytest and Python read instead of the source when
    its header names the source) or a test runner's transform cache in the temporary directory
    (Jest's): the agent's own lines write both. Under the kernel sandbox the frozen modules'
    `__pycache__` directories are hidden (`bytecode_dirs`); without it, every compiled module
    is made afresh (`PYTHONPYCACHEPREFIX`: slower, the standard library's too)."""
    import tempfile

    scratch = tempfile.mkdtemp(prefix="statewright-check-")
    subs = ((TMP_ENV, "tmp"),) if sandboxed else ((TMP_ENV, "tmp"), (PYCACHE_ENV, "pycache"))
    for var, sub in subs:
        os.mkdir(os.path.join(scratch, sub), 0o700)
        env[var] = os.path.join(scratch, sub)
    return scratch


def bytecode_dirs(root: str, frozen: list[str]) -> list[str]:
    """The `__pycache__` directories beside the frozen files (absolute paths), made where
    missing so the sandbox can hide them (empty and read-only inside, as the store is: the
    check compiles those modules from their sources and caches nothing there)."""
    out: list[str] = []
    for d in dict.fromkeys(os.path.dirname(f) for f in frozen if f.endswith(".py")):
        cache = os.path.join(d, BYTECODE_DIR)
        if d != root and not d.startswith(root + os.sep):
            continue
        try:
            os.mkdir(cache, 0o755)
        except FileExistsError:
            pass
        except OSError:
            continue  # (a directory it cannot write: nothing can plant there either)
        out.append(cache)
    return out


def sandbox_prefix(root: str, check: Check, base: Any) -> tuple[list[str] | None, str]:
    """(the kernel tier's launcher argv for this check, the tier's kind), or (None, "none")
    where this machine has none. `base`: the `sandbox.Profile` of the run's state (what a
    sandboxed line of the agent's may not do there: check 1's paths, the state's `read_only`,
    the store hidden, blocked variables scrubbed); the check adds its own frozen paths (the
    files they match now, and the directories their fixed prefixes name)."""
    try:
        from ..sandbox import launcher, probe
    except ImportError:  # pragma: no cover - the package ships both
        return None, "none"
    try:
        tier = probe.tier()
    except Exception:
        return None, "none"
    if not tier.available or base is None:
        return None, "none"
    real = os.path.realpath(root)
    frozen: list[str] = []
    for g in check.read_only:
        fixed: list[str] = []
        for part in g.strip("/").split("/"):
            if set("*?[").intersection(part):
                break
            fixed.append(part)
        if fixed:
            frozen.append(os.path.join(real, *fixed))
    files = [os.path.join(real, rel) for rel in fingerprint(root, check.read_only)]
    frozen.extend(files)
    profile = base.replace(read_only=tuple(dict.fromkeys((*base.read_only, *frozen))),
                           hidden=(*base.hidden, *bytecode_dirs(real, files)))
    try:
        argv = launcher.argv(profile)
    except Exception:
        return None, "none"
    return (list(argv), tier.kind) if argv else (None, "none")


def _failed(now: float, why: str, sandbox: str = "none") -> dict[str, Any]:
    return {"ok": False, "exit_code": None, "at": now, "duration_ms": 0, "summary": None,
            "output_tail": "", "timed_out": False, "sandbox": sandbox, "error": why}


def unsandboxed(now: float) -> dict[str, Any]:
    """The outcome of a check not run: its state says `sandbox: "required"`, and this machine
    has no kernel tier."""
    return _failed(now, "not run: the state requires the kernel sandbox (sandbox: "
                   "\"required\") and this machine has none (`statewright doctor`)")


def run_check(check: Check, root: str, *, frozen: dict[str, str] | None,
              prefix: list[str] | None = None, sandbox: str = "none",
              progress: Progress | None = None, clock: Callable[[], float] = time.time,
              environ: dict[str, str] | None = None) -> dict[str, Any]:
    """Run `check` in the project at `root`; its outcome. Never raises for the command's sake
    (a command that cannot start is a failed outcome saying why). `frozen`: the fingerprint of
    its `read_only` paths taken when the run started (None where it has none: it fails)."""
    at = clock()
    cwd = os.path.realpath(os.path.join(root, check.cwd or "."))
    real_root = os.path.realpath(root)
    if cwd != real_root and not cwd.startswith(real_root + os.sep):
        return _failed(at, f"cwd {check.cwd!r} leads outside the project")
    if not os.path.isdir(cwd):
        return _failed(at, f"cwd {check.cwd!r} is not a directory")
    if check.read_only:
        if frozen is None:
            return _failed(at, "no fingerprint of the check's read_only paths was taken when "
                           "this run started; start a new run")
        changes = frozen_changes(frozen, fingerprint(root, check.read_only))
        if changes:
            shown = ", ".join(changes[:5]) + (", ..." if len(changes) > 5 else "")
            return _failed(at, f"frozen paths changed since the run started: {shown}; the "
                           "check did not run (a human can start a new run)")
    report = os.path.join(root, check.report) if check.report else None
    if report is not None:
        try:
            os.unlink(report)
        except FileNotFoundError:
            pass
        except OSError as exc:
            return _failed(at, f"cannot remove the old report {check.report}: {exc.strerror}")
    argv = [*(prefix or ()), "/bin/sh", "-c", check.run]
    env = check_environment(environ)
    try:
        scratch = fresh_caches(env, sandboxed=bool(prefix))
    except OSError as exc:
        return _failed(at, f"no directory for the check's caches: {exc.strerror or exc}")
    try:
        started = time.monotonic()
        try:
            proc = subprocess.Popen(argv, cwd=cwd, stdin=subprocess.DEVNULL,
                                    stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                    start_new_session=True, env=env, close_fds=True)
        except OSError as exc:
            return _failed(at, f"the check could not start: {exc.strerror or exc}", sandbox)
        tail: deque[bytes] = deque(maxlen=TAIL_LINES * 2)
        reader = threading.Thread(target=_read_lines, args=(proc, tail), daemon=True)
        reader.start()
        timed_out = _wait(proc, check.timeout_s, started, progress, tail)
        _kill_group(proc.pid)  # what it left running (a background job) ends with it
        reader.join(timeout=2.0)
    finally:
        import shutil

        shutil.rmtree(scratch, ignore_errors=True)
    duration_ms = int((time.monotonic() - started) * 1000)
    code = proc.returncode
    out: dict[str, Any] = {
        "ok": (not timed_out) and code in check.expect_exit,
        "exit_code": None if timed_out else code,
        "at": at,
        "duration_ms": duration_ms,
        "summary": junit_summary(report) if report is not None else None,
        "output_tail": _tail_text(tail),
        "timed_out": timed_out,
        "sandbox": sandbox,
    }
    if timed_out:
        out["error"] = f"timed out after {check.timeout_s:g} s (its processes were killed)"
    elif report is not None and out["ok"]:
        why = report_problem(check.report, out["summary"], code)
        if why is not None:
            out["ok"] = False
            out["error"] = why
    return out


def report_problem(name: str | None, summary: dict[str, int] | None, code: int | None
                   ) -> str | None:
    """Why the outcome of a check that names a JUnit report cannot stand although its exit
    status was expected (None: it can). The command runs the project's code, which the agent
    wrote: code that ends the process early (`os._exit(0)` when a test imports it) sets the exit
    status before any test ran, and then no report is written (the old one is removed before
    the check starts). So a report must have been written by this run, and an exit status of 0
    must agree with it: at least one test, no failure, no error."""
    if summary is None:
        return (f"the check's report {name} was not written (or cannot be read): the command "
                "did not run to its end, so its exit status proves nothing")
    if code == 0 and (summary["tests"] < 1 or summary["failures"] or summary["errors"]):
        return (f"the command exited 0 but its report {name} shows {summary['tests']} tests, "
                f"{summary['failures']} failures, {summary['errors']} errors")
    return None


def _read_lines(proc: subprocess.Popen[bytes], tail: deque[bytes]) -> None:
    stream = proc.stdout
    if stream is None:  # pragma: no cover - always a pipe
        return
    try:
        for line in iter(stream.readline, b""):
            tail.append(line[-TAIL_CHARS:])
    except (OSError, ValueError):
        pass
    finally:
        stream.close()


def _wait(proc: subprocess.Popen[bytes], timeout_s: float, started: float,
          progress: Progress | None, tail: deque[bytes]) -> bool:
    """Wait for `proc`; True when it was cut at `timeout_s` (its group killed)."""
    deadline = started + timeout_s
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            _signal_group(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=2.0)
            except subprocess.TimeoutExpired:
                pass
            _kill_group(proc.pid)
            proc.wait()
            return True
        try:
            proc.wait(timeout=min(0.5, left))
            return False
        except subprocess.TimeoutExpired:
            pass
        if progress is not None:
            last = tail[-1].decode("utf-8", "replace").strip() if tail else ""
            try:
                progress(time.monotonic() - started, timeout_s, last[:200])
            except Exception:
                pass  # a front end's progress display never stops a check


def _signal_group(pgid: int, sig: int) -> None:
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def _kill_group(pgid: int) -> None:
    _signal_group(pgid, signal.SIGKILL)


def _tail_text(tail: deque[bytes]) -> str:
    text = b"".join(tail).decode("utf-8", "replace")
    lines = text.splitlines()[-TAIL_LINES:]
    text = "\n".join(lines)
    return text[-TAIL_CHARS:]


def junit_summary(path: str) -> dict[str, int] | None:
    """`{tests, failures, errors, skipped}` summed over the testsuites of a JUnit XML report;
    None when there is no readable report."""
    import xml.etree.ElementTree as ET

    try:
        if os.path.getsize(path) > MAX_REPORT_BYTES:
            return None
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError, ValueError):
        return None
    suites = [root] if root.tag == "testsuite" else root.findall("testsuite")
    if root.tag not in ("testsuite", "testsuites"):
        return None
    total = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    for s in suites:
        for k in total:
            try:
                total[k] += int(float(s.get(k) or 0))
            except ValueError:
                return None
    return total


def describe(name: str, outcome: dict[str, Any]) -> str:
    """One line about an outcome (the CLI, the proxy's progress messages)."""
    if outcome.get("ok"):
        how = "passed"
    else:
        how = outcome.get("error") or f"failed (exit status {outcome.get('exit_code')})"
    s = outcome.get("summary")
    counts = (f", {s['tests']} tests, {s['failures']} failures, {s['errors']} errors"
              if isinstance(s, dict) else "")
    return f"check {name!r} {how} in {outcome.get('duration_ms', 0) / 1000:.1f} s{counts}"


__all__ = ["CHECKS", "FROZEN", "check_environment", "describe", "fingerprint", "fingerprints",
           "frozen_changes", "junit_summary", "report_problem", "run_check", "sandbox_prefix"]
