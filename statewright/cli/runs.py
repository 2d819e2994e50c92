"""CLI commands: runs — start, status, transition, pause, resume, force-state, approve, reject,
runs, history. Every command is a thin wrapper over `statewright.runtime.Runtime`; the CLI acts
as the human (`actor="human"`), which is what lets it approve, reject and force a state."""

from __future__ import annotations

import datetime as _dt
import json
from typing import Any

import typer
from rich.markup import escape
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from ..errors import INVALID_ARGUMENTS, StatewrightError
from .app import ProjectOpt, SessionOpt, app, console, fail, parse_json_option, print_json

HUMAN = "human"


def _runtime(project: str | None):
    from ..runtime import Runtime

    return Runtime.open(project)


def _run_cmd(fn):
    """Run `fn()`; a StatewrightError becomes one line on stderr with the code, exit 1."""
    try:
        return fn()
    except StatewrightError as e:
        fail(e.code, e.message)


def _object_option(value: str | None, what: str) -> dict[str, Any] | None:
    parsed = parse_json_option(value, what)
    if parsed is not None and not isinstance(parsed, dict):
        raise StatewrightError(INVALID_ARGUMENTS, f"{what} must be a JSON object, like '{{\"key\": 1}}'")
    return parsed


def _fmt_time(t: Any) -> str:
    try:
        return _dt.datetime.fromtimestamp(float(t)).strftime("%Y-%m-%d %H:%M:%S")
    except (TypeError, ValueError, OverflowError, OSError):
        return "-"


def _list(v: Any, none_text: str) -> str:
    if v is None:
        return none_text
    if not v:
        return "(none)"
    return ", ".join(str(x) for x in v)


def render_state(answer: dict[str, Any], title: str | None = None) -> None:
    """The rich panel of `statewright status` (also printed after state-changing commands)."""
    c = answer.get("counters") or {}
    lines = Text()

    def row(label: str, value: str, style: str = "") -> None:
        lines.append(f"{label:<18}", style="bold")
        lines.append(value + "\n", style=style)

    row("workflow", f"{answer.get('workflow')}  (run {answer.get('run_id')}, version {answer.get('version')})")
    status = answer.get("status")
    row("state", f"{answer.get('state')}  [{status}]" + ("  final" if answer.get("is_final") else ""),
        "green" if status == "running" else "yellow")
    if answer.get("instructions"):
        row("instructions", str(answer["instructions"]))
    row("allowed tools", _list(answer.get("allowed_tools"), "any (no restriction)"))
    row("allowed commands", _list(answer.get("allowed_commands"), "any (no restriction)"))
    if answer.get("blocked_env"):
        row("blocked env", _list(answer.get("blocked_env"), ""))

    def limit(used: Any, cap: Any) -> str:
        return f"{used} / {cap}" if cap else f"{used}"

    files = c.get("files_edited") or []
    nfiles = files if isinstance(files, int) else len(files)
    row("counters", f"iterations {limit(c.get('iterations', 0), c.get('max_iterations'))}, "
        f"files {limit(nfiles, c.get('max_files_per_state'))}, "
        f"bytes {limit(c.get('bytes', 0), c.get('context_budget_bytes'))}")
    if answer.get("interrupt"):
        it = answer["interrupt"]
        row("interrupt", f"{it.get('name')} (returns to {it.get('return_to')})", "magenta")
    if answer.get("fork"):
        f = answer["fork"]
        branches = ", ".join(f"{n}: {b.get('status')}" for n, b in (f.get("branches") or {}).items())
        row("fork", f"join {f.get('join')} -> {f.get('on_complete')}; {branches}")
    if answer.get("pending_approval"):
        pa = answer["pending_approval"]
        row("pending approval", f"{pa.get('approval_id')}: {pa.get('event')} -> {pa.get('target')} — "
            f"{pa.get('message')}  (statewright approve / reject)", "bold yellow")
    if answer.get("advice"):
        row("advice", str(answer["advice"]), "cyan")
    if answer.get("context"):
        row("context", json.dumps(answer["context"], default=str)[:300])
    trans = answer.get("transitions") or []
    if trans:
        lines.append("transitions\n", style="bold")
        for t in trans:
            mark, style = ("✓", "green") if t.get("passes") else ("✗", "red")
            extra = []
            if t.get("guards"):
                extra.append("guards: " + ", ".join(t["guards"]))
            if t.get("requires_approval"):
                extra.append("needs approval")
            if t.get("invoke"):
                extra.append(f"invokes {t['invoke']}")
            if t.get("fork"):
                extra.append("forks " + ", ".join(t["fork"]))
            tail = f"  ({'; '.join(extra)})" if extra else ""
            target = f" -> {t['target']}" if t.get("target") else ""
            lines.append(f"  {mark} ", style=style)
            lines.append(f"{t.get('event')}{target}{tail}\n")
    console.print(Panel(lines, title=escape(title or "statewright status"), expand=False))


def _show(answer: dict[str, Any], as_json: bool, title: str) -> None:
    if as_json:
        print_json(answer)
    else:
        render_state(answer, title)


@app.command("start")
def start_cmd(
    name: str = typer.Argument(..., help="Workflow name (its id)."),
    input: str | None = typer.Option(None, "--input", "-i", help="JSON object merged into the initial context."),
    as_json: bool = typer.Option(False, "--json", help="Print the state answer as JSON."),
    session: str | None = SessionOpt,
    project: str | None = ProjectOpt,
) -> None:
    """Start a run of workflow NAME for the session."""
    def go() -> None:
        data = _object_option(input, "--input")
        answer = _runtime(project).start(name, session, input=data, actor=HUMAN)
        _show(answer, as_json, f"started {answer['workflow']}")
    _run_cmd(go)


