"""Whose rules apply (DESIGN.md sections 3 and 5), read inside an open store transaction.

A session's *top* run: the fork branch it is bound to (`statewright_fork(branch)`), else its
own newest running-or-paused top-level run, else the `default` session's. The *chain*: the top
run, then the child each run waits on and follows (`Run.followed_child`: an invoked run, else
the fork's working branch), as long as that child is running or paused. The last run of the
chain is the *effective* run, whose rules apply now.

On the hook's path: stdlib, the store and `engine.run` only.
"""

from __future__ import annotations

from ..engine.run import PAUSED, RUNNING, Run
from ..errors import NO_ACTIVE_RUN, NO_PENDING_APPROVAL, RUN_ACTIVE, StatewrightError
from ..lean import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from typing import Any

    from ..definition.compiled import CompiledWorkflow
    from ..store import Tx

    Chain = list[tuple[Run, CompiledWorkflow]]

DEFAULT_SESSION = "default"
#: a sub-agent's own key: `<session>#agent=<agent_id>` (the hook input's `agent_id`). Until it
#: binds itself to a fork branch, a sub-agent obeys its session's rules.
AGENT_MARK = "#agent="
MAX_DEPTH = 32  # nesting of invoke/fork children followed when resolving the effective run


def agent_key(session: str, agent_id: str | None) -> str:
    """The key a call is resolved by: the session's, or inside a sub-agent its own."""
    return f"{session}{AGENT_MARK}{agent_id}" if agent_id else session


def session_top(tx: Tx, session: str) -> Run | None:
    """The session's top run (running or paused), falling back to the `default` session's. A
    sub-agent's key (`AGENT_MARK`): the fork branch it is bound to, else its session's."""
    if AGENT_MARK in session:
        bound = tx.bound_run(session)
        if bound is not None:
            return bound
        session = session.split(AGENT_MARK, 1)[0]
    return tx.resolve_session_run(session, DEFAULT_SESSION if session != DEFAULT_SESSION else None)


def chain_of(tx: Tx, top: Run) -> Chain:
    """`top` and the children whose rules apply through it, each with its definition."""
    chain = [(top, tx.definition_of(top.run_id))]
    cur = top
    for _ in range(MAX_DEPTH):
        nxt_id = cur.followed_child()
        if not nxt_id:
            break
        nxt = tx.get_run(nxt_id)
        if nxt is None or nxt.status not in (RUNNING, PAUSED):
            break
        chain.append((nxt, tx.definition_of(nxt.run_id)))
        cur = nxt
    return chain


def active_chain(tx: Tx, session: str) -> tuple[Run, Chain]:
    """(top run, chain) of the session; NO_ACTIVE_RUN (saying what its last run was) if none."""
    top = session_top(tx, session)
    if top is None:
        last = tx.latest_session_run(session)
        hint = (f" (the last run, {last.run_id} of '{last.workflow}', is {last.status} in "
                f"state '{last.state}')" if last else "")
        raise StatewrightError(NO_ACTIVE_RUN, f"no active run for session '{session}'{hint}; "
                               "start one with `statewright start NAME` or "
                               "statewright_load_workflow")
    return top, chain_of(tx, top)


def effective_in(tx: Tx, session: str) -> tuple[Run, CompiledWorkflow] | None:
    """The run whose rules apply now, with its definition; None when nothing is running."""
    top = session_top(tx, session)
    if top is None or top.status != RUNNING:
        return None
    return chain_of(tx, top)[-1]


def top_of(tx: Tx, run: Run) -> Run:
    """The outermost ancestor of `run` (itself when it has no parent)."""
    cur = run
    for _ in range(MAX_DEPTH):
        if not cur.parent_run:
            break
        p = tx.get_run(cur.parent_run)
        if p is None:
            break
        cur = p
    return cur


def run_in_the_way(session: str, top: Run, state: dict[str, Any]) -> StatewrightError:
    """Why a run cannot start for `session`, naming the run in the way and the exact commands
    that get past it. A session without a run of its own obeys the default session's run, and
    cannot start its own while that one runs (else a second workflow would lift its rules)."""
    opt = "" if top.session == DEFAULT_SESSION else f" --session {top.session}"
    what = f"run {top.run_id} of workflow '{top.workflow}' (state '{top.state}')"
    if top.session == session:
        head = f"session '{session}' already has running {what}"
        other = (", or start the new run for another session: `statewright start NAME "
                 "--session OTHER`" if session != DEFAULT_SESSION else "")
    else:
        head = (f"session '{session}' has no run of its own and obeys the '{top.session}' "
                f"session's running {what}")
        other = ""
    return StatewrightError(RUN_ACTIVE, f"{head}; to start another, close it for good with "
                            f"`statewright end{opt}` or set it aside with `statewright "
                            f"pause{opt}` (resume it later){other}", state=state)


def no_runs_yet(code: str, session: str, root: str) -> StatewrightError:
    """The refusal of a command that needs a run, in a project without a store."""
    what = ("no transition is waiting for approval" if code == NO_PENDING_APPROVAL
            else f"no active run for session '{session}'")
    return StatewrightError(code, f"{what}: no runs yet in this project ({root}); start one "
                            "with `statewright start NAME` or statewright_load_workflow")
