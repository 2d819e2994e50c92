"""The run state machine (DESIGN.md section 3): pure, total functions from (workflow, run,
input, now) to an `Outcome`. No I/O, no clock, no randomness: ids are derived from the run id
and version (or come from an injected `new_id`), time is passed in.

Every function returns an `Outcome`; none raises for bad agent input. A rejected outcome
carries a code of DESIGN section 5, a message that says what the agent can do instead, and a
`rejected` history event (the run itself is unchanged, its version too).
"""

from __future__ import annotations

import copy
import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..definition.compiled import (
    BRANCH_DONE_PREFIX,
    RETURN_TARGET,
    CompiledWorkflow,
    Interrupt,
    State,
    Transition,
)
from ..errors import (
    DEBUG_DISABLED,
    FINAL_STATE,
    GUARD_REJECTED,
    INVALID_ARGUMENTS,
    INVALID_TRANSITION,
    NO_PENDING_APPROVAL,
    PENDING_APPROVAL,
    RUN_NOT_RUNNING,
    STALE_VERSION,
    TOOL_DENIED,
    UNKNOWN_WORKFLOW,
    StatewrightError,
)
from . import guards as _guards
from .run import COMPLETED, FAILED, PAUSED, RUNNING, Run

AGENT, HUMAN, SYSTEM = "agent", "human", "system"
IdFactory = Callable[[str], str]  # prefix ("run" / "apr") -> fresh id
Resolver = Callable[[str], CompiledWorkflow]  # workflow id -> compiled workflow (may raise StatewrightError)


@dataclass(frozen=True, slots=True)
class Event:
    """One history row to append. `run_id=None` means the outcome's own run."""

    kind: str
    actor: str
    data: dict[str, Any] = field(default_factory=dict)
    run_id: str | None = None


@dataclass(frozen=True, slots=True)
class Child:
    """A run to create (fork branch or invoked workflow), with the definition it runs."""

    run: Run
    compiled: CompiledWorkflow


@dataclass(frozen=True, slots=True)
class Outcome:
    accepted: bool
    run: Run  # the new run (accepted) or the unchanged run (rejected)
    events: tuple[Event, ...] = ()
    children: tuple[Child, ...] = ()
    stop: tuple[str, ...] = ()  # child runs that must stop (fork joined/failed, forced away)
    code: str = ""
    message: str = ""
    advice: str | None = None  # e.g. the approval message with approval_mode "none"
    parked: bool = False  # an approval request was parked

    def error(self, state: dict[str, Any] | None = None) -> StatewrightError:
        return StatewrightError(self.code, self.message, state=state)


# -- small helpers ---------------------------------------------------------------------------

def derive_id(prefix: str, *parts: Any) -> str:
    """A deterministic id: `<prefix>_` + 12 hex of a hash of the parts (unique per run/version)."""
    h = hashlib.sha256("\x1f".join(str(p) for p in parts).encode()).hexdigest()[:12]
    return f"{prefix}_{h}"


def clean_data(data: Any) -> tuple[dict[str, Any] | None, str | None]:
    """Agent data -> (dict without reserved `_` keys, None) or (None, error message)."""
    if data is None:
        return {}, None
    if not isinstance(data, dict):
        return None, f"data must be a JSON object, got {type(data).__name__}"
    return {k: v for k, v in data.items() if isinstance(k, str) and not k.startswith("_")}, None


def _reject(run: Run, code: str, message: str, actor: str, **data: Any) -> Outcome:
    ev = Event("rejected", actor, {"code": code, "message": message, "state": run.state, **data})
    return Outcome(False, run, (ev,), code=code, message=message)


def _state(compiled: CompiledWorkflow, name: str) -> State | None:
    return compiled.states.get(name)


def is_waiting(run: Run) -> bool:
    """The run waits on children (an invoked workflow or an unjoined fork)."""
    return run.child_run is not None or bool(run.fork and not run.fork.get("joined"))


def available_events(compiled: CompiledWorkflow, run: Run) -> list[str]:
    st = _state(compiled, run.state)
    if st is None or st.final:
        return []
    return list(st.on)


def _what_next(compiled: CompiledWorkflow, run: Run) -> str:
    evs = available_events(compiled, run)
    st = _state(compiled, run.state)
    tail = f" Unknown events go to '{st.safe_next}' (safe_next)." if st and st.safe_next else ""
    if not evs:
        return "No events are available from this state." + tail
    return f"Events available from '{run.state}': {', '.join(evs)}." + tail