@app.command("status")
def status_cmd(
    as_json: bool = typer.Option(False, "--json", help="Print the state answer as JSON."),
    session: str | None = SessionOpt,
    project: str | None = ProjectOpt,
) -> None:
    """Show the session's current run: state, rules, counters and transitions."""
    _run_cmd(lambda: _show(_runtime(project).get_state(session), as_json, "statewright status"))


@app.command("transition")
def transition_cmd(
    event: str = typer.Argument(..., help="Event name, e.g. READY or BRANCH_DONE:lint."),
    data: str | None = typer.Option(None, "--data", "-d", help="JSON object merged into the context after the transition."),
    expected_version: int | None = typer.Option(None, "--expected-version", help="Refuse if the run's version differs (STALE_VERSION)."),
    as_json: bool = typer.Option(False, "--json", help="Print the state answer as JSON."),
    session: str | None = SessionOpt,
    project: str | None = ProjectOpt,
) -> None:
    """Fire EVENT on the session's run."""
    def go() -> None:
        payload = _object_option(data, "--data")
        answer = _runtime(project).transition(session, event, payload,
                                              expected_version=expected_version, actor=HUMAN)
        _show(answer, as_json, f"{event} -> {answer['state']}")
    _run_cmd(go)


@app.command("pause")
def pause_cmd(
    as_json: bool = typer.Option(False, "--json", help="Print the state answer as JSON."),
    session: str | None = SessionOpt,
    project: str | None = ProjectOpt,
) -> None:
    """Pause the session's run (enforcement stops until it is resumed)."""
    _run_cmd(lambda: _show(_runtime(project).pause(session, actor=HUMAN), as_json, "paused"))


@app.command("resume")
def resume_cmd(
    name: str = typer.Argument(..., help="Workflow name: its newest paused run is resumed (or a fresh one started)."),
    as_json: bool = typer.Option(False, "--json", help="Print the state answer as JSON."),
    session: str | None = SessionOpt,
    project: str | None = ProjectOpt,
) -> None:
    """Resume the newest paused run of NAME in this session, or start a fresh one."""
    _run_cmd(lambda: _show(_runtime(project).resume(name, session, actor=HUMAN), as_json, "resumed"))


@app.command("force-state")
def force_state_cmd(
    state: str = typer.Argument(..., help="State to jump to."),
    context: str | None = typer.Option(None, "--context", "-c", help="JSON object merged (not replaced) into the context."),
    as_json: bool = typer.Option(False, "--json", help="Print the state answer as JSON."),
    session: str | None = SessionOpt,
    project: str | None = ProjectOpt,
) -> None:
    """Jump the session's run to STATE, bypassing guards (recorded as a human action)."""
    def go() -> None:
        ctx = _object_option(context, "--context")
        _show(_runtime(project).force_state(session, state, ctx, actor=HUMAN), as_json,
              f"forced to {state}")
    _run_cmd(go)


@app.command("approve")
def approve_cmd(
    approval_id: str | None = typer.Argument(None, help="Approval id (default: the session's pending one)."),
    as_json: bool = typer.Option(False, "--json", help="Print the state answer as JSON."),
    session: str | None = SessionOpt,
    project: str | None = ProjectOpt,
) -> None:
    """Approve a parked transition; it completes now."""
    _run_cmd(lambda: _show(_runtime(project).approve(session, approval_id, actor=HUMAN), as_json, "approved"))


@app.command("reject")
def reject_cmd(
    approval_id: str | None = typer.Argument(None, help="Approval id (default: the session's pending one)."),
    reason: str | None = typer.Option(None, "--reason", "-r", help="Why (recorded in history)."),
    as_json: bool = typer.Option(False, "--json", help="Print the state answer as JSON."),
    session: str | None = SessionOpt,
    project: str | None = ProjectOpt,
) -> None:
    """Reject a parked transition; the run stays where it is."""
    _run_cmd(lambda: _show(_runtime(project).reject(session, approval_id, reason, actor=HUMAN),
                           as_json, "rejected"))


@app.command("runs")
def runs_cmd(
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
    all_sessions: bool = typer.Option(False, "--all", "-a", help="Every session, not just this one."),
    session: str | None = SessionOpt,
    project: str | None = ProjectOpt,
) -> None:
    """List runs (of the session and its fork/invoke children; --all for every session)."""
    def go() -> None:
        rt = _runtime(project)
        runs = rt.list_runs(None if (all_sessions or session is None) else rt.resolve_session(session))
        if as_json:
            print_json(runs)
            return
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
    _run_cmd(go)


@app.command("history")
def history_cmd(
    run_id: str | None = typer.Argument(None, help="Run id (default: the session's current or latest run)."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
    session: str | None = SessionOpt,
    project: str | None = ProjectOpt,
) -> None:
    """Show the event history of a run (and of its fork/invoke children)."""
    def go() -> None:
        rows = _runtime(project).history(run_id, session)
        if as_json:
            print_json(rows)
            return
        t = Table(title="history")
        for col in ("#", "time", "run", "actor", "event", "v", "state", "data"):
            t.add_column(col, overflow="fold")
        for h in rows:
            t.add_row(str(h["seq"]), _fmt_time(h["at"]), h["run_id"], h["actor"], h["kind"],
                      str(h["version"]), h["state"] or "",
                      escape(json.dumps(h["data"], default=str)[:160]))
        console.print(t)
    _run_cmd(go)
