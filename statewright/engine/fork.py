"""Fork / join (DESIGN.md section 3): one child run per branch; the parent waits until the
join (`all` / `any`) fires `on_complete`, or a failed branch fires `on_fail` (or fails it).

Also the fork rule the runtime follows when it fires an event on a chain of runs: which run a
`BRANCH_DONE:<branch>` event is for (`event_target`). Which branch the parent works now is
`Fork.working_branch` (on the record: the hook reads it on every call).
"""

from __future__ import annotations

import copy
from typing import Any

from ..definition.compiled import BRANCH_DONE_PREFIX, CompiledWorkflow, Transition
from ..errors import INVALID_ARGUMENTS, INVALID_TRANSITION, NO_ACTIVE_RUN, TOOL_DENIED
from .moves import enter, new_run, settled_events
from .outcome import SYSTEM, Child, Event, IdFactory, Outcome, fresh_id, reject, strip_reserved
from .run import COMPLETED, FAILED, RUNNING, Fork, ForkBranch, Run


def branch_done_owner(runs: list[Run], event: Any) -> int | None:
    """For `BRANCH_DONE:<branch>`: the index in `runs` (a chain, outermost first) of the
    innermost run whose fork has that branch; None for any other event."""
    if not isinstance(event, str) or not event.startswith(BRANCH_DONE_PREFIX):
        return None
    name = event[len(BRANCH_DONE_PREFIX):]
    for i in range(len(runs) - 1, -1, -1):
        fork = runs[i].fork
        if fork is not None and name in fork.branches:
            return i
    return None


def event_target(runs: list[Run], event: Any,
                 expected_version: int | None) -> tuple[int, int | None]:
    """Which run of the chain `runs` (outermost first; the last one is the effective run) an
    event is fired on, and the `expected_version` to check there.

    Events go to the effective run, except `BRANCH_DONE:<branch>`, which goes to the fork's
    owner. `expected_version` is what the caller saw of the effective run: when it holds, the
    owner is not checked again; when it is stale, the event goes to the effective run so that
    the engine rejects it on the run the caller saw."""
    last = len(runs) - 1
    owner = branch_done_owner(runs, event)
    if owner is None or owner == last:
        return last, expected_version
    if expected_version is None:
        return owner, None
    if expected_version != runs[last].version:
        return last, expected_version
    return owner, None


def fire_fork(compiled: CompiledWorkflow, run: Run, t: Transition, data: dict[str, Any],
              now: float, actor: str, new_id: IdFactory | None) -> Outcome:
    f = t.fork
    assert f is not None
    ctx = {**run.context, **data}
    children, branches, events = [], {}, []
    for name, b in f.branches.items():
        cid = fresh_id(new_id, "run", run.run_id, run.version, t.event, name)
        # evidence is each run's own: a branch starts without the parent's `_observed`
        child = new_run(compiled, cid, f"{run.session}/{name}", now,
                        strip_reserved(copy.deepcopy(ctx)),
                        state=b.initial, parent_run=run.run_id, branch=name,
                        branch_terminal=b.terminal)
        children.append(Child(child, compiled))
        branches[name] = ForkBranch(cid, b.initial, b.terminal, RUNNING)
        events.append(Event("started", SYSTEM, {"workflow": compiled.id, "state": b.initial,
                                                "branch": name, "parent_run": run.run_id}, cid))
    fork = Fork(t.event, f.join, f.on_complete, f.on_fail, tuple(f.branches), branches,
                parallel=compiled.meta.get("parallel_forks") is True)
    new = run.with_(context=ctx, fork=fork, version=run.version + 1, updated_at=now)
    events.insert(0, Event("forked", actor, {"event": t.event, "join": f.join,
                                             "branches": fork.to_dict()["branches"],
                                             "data": data}))
    return Outcome(True, new, tuple(events), children=tuple(children))


def branch_done(compiled: CompiledWorkflow, run: Run, event: str, data: dict[str, Any],
                now: float, actor: str) -> Outcome:
    """`BRANCH_DONE:<branch>` on the fork's owner: accepted once that branch completed."""
    name = event[len(BRANCH_DONE_PREFIX):]
    branches = run.fork.branches if run.fork is not None else {}
    b = branches.get(name)
    if b is None:
        names = ", ".join(branches) or "none"
        return reject(run, INVALID_TRANSITION,
                      f"no fork branch named '{name}' in run {run.run_id} (branches: {names})",
                      actor, event=event)
    if b.status == COMPLETED:
        new = run.with_(context={**run.context, **data}, version=run.version + 1, updated_at=now)
        return Outcome(True, new, (Event("branch_done", actor, {"branch": name, "event": event,
                                                                  "data": data}),))
    if b.status == FAILED:
        return reject(run, INVALID_TRANSITION, f"branch '{name}' failed; it cannot be done",
                      actor, event=event)
    return reject(run, INVALID_TRANSITION,
                  f"branch '{name}' has not reached its terminal state '{b.terminal}' yet; "
                  "finish the branch first", actor, event=event)