def _enter(compiled: CompiledWorkflow, run: Run, target: str, now: float) -> Run:
    """Move to `target`: counters reset, transition counted, final/terminal settles status."""
    new = run.with_(state=target, iterations=0, files_edited=(), bytes_read=0, denied=0,
                    stop_reminders=0, transition_count=run.transition_count + 1,
                    pending_approval=None, fork=None, updated_at=now)
    return new.with_(status=_status_after_entry(compiled, new))


def _status_after_entry(compiled: CompiledWorkflow, run: Run) -> str:
    st = _state(compiled, run.state)
    if run.branch_terminal is not None and run.state == run.branch_terminal:
        return COMPLETED
    if st is not None and st.final:
        if run.branch_terminal is not None:
            return FAILED  # a fork branch ended in a final state other than its terminal
        if run.parent_run is not None and run.state == "failed":
            return FAILED  # an invoked workflow reporting failure to its parent
        return COMPLETED
    return PAUSED if run.status == PAUSED else RUNNING


def _settled_events(before: Run, after: Run, actor: str) -> list[Event]:
    if after.status in (COMPLETED, FAILED) and before.status not in (COMPLETED, FAILED):
        return [Event("completed", actor, {"state": after.state, "status": after.status})]
    return []


def _new_run(compiled: CompiledWorkflow, run_id: str, session: str, now: float,
             context: dict[str, Any], state: str | None = None, **extra: Any) -> Run:
    run = Run(run_id=run_id, workflow=compiled.id, session=session,
              state=state or compiled.initial, context=context, created_at=now, updated_at=now,
              **extra)
    st = _state(compiled, run.state)
    if (st is not None and st.final) or run.state == run.branch_terminal:
        run = run.with_(status=_status_after_entry(compiled, run))
    return run


# -- starting --------------------------------------------------------------------------------

def start(compiled: CompiledWorkflow, run_id: str, session: str, now: float,
          input: Any = None, actor: str = HUMAN) -> Outcome:
    """A fresh run at `initial` with the workflow's context plus `input` (reserved keys dropped)."""
    clean, err = clean_data(input)
    placeholder = Run(run_id=run_id, workflow=compiled.id, session=session, state=compiled.initial,
                      created_at=now, updated_at=now)
    if err:
        return Outcome(False, placeholder, code=INVALID_ARGUMENTS, message=f"input: {err}")
    ctx = {**copy.deepcopy(compiled.context), **copy.deepcopy(clean)}
    run = _new_run(compiled, run_id, session, now, ctx)
    events = [Event("started", actor, {"workflow": compiled.id, "state": run.state,
                                       "input": clean, "digest": compiled.digest})]
    events += _settled_events(placeholder, run, SYSTEM)
    return Outcome(True, run, tuple(events))


# -- firing events ---------------------------------------------------------------------------

