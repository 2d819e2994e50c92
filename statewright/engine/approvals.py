"""Approvals (DESIGN.md section 3): with `requires_approval` and `meta.approval_mode == "ui"`
a transition parks as the run's `PendingApproval` until a human approves it (it completes) or
rejects it (dropped, reason recorded). Anything else that moves the run on supersedes it.

`approval_changes` states what an outcome means for the approvals a store keeps beside the
runs (the rows `statewright approve` / the web page list): which request was parked, and how
the one that went away was decided.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..definition.compiled import CompiledWorkflow
from ..errors import NO_PENDING_APPROVAL, RUN_NOT_RUNNING
from .moves import apply_target
from .outcome import HUMAN, SYSTEM, Event, IdFactory, Outcome, fresh_id
from .run import FINISHED, RUNNING, PendingApproval, Run

APPROVED, REJECTED, DROPPED = "approved", "rejected", "dropped"


def request_approval(compiled: CompiledWorkflow, run: Run, event: str, target: str,
                     data: dict[str, Any], message: str, now: float, actor: str,
                     new_id: IdFactory | None) -> Outcome:
    """Park the transition `event` -> `target` until a human decides."""
    aid = fresh_id(new_id, "apr", run.run_id, run.version, event)
    pending = PendingApproval(aid, event, data, message, target, now)
    new = run.with_(pending_approval=pending, version=run.version + 1, updated_at=now)
    ev = Event("approval_requested", actor, pending.to_dict())
    return Outcome(True, new, (ev,), parked=True,
                   message=f"waiting for human approval ({aid}): {message}")


def _no_pending(run: Run, approval_id: str | None) -> Outcome | None:
    pa = run.pending_approval
    if pa is None or (approval_id and pa.approval_id != approval_id):
        return Outcome(False, run, code=NO_PENDING_APPROVAL,
                       message=f"run {run.run_id} has no pending approval"
                       + (f" with id {approval_id}" if approval_id else ""))
    return None


def approve(compiled: CompiledWorkflow, run: Run, approval_id: str | None = None, *, now: float,
            actor: str = HUMAN) -> Outcome:
    refused = _no_pending(run, approval_id)
    if refused is not None:
        return refused
    pa = run.pending_approval
    assert pa is not None
    if run.status != RUNNING:
        return Outcome(False, run, code=RUN_NOT_RUNNING,
                       message=f"run {run.run_id} is {run.status}; resume it before approving")
    cleared = run.with_(pending_approval=None)
    out = apply_target(compiled, cleared, pa.event, pa.target or "", pa.data or {}, now,
                       actor, via="approval", extra={"approval_id": pa.approval_id})
    if not out.accepted:
        return out
    ev = Event("approved", actor, {"approval_id": pa.approval_id, "event": pa.event})
    return Outcome(True, out.run, (ev, *out.events))


def reject_approval(compiled: CompiledWorkflow, run: Run, approval_id: str | None = None,
                    reason: str | None = None, *, now: float, actor: str = HUMAN) -> Outcome:
    refused = _no_pending(run, approval_id)
    if refused is not None:
        return refused
    pa = run.pending_approval
    assert pa is not None
    new = run.with_(pending_approval=None, version=run.version + 1, updated_at=now)
    ev = Event("rejected_by_human", actor, {"approval_id": pa.approval_id,
                                            "event": pa.event, "reason": reason})
    return Outcome(True, new, (ev,))


@dataclass(frozen=True, slots=True)
class ApprovalDecision:
    """How a pending approval request ended."""

    approval_id: str
    status: str  # APPROVED / REJECTED / DROPPED
    actor: str
    reason: str | None


def approval_changes(before: Run, out: Outcome) -> tuple[PendingApproval | None,
                                                         ApprovalDecision | None]:
    """(the request `out` parked, how the request of `before` ended) for an accepted outcome.

    A request ends when it is gone from the run or replaced: approved or rejected by the
    outcome's own events, else dropped as superseded (force-state, an interrupt). A run that
    ended with its request still in it (a stopped child) drops it for the reason it ended."""
    after = out.run
    old, new = before.pending_approval, after.pending_approval
    is_new = new is not None and (old is None or old.approval_id != new.approval_id)
    parked = new if is_new else None
    if old is None:
        return parked, None
    actor = next((e.actor for e in out.events), SYSTEM)
    if new is not None and new.approval_id == old.approval_id:
        if after.status in FINISHED and before.status not in FINISHED:
            reason = next((e.data.get("reason") for e in out.events if e.kind == "completed"), None)
            return parked, ApprovalDecision(old.approval_id, DROPPED, actor, reason)
        return parked, None
    kinds = {e.kind for e in out.events}
    if "approved" in kinds:
        return parked, ApprovalDecision(old.approval_id, APPROVED, actor, None)
    if "rejected_by_human" in kinds:
        reason = next((e.data.get("reason") for e in out.events
                       if e.kind == "rejected_by_human"), None)
        return parked, ApprovalDecision(old.approval_id, REJECTED, actor, reason)
    return parked, ApprovalDecision(old.approval_id, DROPPED, actor, "superseded")
