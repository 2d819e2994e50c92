"""CLI commands that list: `runs` and `history`, readable at 80 columns.

- Run ids are printed whole (never cut: people copy them into `history RUN_ID`, `approve`);
  other cells are shortened with an ellipsis when the terminal is narrow.
- `history` shows a one-line summary of each event's data (digests and contexts left out);
  `--details` prints each event's data in full, `--json` everything.
- `--limit N`: the newest N runs / the last N events (0: all). Without it people see 20 runs /
  the last 50 events and are told when rows were left out; `--json` gives all.
"""

from __future__ import annotations

import datetime as _dt
import json
import sys
from typing import Any

import typer

from ..visible import visible, visible_data
from .app import ProjectOpt, SessionOpt, app, json_option
from .base import answer, color_enabled, styled
from .base import table as _table

DEFAULT_RUNS = 20
DEFAULT_EVENTS = 50
# bulky or repeated data: shown with --details / --json only
_HIDDEN = frozenset({"digest", "context", "input", "state"})


def _when(t: Any, with_date: bool = True) -> str:
    try:
        d = _dt.datetime.fromtimestamp(float(t))
    except (TypeError, ValueError, OverflowError, OSError):
        return "-"
    return d.strftime("%m-%d %H:%M" if with_date else "%H:%M:%S")


def _limited(rows: list[Any], limit: int | None, default: int, newest_last: bool,
             as_json: bool) -> tuple[list[Any], int]:
    """The rows to show and how many were left out."""
    n = (0 if as_json else default) if limit is None else limit
    if n <= 0 or len(rows) <= n:
        return rows, 0
    return (rows[-n:] if newest_last else rows[:n]), len(rows) - n


LimitOpt = typer.Option(None, "--limit", "-n", min=0,
                        help="Show at most N rows (0: all).", show_default=False)


@app.command("runs")
def runs_cmd(
    as_json: bool = json_option(),
    all_sessions: bool = typer.Option(False, "--all", "-a",
                                      help="Every session, not just this one."),
    all_projects: bool = typer.Option(False, "--all-projects",
                                      help="On a shared store: every project's runs."),
    limit: int | None = LimitOpt,
    session: str | None = SessionOpt,
    project: str | None = ProjectOpt,
) -> None:
    """List runs, newest first (of the session and its fork/invoke children; --all for every
    session; on a shared store with the project and machine of each, --all-projects for every
    project's). People see 20 unless --limit says otherwise."""
    from ..runtime import Runtime

    rt = Runtime.open(project)
    scope = None if (all_sessions or all_projects or session is None) \
        else rt.resolve_session(session)
    runs, left = _limited(rt.list_runs(scope, all_projects=all_projects), limit, DEFAULT_RUNS,
                          False, as_json)
    answer(runs, as_json, lambda: render_runs(runs, left))


def render_runs(runs: list[dict[str, Any]], left_out: int = 0) -> None:
    if not runs:
        print("no runs yet — start one with `statewright start NAME`")
        return
    rows = []
    shared = any("project" in r for r in runs)  # (a shared store: where each run came from)
    for r in runs:
        # a run waiting for a human shows the approval's id (whole: `statewright approve ID`)
        status = f"awaits {r['pending_approval']}" if r.get("pending_approval") else r["status"]
        state = r["state"] + (f" ({r['branch']})" if r.get("branch") else "")
        row = [visible(c) for c in (
            r["run_id"], r["workflow"], state, status, str(r["version"]),
            _when(r.get("updated_at") or r.get("created_at")), r["session"])]
        if shared:
            row += [visible(str(r.get("project") or "-")), visible(str(r.get("machine") or "-"))]
        rows.append(row)
    # ids are never cut: people copy them
    columns: list[tuple[str, int | None]] = [
        ("run", 64), ("workflow", None), ("state", None), ("status", 24), ("v", 6),
        ("changed", 11), ("session", None)]
    if shared:
        columns += [("project", None), ("machine", None)]
    _table(columns, rows)
    if left_out:
        print(f"({left_out} older run(s) not shown: --limit 0 for all)")


@app.command("history")
def history_cmd(
    run_id: str | None = typer.Argument(
        None, help="Run id (default: the session's current or latest run)."),
    as_json: bool = json_option(),
    details: bool = typer.Option(False, "--details", "-d",
                                 help="Print each event's data in full."),
    limit: int | None = LimitOpt,
    session: str | None = SessionOpt,
    project: str | None = ProjectOpt,
) -> None:
    """Show the events of a run (and of its fork/invoke children), oldest first: time, actor,
    event, version, state and a summary of its data. People see the last 50 unless --limit
    says otherwise."""
    from ..runtime import Runtime

    rows, left = _limited(Runtime.open(project).history(run_id, session), limit,
                          DEFAULT_EVENTS, True, as_json)
    answer(rows, as_json, lambda: render_history(rows, details, left))


def summary(data: Any) -> str:
    """One line for an event's data: the approval id, the event and where the run came from
    first (a narrow terminal cuts the tail, never the id people copy), then the other fields
    (`digest`, `context`, `input` are left for --details). Invisible characters an agent put
    in are written visibly (`statewright.visible`)."""
    if not isinstance(data, dict):
        return visible(json.dumps(data, default=str, ensure_ascii=False))
    words = [str(data["approval_id"])] if data.get("approval_id") else []
    words += [str(data["event"])] if data.get("event") else []
    if "from" in data:
        words.append(f"from {data['from']}")
    head = " ".join(words)
    parts = [head] if head else []  # (the state column shows where it went)
    for k, v in data.items():
        if k in _HIDDEN or k in ("approval_id", "event", "from", "to") or v in (None, "", [], {}):
            continue
        text = v if isinstance(v, str) else json.dumps(v, default=str, ensure_ascii=False)
        parts.append(f"{k}: {text}")
    return visible("; ".join(" ".join(p.split()) for p in parts))


def render_history(rows: list[dict[str, Any]], details: bool = False, left_out: int = 0) -> None:
    if not rows:
        print("no events")
        return
    runs = list(dict.fromkeys(h["run_id"] for h in rows))
    dates = {_when(h["at"])[:5] for h in rows}
    print(f"history of {', '.join(runs)}")
    if left_out:
        print(f"({left_out} earlier event(s) not shown: --limit 0 for all)")
    multi = len(runs) > 1
    with_date = len(dates) > 1
    if details:
        for h in rows:
            run = f" {h['run_id']}" if multi else ""
            print(styled(f"#{h['seq']} {_when(h['at'], with_date)}{run} {h['actor']} "
                         f"{h['kind']} v{h['version']} {h['state'] or ''}", "bold",
                         color_enabled(sys.stdout)))
            print(json.dumps(visible_data(h["data"]), default=str, indent=2,
                             ensure_ascii=False))
        return
    columns: list[tuple[str, int | None]] = [("#", 8), ("time", 14), ("actor", 6),
                                             ("event", 20), ("v", 6), ("state", 24),
                                             ("summary", None)]
    if multi:
        columns.insert(2, ("run", 64))
    table_rows = []
    for h in rows:
        cells = [str(h["seq"]), _when(h["at"], with_date), h["actor"], (h["kind"]),
                 str(h["version"]), (h["state"] or ""), (summary(h["data"]))]
        if multi:
            cells.insert(2, h["run_id"])
        table_rows.append(cells)
    _table(columns, table_rows)
