"""The state answer (DESIGN.md section 5): what `statewright_get_state`, `statewright status
--json` and every state-changing operation answer about a session's run."""

from __future__ import annotations

from .. import engine
from ..definition.compiled import BRANCH_DONE_PREFIX
from ..engine.run import COMPLETED, PAUSED, RUNNING, Run
from ..lean import TYPE_CHECKING
from .chain import chain_of

if TYPE_CHECKING:  # pragma: no cover
    from typing import Any

    from ..definition.compiled import CompiledWorkflow
    from ..store import Tx


def state_answer(tx: Tx, chain: list[tuple[Run, CompiledWorkflow]],
                 top: Run | None = None) -> dict[str, Any]:
    """The answer for the effective run of `chain` (whose top run is `top`)."""
    run, compiled = chain[-1]
    top = top or chain[0][0]
    st = compiled.states.get(run.state)
    status = PAUSED if top.status == PAUSED else run.status
    transitions = engine.transitions(compiled, run)
    if status != RUNNING:
        transitions = [{**t, "passes": False} for t in transitions]
    fork_info = _fork_info(tx, chain, run, status, transitions)
    return {
        "run_id": run.run_id,
        "workflow": compiled.id,
        "state": run.state,
        "status": status,
        "version": run.version,
        "is_final": bool(st and st.final),
        "instructions": st.instructions if st else None,
        "allowed_tools": None if not st or st.allowed_tools is None else list(st.allowed_tools),
        "allowed_commands": (None if not st or st.allowed_commands is None
                             else list(st.allowed_commands)),
        "blocked_env": list(st.blocked_env) if st else [],
        "counters": {
            "iterations": run.iterations,
            "max_iterations": st.max_iterations if st else None,
            "files_edited": list(run.files_edited),
            "max_files_per_state": st.max_files_per_state if st else None,
            "bytes": run.bytes_read,
            "context_budget_bytes": st.context_budget_bytes if st else None,
            "max_edit_lines": st.max_edit_lines if st else None,  # (per edit: no counter)
        },
        "transitions": transitions,
        "context": run.context,
        "pending_approval": (run.pending_approval.to_dict()
                             if run.pending_approval is not None else None),
        "interrupt": ({"name": run.interrupt, "return_to": run.interrupt_return}
                      if run.interrupt else None),
        "fork": fork_info,
        "timeout": _timeout_info(st, run, status),
    }


def _timeout_info(st: Any, run: Run, status: str) -> dict[str, Any] | None:
    """The state's timeout: when statewright fires `on_timeout` (epoch seconds), if it does."""
    if st is None or st.timeout_s is None or run.entered_at is None or status != RUNNING:
        return None
    return {"timeout_s": st.timeout_s, "on_timeout": st.on_timeout,
            "deadline": run.entered_at + st.timeout_s}


def _fork_info(tx: Tx, chain: list[tuple[Run, CompiledWorkflow]], run: Run, status: str,
               transitions: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The `fork` part of the answer: the fork the effective run works in (as a branch) or
    waits on. Appends its `BRANCH_DONE:<branch>` events to `transitions`."""
    owner = next((r for r, _ in reversed(chain) if r.fork is not None), None)
    if run.branch is not None and run.parent_run:
        parent = (next((r for r, _ in chain if r.run_id == run.parent_run), None)
                  or tx.get_run(run.parent_run))
        if parent is not None and parent.fork is not None:
            owner = parent
    if owner is None or owner.fork is None:
        return None
    f = owner.fork
    for n, b in f.branches.items():
        transitions.append({"event": f"{BRANCH_DONE_PREFIX}{n}", "target": None,
                            "guards": [], "requires_approval": False,
                            "passes": b.status == COMPLETED and status == RUNNING})
    return {
        "parent_run": owner.run_id,
        "branch": run.branch if run.parent_run == owner.run_id else None,
        "join": f.join, "joined": f.joined, "event": f.event, "parallel": f.parallel,
        "on_complete": f.on_complete, "on_fail": f.on_fail,
        "branches": {n: {"run_id": b.run_id, "status": b.status, "initial": b.initial,
                         "terminal": b.terminal, "held_by": b.holder}
                     for n, b in f.branches.items()},
    }


def answer_for_run(tx: Tx, run: Run) -> dict[str, Any]:
    """The answer for `run` itself, following its children (after it may have ended)."""
    return state_answer(tx, chain_of(tx, run), run)


def ended_answer(tx: Tx, run: Run) -> dict[str, Any]:
    """The answer for a run that has completed or failed: nothing is enforced any more, no
    event moves it, and `advice` says how to go on."""
    answer = state_answer(tx, [(run, tx.definition_of(run.run_id))], run)
    answer["status"] = run.status
    answer["is_final"] = True
    answer["transitions"] = []
    answer["advice"] = (f"run {run.run_id} of workflow '{run.workflow}' has {run.status} in state "
                        f"'{run.state}'; nothing is enforced any more. Start a new run with "
                        "`statewright start NAME` or statewright_load_workflow.")
    return answer


def run_summary(r: Run) -> dict[str, Any]:
    """One row of `statewright runs`."""
    return {"run_id": r.run_id, "workflow": r.workflow, "session": r.session,
            "state": r.state, "status": r.status, "version": r.version,
            "transition_count": r.transition_count, "parent_run": r.parent_run,
            "branch": r.branch,
            "pending_approval": (r.pending_approval.approval_id
                                 if r.pending_approval is not None else None),
            "created_at": r.created_at, "updated_at": r.updated_at}


def definition_status(tx: Tx, run_id: str) -> dict[str, Any] | None:
    """Where the run's definition came from, and whether that file changed since the run
    started (then with advice: the run keeps the definition it started with)."""
    status = tx.definition_status(run_id)
    if status is not None and status["changed_since_start"]:
        status["advice"] = (f"{status['source_path']} changed since this run started: the run "
                            "keeps the definition it started with; new runs use the file as it "
                            "is now")
    return status


def runs_on_older_file(tx: Tx, workflow: str) -> list[str]:
    """Running or paused runs of `workflow` whose workflow file changed since they started
    (each keeps the definition it started with: `show` prints the file, not their rules)."""
    out = []
    for r in tx.list_runs(None):
        if r.workflow == workflow and r.status in (RUNNING, PAUSED):
            status = tx.definition_status(r.run_id)
            if status is not None and status["changed_since_start"]:
                out.append(r.run_id)
    return out
