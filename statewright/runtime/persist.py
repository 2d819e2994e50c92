"""Persisting an engine `Outcome` in an open store transaction: the run, its history rows, the
child runs it created, the approval requests it parked or ended, the child runs it stops, and
the parents that a child which just ended moves on (`engine.child_settled`)."""

from __future__ import annotations

import os

from .. import engine
from ..engine.run import FINISHED, Run
from ..lean import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from ..definition.compiled import CompiledWorkflow
    from ..store import Tx


def apply_outcome(tx: Tx, before: Run | None, out: engine.Outcome, now: float, *,
                  stopping: bool = False) -> None:
    """Write `out` (computed from `before`, None for a new run). `stopping`: `out` stops its
    run (`engine.stop`); its parent is not moved on by that."""
    run = out.run
    if out.accepted and before is not None and run is not before:
        tx.save_run(run, expected_version=before.version, before=before)
    versions = {run.run_id: (run.version, run.state)}
    for child in out.children:
        tx.insert_run(child.run, child.compiled)
        versions[child.run.run_id] = (child.run.version, child.run.state)
    for ev in out.events:
        rid = ev.run_id or run.run_id
        v, st = versions.get(rid, (run.version, run.state))
        tx.append_event(rid, ev.kind, ev.actor, ev.data, now, v, st)
    if out.accepted and before is not None:
        _record_approvals(tx, before, out, now)
    why = "stopped" if stopping else "moved on"
    for rid in out.stop:
        stop_run(tx, rid, now, f"stopped: parent run {run.run_id} {why}")
    if not out.accepted or stopping:
        return
    ended = [c.run for c in out.children if c.run.status in FINISHED]
    if run.parent_run and run.status in FINISHED and (
            before is None or before.status not in FINISHED):
        ended.append(run)
    for child in ended:
        _settle_parent(tx, child, now)


def stop_run(tx: Tx, run_id: str, now: float, reason: str) -> None:
    """Stop run `run_id` and the children it waits on, if it is still running or paused."""
    run = tx.get_run(run_id)
    if run is None:
        return
    out = engine.stop(run, now=now, reason=reason)
    if out.accepted:
        apply_outcome(tx, run, out, now, stopping=True)


def _settle_parent(tx: Tx, child: Run, now: float) -> None:
    if not child.parent_run:
        return
    parent = tx.get_run(child.parent_run)
    if parent is None:
        return
    out = engine.child_settled(tx.definition_of(parent.run_id), parent, child, now)
    if out.accepted:
        apply_outcome(tx, parent, out, now)


def _record_approvals(tx: Tx, before: Run, out: engine.Outcome, now: float) -> None:
    parked, decided = engine.approval_changes(before, out)
    if parked is not None:
        tx.put_approval(out.run.run_id, parked)
    if decided is not None:
        tx.decide_approval(decided.approval_id, decided.status, now, decided.actor,
                           decided.reason)


def new_id(prefix: str) -> str:
    """A new run's or approval's id: `PREFIX_` and 12 random hex digits."""
    # os.urandom is what `secrets.token_hex` uses; `secrets` itself imports hmac, random, ...
    return f"{prefix}_{os.urandom(6).hex()}"


def start_run(tx: Tx, out: engine.Outcome, compiled: CompiledWorkflow, now: float) -> None:
    """Write the new run of an accepted `engine.start` outcome."""
    tx.insert_run(out.run, compiled)
    apply_outcome(tx, None, out, now)
