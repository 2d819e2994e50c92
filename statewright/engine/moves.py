"""Moving a run: entering a state (counters reset, status settled), taking a transition to a
target (`$return` included), creating a run. Every operation of the engine moves through here.
"""

from __future__ import annotations

from typing import Any

from ..definition.compiled import RETURN_TARGET, CompiledWorkflow, State
from ..errors import INVALID_TRANSITION
from ..names import OBSERVED, OVERRUN
from .outcome import SYSTEM, Event, Outcome, reject
from .run import COMPLETED, FAILED, FINISHED, PAUSED, RUNNING, Run


def state_of(compiled: CompiledWorkflow, run: Run) -> State | None:
    return compiled.states.get(run.state)


def is_waiting(run: Run) -> bool:
    """The run waits on children (an invoked workflow or an unjoined fork)."""
    return run.is_waiting()


def available_events(compiled: CompiledWorkflow, run: Run) -> list[str]:
    st = state_of(compiled, run)
    if st is None or st.final:
        return []
    return list(st.on)


def what_next(compiled: CompiledWorkflow, run: Run) -> str:
    """The sentence a refusal ends with: the events the agent can fire instead."""
    evs = available_events(compiled, run)
    st = state_of(compiled, run)
    tail = f" Unknown events go to '{st.safe_next}' (safe_next)." if st and st.safe_next else ""
    if not evs:
        return "No events are available from this state." + tail
    return f"Events available from '{run.state}': {', '.join(evs)}." + tail


def enter(compiled: CompiledWorkflow, run: Run, target: str, now: float) -> Run:
    """Move to `target`: counters reset, transition counted, final/terminal settles status."""
    st = compiled.states.get(target)
    new = run.with_(state=target, context=state_entered(run.context), iterations=0,
                    files_edited=(), bytes_read=0, denied=0, stop_reminders=0,
                    transition_count=run.transition_count + 1,
                    pending_approval=None, fork=None, updated_at=now,
                    entered_at=now if st is not None and st.timeout_s is not None else None)
    return new.with_(status=status_after_entry(compiled, new))


def state_entered(context: dict[str, Any]) -> dict[str, Any]:
    """The context on entering a state: the evidence of files changed counts this state's
    files only (`_observed.files_changed`, DESIGN section 3), and a limit that a call's effect
    went over was the state left's (`_observed.overrun`)."""
    obs = context.get(OBSERVED)
    if not isinstance(obs, dict) or not (obs.get("files_changed") or OVERRUN in obs):
        return context
    obs = {**obs, "files_changed": []}
    obs.pop(OVERRUN, None)
    return {**context, OBSERVED: obs}


def saved_counters(run: Run) -> dict[str, Any]:
    """The counters of `run`'s state, kept while an interrupt handler is active."""
    return {"iterations": run.iterations, "files_edited": list(run.files_edited),
            "bytes_read": run.bytes_read, "denied": run.denied, "entered_at": run.entered_at}


def returned_counters(handler: Run, back: Run) -> Run:
    """`back` (the run entering the interrupted state again through `$return`) with that
    state's counters as they were when it was interrupted, plus what the handler used: a round
    trip through a handler never refills a budget (DESIGN section 3)."""
    saved = handler.interrupt_counters or {}
    files = set(saved.get("files_edited") or ()).union(handler.files_edited)
    return back.with_(iterations=int(saved.get("iterations") or 0) + handler.iterations,
                      files_edited=tuple(sorted(files)),
                      bytes_read=int(saved.get("bytes_read") or 0) + handler.bytes_read,
                      denied=int(saved.get("denied") or 0), interrupt_counters=None,
                      # its timeout runs on from where it was (the handler's time counts)
                      entered_at=saved.get("entered_at", back.entered_at))


def timeout_due(compiled: CompiledWorkflow, run: Run, now: float) -> str | None:
    """The event statewright fires now because the run has been `timeout_s` in its state
    (`on_timeout`), else None: the run is running, not waiting on children nor on a human."""
    st = state_of(compiled, run)
    if (st is None or st.timeout_s is None or not st.on_timeout or run.entered_at is None
            or run.status != RUNNING or run.pending_approval is not None or run.is_waiting()):
        return None
    return st.on_timeout if now - run.entered_at >= st.timeout_s else None


def status_after_entry(compiled: CompiledWorkflow, run: Run) -> str:
    st = state_of(compiled, run)
    if run.branch_terminal is not None and run.state == run.branch_terminal:
        return COMPLETED
    if st is not None and st.final:
        if run.branch_terminal is not None:
            return FAILED  # a fork branch ended in a final state other than its terminal
        if run.parent_run is not None and run.state == "failed":
            return FAILED  # an invoked workflow reporting failure to its parent
        return COMPLETED
    return PAUSED if run.status == PAUSED else RUNNING


def settled_events(before: Run, after: Run, actor: str) -> list[Event]:
    """The `completed` history row when this move ended the run."""
    if after.status in FINISHED and before.status not in FINISHED:
        return [Event("completed", actor, {"state": after.state, "status": after.status})]
    return []


def new_run(compiled: CompiledWorkflow, run_id: str, session: str, now: float,
            context: dict[str, Any], state: str | None = None, **extra: Any) -> Run:
    run = Run(run_id=run_id, workflow=compiled.id, session=session,
              state=state or compiled.initial, context=context, created_at=now, updated_at=now,
              **extra)
    st = state_of(compiled, run)
    if st is not None and st.timeout_s is not None:
        run = run.with_(entered_at=now)
    if (st is not None and st.final) or run.state == run.branch_terminal:
        run = run.with_(status=status_after_entry(compiled, run))
    return run


def apply_target(compiled: CompiledWorkflow, run: Run, event: str, target: str,
                 data: dict[str, Any], now: float, actor: str, via: str | None = None,
                 extra: dict[str, Any] | None = None) -> Outcome:
    """Take a transition to `target` (or back from an interrupt with `$return`), merging
    `data` into the context after the move."""
    kind = "transitioned"
    new_interrupt, new_return = run.interrupt, run.interrupt_return
    if target == RETURN_TARGET:
        if run.interrupt_return is None:
            return reject(run, INVALID_TRANSITION,
                          f"'{event}' targets $return but no interrupt is active. "
                          + what_next(compiled, run), actor, event=event)
        target, kind = run.interrupt_return, "returned"
        new_interrupt = new_return = None
    if target not in compiled.states:
        return reject(run, INVALID_TRANSITION,
                      f"'{event}' leads to '{target}', which the workflow does not define",
                      actor, event=event)
    new = enter(compiled, run, target, now)
    new = new.with_(
        context={**new.context, **data}, version=run.version + 1,
        interrupt=new_interrupt, interrupt_return=new_return)
    if kind == "returned":
        new = returned_counters(run, new)
    payload: dict[str, Any] = {"event": event, "from": run.state, "to": target, "data": data}
    if via:
        payload["via"] = via
    if extra:
        payload.update(extra)
    events = [Event(kind, actor, payload), *settled_events(run, new, SYSTEM)]
    return Outcome(True, new, tuple(events))