def branch_of(run: Run, child: Run) -> str | None:
    """The name of the still-running branch of `run`'s waiting fork that `child` works."""
    if run.fork is None or run.fork.joined:
        return None
    for name, b in run.fork.branches.items():
        if b.run_id == child.run_id and b.status == RUNNING:
            return name
    return None


def settle_branch(compiled: CompiledWorkflow, parent: Run, name: str, child: Run,
                  now: float) -> Outcome:
    """Branch `name` ended (as `child`): join, fail the fork, or keep waiting."""
    fork = parent.fork
    assert fork is not None
    ended = fork.branches[name].replace(status=child.status, state=child.state,
                                        context=copy.deepcopy(child.context))
    fork = fork.with_branch(name, ended)
    events = [Event("branch_done", SYSTEM, {"branch": name, "status": child.status,
                                            "state": child.state, "run_id": child.run_id})]
    branches = fork.branches
    running = [b.run_id for b in branches.values() if b.status == RUNNING]
    done = [n for n in fork.order if branches[n].status == COMPLETED]
    failed = [n for n in fork.order if branches[n].status == FAILED]
    joined = (fork.join == "any" and done) or (fork.join != "any" and len(done) == len(branches))
    if failed and not joined:
        info = {"branch": failed[0], "reason": "branch failed", "fork_event": fork.event}
        if fork.on_fail:
            new = enter(compiled, parent, fork.on_fail, now).with_(version=parent.version + 1)
            events.append(Event("transitioned", SYSTEM, {"event": fork.event, "from": parent.state,
                                                         "to": fork.on_fail, "via": "fork_failed",
                                                         **info}))
        else:
            new = parent.with_(status=FAILED, fork=None, version=parent.version + 1, updated_at=now)
        events += settled_events(parent, new, SYSTEM)
        return Outcome(True, new, tuple(events), stop=tuple(running))
    if joined:
        ctx = dict(parent.context)
        for n in done:  # branch results flow back into the parent, in branch order
            ctx.update(strip_reserved(branches[n].context or {}))
        new = enter(compiled, parent.with_(context=ctx), fork.on_complete, now)
        new = new.with_(fork=fork.replace(joined=True), version=parent.version + 1)
        events.append(Event("joined", SYSTEM, {"event": fork.event, "join": fork.join,
                                               "completed": done, "from": parent.state,
                                               "to": fork.on_complete}))
        events += settled_events(parent, new, SYSTEM)
        return Outcome(True, new, tuple(events), stop=tuple(running))
    new = parent.with_(fork=fork, version=parent.version + 1, updated_at=now)
    return Outcome(True, new, tuple(events))


def bind_branch(run: Run, branch: str, holder: str, *, now: float, actor: str) -> Outcome:
    """Bind `holder` (an agent: a session, or a sub-agent's key) to `branch` of the fork `run`
    waits on (DESIGN section 3, parallel forks): from then on that agent's calls obey the
    branch's rules, and the parent no longer works it. A branch another agent holds cannot be
    taken; an agent holding a running branch cannot take another (nor leave it: there is no
    unbinding, the binding ends when the branch does). Binding again to one's own branch is
    accepted and changes nothing."""
    fork = run.fork
    if fork is None or fork.joined:
        return reject(run, NO_ACTIVE_RUN, f"run {run.run_id} (state '{run.state}') is not "
                      "waiting on a fork; there is no branch to bind to", actor, branch=branch)
    b = fork.branches.get(branch)
    if b is None:
        names = ", ".join(fork.branch_names())
        return reject(run, INVALID_ARGUMENTS, f"the fork of run {run.run_id} has no branch "
                      f"'{branch}' (branches: {names})", actor, branch=branch)
    if b.status != RUNNING:
        return reject(run, INVALID_ARGUMENTS, f"branch '{branch}' of run {run.run_id} is "
                      f"{b.status}", actor, branch=branch)
    mine = fork.held_by(holder)
    if mine == branch:
        return Outcome(True, run)
    if b.holder is not None:
        return reject(run, TOOL_DENIED, f"branch '{branch}' is already worked by another agent "
                      "(one agent per branch); take a branch nobody holds (statewright_fork "
                      "without a branch lists them)", actor, branch=branch)
    if mine is not None:
        return reject(run, TOOL_DENIED, f"this agent works branch '{mine}' until it ends; it "
                      f"cannot take branch '{branch}' too", actor, branch=branch)
    fork = fork.with_branch(branch, b.replace(holder=holder))
    new = run.with_(fork=fork, version=run.version + 1, updated_at=now)
    return Outcome(True, new, (Event("bound", actor, {"branch": branch, "holder": holder,
                                                      "run_id": b.run_id}),))
