"""Invoke (DESIGN.md section 3): a child run of another workflow, with `input` merged into its
context. The parent waits; a child ending in a final state named `failed` fires `on_fail`,
any other final state `on_complete` (the child's context copied under `context[<child id>]`).
"""

from __future__ import annotations

import copy
from typing import Any

from ..definition.compiled import CompiledWorkflow, Transition
from ..errors import UNKNOWN_WORKFLOW, StatewrightError
from .moves import enter, new_run, settled_events
from .outcome import (
    SYSTEM,
    Child,
    Event,
    IdFactory,
    Outcome,
    Resolver,
    fresh_id,
    reject,
    strip_reserved,
)
from .run import FAILED, Invoke, Run


def fire_invoke(compiled: CompiledWorkflow, run: Run, t: Transition, data: dict[str, Any],
                now: float, actor: str, new_id: IdFactory | None,
                resolve: Resolver | None) -> Outcome:
    name = t.invoke or ""
    if resolve is None:
        return reject(run, UNKNOWN_WORKFLOW, f"cannot load invoked workflow '{name}' here",
                      actor, event=t.event)
    try:
        child_c = resolve(name)
    except StatewrightError as exc:
        return reject(run, exc.code, f"cannot invoke '{name}': {exc.message}", actor,
                      event=t.event)
    cid = fresh_id(new_id, "run", run.run_id, run.version, t.event, name)
    # evidence is each run's own: none is inherited from the definition or the input
    ctx = strip_reserved({**copy.deepcopy(child_c.context), **copy.deepcopy(t.input)})
    child = new_run(child_c, cid, f"{run.session}/{child_c.id}", now, ctx,
                    parent_run=run.run_id)
    invoke = Invoke(t.event, child_c.id, t.on_complete, t.on_fail, cid)
    new = run.with_(context={**run.context, **data}, child_run=cid, invoke=invoke,
                    version=run.version + 1, updated_at=now)
    events = (Event("invoked", actor, {**invoke.to_dict(), "data": data}),
              Event("started", SYSTEM, {"workflow": child_c.id, "state": child.state,
                                        "input": t.input, "parent_run": run.run_id}, cid))
    return Outcome(True, new, events, children=(Child(child, child_c),))


def settle_invoke(compiled: CompiledWorkflow, parent: Run, child: Run, now: float) -> Outcome:
    """The invoked `child` ended: move the parent on (or fail it, without `on_fail`)."""
    inv = parent.invoke
    assert inv is not None
    failed = child.status == FAILED
    base = parent.with_(child_run=None, invoke=None)
    info = {"event": inv.event, "from": parent.state, "child_run": child.run_id,
            "child_state": child.state, "via": "invoke"}
    if failed and not inv.on_fail:
        new = base.with_(status=FAILED, version=parent.version + 1, updated_at=now)
        events = [Event("completed", SYSTEM, {**info, "status": FAILED,
                                               "reason": "invoked workflow failed"})]
        return Outcome(True, new, tuple(events))
    if failed:
        assert inv.on_fail is not None
        target = inv.on_fail
        ctx = parent.context
    else:
        target = inv.on_complete or parent.state
        ctx = {**parent.context, inv.workflow or child.workflow: copy.deepcopy(child.context)}
    new = enter(compiled, base.with_(context=ctx), target, now).with_(version=parent.version + 1)
    events = [Event("transitioned", SYSTEM, {**info, "to": target,
                                             "result": "failed" if failed else "completed"})]
    events += settled_events(parent, new, SYSTEM)
    return Outcome(True, new, tuple(events))
