"""The pure run engine (DESIGN.md section 3): no I/O, no clock, no randomness.

```python
from statewright.engine import fire, Outcome
out = fire(compiled, run, "READY", {"x": 1}, now=t, actor="agent", expected_version=None,
           new_id=None, resolve=lookup)  # resolve(workflow_id) -> CompiledWorkflow, for invoke
if out.accepted: persist out.run, out.events, out.children; stop out.stop
else: out.code / out.message (a code of DESIGN section 5) and out.events (the `rejected` row)
```

Other operations, all returning an `Outcome`: `start`, `pause` (the agent only when
`agent_may_pause(compiled)`: meta.allow_agent_pause or meta.debug), `resume`, `force_state`,
`stop`, `approve`, `reject_approval`, `fire_interrupt` (with the matched `Interrupt`),
`child_settled` (a fork branch / invoked child ended). `transitions(compiled, run)` lists the
current state's transitions with `passes`; `guards.evaluate` explains one guard.

Rules the runtime follows when it resolves a session's runs: `Run.followed_child()` (the child
whose rules apply while a run waits: the invoked run, else the fork's working branch; on the
record, as the hook reads it on every call), `event_target` (which run of that chain an event
is for: `BRANCH_DONE:<b>` goes to the fork's owner), `approval_changes` (what an outcome means
for the approval requests kept beside runs).

Where things are: `run` (the run record and its typed parts), `outcome` (Outcome, Event,
actors), `moves` (entering states, taking a transition), `machine` (start, fire, interrupts),
`reading` (the transitions of a state and whether each passes now), `fork`, `invoke`,
`children` (runs waiting on children), `approvals`, `control` (pause, resume, force, stop).
"""

from ..lean import lazy_attributes
from .run import (
    AGENT,
    COMPLETED,
    ENDED,
    FAILED,
    FINISHED,
    HUMAN,
    PAUSED,
    RUNNING,
    STATUSES,
    SYSTEM,
    Fork,
    ForkBranch,
    Invoke,
    PendingApproval,
    Run,
)

# The machine loads on first use: the hook imports `engine.run` on every tool call and never
# needs the machine to decide one; reading a state (`transitions`) needs only `reading`.
__getattr__ = lazy_attributes(__name__, {
    "Child": "outcome",
    "Event": "outcome", "Outcome": "outcome", "clean_data": "outcome", "derive_id": "outcome",
    "available_events": "moves", "is_waiting": "moves",
    "can_interrupt": "machine", "child_settled": "children", "fire": "machine",
    "checks_needed": "machine", "fire_timeout": "machine", "timeout_due": "moves",
    "fire_interrupt": "machine", "fire_queued": "machine", "start": "machine",
    "transitions": "reading",
    "event_target": "fork", "bind_branch": "fork",
    "approve": "approvals", "reject_approval": "approvals", "approval_changes": "approvals",
    "ApprovalDecision": "approvals",
    "agent_may_pause": "control", "force_state": "control", "pause": "control",
    "resume": "control", "stop": "control", "end": "control",
})


__all__ = [
    "AGENT",
    "COMPLETED",
    "ENDED",
    "FAILED",
    "FINISHED",
    "HUMAN",
    "PAUSED",
    "RUNNING",
    "STATUSES",
    "SYSTEM",
    "ApprovalDecision",
    "Child",
    "Event",
    "Fork",
    "ForkBranch",
    "Invoke",
    "Outcome",
    "PendingApproval",
    "Run",
    "agent_may_pause",
    "approval_changes",
    "approve",
    "available_events",
    "bind_branch",
    "can_interrupt",
    "checks_needed",
    "child_settled",
    "clean_data",
    "derive_id",
    "end",
    "event_target",
    "fire",
    "fire_interrupt",
    "fire_timeout",
    "force_state",
    "is_waiting",
    "pause",
    "reject_approval",
    "resume",
    "start",
    "stop",
    "timeout_due",
    "transitions",
]
