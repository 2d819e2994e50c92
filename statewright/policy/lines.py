"""Checks 5 and 6 for a shell line (DESIGN section 4), called by `gate`, with the file-system
side of check 5: following `cd`, the scope of output redirects, and how check 8 names the files
a line writes. Loaded only when a shell line is decided."""

from __future__ import annotations

import os

from ..lean import TYPE_CHECKING
from .paths import HARMLESS_DEVICES, relative_to_real, relative_to_root
from .protect.line import changes_worktree, line_dirs
from .protect.scope import holds_protected, sensitive
from .protect.store import ctx_facts
from .shell import check_commands, check_env
from .shell.cwds import DirWalk
from .types import CACHE_MAX_LINE, line_memo

if TYPE_CHECKING:  # pragma: no cover
    from collections.abc import Callable
    from typing import Any

    from ..definition.compiled import State
    from .paths import Resolve
    from .shell import Command, ShellAnalysis, Verdict
    from .types import GateContext


def _commands_verdict(analysis: ShellAnalysis, allowed: tuple[str, ...]) -> Verdict:
    """Check 5's verdict without its trace (`_CommandsTrace` gives the trace)."""
    return check_commands(analysis, allowed, None, False)


#: the verdicts of checks 5 and 6 that depend on the text alone, kept per line
_commands_by_line = line_memo(_commands_verdict, with_arg=True)
_env_by_line = line_memo(check_env, with_arg=True)


class _CommandsTrace:
    """Check 5's lines of the explanation of a line it allowed, worked out when the decision's
    explanation is read (`types.Decision.explanation`: `statewright check`), not for every
    decision: `check_commands` again, a pure function of the text and the allowed entries."""

    __slots__ = ("allowed", "analysis")

    def __init__(self, analysis: ShellAnalysis, allowed: tuple[str, ...]) -> None:
        self.analysis = analysis
        self.allowed = allowed

    def __call__(self) -> list[str]:
        return [f"allowed_commands: {t}"
                for t in check_commands(self.analysis, self.allowed).trace]


def command_problem(c: Any, state: State, ctx: GateContext) -> tuple[str, str] | None:
    """Check 5 for the shell line of `c` (the gate's call): every command allowed, output
    redirects in scope. (rule, why) when refused. Adds to `c` the files the line writes (check
    8) and the trace."""
    analysis, command = c.analysis, c.command
    cwds = line_dirs(analysis, c.cwd or ctx.project_root)[0]
    for r in analysis.redirects:
        if r.output and r.target is not None and r.target.literal and \
                r.target.value not in HARMLESS_DEVICES:
            for d in cwds:
                f = file_key(r.target.value, ctx, c.resolve, d)
                if f not in c.files:
                    c.files.append(f)
    for f in worktree_changes(analysis, ctx, c.resolve, cwds):
        if f not in c.files:
            c.files.append(f)
    problems = redirect_problems(analysis, ctx, c.resolve, cwds)
    if state.allowed_commands is None:
        # no command rules here, but output redirects obey the same write scope as the
        # file-writing tools (inside the project, not into .git/ or Claude settings)
        if problems:
            c.trace += [f"self_protection: redirect {p}" for p in problems]
            return "self_protection", "; ".join(problems[:3])
        return None
    if analysis.changes_dir or len(command) > CACHE_MAX_LINE:
        v = check_commands(analysis, state.allowed_commands,
                           cd_check=cd_checker(ctx, c.resolve, c.cwd or ctx.project_root))
    else:  # no `cd` to follow on disk: the verdict depends on the text alone
        allowed = tuple(state.allowed_commands)
        v = _commands_by_line(analysis, allowed)
        if v.allowed and not problems:
            c.trace.append(_CommandsTrace(analysis, allowed))  # (its text when it is read)
            return None
        v = check_commands(analysis, allowed)  # (a refusal: its trace now)
    c.trace += [f"allowed_commands: {t}" for t in v.trace]
    c.trace += [f"allowed_commands: redirect {p} -> deny" for p in problems]
    if not v.allowed or problems:
        return "allowed_commands", "; ".join(x for x in [v.reason, *problems] if x)
    return None


def env_problem(c: Any, state: State) -> str | None:
    """Check 6 for the shell line of `c`: why a blocked variable could be read (adds the
    trace)."""
    analysis = c.analysis
    if not state.blocked_env:
        if not analysis.ok and state.allowed_commands is None:
            c.trace.append("shell: " + "; ".join(analysis.problems) +
                           " (no command rules in this state)")
        return None
    v = _env_by_line(analysis, tuple(state.blocked_env))
    c.trace += [f"blocked_env: {t}" for t in v.trace]
    return None if v.allowed else v.reason


def cd_checker(ctx: GateContext, resolve: Resolve, start: str
                ) -> Callable[[Command], str | None]:
    """A `cd` checker that follows the directory changes of the line in order."""
    walk = DirWalk(start)

    def check(c: Command) -> str | None:
        why = cd_problem(c, ctx, resolve, walk.cwd)
        if why is None:
            walk.follow(c)
        return why

    return check


def cd_problem(c: Command, ctx: GateContext, resolve: Resolve, cwd: str) -> str | None:
    args = c.args
    if len(args) != 1 or not args[0].literal or args[0].value in ("-", ""):
        return "`cd` needs one literal directory inside the project"
    target = args[0].value
    full = resolve(target, cwd, shell=True)
    rel = relative_to_root(full, ctx.project_root)
    if rel is None:
        return f"`cd {target}` leaves the project"
    why = sensitive(rel, full, ctx)
    return f"`cd {target}`: {why}" if why else None


def redirect_problems(analysis: ShellAnalysis, ctx: GateContext, resolve: Resolve,
                       cwds: list[str]) -> list[str]:
    """Output redirects (and files options say a command writes) may write inside the project
    only, never into git metadata, Claude settings, the store or a protected file."""
    out: list[str] = []
    root = ctx_facts(ctx).real_root  # (`relative_to_root(full, ctx.project_root)`)
    for r in analysis.redirects:
        if not r.output or r.target is None:
            continue
        t = r.target
        if not t.literal:
            out.append(f"`{r.op} {t.text}`: the target is not a literal path")
            continue
        if t.value in HARMLESS_DEVICES:
            continue
        for d in cwds:
            full = resolve(t.value, d, shell=True)
            rel = relative_to_real(full, root)
            if rel is None:
                out.append(f"`{r.op} {t.value}` writes outside the project")
                break
            why = sensitive(rel, full, ctx) or holds_protected(full, ctx)
            if why:
                out.append(f"`{r.op} {t.value}`: {why}")
                break
    return list(dict.fromkeys(out)) if out else out


def file_key(path: str, ctx: GateContext, resolve: Resolve, cwd: str) -> str:
    """How check 8 names a file a shell line writes: project-relative, else absolute."""
    rel = relative_to_real(resolve(path, cwd, shell=True), ctx_facts(ctx).real_root)
    if rel is not None:
        return rel
    return os.path.normpath(os.path.join(cwd or ctx.project_root, path))


def worktree_changes(analysis: ShellAnalysis, ctx: GateContext, resolve: Resolve,
                     cwds: list[str]) -> list[str]:
    """The files the copies, moves, removals and extractions of a line change, as check 8
    names them (a name known only at run time is `?`: it counts as one more file)."""
    if not changes_worktree(analysis):
        return []
    from .protect.worktree import changed_files

    return [("? (a name known only at run time)" if full == "?" else
             relative_to_root(full, ctx.project_root) or full)
            for full in changed_files(analysis, resolve, cwds)]
