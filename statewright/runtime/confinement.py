"""The runtime's side of binding by the kernel: the launcher of a downstream server, and what
the agent is told after a sandboxed line the kernel refused something (`policy.confine` decides
both; the front ends only call these)."""

from __future__ import annotations

from ..lean import TYPE_CHECKING
from ..policy.types import GateContext

if TYPE_CHECKING:  # pragma: no cover
    from ..definition.compiled import State
    from .surface import Runtime


def server_launcher(rt: Runtime, withheld: frozenset[str]) -> list[str] | None:
    """The kernel sandbox's argv prefix for a downstream MCP server of `rt`'s project
    (`policy.confine.server_profile`), None where this machine has no kernel tier."""
    from ..policy.confine import server_profile
    from ..sandbox.launcher import argv
    from ..sandbox.probe import tier

    if not tier().available:
        return None
    ctx = GateContext(rt.root_dir, rt.store_dir, frozenset(rt.protected_files()))
    return argv(server_profile(ctx, withheld))


def sandbox_note(state: State, line: str, output: str) -> str | None:
    """The agent's explanation of a kernel refusal in a sandboxed line's output."""
    from ..sandbox.launcher import unwrap

    if unwrap(line) is None:
        return None
    from ..policy.confine import refusal_note

    return refusal_note(state, output)
