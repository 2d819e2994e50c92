"""Other tools of the host and other channels (escape class 6, DESIGN section 4): host tools
that run code statewright cannot analyse, file tools reading a process environment, lines that
drop a pinned `env_overrides` value, and work that would outlive the call.

Pure: the questions take the call's parts and answer why it is refused (None: it is not).
"""

from __future__ import annotations

import os

from ..lean import TYPE_CHECKING, fnmatchcase, lru_cache
from ..names import CODE_TOOLS
from .tools import FILE_READERS
from .types import LineMemo

if TYPE_CHECKING:  # pragma: no cover
    from collections.abc import Callable
    from typing import Any

    from ..definition.compiled import State
    from .shell import ShellAnalysis


def restricts_code(state: State) -> bool:
    """Whether the state restricts commands or the environment (then a host tool running code
    statewright cannot analyse is refused)."""
    return state.allowed_commands is not None or bool(state.blocked_env) or \
        bool(state.env_overrides)


def code_tool_problem(name: str, state: State) -> str | None:
    if name in CODE_TOOLS and restricts_code(state):
        return (f"`{name}` runs code in a language statewright cannot analyse, and this state "
                "restricts commands or the environment; use the Bash tool")
    return None


# -- process environments read by file tools ------------------------------------------------------

#: file tools, and whether they search below what they name (`policy.tools.FILE_READERS`)
_READERS = FILE_READERS
#: the arguments of each that name files (Grep's `pattern` is a regular expression, not a path)
_PATH_ARGS = {"Read": ("file_path",), "Grep": ("path", "glob"), "Glob": ("pattern", "path"),
              "LS": ("path",), "NotebookRead": ("notebook_path",)}


def _environ_path(full: str, searches: bool) -> bool:
    """Whether the resolved path `full` is, or (for a tool that searches below it) holds, a
    process environment, a process's memory or an open file descriptor of the reading process
    (whatever that is)."""
    if full.startswith("/dev/fd") or full in ("/dev/stdin", "/dev/stdout", "/dev/stderr"):
        return True
    if not (full == "/proc" or full.startswith("/proc/")):
        return False
    parts = full.split("/")[2:]  # after "", "proc"
    if not parts or parts == [""]:
        return searches  # /proc itself
    last = parts[-1]
    if last in ("environ", "mem") or "fd" in parts[1:] or "fdinfo" in parts[1:]:
        return True
    # /proc/<pid>, /proc/self, /proc/<pid>/task/<tid> hold an `environ`
    return searches and (len(parts) == 1 or (len(parts) in (2, 3) and parts[1] == "task")
                         or parts[-1] == "root")


def environ_read_problem(name: str, args: dict[str, Any],
                         every: Callable[[str], list[str]]) -> str | None:
    """Why a file tool's call could read a process environment (`/proc/self/environ` by any
    spelling: `/proc/thread-self/environ`, `/proc/self/task/N/environ`, `/proc/self/root/...`,
    `/dev/fd/N`, `/proc/self/fd/N`, a glob such as `/proc/*/env*`)."""
    mcp = name.startswith("mcp__")
    if name not in _READERS and not mcp:
        return None
    searches = _READERS.get(name, True)
    keys = _PATH_ARGS.get(name, ())
    texts: list[str] = []
    for k, v in args.items():
        if isinstance(v, str) and (k in keys or (mcp and "path" in k.lower())):
            texts.append(v)
        elif mcp and isinstance(v, list) and "path" in k.lower():
            texts += [x for x in v if isinstance(x, str)]
    for t in texts:
        if t.startswith(("/proc", "/dev/fd", "/dev/std")) or "/proc/" in t or "environ" in t:
            if _glob_reaches(t):
                return f"`{t}` could read a process environment (/proc/*/environ)"
        if any(ch in t for ch in "*?[{"):
            continue
        lexical = [os.path.normpath(t)] if t.startswith("/") else []
        for full in lexical + every(t):
            if _environ_path(full, searches):
                return f"`{t}` could read a process environment (/proc/*/environ)"
    return None


def _glob_reaches(t: str) -> bool:
    """A pattern (or plain path) whose expansion could name an environment, memory or fd."""
    comps = [c for c in t.replace("\\", "/").split("/") if c and c != "."]
    if "environ" in t or "**" in comps:
        return True
    for target in ("environ", "mem", "fd"):
        if comps and fnmatchcase(target, comps[-1]) and comps[-1] not in (target,) \
                and any(ch in comps[-1] for ch in "*?["):
            return True
    return False


# -- pinned env_overrides -------------------------------------------------------------------------

def pinned_problem(analysis: ShellAnalysis, pinned: tuple[str, ...]) -> str | None:
    """Why a line could run a command without a pinned `env_overrides` value: `unset VAR`,
    `export -n VAR`, `declare +x VAR`, `VAR=other cmd`, `env -u VAR`, `env -i`, `exec -c`.
    (The answer depends on the text alone: kept per line.)"""
    if not pinned:
        return None
    return _pinned_by_line(analysis, pinned)