def fire(compiled: CompiledWorkflow, run: Run, event: str, data: Any = None, *, now: float,
         actor: str = AGENT, expected_version: int | None = None,
         new_id: IdFactory | None = None, resolve: Resolver | None = None) -> Outcome:
    """Fire `event` on `run` (DESIGN section 3). See the module docstring for the contract."""
    if not isinstance(event, str) or not event:
        return _reject(run, INVALID_ARGUMENTS, "event must be a non-empty string", actor)
    if expected_version is not None and expected_version != run.version:
        return _reject(run, STALE_VERSION,
                       f"expected version {expected_version} but the run is at version "
                       f"{run.version}; read the state again (get_state) and retry", actor,
                       event=event, expected_version=expected_version)
    if run.status in (COMPLETED, FAILED):
        return _reject(run, FINAL_STATE,
                       f"run {run.run_id} has ended ({run.status}, in state '{run.state}'); "
                       "start a new run to continue", actor, event=event)
    if run.status != RUNNING:
        return _reject(run, RUN_NOT_RUNNING,
                       f"run {run.run_id} is {run.status}; resume it first", actor, event=event)
    st = _state(compiled, run.state)
    if st is None:
        return _reject(run, INVALID_TRANSITION,
                       f"the run is in state '{run.state}', which its workflow does not define",
                       actor, event=event)
    if st.final:
        return _reject(run, FINAL_STATE, f"state '{run.state}' is final; no events are accepted",
                       actor, event=event)
    if run.pending_approval:
        pa = run.pending_approval
        return _reject(run, PENDING_APPROVAL,
                       f"transition {pa.get('event')} is waiting for human approval "
                       f"({pa.get('approval_id')}); wait until a human runs `statewright approve` "
                       "or `statewright reject`", actor, event=event)
    clean, err = clean_data(data)
    if err:
        return _reject(run, INVALID_ARGUMENTS, err, actor, event=event)
    assert clean is not None

    if event.startswith(BRANCH_DONE_PREFIX):
        return _branch_done(compiled, run, event, clean, now, actor)
    if is_waiting(run):
        what = (f"the invoked workflow (run {run.child_run})" if run.child_run
                else "its fork branches")
        return _reject(run, INVALID_TRANSITION,
                       f"run {run.run_id} is waiting for {what} in state '{run.state}'; "
                       "transition the child run instead", actor, event=event)

    t = st.on.get(event)
    if t is None:
        if st.safe_next:
            return _apply_target(compiled, run, event, st.safe_next, clean, now, actor,
                                 via="safe_next")
        return _reject(run, INVALID_TRANSITION,
                       f"no transition for event '{event}' from state '{run.state}'. "
                       + _what_next(compiled, run), actor, event=event)

    if t.kind == "invoke":
        return _fire_invoke(compiled, run, t, clean, now, actor, new_id, resolve)
    if t.kind == "fork":
        return _fire_fork(compiled, run, t, clean, now, actor, new_id)

    # simple / guarded / branched: first passing entry wins, guards see the PRE-transition context
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
        msg += (". Guards read the context as it was BEFORE this call; set the fields with "
                "the data of an earlier transition.")
        return _reject(run, GUARD_REJECTED, msg, actor, event=event, failed=failures)

    if t.requires_approval:
        message = t.approval_message or f"Approve transition {event} from '{run.state}' to '{chosen.target}'?"
        if compiled.approval_mode == "ui":
            aid = new_id("apr") if new_id else derive_id("apr", run.run_id, run.version, event)
            pending = {"approval_id": aid, "event": event, "data": clean, "message": message,
                       "target": chosen.target, "requested_at": now}
            new = run.with_(pending_approval=pending, version=run.version + 1, updated_at=now)
            ev = Event("approval_requested", actor, dict(pending))
            return Outcome(True, new, (ev,), parked=True,
                           message=f"waiting for human approval ({aid}): {message}")
        out = _apply_target(compiled, run, event, chosen.target, clean, now, actor)
        if out.accepted:
            return Outcome(True, out.run, out.events, advice=message)
        return out
    return _apply_target(compiled, run, event, chosen.target, clean, now, actor)


def _apply_target(compiled: CompiledWorkflow, run: Run, event: str, target: str,
                  data: dict[str, Any], now: float, actor: str, via: str | None = None,
                  extra: dict[str, Any] | None = None) -> Outcome:
    kind = "transitioned"
    new_interrupt, new_return = run.interrupt, run.interrupt_return
    if target == RETURN_TARGET:
        if run.interrupt_return is None:
            return _reject(run, INVALID_TRANSITION,
                           f"'{event}' targets $return but no interrupt is active. "
                           + _what_next(compiled, run), actor, event=event)
        target, kind = run.interrupt_return, "returned"
        new_interrupt = new_return = None
    if target not in compiled.states:
        return _reject(run, INVALID_TRANSITION,
                       f"'{event}' leads to '{target}', which the workflow does not define",
                       actor, event=event)
    new = _enter(compiled, run, target, now).with_(
        context={**run.context, **data}, version=run.version + 1,
        interrupt=new_interrupt, interrupt_return=new_return)
    payload: dict[str, Any] = {"event": event, "from": run.state, "to": target, "data": data}
    if via:
        payload["via"] = via
    if extra:
        payload.update(extra)
    events = [Event(kind, actor, payload)] + _settled_events(run, new, SYSTEM)
    return Outcome(True, new, tuple(events))


