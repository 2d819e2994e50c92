"""Reading a run without moving it: the transitions of its current state and whether each
would pass now (the state answer's `transitions`). Kept apart from the machine so that reading
a state (`statewright status`, `get_state`) does not load what firing events needs.
"""

from __future__ import annotations

from ..definition.compiled import RETURN_TARGET
from ..lean import TYPE_CHECKING
from .guards import all_pass
from .run import RUNNING

if TYPE_CHECKING:
    from typing import Any

    from ..definition.compiled import CompiledWorkflow, Transition
    from .run import Run


def transitions(compiled: CompiledWorkflow, run: Run) -> list[dict[str, Any]]:
    """The transitions of the current state, each with `passes`: would firing it now succeed
    (for a branched event: would this entry be the one taken)."""
    st = compiled.states.get(run.state)
    if st is None or st.final:
        return []
    blocked = run.status != RUNNING or run.pending_approval is not None or run.is_waiting()
    out: list[dict[str, Any]] = []
    for event, t in st.on.items():
        if t.kind in ("invoke", "fork"):
            out.append(_child_transition(event, t, blocked))
            continue
        taken = False
        for b in t.branches:
            ok, _ = all_pass(compiled, b.guards, run.context)
            passes = ok and not taken and not blocked
            if b.target == RETURN_TARGET and run.interrupt_return is None:
                passes = False
            taken = taken or ok
            entry = {"event": event, "target": b.target, "guards": list(b.guards),
                     "requires_approval": t.requires_approval, "passes": passes}
            if t.checks:
                # statewright runs these when the event fires: `passes` is their last outcome's
                entry["checks"] = list(t.checks)
            out.append(entry)
    return out


def _child_transition(event: str, t: Transition, blocked: bool) -> dict[str, Any]:
    entry: dict[str, Any] = {"event": event, "target": t.on_complete or (
        t.fork.on_complete if t.fork else None), "guards": [], "requires_approval": False,
        "passes": not blocked}
    if t.kind == "invoke":
        entry["invoke"] = t.invoke
    else:
        entry["fork"] = list(t.fork.branches) if t.fork else []
    return entry

