"""What the web page shows (`statewright ui`), each read in one store snapshot: the runs
newest first with the approvals waiting for a human, and one run with its own state answer
(`answer.state_answer`, the same the agent and `statewright status` get), its definition for
the graph and its newest history."""

from __future__ import annotations

from ..engine.run import COMPLETED, FAILED
from ..errors import NO_ACTIVE_RUN, UNKNOWN_RUN, StatewrightError
from ..lean import TYPE_CHECKING
from .answer import ended_answer, run_summary, state_answer
from .chain import session_top

if TYPE_CHECKING:  # pragma: no cover
    from typing import Any

    from ..store import Tx
    from .surface import Runtime

MAX_CHILDREN = 64  # fork branches and invoked runs listed on a run's page (and in its history)


def change_feed(rt: Runtime) -> Any:
    """A shared store's feed of what any machine commits (`store.pg_listen.ChangeFeed`), which
    the long-running front ends (the page, `serve`) wait on instead of polling the store; None
    for a project's SQLite file."""
    if rt.store_url is None:
        return None
    return rt.store.change_feed()  # type: ignore[attr-defined]  # (the PostgreSQL store's)


def runs_overview(tx: Tx, limit: int, offset: int, shared: bool = False) -> dict[str, Any]:
    """`shared` (a store a team shares): every project's runs, each with its project and
    the machine it was started on, and every project's pending approvals."""
    if not shared:
        return {"runs": [run_summary(r) for r in tx.runs_page(limit, offset)],
                "total": tx.count_runs(), "pending": tx.pending_approvals(),
                "mark": tx.last_event_seq()}
    rows = run_rows(tx, tx.runs_page(limit, offset, all_projects=True), True)
    return {"runs": rows, "total": tx.count_runs(all_projects=True),
            "pending": tx.pending_approvals(all_projects=True), "mark": tx.last_event_seq()}


def history(rt: Runtime, run_id: str | None, session: str) -> list[dict[str, Any]]:
    """`Runtime.history`: a run's history and its children's, in order."""
    if not rt.has_store():
        if run_id is not None:
            raise StatewrightError(UNKNOWN_RUN, f"no run with id {run_id}")
        raise StatewrightError(NO_ACTIVE_RUN, f"session '{session}' has no runs")
    with rt.store.read() as tx:
        if run_id is None:
            top = session_top(tx, session) or tx.latest_session_run(session)
            if top is None:
                raise StatewrightError(NO_ACTIVE_RUN, f"session '{session}' has no runs")
            run_id = top.run_id
        if tx.get_run(run_id) is None:
            raise StatewrightError(UNKNOWN_RUN, f"no run with id {run_id}")
        return tx.history(tx.run_and_descendants(run_id))


def run_rows(tx: Tx, runs: list[Any], shared: bool) -> list[dict[str, Any]]:
    """`runs` as `statewright runs` lists them; `shared`: each with its project and the machine
    it was started on."""
    rows = [run_summary(r) for r in runs]
    if shared:
        origins = tx.run_origins([r.run_id for r in runs])
        for d in rows:
            d["project"], d["machine"] = origins.get(d["run_id"], (None, None))
    return rows


def run_view(tx: Tx, run_id: str, history_limit: int) -> dict[str, Any]:
    """One run as its page shows it. Its answer is the run's own (not the child it waits on):
    its state on its own graph, its counters, its transitions with `passes`."""
    run = tx.require_run(run_id)
    compiled = tx.definition_of(run_id)
    if run.status in (COMPLETED, FAILED):
        answer = ended_answer(tx, run)
    else:
        answer = state_answer(tx, [(run, compiled)], run)
    ids = tx.run_and_descendants(run_id, limit=MAX_CHILDREN)
    children = [run_summary(c) for c in (tx.get_run(i) for i in ids[1:]) if c is not None]
    return {"run": run_summary(run), "answer": answer, "definition": compiled,
            "children": children, "history": tx.recent_history(ids, history_limit),
            "mark": tx.last_event_seq()}
