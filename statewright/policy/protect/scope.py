"""The write scope shared by the edit tools and shell output redirects (DESIGN section 4,
check 1): inside the project, never into git metadata, Claude settings, a file statewright is
enforcing or the store. A planted `.git/hooks/pre-commit`, `.git/config` `core.fsmonitor` or
Claude setting would make an allowed command run anything."""

from __future__ import annotations

import os

from ...lean import TYPE_CHECKING
from .store import ctx_facts

if TYPE_CHECKING:  # pragma: no cover
    from ..types import GateContext

#: project-relative prefixes no tool or redirect may write into
SENSITIVE_PREFIXES = (".git/", ".claude/")


def sensitive(rel: str, full: str, ctx: GateContext) -> str | None:
    """Why writing the project-relative `rel` (resolved: `full`) is refused: git metadata,
    Claude settings, a file statewright enforces, the store."""
    if rel == ".git" or rel.startswith(SENSITIVE_PREFIXES):
        return f"`{rel}` is a sensitive location (git metadata / Claude settings)"
    fx = ctx_facts(ctx)
    if full in fx.protected:
        return f"`{rel}` is a file statewright is enforcing"
    if full == fx.real_store or full.startswith(fx.real_store_prefix):
        return f"`{rel}` is inside statewright's store"
    return None


def holds_protected(full: str, ctx: GateContext) -> str | None:
    """A written target that is a directory holding the store or a protected file (`pytest
    --basetemp=.` empties its directory first)."""
    pre = full.rstrip(os.sep) + os.sep
    fx = ctx_facts(ctx)
    if fx.real_store.startswith(pre) or pre in fx.holders:
        return f"`{full}` holds statewright's store or a file statewright is enforcing"
    return None


def write_target_problem(p: str, full: str, rel: str | None, ctx: GateContext) -> str | None:
    """Why an edit tool may not write `p`: outside the project, or somewhere `sensitive`."""
    if rel is None:
        return f"`{p}` is outside the project; edit tools may only write inside it"
    why = sensitive(rel, full, ctx)
    return f"`{p}`: {why}" if why else None
