"""Self-protection for the path arguments of a tool call (Read, Edit, Glob's pattern, an MCP
tool's `path`, ...): what they may not touch, under every resolution of the path."""

from __future__ import annotations

import os

from ...lean import TYPE_CHECKING, LazyRe, fnmatchcase
from ...names import STORE_FILE
from .store import ctx_facts, program_paths, program_prefixes, remember, store_markers

if TYPE_CHECKING:  # pragma: no cover
    from typing import Any

    from ..paths import Resolve


def path_violation(p: str, ctx: Any, resolve: Resolve, cwd: str | None, write: bool,
                   tree: bool = False, fulls: list[str] | None = None) -> str | None:
    """Why touching path `p` is refused (None if it is fine).

    `fulls`: every resolution of `p` (`PathResolver.every`); without it, `resolve(p, cwd)`
    alone. A protection applies if any resolution reaches it.

    `write`: the call may change, move or delete what `p` names. Then, besides the store, the
    workflows in use and statewright's/Claude Code's configuration (compared case-insensitively,
    for case-insensitive file systems) are refused, and anything under `~/.claude/` (the
    user's hooks, settings and plugins) or statewright's own programs. `tree`: the tool moves,
    renames or deletes what it names; then a directory holding the store or one of those files
    is refused too (moving `workflows/` away, editing the copy and moving it back would swap
    the workflow in use)."""
    if not isinstance(p, str) or not p:
        return None
    fx = ctx_facts(ctx)
    if fulls is None:
        fulls = [resolve(p, cwd)]
    # what follows is text alone (the resolutions are this decision's): kept per context
    key = (p, write, tree, fulls[0]) if len(fulls) == 1 else (p, write, tree, *fulls)
    verdicts = fx.path_verdicts
    if key in verdicts:
        return verdicts[key]
    return remember(verdicts, key, _path_verdict(p, fulls, fx, ctx, write, tree))


def _path_verdict(p: str, fulls: list[str], fx: Any, ctx: Any, write: bool, tree: bool
                  ) -> str | None:
    if fx.markers.search(p) and _names_store_dir(p, ctx.store_dir):
        return f"`{p}` is inside statewright's store ({ctx.store_dir}), which agents may not touch"
    for full in fulls:
        why = _one_violation(p, full, fx, ctx, write, tree)
        if why:
            return why
    return None


def _names_store_dir(p: str, store_dir: str) -> bool:
    """Whether path `p` names the store's directory by one of its names (a component, in any
    case) or by its path: `state.db` elsewhere (an app's own `data/state.db`) is judged by
    where it resolves, like any file."""
    low = p.lower()
    if os.path.normpath(store_dir).lower() in low:
        return True
    names = {m.lower() for m in store_markers(store_dir)}
    return any(part in names for part in low.replace("\\", "/").split("/"))


def _one_violation(p: str, full: str, fx: Any, ctx: Any, write: bool, tree: bool) -> str | None:
    store = fx.store
    if full == store or full.startswith(fx.store_prefix):
        return f"`{p}` is inside statewright's store ({ctx.store_dir}), which agents may not touch"
    if write:
        if full in fx.protected or full.casefold() in fx.folded:
            return f"`{p}` is a workflow or configuration file statewright is enforcing"
        if full == fx.home_claude or full.startswith(fx.home_claude_prefix):
            return f"`{p}` is Claude Code's own configuration (~/.claude), which holds its hooks"
        why = host_config_problem(full, fx)
        if why:
            return f"`{p}` is {why}"
        why = program_problem(full, fx)
        if why:
            return f"`{p}`: {why}"
        pre = full.rstrip(os.sep) + os.sep
        if (tree and store.startswith(pre)) or pre in fx.holders or \
                (tree and any(d.startswith(pre) for d in program_paths())) or \
                (tree and host_config_problem(full, fx, holds=True)):
            return (f"`{p}` holds statewright's store or a file statewright is enforcing; "
                    "it may not be changed, moved or deleted as a whole")
    return None


def program_problem(full: str, fx: Any) -> str | None:
    """Writing `full` would change a program the host runs for statewright (the installed
    package, its hook and CLI scripts, the environment they run in)."""
    if full.startswith(program_prefixes()) or full in program_paths():
        return ("it belongs to statewright's installed programs (the package, the hook, "
                "the environment they run in), which agents may not change")
    return None


def globs_among_paths(paths: Any, ctx: Any) -> list[str]:
    """Why the globs among the `paths` (a list) of a read of several files could read the
    store: each is judged as the Glob tool's pattern (`**/state.db` names no file, and could)."""
    if not isinstance(paths, list):
        return []
    return [why for v in paths if isinstance(v, str) and any(ch in v for ch in "*?[{")
            for why in (glob_violation(v, ctx),) if why]


def host_config_problem(full: str, fx: Any, holds: bool = False) -> str | None:
    """Why changing the resolved `full` would change a coding host's own configuration
    (`CtxFacts.host_dirs`); `holds`: also when `full` is a directory holding one (the tool
    moves, renames or deletes it whole)."""
    for d in fx.host_dirs:
        if full == d or full.startswith(d + os.sep) or (holds and d.startswith(
                full.rstrip(os.sep) + os.sep)):
            return (f"a coding host's own configuration ({d}), which holds its hooks and can "
                    "switch them off")
    return None


def glob_violation(pattern: str, ctx: Any) -> str | None:
    """Why a file-name glob (the Glob tool's `pattern`, Grep's `glob`) could list or search
    the store: a component that could match the store's name, or a final component that
    could match `state.db` below a wildcard directory (`*/state.d?`, `**/*.db`)."""
    if not isinstance(pattern, str) or not pattern:
        return None
    comps = [c for c in pattern.replace("\\", "/").split("/") if c and c != "."]
    markers = store_markers(ctx.store_dir)
    wild_dir = False
    for i, comp in enumerate(comps):
        low = comp.lower()
        if "{" in low:
            low = _BRACES_RE.sub("*", low)
        wild = any(ch in low for ch in "*?[")
        if not wild and (low in (m.lower() for m in markers) or
                         (i == len(comps) - 1 and low == STORE_FILE)):
            return f"the pattern `{pattern}` names statewright's store"
        if wild and not set(low) <= {"*"}:
            if any(fnmatchcase(m.lower(), low) for m in markers):
                return f"the pattern `{pattern}` could match statewright's store"
        if i == len(comps) - 1 and (wild_dir or i == 0) and wild and \
                fnmatchcase(STORE_FILE, low):
            return f"the pattern `{pattern}` could match statewright's store file"
        if wild:
            wild_dir = True
    return None


_BRACES_RE = LazyRe(r"\{[^{}]*\}")

