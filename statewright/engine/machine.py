"""The run state machine (DESIGN.md section 3): pure, total functions from (workflow, run,
input, now) to an `Outcome`. No I/O, no clock, no randomness: ids are derived from the run id
and version (or come from an injected `new_id`), time is passed in.

Every function returns an `Outcome`; none raises for bad agent input. Firing an event is here,
with starting a run, interrupts and the list of transitions; the forms that start children
are in `fork` and `invoke` (and what a parent does when they end in `children`), approvals in
`approvals`, pause / resume / force / stop in `control`.
"""

from __future__ import annotations

import copy
from dataclasses import replace
from typing import Any

from ..definition.compiled import (
    BRANCH_DONE_PREFIX,
    Check,
    CompiledWorkflow,
    Interrupt,
    Transition,
)
from ..errors import (
    FINAL_STATE,
    GUARD_REJECTED,
    INVALID_ARGUMENTS,
    INVALID_TRANSITION,
    PENDING_APPROVAL,
    RUN_NOT_RUNNING,
    STALE_VERSION,
)
from ..names import CHECKS, FROZEN
from . import guards as _guards
from .approvals import request_approval
from .fork import branch_done, fire_fork
from .invoke import fire_invoke
from .moves import (
    apply_target,
    enter,
    is_waiting,
    new_run,
    saved_counters,
    settled_events,
    state_of,
    timeout_due,
    what_next,
)
from .outcome import (
    AGENT,
    HUMAN,
    SYSTEM,
    Event,
    IdFactory,
    Outcome,
    Resolver,
    clean_data,
    reject,
    strip_reserved,
)
from .run import FINISHED, RUNNING, Run

# -- starting --------------------------------------------------------------------------------

def start(compiled: CompiledWorkflow, run_id: str, session: str, now: float,
          input: Any = None, actor: str = HUMAN,
          frozen: dict[str, Any] | None = None) -> Outcome:
    """A fresh run at `initial` with the workflow's context plus `input` (reserved keys dropped).
    `frozen`: the fingerprints of the checks' frozen paths the runtime took (kept under
    `context._frozen`, which nothing else writes)."""
    clean, err = clean_data(input)
    placeholder = Run(run_id=run_id, workflow=compiled.id, session=session, state=compiled.initial,
                      created_at=now, updated_at=now)
    if err or clean is None:
        return Outcome(False, placeholder, code=INVALID_ARGUMENTS, message=f"input: {err}")
    ctx = {**strip_reserved(copy.deepcopy(compiled.context)), **copy.deepcopy(clean)}
    if frozen:
        ctx[FROZEN] = copy.deepcopy(frozen)
    run = new_run(compiled, run_id, session, now, ctx)
    events = [Event("started", actor, {"workflow": compiled.id, "state": run.state,
                                       "input": clean, "digest": compiled.digest})]
    events += settled_events(placeholder, run, SYSTEM)
    return Outcome(True, run, tuple(events))


# -- firing events ---------------------------------------------------------------------------

def checks_needed(compiled: CompiledWorkflow, run: Run, event: Any,
                  expected_version: int | None = None) -> tuple[Check, ...]:
    """The checks statewright must run before firing `event` on `run` (the transition's, in
    order): none when the event would be refused whatever they answer (no such transition, a
    run that is not running, waits or has a parked approval, a stale version)."""
    if not compiled.checks:
        return ()
    if _refuse_firing(compiled, run, event, AGENT, expected_version) is not None:
        return ()
    if event.startswith(BRANCH_DONE_PREFIX) or is_waiting(run):
        return ()
    st = state_of(compiled, run)
    t = st.on.get(event) if st is not None else None
    if t is None or not t.checks:
        return ()
    return tuple(compiled.checks[n] for n in t.checks if n in compiled.checks)


