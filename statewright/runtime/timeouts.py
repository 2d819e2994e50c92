"""State timeouts (DESIGN section 2): statewright fires a state's `on_timeout` itself once the
run has been `timeout_s` in it, from whichever of its processes runs: the resident hook servers
and `statewright serve` while they wait (`fire_due`, about once a second: one read when nothing
changed since the last look and no deadline passed; no read at all when the shared store's
notices said nothing changed), the next hook call (`fire_in`, inside the transaction that
decides it: `messages.timed_out`)."""

from __future__ import annotations

from .. import engine
from ..engine.run import RUNNING
from ..lean import TYPE_CHECKING
from .persist import apply_outcome, new_id

if TYPE_CHECKING:  # pragma: no cover
    from typing import Any

    from ..store import Tx
    from .surface import Runtime


def fire_due(rt: Runtime, limit: int = 500, quiet: bool = False) -> list[dict[str, Any]]:
    """Fire `on_timeout` on every running run (any session, the newest `limit`) that has been
    `timeout_s` in its state; `{run_id, state, event, to, timeout_s}` for each one fired.
    `quiet`: the store's notices say no run moved since the last look (every change a
    deadline depends on, a run's state, status or start, is announced), so nothing is read
    before the earliest deadline that look saw."""
    if not rt.has_store():
        return []
    now = rt.clock()
    seen = rt._timeouts_seen, getattr(rt, "_next_due", None)
    if quiet and seen[0] is not None and (seen[1] is None or now < seen[1]):
        return []
    with rt.store.read() as tx:
        mark = tx.last_event_seq()
        if mark == seen[0] and (seen[1] is None or now < seen[1]):
            return []
        due: list[str] = []
        next_due: float | None = None
        for r in tx.list_runs(None, limit):
            if r.status != RUNNING or r.entered_at is None:
                continue
            st = tx.definition_of(r.run_id).states.get(r.state)
            if st is None or st.timeout_s is None:
                continue
            at = r.entered_at + st.timeout_s
            if at <= now:
                due.append(r.run_id)
            else:
                next_due = at if next_due is None else min(next_due, at)
        rt._timeouts_seen = mark
        rt._next_due = next_due  # type: ignore[attr-defined]
    fired = []
    for rid in due:
        with rt.store.transaction() as tx:
            got = fire_in(rt, tx, rid, rt.clock())
        if got is not None:
            fired.append(got)
    return fired


def next_due(rt: Runtime) -> float | None:
    """The earliest deadline the last look saw (on `rt.clock`), if any."""
    return getattr(rt, "_next_due", None)


def fire_in(rt: Runtime, tx: Tx, run_id: str, now: float) -> dict[str, Any] | None:
    """Inside a write transaction: fire run `run_id`'s timeout when it is due; what fired
    (`{run_id, state, event, to, timeout_s}`), else None."""
    run = tx.get_run(run_id)
    if run is None or run.entered_at is None:
        return None
    c = tx.definition_of(run_id)
    out = engine.fire_timeout(c, run, now=now, new_id=new_id, resolve=rt.load_definition)
    if out is None or not out.accepted:
        return None
    apply_outcome(tx, run, out, now)
    st = c.states[run.state]
    return {"run_id": run_id, "state": run.state, "event": st.on_timeout, "to": out.run.state,
            "timeout_s": st.timeout_s}
