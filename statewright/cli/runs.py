"""CLI commands: runs — start, status, transition, pause, resume, force-state, approve, reject,
runs, history. Every command is a thin wrapper over `statewright.runtime.Runtime`; the CLI acts
as the human (`actor="human"`), which is what lets it approve, reject and force a state."""

from __future__ import annotations

import datetime as _dt
import json
from typing import TYPE_CHECKING, Any

import typer
from rich.markup import escape
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from ..runtime.state_text import panel
from .app import (
    ProjectOpt,
    SessionOpt,
    StateJsonOpt,
    answer,
    app,
    console,
    json_option,
    object_option,
)

if TYPE_CHECKING:
    from ..runtime import Runtime

HUMAN = "human"


def _runtime(project: str | None) -> Runtime:
    from ..runtime import Runtime

    return Runtime.open(project)


def _fmt_time(t: Any) -> str:
    try:
        return _dt.datetime.fromtimestamp(float(t)).strftime("%Y-%m-%d %H:%M:%S")
    except (TypeError, ValueError, OverflowError, OSError):
        return "-"


def render_state(state: dict[str, Any], title: str) -> None:
    """The rich panel of `statewright status` (also printed after state-changing commands)."""
    lines = Text()
    for text, style in panel(state):
        lines.append(text, style=style)
    console.print(Panel(lines, title=escape(title), expand=False))


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
    rt = _runtime(project)
    state = rt.get_state(session)
    _show(state, as_json, "statewright status")
    url = None if as_json else rt.page_url()
    if url:
        console.print(f"web page: {url}/runs/{state['run_id']}", highlight=False,
                      soft_wrap=True)


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
    """Fire EVENT on the session's run."""
    payload = object_option(data, "--data")
    state = _runtime(project).transition(session, event, payload,
                                         expected_version=expected_version, actor=HUMAN)
    _show(state, as_json, f"{event} -> {state['state']}")


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


@app.command("approve")
def approve_cmd(
    approval_id: str | None = ApprovalIdArg,
    as_json: bool = StateJsonOpt,
    session: str | None = SessionOpt,
    project: str | None = ProjectOpt,
) -> None:
    """Approve a parked transition; it completes now."""
    _show(_runtime(project).approve(session, approval_id, actor=HUMAN), as_json, "approved")


@app.command("reject")
def reject_cmd(
    approval_id: str | None = ApprovalIdArg,
    reason: str | None = typer.Option(None, "--reason", "-r", help="Why (recorded in history)."),
    as_json: bool = StateJsonOpt,
    session: str | None = SessionOpt,
    project: str | None = ProjectOpt,
) -> None:
    """Reject a parked transition; the run stays where it is."""
    _show(_runtime(project).reject(session, approval_id, reason, actor=HUMAN), as_json,
          "rejected")


@app.command("runs")
def runs_cmd(
    as_json: bool = json_option(),
    all_sessions: bool = typer.Option(False, "--all", "-a",
                                      help="Every session, not just this one."),
    session: str | None = SessionOpt,
    project: str | None = ProjectOpt,
) -> None:
    """List runs (of the session and its fork/invoke children; --all for every session)."""
    rt = _runtime(project)
    scope = None if (all_sessions or session is None) else rt.resolve_session(session)
    runs = rt.list_runs(scope)
    answer(runs, as_json, lambda: render_runs(runs))


def render_runs(runs: list[dict[str, Any]]) -> None:
    if not runs:
        console.print("no runs yet — start one with `statewright start NAME`")
        return
    t = Table(title="runs")
    for col in ("run", "workflow", "session", "state", "status", "version", "started", "pending"):
        t.add_column(col)
    for r in runs:
        t.add_row(r["run_id"] + (f" ({r['branch']})" if r.get("branch") else ""), r["workflow"],
                  r["session"], r["state"], r["status"], str(r["version"]),
                  _fmt_time(r["created_at"]), r.get("pending_approval") or "")
    console.print(t)


@app.command("history")
def history_cmd(
    run_id: str | None = typer.Argument(
        None, help="Run id (default: the session's current or latest run)."),
    as_json: bool = json_option(),
    session: str | None = SessionOpt,
    project: str | None = ProjectOpt,
) -> None:
    """Show the event history of a run (and of its fork/invoke children)."""
    rows = _runtime(project).history(run_id, session)
    answer(rows, as_json, lambda: render_history(rows))


def render_history(rows: list[dict[str, Any]]) -> None:
    t = Table(title="history")
    for col in ("#", "time", "run", "actor", "event", "v", "state", "data"):
        t.add_column(col, overflow="fold")
    for h in rows:
        t.add_row(str(h["seq"]), _fmt_time(h["at"]), h["run_id"], h["actor"], h["kind"],
                  str(h["version"]), h["state"] or "",
                  escape(json.dumps(h["data"], default=str)[:160]))
    console.print(t)