def fire(compiled: CompiledWorkflow, run: Run, event: str, data: Any = None, *, now: float,
         actor: str = AGENT, expected_version: int | None = None,
         new_id: IdFactory | None = None, resolve: Resolver | None = None,
         checks: dict[str, dict[str, Any]] | None = None) -> Outcome:
    """Fire `event` on `run` (DESIGN section 3): a refusal, or the transition's outcome.

    `checks`: the outcomes of the transition's checks, which the runtime ran itself
    (`checks_needed`), by name; recorded under `context._checks` before guards are evaluated.
    A check the transition names and `checks` lacks counts as failed (never run)."""
    refused = _refuse_firing(compiled, run, event, actor, expected_version)
    if refused is not None:
        return refused
    clean, err = clean_data(data)
    if err or clean is None:
        return reject(run, INVALID_ARGUMENTS, err or "", actor, event=event)
    if event.startswith(BRANCH_DONE_PREFIX):
        return branch_done(compiled, run, event, clean, now, actor)
    if is_waiting(run):
        what = (f"the invoked workflow (run {run.child_run})" if run.child_run
                else "its fork branches")
        return reject(run, INVALID_TRANSITION,
                      f"run {run.run_id} is waiting for {what} in state '{run.state}'; "
                      "transition the child run instead", actor, event=event)
    st = state_of(compiled, run)
    assert st is not None
    t = st.on.get(event)
    if t is None:
        if st.safe_next:
            return _returned(compiled, run, apply_target(compiled, run, event, st.safe_next,
                                                         clean, now, actor, via="safe_next"), now)
        return reject(run, INVALID_TRANSITION,
                      f"no transition for event '{event}' from state '{run.state}'. "
                      + what_next(compiled, run), actor, event=event)
    if t.kind == "invoke":
        return fire_invoke(compiled, run, t, clean, now, actor, new_id, resolve)
    if t.kind == "fork":
        return fire_fork(compiled, run, t, clean, now, actor, new_id)
    return _fire_guarded(compiled, run, t, clean, now, actor, new_id, checks)


def _refuse_firing(compiled: CompiledWorkflow, run: Run, event: Any, actor: str,
                   expected_version: int | None) -> Outcome | None:
    """The refusal when no event can be fired on `run` now (whatever the event), else None."""
    if not isinstance(event, str) or not event:
        return reject(run, INVALID_ARGUMENTS, "event must be a non-empty string", actor)
    if expected_version is not None and expected_version != run.version:
        return reject(run, STALE_VERSION,
                      f"expected version {expected_version} but the run is at version "
                      f"{run.version}; read the state again (get_state) and retry", actor,
                      event=event, expected_version=expected_version)
    if run.status in FINISHED:
        return reject(run, FINAL_STATE,
                      f"run {run.run_id} has ended ({run.status}, in state '{run.state}'); "
                      "start a new run to continue", actor, event=event)
    if run.status != RUNNING:
        return reject(run, RUN_NOT_RUNNING,
                      f"run {run.run_id} is {run.status}; resume it first", actor, event=event)
    st = state_of(compiled, run)
    if st is None:
        return reject(run, INVALID_TRANSITION,
                      f"the run is in state '{run.state}', which its workflow does not define",
                      actor, event=event)
    if st.final:
        return reject(run, FINAL_STATE, f"state '{run.state}' is final; no events are accepted",
                      actor, event=event)
    pa = run.pending_approval
    if pa is not None:
        return reject(run, PENDING_APPROVAL,
                      f"transition {pa.event} is waiting for human approval "
                      f"({pa.approval_id}); wait until a human runs `statewright approve` "
                      "or `statewright reject`", actor, event=event)
    return None


def _with_checks(run: Run, t: Transition, outcomes: dict[str, dict[str, Any]] | None,
                 now: float) -> tuple[Run, list[Event]]:
    """`run` with the outcomes of `t`'s checks under `context._checks`, and their history rows.
    Only the outcomes handed in by the runtime are recorded (agent data never reaches here:
    `clean_data` strips every `_` key); a named check without one failed."""
    if not t.checks:
        return run, []
    old = run.context.get(CHECKS)
    recorded: dict[str, Any] = dict(old) if isinstance(old, dict) else {}
    events: list[Event] = []
    for name in t.checks:
        o = (outcomes or {}).get(name)
        if not isinstance(o, dict):
            o = {"ok": False, "exit_code": None, "at": now, "duration_ms": 0, "summary": None,
                 "output_tail": "", "error": "the check was not run"}
        recorded[name] = copy.deepcopy(o)
        events.append(Event("check", SYSTEM, {"check": name, "event": t.event, **o}))
    return run.with_(context={**run.context, CHECKS: recorded}), events


