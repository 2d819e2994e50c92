"""While an interrupt handler is active (DESIGN section 3): the interrupted state's rules apply
too, so a handler never grants what the interrupted state refused unless its interrupt says
`widen: true`. Called by `enforcement` for a call the handler's rules allow."""

from __future__ import annotations

from ..lean import TYPE_CHECKING
from ..policy.types import Counters, Decision

if TYPE_CHECKING:  # pragma: no cover
    from collections.abc import Callable, Set

    from ..definition.compiled import CompiledWorkflow, State
    from ..engine.run import Run
    from ..policy.types import GateContext, ToolCall
    from .surface import Runtime

    GateFacts = Callable[[Runtime, State, Set[str] | None, object], GateContext]


def handler_narrows(rt: Runtime, run: Run, wf: CompiledWorkflow, call: ToolCall,
                              d: Decision, protected: Set[str] | None,
                              facts: GateFacts) -> Decision:
    """While an interrupt handler is active, a call the handler allows must also pass the
    interrupted state's rules (with that state's counters plus the handler's): a handler never
    grants what the interrupted state refused, unless its interrupt says `widen: true`.
    `facts`: `enforcement.gate_context`, which calls this (the gate's facts for a state)."""
    it = next((i for i in wf.interrupts if i.name == run.interrupt), None)
    if it is not None and it.widen:
        return d
    base = wf.states.get(run.interrupt_return or "")
    if base is None or base.final:
        return d
    saved = run.interrupt_counters or {}
    counters = Counters(
        iterations=int(saved.get("iterations") or 0) + run.iterations,
        files_edited=frozenset(saved.get("files_edited") or ()).union(run.files_edited),
        bytes_read=int(saved.get("bytes_read") or 0) + run.bytes_read,
        denied=int(saved.get("denied") or 0))
    from ..policy import gate

    d2 = gate(base, counters, call, facts(rt, base, protected, call.tool_name))
    if d2.allowed:
        return d
    return Decision.deny(f"while the interrupt handler '{run.state}' runs, the rules of the "
                         f"interrupted state '{base.name}' still apply, and they refuse this: "
                         f"{d2.reason}", rule=d2.rule, counts_iteration=False)
