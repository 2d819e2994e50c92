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
from ..errors import NO_ACTIVE_RUN, StatewrightError
from ..lean import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
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