def _pinned(analysis: ShellAnalysis, pinned: tuple[str, ...]) -> str | None:
    for nm, _v in analysis.assignments:
        if nm in pinned:
            return f"the line sets `{nm}`, whose value this state pins (env_overrides)"
    for c in analysis.commands:
        for nm, _v in c.assignments:
            if nm in pinned:
                return f"`{nm}=...` overrides a value this state pins (env_overrides)"
        if not c.name_literal:
            continue
        vals = [a.value for a in c.args]
        if c.kind == "unset" or c.name in ("unset", "export", "declare", "typeset", "local",
                                           "readonly"):
            if c.name in ("unset", "local") or any(v in ("-n", "+x") or v.startswith("+")
                                                   for v in vals):
                hit = [v for v in vals if v.split("=", 1)[0] in pinned]
                if hit:
                    return (f"`{c.name} {hit[0]}` drops a value this state pins "
                            "(env_overrides)")
        if c.name == "env":
            for i, v in enumerate(vals):
                if v in ("-i", "-", "--ignore-environment") or (
                        v.startswith("-") and not v.startswith("--") and "i" in v):
                    return "`env -i` runs a command without the values this state pins"
                u = vals[i + 1] if v == "-u" and i + 1 < len(vals) else (
                    v[2:] if v.startswith("-u") else v.split("=", 1)[1]
                    if v.startswith("--unset=") else None)
                if u in pinned:
                    return f"`env -u {u}` drops a value this state pins (env_overrides)"
        if c.name == "exec" and any(v.startswith("-") and "c" in v for v in vals[:3]):
            return "`exec -c` runs a command without the values this state pins"
    return None


# -- work that outlives the call ------------------------------------------------------------------

def background_problem(analysis: ShellAnalysis, args: dict[str, Any]) -> str | None:
    """Why the line would leave work running after the call (DESIGN section 4, point 5):
    `&`, `nohup`, `setsid`, `disown`, `coproc`, `at`, detached terminal multiplexers, or the
    host's own `run_in_background`. Such work would act under a later state's rules."""
    if args.get("run_in_background") not in (None, False):
        return "`run_in_background` leaves the command running after the state may change"
    return _background_by_line(analysis)


def _background(analysis: ShellAnalysis) -> str | None:
    from .programs.worktree import DETACHERS

    for c in analysis.commands:
        if c.name_literal and c.name in DETACHERS:
            return f"`{c.name}` leaves work running after the call"
    parsed = dict(analysis.job_tokens)  # (what the walk found in the texts it parsed)
    for text in _shell_texts(analysis):
        job = parsed.get(text)
        if job if job is not None else _has_background(text):
            return "`&` leaves a job running after the call"
    return None


def _shell_texts(analysis: ShellAnalysis) -> list[str]:
    """The line, and the code it hands to shells (`bash -c '...'`, `eval '...'`)."""
    out = [analysis.source]
    for c in analysis.commands:
        if not c.name_literal:
            continue
        base = os.path.basename(c.name)
        vals = [a.value for a in c.args]
        if base in ("bash", "sh", "dash", "zsh", "ksh", "mksh", "busybox") and "-c" in vals:
            i = vals.index("-c")
            if i + 1 < len(vals):
                out.append(vals[i + 1])
        elif base == "eval":
            out.append(" ".join(vals))
        if c.stdin_text and base in ("bash", "sh", "dash", "zsh", "ksh"):
            out.append(c.stdin_text)
    return out


@lru_cache(maxsize=256)
def _has_background(text: str) -> bool:
    if "&" not in text:
        return False
    from .shell.parser import bash_parser, has_job_token

    return has_job_token(bash_parser().parse(text.encode("utf-8", "surrogateescape")).root_node)


# -- exports added to an allowed line (updatedInput) ----------------------------------------------

#: who is acting, for statewright's own CLI: a transition fired through the agent's shell is
#: the agent's (DESIGN section 3), whatever the CLI would otherwise assume
ACTOR_ENV = "STATEWRIGHT_ACTOR"
#: variables no line may drop or override in an enforced state: they say who is acting
IDENTITY_ENV = (ACTOR_ENV, "CLAUDECODE")


def line_exports(analysis: ShellAnalysis, state: State) -> dict[str, str]:
    """Variables an allowed line is made to run with, besides `env_overrides`: the actor for
    statewright's CLI, and git's hardening (`programs.worktree.GIT_HARDENING`) in a state that
    restricts commands (a planted bare repository or fsmonitor would run code)."""
    return dict(_exports_by_line(analysis, state.allowed_commands is not None))


def _exports(analysis: ShellAnalysis, restricted: bool) -> tuple[tuple[str, str], ...]:
    from .programs.worktree import GIT_HARDENING

    names = {c.name for c in analysis.commands if c.name_literal}
    out: dict[str, str] = {}
    if any("statewright" in n for n in names) or "statewright" in analysis.source:
        out[ACTOR_ENV] = "agent"
    if "git" in names and restricted:
        out["GIT_CONFIG_COUNT"] = str(len(GIT_HARDENING))
        for i, (k, v) in enumerate(GIT_HARDENING):
            out[f"GIT_CONFIG_KEY_{i}"] = k
            out[f"GIT_CONFIG_VALUE_{i}"] = v
    return tuple(out.items())


_pinned_by_line = LineMemo(_pinned)
_background_by_line = LineMemo(_background)
_exports_by_line = LineMemo(_exports)