def _fire_invoke(compiled: CompiledWorkflow, run: Run, t: Transition, data: dict[str, Any],
                 now: float, actor: str, new_id: IdFactory | None,
                 resolve: Resolver | None) -> Outcome:
    name = t.invoke or ""
    if resolve is None:
        return _reject(run, UNKNOWN_WORKFLOW, f"cannot load invoked workflow '{name}' here",
                       actor, event=t.event)
    try:
        child_c = resolve(name)
    except StatewrightError as exc:
        return _reject(run, exc.code, f"cannot invoke '{name}': {exc.message}", actor,
                       event=t.event)
    cid = new_id("run") if new_id else derive_id("run", run.run_id, run.version, t.event, name)
    ctx = {**copy.deepcopy(child_c.context), **copy.deepcopy(t.input)}
    child = _new_run(child_c, cid, f"{run.session}/{child_c.id}", now, ctx,
                     parent_run=run.run_id)
    invoke = {"event": t.event, "workflow": child_c.id, "on_complete": t.on_complete,
              "on_fail": t.on_fail, "child_run": cid}
    new = run.with_(context={**run.context, **data}, child_run=cid, invoke=invoke,
                    version=run.version + 1, updated_at=now)
    events = (Event("invoked", actor, {**invoke, "data": data}),
              Event("started", SYSTEM, {"workflow": child_c.id, "state": child.state,
                                        "input": t.input, "parent_run": run.run_id}, cid))
    return Outcome(True, new, events, children=(Child(child, child_c),))


def _fire_fork(compiled: CompiledWorkflow, run: Run, t: Transition, data: dict[str, Any],
               now: float, actor: str, new_id: IdFactory | None) -> Outcome:
    f = t.fork
    assert f is not None
    ctx = {**run.context, **data}
    children, branches, events = [], {}, []
    for name, b in f.branches.items():
        cid = new_id("run") if new_id else derive_id("run", run.run_id, run.version, t.event, name)
        child = _new_run(compiled, cid, f"{run.session}/{name}", now, copy.deepcopy(ctx),
                         state=b.initial, parent_run=run.run_id, branch=name,
                         branch_terminal=b.terminal)
        children.append(Child(child, compiled))
        branches[name] = {"run_id": cid, "initial": b.initial, "terminal": b.terminal,
                          "status": RUNNING}
        events.append(Event("started", SYSTEM, {"workflow": compiled.id, "state": b.initial,
                                                "branch": name, "parent_run": run.run_id}, cid))
    fork = {"event": t.event, "join": f.join, "on_complete": f.on_complete,
            "on_fail": f.on_fail, "order": list(f.branches), "branches": branches,
            "joined": False}
    new = run.with_(context=ctx, fork=fork, version=run.version + 1, updated_at=now)
    events.insert(0, Event("forked", actor, {"event": t.event, "join": f.join,
                                             "branches": branches, "data": data}))
    return Outcome(True, new, tuple(events), children=tuple(children))


def _branch_done(compiled: CompiledWorkflow, run: Run, event: str, data: dict[str, Any],
                 now: float, actor: str) -> Outcome:
    name = event[len(BRANCH_DONE_PREFIX):]
    fork = run.fork or {}
    b = (fork.get("branches") or {}).get(name)
    if b is None:
        names = ", ".join(fork.get("branches") or {}) or "none"
        return _reject(run, INVALID_TRANSITION,
                       f"no fork branch named '{name}' in run {run.run_id} (branches: {names})",
                       actor, event=event)
    if b["status"] == COMPLETED:
        new = run.with_(context={**run.context, **data}, version=run.version + 1, updated_at=now)
        return Outcome(True, new, (Event("branch_done", actor, {"branch": name, "event": event,
                                                                  "data": data}),))
    if b["status"] == FAILED:
        return _reject(run, INVALID_TRANSITION, f"branch '{name}' failed; it cannot be done",
                       actor, event=event)
    return _reject(run, INVALID_TRANSITION,
                   f"branch '{name}' has not reached its terminal state '{b['terminal']}' yet; "
                   "finish the branch first", actor, event=event)


# -- children settling -----------------------------------------------------------------------

