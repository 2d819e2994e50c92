"""CLI commands that drive runs — start, status, transition, pause, resume, end, force-state,
approve, reject (`runs` and `history` are in listing.py). Every command is a thin wrapper over
`statewright.runtime.Runtime`; the CLI acts as the human (`actor="human"`), which is what lets
it approve, reject and force a state. `status` and `transition` run the bodies of the fast
path (fast.py), which also answers them without typer."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import typer

from . import fast
from .app import (
    ProjectOpt,
    SessionOpt,
    StateJsonOpt,
    app,
    object_option,
)
from .base import HUMAN, answer, render_state

if TYPE_CHECKING:
    from ..runtime import Runtime


def _runtime(project: str | None) -> Runtime:
    from ..runtime import Runtime

    return Runtime.open(project)


def _show(state: dict[str, Any], as_json: bool, title: str) -> None:
    answer(state, as_json, lambda: render_state(state, title))


@app.command("start")
def start_cmd(
    name: str = typer.Argument(..., help="Workflow name (its id)."),
    input: str | None = typer.Option(None, "--input", "-i",
                                     help="JSON object merged into the initial context."),
    as_json: bool = StateJsonOpt,
    session: str | None = SessionOpt,
    project: str | None = ProjectOpt,
) -> None:
    """Start a run of workflow NAME for the session."""
    data = object_option(input, "--input")
    state = _runtime(project).start(name, session, input=data, actor=HUMAN)
    _show(state, as_json, f"started {state['workflow']}")


@app.command("status")
def status_cmd(
    as_json: bool = StateJsonOpt,
    session: str | None = SessionOpt,
    project: str | None = ProjectOpt,
) -> None:
    """Show the session's current run: state, rules, counters and transitions (and where the
    web page is, while `statewright ui` runs)."""
    fast.status(as_json, session, project)


@app.command("transition")
def transition_cmd(
    event: str = typer.Argument(..., help="Event name, e.g. READY or BRANCH_DONE:lint."),
    data: str | None = typer.Option(
        None, "--data", "-d", help="JSON object merged into the context after the transition."),
    expected_version: int | None = typer.Option(
        None, "--expected-version", help="Refuse if the run's version differs (STALE_VERSION)."),
    as_json: bool = StateJsonOpt,
    session: str | None = SessionOpt,
    project: str | None = ProjectOpt,
) -> None:
    """Fire EVENT on the session's run (exit status 3: it was parked for a human's approval)."""
    code = fast.transition(event, data, expected_version, as_json, session, project)
    if code:
        raise typer.Exit(code)


@app.command("pause")
def pause_cmd(
    as_json: bool = StateJsonOpt,
    session: str | None = SessionOpt,
    project: str | None = ProjectOpt,
) -> None:
    """Pause the session's run (enforcement stops until it is resumed)."""
    _show(_runtime(project).pause(session, actor=HUMAN), as_json, "paused")


@app.command("end")
def end_cmd(
    reason: str | None = typer.Option(None, "--reason", "-r", help="Why (recorded in history)."),
    as_json: bool = StateJsonOpt,
    session: str | None = SessionOpt,
    project: str | None = ProjectOpt,
) -> None:
    """End the session's run for good (status `ended`; a new run may then start)."""
    _show(_runtime(project).end(session, reason, actor=HUMAN), as_json, "ended")


@app.command("resume")
def resume_cmd(
    name: str | None = typer.Argument(
        None, help="Workflow name: its newest paused run is resumed (or a fresh one started). "
                   "Without it: the session's own paused run."),
    as_json: bool = StateJsonOpt,
    session: str | None = SessionOpt,
    project: str | None = ProjectOpt,
) -> None:
    """Resume a paused run in this session: the newest of NAME (or a fresh one), else the
    session's own."""
    _show(_runtime(project).resume(name, session, actor=HUMAN), as_json, "resumed")


@app.command("fork")
def fork_cmd(
    branch: str | None = typer.Argument(
        None, help="Branch to bind this session (or sub-agent) to; omit to list the branches."),
    as_json: bool = StateJsonOpt,
    session: str | None = SessionOpt,
    project: str | None = ProjectOpt,
) -> None:
    """List the branches of the run's fork and who works each, or bind to BRANCH: from then on
    the calls of this session (in Claude Code: of this sub-agent) obey the branch's rules."""
    rt = _runtime(project)
    if branch is None:
        overview = rt.fork(session)
        answer(overview, as_json, lambda: render_fork(overview))
        return
    _show(rt.fork(session, branch, actor=HUMAN), as_json, f"bound to branch {branch}")


def render_fork(overview: dict[str, Any]) -> None:
    from rich.table import Table

    from .app import console

    t = Table(title=f"fork of run {overview['run_id']} ({overview['workflow']}, state "
                    f"{overview['state']}, join {overview['join']})")
    for col in ("branch", "run", "state", "status", "terminal", "worked by"):
        t.add_column(col)
    for b in overview["branches"]:
        t.add_row(b["branch"], b["run_id"], b["state"] or "", b["status"], b["terminal"],
                  b["held_by"] or "the parent (in order)")
    console.print(t)


@app.command("force-state")
def force_state_cmd(
    state: str = typer.Argument(..., help="State to jump to."),
    context: str | None = typer.Option(
        None, "--context", "-c", help="JSON object merged (not replaced) into the context."),
    as_json: bool = StateJsonOpt,
    session: str | None = SessionOpt,
    project: str | None = ProjectOpt,
) -> None:
    """Jump the session's run to STATE, bypassing guards (recorded as a human action)."""
    ctx = object_option(context, "--context")
    _show(_runtime(project).force_state(session, state, ctx, actor=HUMAN), as_json,
          f"forced to {state}")


ApprovalIdArg = typer.Argument(None, help="Approval id (default: the session's pending one).")


TokenOpt = typer.Option(
    None, "--token", help="Your approver's token (default: $STATEWRIGHT_TOKEN); needed on a "
                          "shared store, it names you in history.", show_default=False)


@app.command("approve")
def approve_cmd(
    approval_id: str | None = ApprovalIdArg,
    token: str | None = TokenOpt,
    as_json: bool = StateJsonOpt,
    session: str | None = SessionOpt,
    project: str | None = ProjectOpt,
) -> None:
    """Approve a parked transition; it completes now."""
    from ..runtime.people import approver

    rt = _runtime(project)
    _show(rt.approve(session, approval_id, actor=HUMAN, approver=approver(rt, token)), as_json,
          "approved")


@app.command("reject")
def reject_cmd(
    approval_id: str | None = ApprovalIdArg,
    reason: str | None = typer.Option(None, "--reason", "-r", help="Why (recorded in history)."),
    token: str | None = TokenOpt,
    as_json: bool = StateJsonOpt,
    session: str | None = SessionOpt,
    project: str | None = ProjectOpt,
) -> None:
    """Reject a parked transition; the run stays where it is."""
    from ..runtime.people import approver

    rt = _runtime(project)
    _show(rt.reject(session, approval_id, reason, actor=HUMAN, approver=approver(rt, token)),
          as_json, "rejected")
