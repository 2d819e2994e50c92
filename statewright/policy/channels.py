"""Other tools of the host and other channels (escape class 6, DESIGN section 4): host tools
that run code statewright cannot analyse, file tools reading a process environment, lines that
drop a pinned `env_overrides` value, and work that would outlive the call.

Pure: the questions take the call's parts and answer why it is refused (None: it is not).
"""

from __future__ import annotations

import os

from ..lean import TYPE_CHECKING, fnmatchcase, lru_cache
from ..names import CODE_TOOLS
from .procfs import environ_path
from .tools import FILE_READERS
from .types import line_memo, program_name

if TYPE_CHECKING:  # pragma: no cover
    from collections.abc import Callable
    from typing import Any

    from ..definition.compiled import State
    from .shell import Command, ShellAnalysis


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
#: file tools that list names below a directory without reading what they list (`/` is fine)
_LISTERS = ("Glob", "LS")
#: the arguments of each that name files (Grep's `pattern` is a regular expression, not a path)
#: (`paths`: the files and globs a read of several files reads, the paths a search searches)
_PATH_ARGS = {"Read": ("file_path", "paths"), "Grep": ("path", "paths", "glob"),
              "Glob": ("pattern", "path"),
              "LS": ("path",), "NotebookRead": ("notebook_path",)}


def environ_read_problem(name: str, args: dict[str, Any],
                         every: Callable[[str], list[str]]) -> str | None:
    """Why a file tool's call could read a process environment (`/proc/self/environ` by any
    spelling: `/proc/thread-self/environ`, `/proc/self/task/N/environ`, `/proc/self/root/...`,
    `/dev/fd/N`, `/proc/self/fd/N`, a glob such as `/proc/*/env*`), or a search rooted at `/`
    (`..` from the project, `/dev/..`, a link to it) or in a process's directory."""
    mcp = name.startswith("mcp__")
    if name not in _READERS and not mcp:
        return None
    searches = _READERS.get(name, True)
    keys = _PATH_ARGS.get(name, ())
    texts: list[str] = []
    for k, v in args.items():
        if isinstance(v, str) and (k in keys or (mcp and "path" in k.lower())):
            texts.append(v)
        elif isinstance(v, list) and (k in keys or (mcp and "path" in k.lower())):
            texts += [x for x in v if isinstance(x, str)]
    if searches and not mcp and not isinstance(args.get("path"), str) and not args.get("paths"):
        texts.append(".")  # (Grep or Glob without a path searches the working directory)
    for t in texts:
        if t.startswith(("/proc", "/dev/fd", "/dev/std")) or "/proc/" in t or "environ" in t:
            if _glob_reaches(t):
                return f"`{t}` could read a process environment (/proc/*/environ)"
        if any(ch in t for ch in "*?[{"):
            continue
        lexical = [os.path.normpath(t)] if t.startswith("/") else []
        for full in lexical + every(t):
            if environ_path(full, searches) and (full != "/" or name not in _LISTERS):
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

def pinned_problem(analysis: ShellAnalysis, state: State) -> str | None:
    """Why a line could run a command without a value `state` pins (its `env_overrides`, and
    `IDENTITY_ENV`): `unset VAR`, `export -n VAR`, `declare +x VAR`, `VAR=other cmd`,
    `env -u VAR`, `env -i`, `exec -c`. (The answer depends on the text alone: kept per
    line.)"""
    if not (analysis.assignments or _scan_by_line(analysis)[1]):
        return None  # (the usual line: nothing assigned, no command that drops a value)
    return _pinned_by_line(analysis, (*state.env_overrides, *IDENTITY_ENV))


def _pinned(analysis: ShellAnalysis, pinned: tuple[str, ...]) -> str | None:
    for nm, _v in analysis.assignments:
        if nm in pinned:
            return f"the line sets `{nm}`, whose value this state pins (env_overrides)"
    for c in _scan_by_line(analysis)[1]:  # (the commands that assign or may drop a value)
        for nm, _v in c.assignments:
            if nm in pinned:
                return f"`{nm}=...` overrides a value this state pins (env_overrides)"
        if not c.name_literal or (c.kind != "unset" and c.program not in _DROPPERS):
            continue  # (none of the commands below: nothing to look at)
        vals = [a.value for a in c.args]
        if c.kind == "unset" or c.name in ("unset", "export", "declare", "typeset", "local",
                                           "readonly"):
            if c.name in ("unset", "local") or any(v in ("-n", "+x") or v.startswith("+")
                                                   for v in vals):
                hit = [v for v in vals if v.split("=", 1)[0] in pinned]
                if hit:
                    return (f"`{c.name} {hit[0]}` drops a value this state pins "
                            "(env_overrides)")
        if c.program == "env":
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