def child_settled(compiled: CompiledWorkflow, parent: Run, child: Run, now: float) -> Outcome:
    """React to a child run (fork branch or invoked workflow) that completed or failed.

    Not accepted (and no events) when there is nothing to do: the parent no longer waits on
    this child, or the child has not ended."""
    if child.status not in (COMPLETED, FAILED) or parent.status in (COMPLETED, FAILED):
        return Outcome(False, parent)
    fork = parent.fork
    if fork and not fork.get("joined"):
        entry = next(((n, b) for n, b in fork["branches"].items() if b["run_id"] == child.run_id),
                     None)
        if entry is not None and entry[1]["status"] == RUNNING:
            return _settle_branch(compiled, parent, entry[0], child, now)
    if parent.child_run == child.run_id and parent.invoke:
        return _settle_invoke(compiled, parent, child, now)
    return Outcome(False, parent)


def _settle_branch(compiled: CompiledWorkflow, parent: Run, name: str, child: Run,
                   now: float) -> Outcome:
    fork = copy.deepcopy(parent.fork)
    assert fork is not None
    fork["branches"][name].update(status=child.status, state=child.state,
                                  context=copy.deepcopy(child.context))
    events = [Event("branch_done", SYSTEM, {"branch": name, "status": child.status,
                                            "state": child.state, "run_id": child.run_id})]
    branches = fork["branches"]
    running = [b["run_id"] for b in branches.values() if b["status"] == RUNNING]
    done = [n for n in fork["order"] if branches[n]["status"] == COMPLETED]
    failed = [n for n in fork["order"] if branches[n]["status"] == FAILED]
    joined = ((fork["join"] == "any" and done) or
              (fork["join"] != "any" and len(done) == len(branches)))
    if failed and not joined:
        info = {"branch": failed[0], "reason": "branch failed", "fork_event": fork["event"]}
        if fork.get("on_fail"):
            new = _enter(compiled, parent, fork["on_fail"], now).with_(version=parent.version + 1)
            events.append(Event("transitioned", SYSTEM, {"event": fork["event"], "from": parent.state,
                                                         "to": fork["on_fail"], "via": "fork_failed",
                                                         **info}))
        else:
            new = parent.with_(status=FAILED, fork=None, version=parent.version + 1, updated_at=now)
        events += _settled_events(parent, new, SYSTEM)
        return Outcome(True, new, tuple(events), stop=tuple(running))
    if joined:
        ctx = dict(parent.context)
        for n in done:  # branch results flow back into the parent, in branch order
            ctx.update(branches[n].get("context") or {})
        fork["joined"] = True
        new = _enter(compiled, parent.with_(context=ctx), fork["on_complete"], now)
        new = new.with_(fork=fork, version=parent.version + 1)
        events.append(Event("joined", SYSTEM, {"event": fork["event"], "join": fork["join"],
                                               "completed": done, "from": parent.state,
                                               "to": fork["on_complete"]}))
        events += _settled_events(parent, new, SYSTEM)
        return Outcome(True, new, tuple(events), stop=tuple(running))
    new = parent.with_(fork=fork, version=parent.version + 1, updated_at=now)
    return Outcome(True, new, tuple(events))


def _settle_invoke(compiled: CompiledWorkflow, parent: Run, child: Run, now: float) -> Outcome:
    inv = parent.invoke or {}
    failed = child.status == FAILED
    base = parent.with_(child_run=None, invoke=None)
    info = {"event": inv.get("event"), "from": parent.state, "child_run": child.run_id,
            "child_state": child.state, "via": "invoke"}
    if failed and not inv.get("on_fail"):
        new = base.with_(status=FAILED, version=parent.version + 1, updated_at=now)
        events = [Event("completed", SYSTEM, {**info, "status": FAILED,
                                               "reason": "invoked workflow failed"})]
        return Outcome(True, new, tuple(events))
    if failed:
        target = inv["on_fail"]
        ctx = parent.context
    else:
        target = inv.get("on_complete") or parent.state
        ctx = {**parent.context, inv.get("workflow") or child.workflow: copy.deepcopy(child.context)}
    new = _enter(compiled, base.with_(context=ctx), target, now).with_(version=parent.version + 1)
    events = [Event("transitioned", SYSTEM, {**info, "to": target,
                                             "result": "failed" if failed else "completed"})]
    events += _settled_events(parent, new, SYSTEM)
    return Outcome(True, new, tuple(events))


# -- interrupts ------------------------------------------------------------------------------

