"""Fork branches and the agents that work them (DESIGN.md sections 3 and 5), behind
`Runtime.fork`: `statewright_fork(branch=null)`, `statewright fork [BRANCH]`, and
`statewright_load_workflow(name, branch=...)`.

Without a branch: the fork the caller's run waits on (or works a branch of), each branch's
run, state, status and who works it. With a branch: bind the caller -- a session, or a
sub-agent's key (`chain.agent_key`) -- to it (`engine.bind_branch`, which says who may), and
record the binding so that the caller's calls resolve to the branch's run from then on.
"""

from __future__ import annotations

from .. import engine
from ..engine.run import RUNNING, Run
from ..errors import NO_ACTIVE_RUN, TOOL_DENIED, StatewrightError
from ..lean import TYPE_CHECKING
from .answer import answer_for_run
from .chain import chain_of, session_top, top_of
from .persist import apply_outcome

if TYPE_CHECKING:  # pragma: no cover
    from typing import Any

    from ..store import Tx
    from .surface import Runtime


def fork_owners(tx: Tx, session: str, workflow: str | None = None) -> list[Run]:
    """Runs waiting on a fork that `session` may work a branch of, innermost first: the forks
    of its own chain (a branch it is bound to counts from its parent on); when no running run
    governs it, the running runs of `workflow` (or any workflow) with a fork."""
    top = session_top(tx, session)
    out: list[Run] = []
    if top is not None:
        runs = [r for r, _ in chain_of(tx, top)]
        if top.parent_run:  # bound to a branch: its parent's fork too
            parent = tx.get_run(top.parent_run)
            if parent is not None:
                runs.insert(0, parent)
        out = [r for r in reversed(runs) if r.fork is not None and not r.fork.joined]
    if top is None or top.status != RUNNING:
        out += [r for r in tx.running_runs() if r.fork is not None and not r.fork.joined
                and (workflow is None or r.workflow == workflow)]
    if workflow is not None:
        out = [r for r in out if r.workflow == workflow]
    return out


def fork_overview(tx: Tx, session: str) -> dict[str, Any]:
    """The fork the session's run waits on or works in: its branches, their runs' states, and
    who works each (`held_by`: an agent key; None: the parent, in order)."""
    owners = fork_owners(tx, session)
    if not owners:
        raise StatewrightError(NO_ACTIVE_RUN, f"session '{session}' has no run waiting on a fork")
    owner = owners[0]
    f = owner.fork
    assert f is not None
    branches = []
    for name in f.branch_names():
        b = f.branches[name]
        child = tx.get_run(b.run_id)
        branches.append({"branch": name, "run_id": b.run_id, "status": b.status,
                         "state": child.state if child is not None else b.state,
                         "terminal": b.terminal, "held_by": b.holder,
                         "yours": b.holder == session})
    return {"run_id": owner.run_id, "workflow": owner.workflow, "state": owner.state,
            "join": f.join, "on_complete": f.on_complete, "branches": branches,
            "advice": "bind an agent to a branch nobody holds with statewright_fork(branch) "
                      "(`statewright fork BRANCH`); the parent works the branches nobody holds, "
                      "in order"}


def bind(tx: Tx, session: str, branch: str, now: float, actor: str,
         workflow: str | None = None) -> tuple[dict[str, Any], StatewrightError | None]:
    """Bind `session` (an agent key) to `branch`: (the state answer of the branch's run, the
    refusal to raise after COMMIT, so that its history row is kept, or None)."""
    if not isinstance(branch, str) or not branch:
        raise StatewrightError(NO_ACTIVE_RUN, "a branch name is required")
    held = tx.bound_run(session)
    owners = fork_owners(tx, session, workflow)
    owner = next((r for r in owners if r.fork is not None and branch in r.fork.branches), None)
    if owner is None:
        what = f"of '{workflow}' " if workflow else ""
        raise StatewrightError(NO_ACTIVE_RUN, f"no running run {what}has a fork with a branch "
                               f"named '{branch}' that this session can work")
    assert owner.fork is not None
    target = owner.fork.branches[branch].run_id
    if held is not None and held.run_id != target and held.status == RUNNING:
        raise StatewrightError(TOOL_DENIED, f"this agent works branch '{held.branch}' (run "
                               f"{held.run_id}) until it ends; it cannot leave it for "
                               f"'{branch}'", state=answer_for_run(tx, held))
    out = engine.bind_branch(owner, branch, session, now=now, actor=actor)
    apply_outcome(tx, owner, out, now)
    if not out.accepted:
        answer = answer_for_run(tx, held or top_of(tx, owner))
        return answer, out.error(answer)
    tx.bind(session, target, now)
    return answer_for_run(tx, tx.require_run(target)), None


def call_key(tool: str, args: Any) -> str | None:
    """A tool call as text: the bare tool name and its arguments (keys sorted)."""
    from ..lean import dumps

    if not isinstance(args, dict):
        return None
    text = dumps(args, sort_keys=True, separators=(",", ":"), default=str)
    return tool.rsplit("__", 1)[-1] + "\x1f" + text if len(text) <= 8192 else None


def note_agent_call(rt: Runtime, session: str, agent_key: str, tool: str, args: Any) -> None:
    """`Runtime.note_agent_call`: the key of the sub-agent that made this call, left for the
    proxy that answers it."""
    call = call_key(tool, args)
    if call is None or not rt.has_store():
        return
    with rt.store.transaction() as tx:
        tx.put_agent_call(session, call, agent_key, rt.clock())


def agent_for_call(rt: Runtime, session: str, tool: str, args: Any, ttl: float) -> str:
    """`Runtime.agent_for_call`: the sub-agent the hook saw make this exact call (oldest first,
    within `ttl` seconds), else the session."""
    call = call_key(tool, args)
    if call is None or not rt.has_store():
        return session
    with rt.store.transaction() as tx:
        agent = tx.take_agent_call(session, call, rt.clock() - ttl)
    return agent or session