#: the commands `_pinned` looks at (besides the `unset` kind)
_DROPPERS = frozenset({"unset", "export", "declare", "typeset", "local", "readonly", "env",
                       "exec"})


# -- work that outlives the call ------------------------------------------------------------------

def background_problem(analysis: ShellAnalysis, args: dict[str, Any], kernel: bool = False
                       ) -> str | None:
    """Why the line would leave work running after the call (DESIGN section 4, point 5):
    `&`, `nohup`, `setsid`, `disown`, `coproc`, `at`, detached terminal multiplexers, or the
    host's own `run_in_background`. Such work would act under a later state's rules. A process
    substitution (`<(...)`, `>(...)`) too, unless the line runs under the kernel sandbox
    (`kernel`), which ends whatever the line left when it ends: bash does not wait for one,
    and its code runs on after a command that never reads it to the end (`: >(sleep 9; cp
    x y)`)."""
    if args.get("run_in_background") not in (None, False):
        return "`run_in_background` leaves the command running after the state may change"
    why, _, _, _, substituted = _scan_by_line(analysis)
    if why is None and substituted and not kernel:
        why = ("a process substitution (`<(...)`, `>(...)`) may leave work running after the "
               "call (bash does not wait for it), and this line does not run under the kernel "
               "sandbox, which would end it; write the output to a file first")
    return why


@lru_cache(maxsize=256)
def process_substitution(text: str) -> bool:
    """Whether the shell text holds a process substitution (`parser.has_process_substitution`;
    parsed only when the text holds `<(` or `>(`)."""
    if "<(" not in text and ">(" not in text:
        return False
    from .shell.parser import bash_parser, has_process_substitution

    data = text.encode("utf-8", "surrogateescape")
    return has_process_substitution(bash_parser().parse(data).root_node, data)


def _scan(analysis: ShellAnalysis) -> tuple[str | None, tuple[Command, ...], bool, bool, bool]:
    """What this module asks of a line's commands, found in one pass (kept per line): (why
    it would leave work running after the call (`background_problem`), the commands that
    assign or may drop a pinned value in order (`_pinned`), whether it runs statewright's CLI
    by a name that holds `statewright`, whether it runs `git` (`export_items`), whether the
    line or a text it hands to a shell holds a process substitution)."""
    texts = [analysis.source]  # the line, and the code it hands to shells (`_shell_texts`)
    detached: str | None = None
    droppers: list[Command] = []
    actor = git = False
    roles = _ROLES
    for c in analysis.commands:
        if c.assignments:
            droppers.append(c)
        if not c.name_literal:
            continue
        name = c.name
        if c.kind == "unset" or c.program in _DROPPERS:  # (`/usr/bin/env -i`)
            if not c.assignments:
                droppers.append(c)
        if "statewright" in name:
            actor = True
        elif c.program == "git":
            git = True
        if detached is not None:
            continue  # (the first command that detaches work is the answer)
        role = roles.get(name)
        if role is None:
            role = _role(name)
        if role == _DETACHER:
            detached = f"`{name}` leaves work running after the call"
        elif role:  # (a shell, or eval: its base name)
            _shell_texts(c, role, texts)
    if detached is None:
        parsed = dict(analysis.job_tokens)  # (what the walk found in the texts it parsed)
        for text in texts:
            job = parsed.get(text)
            if job if job is not None else _has_background(text):
                detached = "`&` leaves a job running after the call"
                break
    substituted = any(process_substitution(t) for t in texts)
    return detached, tuple(droppers), actor, git, substituted


#: shells that run the text after `-c`; those of them that run the text fed to them
_C_SHELLS = frozenset({"bash", "sh", "dash", "zsh", "ksh", "mksh", "busybox"})
_STDIN_SHELLS = frozenset({"bash", "sh", "dash", "zsh", "ksh"})
#: every command that hands code to a shell (`_shell_texts`)
_CODE_RUNNERS = _C_SHELLS | {"eval"}