def can_interrupt(compiled: CompiledWorkflow, run: Run, interrupt: Interrupt) -> bool:
    st = _state(compiled, run.state)
    return (run.status == RUNNING and st is not None and not st.final
            and run.interrupt is None and not is_waiting(run)
            and run.state != interrupt.target and interrupt.target in compiled.states)


def fire_interrupt(compiled: CompiledWorkflow, run: Run, interrupt: Interrupt, *, now: float,
                   path: str = "", actor: str = SYSTEM) -> Outcome:
    """Move the run to the interrupt's handler, remembering where it was (for `$return`).

    Not accepted (no events) when it must not fire: the run is not running, is in a final state,
    already handles an interrupt (no re-entry), waits on children, or is in the handler itself."""
    if not can_interrupt(compiled, run, interrupt):
        return Outcome(False, run)
    new = _enter(compiled, run, interrupt.target, now).with_(
        interrupt=interrupt.name, interrupt_return=run.state, version=run.version + 1)
    events = [Event("interrupted", actor, {"interrupt": interrupt.name, "file": path,
                                           "from": run.state, "to": interrupt.target})]
    if run.pending_approval:
        events.append(Event("rejected", SYSTEM, {"approval_id": run.pending_approval.get("approval_id"),
                                                 "reason": "superseded by an interrupt"}))
    events += _settled_events(run, new, SYSTEM)
    return Outcome(True, new, tuple(events))


# -- human / control operations ----------------------------------------------------------------

def agent_may_pause(compiled: CompiledWorkflow) -> bool:
    """Whether the agent itself may pause runs of this workflow: only when the workflow opts in
    with `meta.allow_agent_pause: true` (or is a `meta.debug` workflow). Pausing stops all
    enforcement, so letting the governed agent pause would let it lift every rule at will."""
    return compiled.debug or compiled.meta.get("allow_agent_pause") is True


def pause(compiled: CompiledWorkflow, run: Run, *, now: float, actor: str = AGENT) -> Outcome:
    """Running -> paused. A human (the CLI) always may; anyone else (the agent) only if
    `agent_may_pause(compiled)`; refused with TOOL_DENIED otherwise."""
    if actor != HUMAN and not agent_may_pause(compiled):
        return _reject(run, TOOL_DENIED, f"statewright_pause is refused: only a human can pause "
                       f"this run (`statewright pause` in a terminal). Pausing stops all "
                       f"enforcement, so workflow '{compiled.id}' must opt in with "
                       "meta.allow_agent_pause: true before the agent may pause it. Keep working "
                       "in this state, or ask the user to pause. " + _what_next(compiled, run),
                       actor)
    if run.status != RUNNING:
        return _reject(run, RUN_NOT_RUNNING, f"run {run.run_id} is {run.status}; only a running "
                       "run can be paused", actor)
    new = run.with_(status=PAUSED, version=run.version + 1, updated_at=now)
    return Outcome(True, new, (Event("paused", actor, {"state": run.state}),))


def resume(compiled: CompiledWorkflow, run: Run, *, now: float, actor: str = AGENT,
           session: str | None = None) -> Outcome:
    """Paused -> running; iteration counters reset, context and transition_count kept."""
    if run.status != PAUSED:
        return _reject(run, RUN_NOT_RUNNING, f"run {run.run_id} is {run.status}, not paused", actor)
    new = run.with_(status=RUNNING, iterations=0, denied=0, stop_reminders=0,
                    session=session or run.session, version=run.version + 1, updated_at=now)
    return Outcome(True, new, (Event("resumed", actor, {"state": run.state,
                                                        "session": new.session}),))


