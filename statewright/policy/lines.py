"""The file-system side of check 5 for a shell line (DESIGN section 4): following `cd`, the
scope of output redirects, and how check 8 names the files a line writes."""

from __future__ import annotations

import os

from ..lean import TYPE_CHECKING
from .paths import HARMLESS_DEVICES, relative_to_root
from .protect.scope import holds_protected, sensitive

if TYPE_CHECKING:  # pragma: no cover
    from collections.abc import Callable

    from .paths import Resolve
    from .shell import Command, ShellAnalysis
    from .types import GateContext


def cd_checker(ctx: GateContext, resolve: Resolve, start: str
                ) -> Callable[[Command], str | None]:
    """A `cd` checker that follows the directory changes of the line in order."""
    from .shell.cwds import DirWalk

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
            rel = relative_to_root(full, ctx.project_root)
            if rel is None:
                out.append(f"`{r.op} {t.value}` writes outside the project")
                break
            why = sensitive(rel, full, ctx) or holds_protected(full, ctx)
            if why:
                out.append(f"`{r.op} {t.value}`: {why}")
                break
    return list(dict.fromkeys(out))


def file_key(path: str, ctx: GateContext, resolve: Resolve, cwd: str) -> str:
    """How check 8 names a file a shell line writes: project-relative, else absolute."""
    rel = relative_to_root(resolve(path, cwd, shell=True), ctx.project_root)
    if rel is not None:
        return rel
    return os.path.normpath(os.path.join(cwd or ctx.project_root, path))


def worktree_changes(analysis: ShellAnalysis, ctx: GateContext, resolve: Resolve,
                     cwds: list[str]) -> list[str]:
    """The files the copies, moves, removals and extractions of a line change, as check 8
    names them (a name known only at run time is `?`: it counts as one more file)."""
    from .protect.line import changes_worktree

    if not changes_worktree(analysis):
        return []
    from .protect.worktree import changed_files

    return [("? (a name known only at run time)" if full == "?" else
             relative_to_root(full, ctx.project_root) or full)
            for full in changed_files(analysis, resolve, cwds)]