_BEFORE_ADVICE = (". Guards read the context as it was BEFORE this call; set the fields with "
                  "the data of an earlier transition.")


def _checks_said(run: Run, t: Transition) -> str:
    """What the transition's checks answered, for a refusal."""
    rec = run.context.get(CHECKS) or {}
    parts = []
    for name in t.checks:
        o = rec.get(name) or {}
        how = "passed" if o.get("ok") else (o.get("error") or
                                           f"failed (exit status {o.get('exit_code')})")
        tail = (o.get("output_tail") or "").strip().splitlines()[-3:]
        parts.append(f"check '{name}' {how}" + (": " + " | ".join(tail) if tail and not
                                                 o.get("ok") else ""))
    return "; ".join(parts)


def _fire_guarded(compiled: CompiledWorkflow, run: Run, t: Transition, data: dict[str, Any],
                  now: float, actor: str, new_id: IdFactory | None,
                  checks: dict[str, dict[str, Any]] | None = None) -> Outcome:
    """Simple / guarded / branched: the first passing entry wins; guards see the context as it
    was BEFORE the transition (with the outcomes of the transition's checks)."""
    before = run
    run, check_events = _with_checks(run, t, checks, now)
    if check_events:
        out = _fire_checked(compiled, run, t, data, now, actor, new_id)
        if not out.accepted:  # the run stays as it was; history keeps the outcomes
            # (the advice to set fields with earlier data does not apply to what checks say)
            head = out.message.split(_BEFORE_ADVICE)[0].rstrip(".")
            message = f"{head}. Statewright ran the checks itself: {_checks_said(run, t)}."
            ev = out.events[-1]
            rejected = Event(ev.kind, ev.actor, {**ev.data, "message": message}, ev.run_id)
            return Outcome(False, before, (*check_events, *out.events[:-1], rejected),
                           code=out.code, message=message)
        return Outcome(True, out.run, (*check_events, *out.events), out.children, out.stop,
                       out.code, out.message, out.advice, out.parked)
    return _fire_checked(compiled, run, t, data, now, actor, new_id)


def _fire_checked(compiled: CompiledWorkflow, run: Run, t: Transition, data: dict[str, Any],
                  now: float, actor: str, new_id: IdFactory | None) -> Outcome:
    event = t.event
    failures: list[str] = []
    chosen = None
    for b in t.branches:
        ok, failed = _guards.all_pass(compiled, b.guards, run.context)
        if ok:
            chosen = b
            break
        failures.extend(failed)
    if chosen is None:
        if t.kind == "branched":
            msg = (f"no branch of '{event}' from '{run.state}' has passing guards and there is "
                   "no default: " + "; ".join(failures))
        else:
            msg = f"'{event}' from '{run.state}' is blocked: " + "; ".join(failures)
        msg += _BEFORE_ADVICE
        return reject(run, GUARD_REJECTED, msg, actor, event=event, failed=failures)
    if not t.requires_approval:
        return _returned(compiled, run,
                         apply_target(compiled, run, event, chosen.target, data, now, actor), now)
    message = (t.approval_message
               or f"Approve transition {event} from '{run.state}' to '{chosen.target}'?")
    if compiled.approval_mode == "ui":
        return request_approval(compiled, run, event, chosen.target, data, message, now, actor,
                                new_id)
    out = _returned(compiled, run, apply_target(compiled, run, event, chosen.target, data, now,
                                                actor), now)
    if out.accepted:  # approval_mode "none": the approval message is advice only
        return Outcome(True, out.run, out.events, advice=message)
    return out


def _returned(compiled: CompiledWorkflow, run: Run, out: Outcome, now: float) -> Outcome:
    """`out` of a move; when it returned from an interrupt handler (`$return`) and interrupts
    were queued meanwhile, the first of them fires now."""
    if not (out.accepted and run.interrupt is not None and out.run.interrupt is None
            and out.run.interrupt_queue):
        return out
    queued = fire_queued(compiled, out.run, now)
    if queued is None:
        return Outcome(True, out.run.with_(interrupt_queue=()), out.events, advice=out.advice)
    return Outcome(True, queued.run, out.events + queued.events, advice=out.advice)


