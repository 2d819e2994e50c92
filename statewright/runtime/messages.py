"""What the agent is told, worded once for every front end (the hook and the proxy): the
briefing on a state answer, the interrupt notice, budget warnings, the Stop reminder.

Plain text from plain facts: stdlib only (this module is on the hook's start-up path).
"""

from __future__ import annotations

from ..definition.compiled import BRANCH_DONE_PREFIX
from ..lean import TYPE_CHECKING
from .state_text import briefing

if TYPE_CHECKING:  # pragma: no cover
    from typing import Any

    from ..definition.compiled import State
    from ..engine.run import Run

# fraction of a budget after which PostToolUse warns the agent
WARN_AT = 0.8


def agent_events(state: State) -> tuple[str, ...]:
    """The events of `state` the agent fires itself (not the reserved `BRANCH_DONE:<b>`)."""
    return tuple(e for e in state.on if not e.startswith(BRANCH_DONE_PREFIX))


def has_budget(state: State) -> bool:
    """Does `state` have a budget that `budget_warnings` may warn about?"""
    return bool(state.max_iterations or state.context_budget_bytes or state.max_files_per_state)


def _events_text(state: State) -> str:
    ev = agent_events(state)
    return ", ".join(ev) if ev else "none (a human must move the run on)"


def budget_warnings(state: State, run: Run) -> list[str]:
    if not has_budget(state):
        return []
    out = []
    name = state.name
    if state.max_iterations:
        left = state.max_iterations - run.iterations
        if left <= 0:
            out.append(f"[statewright] The tool-call limit of state {name!r} is reached "
                       f"({run.iterations}/{state.max_iterations}). Further tool calls are "
                       f"refused until the run transitions; events available: "
                       f"{_events_text(state)}.")
        elif run.iterations >= state.max_iterations * WARN_AT:
            out.append(f"[statewright] {run.iterations} of {state.max_iterations} tool calls of "
                       f"state {name!r} are used ({left} left). Events available: "
                       f"{_events_text(state)}.")
    if state.context_budget_bytes:
        budget = state.context_budget_bytes
        if run.bytes_read >= budget:
            out.append(f"[statewright] The context budget of state {name!r} is used up "
                       f"({run.bytes_read}/{budget} bytes). Further tool calls are refused until "
                       f"the run transitions; events available: {_events_text(state)}.")
        elif run.bytes_read >= budget * WARN_AT:
            out.append(f"[statewright] {run.bytes_read} of {budget} bytes of the context budget "
                       f"of state {name!r} are used.")
    if state.max_files_per_state and len(run.files_edited) >= state.max_files_per_state:
        out.append(f"[statewright] State {name!r} allows {state.max_files_per_state} distinct "
                   f"file(s); all are used ({', '.join(run.files_edited)}). Only those files may "
                   "be edited in this state.")
    return out


def interrupt_message(info: dict[str, Any], answer: dict[str, Any]) -> str:
    """`[STATEWRIGHT INTERRUPT] ...`: `info` = {file, interrupt, return_to}; then the briefing."""
    head = f"[STATEWRIGHT INTERRUPT] {info['file']} changed"
    if info.get("interrupt"):
        head += f" (interrupt {info['interrupt']!r})"
    head += f"; the run is now in state {answer.get('state')!r}"
    if info.get("return_to"):
        head += f" and `$return` brings it back to {info['return_to']!r}"
    return head + ".\n" + briefing(answer)


def stop_text(workflow: str, run: Run, state: State) -> str:
    """The Stop reminder: the run is in a non-final state, so the work is not finished."""
    events = agent_events(state)
    text = (f"statewright: workflow {workflow!r} is still in state {run.state!r}, which is not "
            "a final state, so the work is not finished.")
    if events:
        text += (" Events that move it on: " + ", ".join(events) +
                 " (fire one with the statewright_transition tool once its condition holds).")
    else:
        text += " No event leaves this state; a human must move the run on."
    if state.instructions:
        text += f" Instructions for this state: {state.instructions}"
    return text


def timeout_message(timed: dict[str, Any]) -> str:
    """What the agent is told when statewright fired a state's timeout."""
    return (f"[STATEWRIGHT TIMEOUT] state '{timed['state']}' timed out after "
            f"{timed['timeout_s']:g} s: statewright fired {timed['event']} and the run is now in "
            f"state '{timed['to']}'. Read the state (statewright_get_state or `statewright "
            "status`) and go on under its rules.")


def timed_out(rt: Any, tx: Any, run: Any) -> Any:
    """When `run`'s state timed out: statewright fires its timeout now (`Runtime.fire_timeout_in`)
    and the call being decided is refused, saying where the run is now (a `Decision`); else
    None."""
    if run.entered_at is None:
        return None
    timed = rt.fire_timeout_in(tx, run.run_id, rt.clock())
    if timed is None:
        return None
    from ..policy.types import Decision

    return Decision.deny(timeout_message(timed), rule="state_timeout", counts_iteration=False)