def force_state(compiled: CompiledWorkflow, run: Run, state: str, context: Any = None, *,
                now: float, actor: str = HUMAN) -> Outcome:
    """Jump to any state, merging `context`. The agent may only when `meta.debug` is true."""
    if actor == AGENT and not compiled.debug:
        return _reject(run, DEBUG_DISABLED, f"force_state is disabled: workflow '{compiled.id}' "
                       "does not set meta.debug. " + _what_next(compiled, run), actor, target=state)
    if not isinstance(state, str) or state not in compiled.states:
        return _reject(run, INVALID_ARGUMENTS, f"unknown state '{state}'; states: "
                       + ", ".join(compiled.states), actor, target=state)
    if actor == AGENT:
        clean, err = clean_data(context)
    else:
        clean, err = (context or {}, None) if isinstance(context, (dict, type(None))) else (
            None, f"context must be a JSON object, got {type(context).__name__}")
    if err:
        return _reject(run, INVALID_ARGUMENTS, err, actor, target=state)
    stop = []
    if run.child_run:
        stop.append(run.child_run)
    if run.fork and not run.fork.get("joined"):
        stop += [b["run_id"] for b in run.fork["branches"].values() if b["status"] == RUNNING]
    base = run.with_(status=RUNNING if run.status != PAUSED else PAUSED, context={**run.context, **clean},
                     child_run=None, invoke=None, interrupt=None, interrupt_return=None)
    new = _enter(compiled, base, state, now).with_(version=run.version + 1)
    events = [Event("forced", actor, {"from": run.state, "to": state, "context": clean,
                                      "previous_status": run.status})]
    if run.pending_approval:
        events.append(Event("rejected", SYSTEM, {"approval_id": run.pending_approval.get("approval_id"),
                                                 "reason": "superseded by force-state"}))
    events += _settled_events(base if run.status in (COMPLETED, FAILED) else run, new, SYSTEM)
    return Outcome(True, new, tuple(events), stop=tuple(stop))


def approve(compiled: CompiledWorkflow, run: Run, approval_id: str | None = None, *, now: float,
            actor: str = HUMAN) -> Outcome:
    pa = run.pending_approval
    if not pa or (approval_id and pa.get("approval_id") != approval_id):
        return Outcome(False, run, code=NO_PENDING_APPROVAL,
                       message=f"run {run.run_id} has no pending approval"
                       + (f" with id {approval_id}" if approval_id else ""))
    if run.status != RUNNING:
        return Outcome(False, run, code=RUN_NOT_RUNNING,
                       message=f"run {run.run_id} is {run.status}; resume it before approving")
    cleared = run.with_(pending_approval=None)
    out = _apply_target(compiled, cleared, pa["event"], pa["target"], pa.get("data") or {}, now,
                        actor, via="approval", extra={"approval_id": pa["approval_id"]})
    if not out.accepted:
        return out
    ev = Event("approved", actor, {"approval_id": pa["approval_id"], "event": pa["event"]})
    return Outcome(True, out.run, (ev, *out.events))


def reject_approval(compiled: CompiledWorkflow, run: Run, approval_id: str | None = None,
                    reason: str | None = None, *, now: float, actor: str = HUMAN) -> Outcome:
    pa = run.pending_approval
    if not pa or (approval_id and pa.get("approval_id") != approval_id):
        return Outcome(False, run, code=NO_PENDING_APPROVAL,
                       message=f"run {run.run_id} has no pending approval"
                       + (f" with id {approval_id}" if approval_id else ""))
    new = run.with_(pending_approval=None, version=run.version + 1, updated_at=now)
    ev = Event("rejected_by_human", actor, {"approval_id": pa["approval_id"],
                                            "event": pa["event"], "reason": reason})
    return Outcome(True, new, (ev,))


# -- reading ---------------------------------------------------------------------------------

def transitions(compiled: CompiledWorkflow, run: Run) -> list[dict[str, Any]]:
    """The transitions of the current state, each with `passes`: would firing it now succeed
    (for a branched event: would this entry be the one taken)."""
    st = _state(compiled, run.state)
    if st is None or st.final:
        return []
    blocked = run.status != RUNNING or bool(run.pending_approval) or is_waiting(run)
    out: list[dict[str, Any]] = []
    for event, t in st.on.items():
        if t.kind in ("invoke", "fork"):
            entry: dict[str, Any] = {"event": event, "target": t.on_complete or (
                t.fork.on_complete if t.fork else None), "guards": [], "requires_approval": False,
                "passes": not blocked}
            if t.kind == "invoke":
                entry["invoke"] = t.invoke
            else:
                entry["fork"] = list(t.fork.branches) if t.fork else []
            out.append(entry)
            continue
        taken = False
        for b in t.branches:
            ok, _ = _guards.all_pass(compiled, b.guards, run.context)
            passes = ok and not taken and not blocked
            if b.target == RETURN_TARGET and run.interrupt_return is None:
                passes = False
            taken = taken or ok
            out.append({"event": event, "target": b.target, "guards": list(b.guards),
                        "requires_approval": t.requires_approval, "passes": passes})
    return out
