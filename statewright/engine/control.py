"""Control operations (DESIGN.md section 3): pause, resume, force a state, stop a run.

Who may do what is decided here too: a human always may pause and force; the agent may pause
only where the workflow opts in, and force only under `meta.debug`.
"""

from __future__ import annotations

from typing import Any

from ..definition.compiled import CompiledWorkflow
from ..errors import DEBUG_DISABLED, INVALID_ARGUMENTS, RUN_NOT_RUNNING, TOOL_DENIED
from .moves import enter, settled_events, what_next
from .outcome import AGENT, HUMAN, SYSTEM, Event, Outcome, clean_data, reject
from .run import ENDED, FAILED, FINISHED, PAUSED, RUNNING, Run


def agent_may_pause(compiled: CompiledWorkflow) -> bool:
    """Whether the agent itself may pause runs of this workflow: only when the workflow opts in
    with `meta.allow_agent_pause: true` (or is a `meta.debug` workflow). Pausing stops all
    enforcement, so letting the governed agent pause would let it lift every rule at will."""
    return compiled.debug or compiled.meta.get("allow_agent_pause") is True


def pause(compiled: CompiledWorkflow, run: Run, *, now: float, actor: str = AGENT) -> Outcome:
    """Running -> paused. A human (the CLI) always may; anyone else (the agent) only if
    `agent_may_pause(compiled)`; refused with TOOL_DENIED otherwise."""
    if actor != HUMAN and not agent_may_pause(compiled):
        return reject(run, TOOL_DENIED, f"statewright_pause is refused: only a human can pause "
                      f"this run (`statewright pause` in a terminal). Pausing stops all "
                      f"enforcement, so workflow '{compiled.id}' must opt in with "
                      "meta.allow_agent_pause: true before the agent may pause it. Keep working "
                      "in this state, or ask the user to pause. " + what_next(compiled, run),
                      actor)
    if run.status != RUNNING:
        return reject(run, RUN_NOT_RUNNING, f"run {run.run_id} is {run.status}; only a running "
                      "run can be paused", actor)
    new = run.with_(status=PAUSED, version=run.version + 1, updated_at=now)
    return Outcome(True, new, (Event("paused", actor, {"state": run.state}),))


def resume(compiled: CompiledWorkflow, run: Run, *, now: float, actor: str = AGENT,
           session: str | None = None) -> Outcome:
    """Paused -> running; iteration counters reset, context and transition_count kept."""
    if run.status != PAUSED:
        return reject(run, RUN_NOT_RUNNING, f"run {run.run_id} is {run.status}, not paused", actor)
    new = run.with_(status=RUNNING, iterations=0, denied=0, stop_reminders=0,
                    session=session or run.session, version=run.version + 1, updated_at=now,
                    # paused time does not count against a state's timeout
                    entered_at=(None if run.entered_at is None
                                else run.entered_at + max(0.0, now - run.updated_at)))
    return Outcome(True, new, (Event("resumed", actor, {"state": run.state,
                                                        "session": new.session}),))


def force_state(compiled: CompiledWorkflow, run: Run, state: str, context: Any = None, *,
                now: float, actor: str = HUMAN) -> Outcome:
    """Jump to any state, merging `context`. The agent may only when `meta.debug` is true."""
    if actor == AGENT and not compiled.debug:
        return reject(run, DEBUG_DISABLED, f"force_state is disabled: workflow '{compiled.id}' "
                      "does not set meta.debug. " + what_next(compiled, run), actor, target=state)
    if run.status == ENDED:  # (a human closed it for good: recovery is a new run)
        return reject(run, RUN_NOT_RUNNING, f"run {run.run_id} was ended by a human; start a new "
                      "run instead", actor, target=state)
    if not isinstance(state, str) or state not in compiled.states:
        return reject(run, INVALID_ARGUMENTS, f"unknown state '{state}'; states: "
                      + ", ".join(compiled.states), actor, target=state)
    # reserved keys (`_observed`) are dropped whoever forces: only observation writes them
    clean, err = clean_data(context)
    if err or clean is None:
        return reject(run, INVALID_ARGUMENTS, err or "", actor, target=state)
    base = run.with_(status=RUNNING if run.status != PAUSED else PAUSED,
                     context={**run.context, **clean},
                     child_run=None, invoke=None, interrupt=None, interrupt_return=None,
                     interrupt_queue=(), interrupt_counters=None)
    new = enter(compiled, base, state, now).with_(version=run.version + 1)
    events = [Event("forced", actor, {"from": run.state, "to": state, "context": clean,
                                      "previous_status": run.status})]
    if run.pending_approval is not None:
        events.append(Event("approval_dropped", SYSTEM, {
            "approval_id": run.pending_approval.approval_id,
            "reason": "superseded by force-state"}))
    events += settled_events(base if run.status in FINISHED else run, new, SYSTEM)
    return Outcome(True, new, tuple(events), stop=tuple(run.waited_children()))


def end(run: Run, *, now: float, actor: str, reason: str | None = None) -> Outcome:
    """A human closes a running or paused run for good (DESIGN section 3): status `ended`, the
    reason recorded; the children it waits on stop with it. Refused to anyone else: ending a
    run lifts its rules, like pausing, and cannot be undone."""
    if actor != HUMAN:
        return reject(run, TOOL_DENIED, "only a human can end a run (`statewright end` in a "
                      "terminal): it lifts the workflow's rules for good. The run stays in "
                      f"state '{run.state}'.", actor)
    if run.status not in (RUNNING, PAUSED):
        return reject(run, RUN_NOT_RUNNING, f"run {run.run_id} is {run.status}; only a running "
                      "or paused run can be ended", actor)
    ended = run.with_(status=ENDED, version=run.version + 1, updated_at=now)
    ev = Event("ended", actor, {"state": run.state, "reason": reason or ""})
    return Outcome(True, ended, (ev,), stop=tuple(run.waited_children()))


def stop(run: Run, *, now: float, reason: str) -> Outcome:
    """End a running or paused run for good (its parent moved on or was stopped): it fails, and
    the children it waits on stop with it. Not accepted when it has already ended."""
    if run.status not in (RUNNING, PAUSED):
        return Outcome(False, run)
    stopped = run.with_(status=FAILED, version=run.version + 1, updated_at=now)
    ev = Event("completed", SYSTEM, {"status": FAILED, "reason": reason, "state": run.state})
    return Outcome(True, stopped, (ev,), stop=tuple(run.waited_children()))