# -- state timeouts --------------------------------------------------------------------------

def fire_timeout(compiled: CompiledWorkflow, run: Run, *, now: float,
                 new_id: IdFactory | None = None,
                 resolve: Resolver | None = None) -> Outcome | None:
    """Fire the state's `on_timeout` event as statewright (actor `system`) when the run has
    been `timeout_s` in its state; None when nothing is due. A guard that refuses it leaves the
    run where it is (the refusal is recorded, and it is tried again at the next look)."""
    event = timeout_due(compiled, run, now)
    if event is None:
        return None
    out = fire(compiled, run, event, {}, now=now, actor=SYSTEM, new_id=new_id, resolve=resolve)
    note = Event("timed_out", SYSTEM, {"state": run.state, "event": event,
                                       "timeout_s": compiled.states[run.state].timeout_s})
    return replace(out, events=(note, *out.events))


# -- interrupts ------------------------------------------------------------------------------

def can_interrupt(compiled: CompiledWorkflow, run: Run, interrupt: Interrupt) -> bool:
    st = state_of(compiled, run)
    return (run.status == RUNNING and st is not None and not st.final
            and run.interrupt is None and not is_waiting(run)
            and run.state != interrupt.target and interrupt.target in compiled.states)


def fire_interrupt(compiled: CompiledWorkflow, run: Run, interrupt: Interrupt, *, now: float,
                   path: str = "", actor: str = SYSTEM) -> Outcome:
    """Move the run to the interrupt's handler, remembering where it was (for `$return`).

    While a handler of ANOTHER interrupt is active, the interrupt is queued instead (once): it
    fires when that handler returns, so one benign interrupt cannot mask another. Not accepted
    (no events) when it must not fire: the run is not running, is in a final state, already
    handles or has queued this interrupt, waits on children, or is in the handler itself."""
    if run.interrupt is not None and run.status == RUNNING and run.interrupt != interrupt.name \
            and all(q[0] != interrupt.name for q in run.interrupt_queue) \
            and interrupt.target in compiled.states:
        new = run.with_(interrupt_queue=(*run.interrupt_queue, (interrupt.name, path)))
        return Outcome(True, new, (Event("interrupt_queued", actor, {
            "interrupt": interrupt.name, "file": path, "active": run.interrupt}),))
    if not can_interrupt(compiled, run, interrupt):
        return Outcome(False, run)
    return _enter_handler(compiled, run, interrupt, now, path, actor)


def fire_queued(compiled: CompiledWorkflow, run: Run, now: float) -> Outcome | None:
    """After `$return`: the first queued interrupt fires (the rest stay queued behind it);
    None when nothing is queued or it can no longer fire."""
    queue = run.interrupt_queue
    while queue:
        (name, path), queue = queue[0], queue[1:]
        i = next((x for x in compiled.interrupts if x.name == name), None)
        rest = run.with_(interrupt_queue=queue)
        if i is not None and can_interrupt(compiled, rest, i):
            return _enter_handler(compiled, rest, i, now, path, SYSTEM)
    return None


def _enter_handler(compiled: CompiledWorkflow, run: Run, interrupt: Interrupt, now: float,
                   path: str, actor: str) -> Outcome:
    new = enter(compiled, run, interrupt.target, now).with_(
        interrupt=interrupt.name, interrupt_return=run.state, version=run.version + 1,
        interrupt_counters=saved_counters(run))
    events = [Event("interrupted", actor, {"interrupt": interrupt.name, "file": path,
                                           "from": run.state, "to": interrupt.target})]
    if run.pending_approval is not None:
        events.append(Event("approval_dropped", SYSTEM, {
            "approval_id": run.pending_approval.approval_id,
            "reason": "superseded by an interrupt"}))
    events += settled_events(run, new, SYSTEM)
    return Outcome(True, new, tuple(events))