_DETACHER = "detacher"
#: what `_background` makes of a command name: `_DETACHER`, the base name of a command
#: that hands code to a shell, or "" (nothing)
_ROLES: dict[str, str] = {}


def _role(name: str) -> str:
    if name in _worktree_facts()[0]:
        role = _DETACHER
    else:
        base = program_name(name)
        role = base if base in _CODE_RUNNERS else ""
    if len(_ROLES) >= 1024:
        _ROLES.clear()
    _ROLES[name] = role
    return role


def _shell_texts(c: Command, base: str, out: list[str]) -> None:
    """Add to `out` the code command `c` (named `base`) hands to a shell (`bash -c '...'`,
    `eval '...'`, a here-document fed to a shell)."""
    vals = [a.value for a in c.args]
    if base in _C_SHELLS and "-c" in vals:
        i = vals.index("-c")
        if i + 1 < len(vals):
            out.append(vals[i + 1])
    elif base == "eval":
        out.append(" ".join(vals))
    if c.stdin_text and base in _STDIN_SHELLS:
        out.append(c.stdin_text)


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


def export_items(analysis: ShellAnalysis, restricted: bool) -> tuple[tuple[str, str], ...]:
    """Variables an allowed line is made to run with, besides `env_overrides`, as (name,
    value) pairs: the actor for statewright's CLI, and git's hardening
    (`programs.worktree.GIT_HARDENING`) in a state that restricts commands (`restricted`: a
    planted bare repository or fsmonitor would run code). The same tuple for every line with
    the same needs."""
    _, _, named, git, _ = _scan_by_line(analysis)
    key = (named or "statewright" in analysis.source, git and restricted)
    out = _EXPORTS.get(key)
    if out is None:
        out = _EXPORTS[key] = _exports(*key)
    return out


def _exports(actor: bool, git: bool) -> tuple[tuple[str, str], ...]:
    out: dict[str, str] = {}
    if actor:
        out[ACTOR_ENV] = "agent"
    if git:
        hardening = _worktree_facts()[1]
        out["GIT_CONFIG_COUNT"] = str(len(hardening))
        for i, (k, v) in enumerate(hardening):
            out[f"GIT_CONFIG_KEY_{i}"] = k
            out[f"GIT_CONFIG_VALUE_{i}"] = v
    return tuple(out.items())


_EXPORTS: dict[tuple[bool, bool], tuple[tuple[str, str], ...]] = {}


def rewriting(state: State, items: tuple[tuple[str, str], ...]) -> tuple[str | None, str]:
    """How the gate rewrites an allowed line of a state with blocked variables or exports
    (`items`: `export_items`): (the text `shell.rewrite_for_env` puts before every line, or
    None when it does more than that, and the trace's note), kept per value of what it
    depends on."""
    try:
        key: Any = (items, tuple(state.blocked_env), tuple(state.env_overrides.items()))
        kept = _REWRITES.get(key)
    except TypeError:  # (an unhashable value: worked out each time)
        key, kept = None, None
    if kept is not None:
        return kept
    extra = dict(items)
    env = {**extra, **state.env_overrides}
    from .shell import rewrite_for_env as rewrite

    head: str | None = rewrite("", state.blocked_env, env)
    # (the answer is that text and the line: checked on two lines, else it is asked each time)
    if any(rewrite(probe, state.blocked_env, env) != f"{head}{probe}"
           for probe in ("true", "a\nb")):
        head = None
    note = ("rewritten to run with blocked variables unset"
            + (" and " + ", ".join(sorted({*extra, *state.env_overrides})) + " exported"
               if extra or state.env_overrides else ""))
    if key is not None:
        if len(_REWRITES) >= 256:
            _REWRITES.clear()
        _REWRITES[key] = head, note
    return head, note


_REWRITES: dict[Any, tuple[str | None, str]] = {}


def _worktree_facts() -> tuple[frozenset[str], tuple[tuple[str, str], ...]]:
    """(`DETACHERS`, `GIT_HARDENING`) of `programs.worktree`, imported the first time a line
    needs them (a host tool decided here without a shell line never loads `programs`)."""
    if not _WT:
        from .programs.worktree import DETACHERS, GIT_HARDENING

        _WT.append((DETACHERS, GIT_HARDENING))
    return _WT[0]


_WT: list[tuple[frozenset[str], tuple[tuple[str, str], ...]]] = []


_pinned_by_line = line_memo(_pinned, with_arg=True)
_scan_by_line = line_memo(_scan)
