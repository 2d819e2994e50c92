"""The pure run engine (DESIGN.md section 3): no I/O, no clock, no randomness.

```python
from statewright.engine import fire, Outcome
out = fire(compiled, run, "READY", {"x": 1}, now=t, actor="agent", expected_version=None,
           new_id=None, resolve=lookup)        # resolve(workflow_id) -> CompiledWorkflow, for invoke
if out.accepted: persist out.run, out.events, out.children; stop out.stop
else: out.code / out.message (a code of DESIGN section 5) and out.events (the `rejected` row)
```

Other operations, all returning an `Outcome`: `start`, `pause` (the agent only when
`agent_may_pause(compiled)`: meta.allow_agent_pause or meta.debug), `resume`, `force_state`,
`approve`, `reject_approval`, `fire_interrupt` (with the matched `Interrupt`), `child_settled`
(a fork branch / invoked child ended). `transitions(compiled, run)` lists the current state's
transitions with `passes`; `guards.evaluate` explains one guard.
"""

from .run import COMPLETED, FAILED, PAUSED, RUNNING, STATUSES, Run

# The machine (and its dataclasses) loads on first use: the hook imports `engine.run` on every
# tool call and never needs the machine to decide one.
_MACHINE = frozenset({
    "AGENT", "HUMAN", "SYSTEM", "Child", "Event", "Outcome", "agent_may_pause", "approve",
    "available_events", "can_interrupt", "child_settled", "clean_data", "derive_id", "fire", "fire_interrupt",
    "force_state", "is_waiting", "pause", "reject_approval", "resume", "start", "transitions",
})


def __getattr__(name):
    if name in _MACHINE:
        from . import machine

        value = getattr(machine, name)
    elif name == "evaluate_guard":
        from .guards import evaluate as value
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


__all__ = [
    "AGENT",
    "COMPLETED",
    "FAILED",
    "HUMAN",
    "PAUSED",
    "RUNNING",
    "STATUSES",
    "SYSTEM",
    "Child",
    "Event",
    "Outcome",
    "Run",
    "agent_may_pause",
    "approve",
    "available_events",
    "can_interrupt",
    "child_settled",
    "clean_data",
    "derive_id",
    "evaluate_guard",
    "fire",
    "fire_interrupt",
    "force_state",
    "is_waiting",
    "pause",
    "reject_approval",
    "resume",
    "start",
    "transitions",
]
