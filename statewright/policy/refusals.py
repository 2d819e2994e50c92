"""How a refusal reads (every check's, through `gate._deny`): what the state allows instead,
in text every front end can print."""

from __future__ import annotations

from ..lean import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from ..definition.compiled import State
    from .types import GateContext


def instead(state: State, ctx: GateContext, shell: bool = False) -> str:
    bits: list[str] = []
    if state.allowed_tools is not None:
        tools = ", ".join(state.allowed_tools) or "none besides statewright's own"
        bits.append(f"Tools allowed in state '{state.name}': {tools}.")
    if state.disallowed_tools:
        bits.append(f"Never allowed here: {', '.join(state.disallowed_tools)}.")
    if shell and state.allowed_commands is not None:
        cmds = ", ".join(f"`{c}`" for c in state.allowed_commands) or "none"
        bits.append(f"Allowed commands (each command of a line must start with one): {cmds}.")
    if ctx.events:
        bits.append("To move on, fire one of these events with statewright_transition: "
                    + ", ".join(ctx.events) + ".")
    else:
        bits.append("Call statewright_get_state to see what this state allows.")
    return " ".join(bits)


def printable(text: str) -> str:
    """Text every front end can encode: a lone surrogate from the tool input (valid JSON,
    not valid UTF-8) would make writing the refusal fail, and a refusal that is never
    printed is an allow."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
