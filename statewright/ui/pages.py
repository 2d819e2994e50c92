"""The web page's HTML, rendered on the server from the runtime's answers (the page's script
only swaps it in). Every value from a run, a workflow or the agent is escaped here, in `_e`;
the Content-Security-Policy allows no inline script besides.

- `shell(title)`: the document every page address serves, with no run data (it needs no key);
- `runs_html(overview, page)`: the runs, newest first, with the approvals waiting for a human;
- `run_html(view)`: one run: its state on its graph, counters, transitions from here (which
  pass now), the pending approval with approve / reject, child runs, newest history.
"""

from __future__ import annotations

import datetime as _dt
import json
from html import escape
from typing import Any
from urllib.parse import quote

from ..runtime.state_text import BUDGETS, commands_text, names_text, people_budget, timeout_text
from ..visible import visible
from .diagram import render_svg

RUNS_PER_PAGE = 100
HISTORY_SHOWN = 200
DATA_SHOWN = 240  # characters of an event's data shown in the history table


def _e(value: Any) -> str:
    """Text for the page: invisible characters written visibly (`statewright.visible`: an
    agent's bidi override cannot make one approval read as another), then HTML-escaped."""
    return escape(visible("" if value is None else str(value)), quote=True)


def _time(t: Any) -> str:
    try:
        return _dt.datetime.fromtimestamp(float(t)).strftime("%Y-%m-%d %H:%M:%S")
    except (TypeError, ValueError, OverflowError, OSError):
        return "-"


def _json(value: Any, limit: int | None = None) -> str:
    text = json.dumps(value, indent=None if limit else 2, ensure_ascii=False, default=str)
    if limit and len(text) > limit:
        text = text[:limit - 1] + "…"
    return _e(text)


def _data_html(data: Any) -> str:
    """An event's data for people: one field a line, times as dates (`at`, `requested_at`:
    Unix seconds in the store), text as text, anything else as short JSON."""
    if not isinstance(data, dict):
        return f"<code>{_json(data, DATA_SHOWN)}</code>"
    rows = []
    for k, v in data.items():
        if v in (None, "", [], {}):
            continue
        if isinstance(v, (int, float)) and not isinstance(v, bool) and (
                k == "at" or k.endswith("_at")):
            shown = _e(_time(v))
        elif isinstance(v, str):
            shown = _e(v if len(v) <= DATA_SHOWN else v[:DATA_SHOWN - 1] + "…")
        else:
            shown = f"<code>{_json(v, DATA_SHOWN)}</code>"
        rows.append(f"<dt>{_e(k)}</dt><dd>{shown}</dd>")
    return f'<dl class="data">{"".join(rows)}</dl>' if rows else ""


def _run_link(run_id: str, text: str | None = None) -> str:
    return f'<a href="/runs/{quote(run_id, safe="")}">{_e(text or run_id)}</a>'


def _pill(status: str) -> str:
    return f'<span class="pill {_e(status)}">{_e(status)}</span>'


def shell(title: str) -> str:
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{_e(title)}</title><link rel="icon" href="/favicon.ico" type="image/svg+xml">
<link rel="stylesheet" href="/static/ui.css">
<script src="/static/ui.js" defer></script></head>
<body><header><a class="brand" href="/">statewright</a><span id="live" class="live">…</span>
</header>
<div id="flash" role="status"></div>
<main id="main"><p class="muted">Loading…</p></main>
<template id="signin"><section class="card signin"><h2>Sign in</h2>
<p>This page shows runs only to the person who started it. Open the link that
<code>statewright ui</code> printed in its terminal. It works once: for a new one (another
tab, another browser), press Enter in that terminal.</p></section></template>
</body></html>"""


# -- the runs -------------------------------------------------------------------------------

def runs_html(overview: dict[str, Any], page: int) -> str:
    out = ["<h1>Runs</h1>"]
    pending = overview["pending"]
    if pending:
        out.append('<section class="card waiting"><h2>Waiting for you</h2><ul>')
        for p in pending:
            out.append(f'<li>{_run_link(p["run_id"])}: <b>{_e(p["event"])}</b> → '
                       f'{_e(p["target"])} — {_e(p["message"])} '
                       f'<span class="muted">({_time(p["requested_at"])})</span></li>')
        out.append("</ul></section>")
    runs = overview["runs"]
    if not runs:
        out.append('<p class="muted">No runs yet: start one with '
                   "<code>statewright start NAME</code>.</p>")
        return "".join(out)
    shared = any("project" in r for r in runs)  # (a team's store: every project's runs)
    where = "<th>project</th><th>machine</th>" if shared else ""
    out.append('<table class="runs"><thead><tr><th>run</th><th>workflow</th><th>session</th>'
               "<th>state</th><th>status</th><th>version</th><th>transitions</th>"
               f"<th>updated</th>{where}</tr></thead><tbody>")
    for r in runs:
        origin = (f'<td>{_e(r.get("project") or "-")}</td><td>{_e(r.get("machine") or "-")}</td>'
                  if shared else "")
        flag = ' <span class="pill waiting">approval</span>' if r["pending_approval"] else ""
        branch = f' <span class="muted">({_e(r["branch"])})</span>' if r.get("branch") else ""
        out.append(f'<tr data-run="{_e(r["run_id"])}"><td>{_run_link(r["run_id"])}{branch}</td>'
                   f'<td>{_e(r["workflow"])}</td><td>{_e(r["session"])}</td>'
                   f'<td class="state">{_e(r["state"])}{flag}</td><td>{_pill(r["status"])}</td>'
                   f'<td>{_e(r["version"])}</td><td>{_e(r["transition_count"])}</td>'
                   f'<td>{_time(r["updated_at"])}</td>{origin}</tr>')
    out.append("</tbody></table>")
    out.append(_pager(overview["total"], page))
    return "".join(out)


def _pager(total: int, page: int) -> str:
    pages = max(1, -(-total // RUNS_PER_PAGE))
    links = []
    if page > 1:
        links.append(f'<a href="/?page={page - 1}">← newer</a>')
    links.append(f"page {page} of {pages} ({total} runs)")
    if page < pages:
        links.append(f'<a href="/?page={page + 1}">older →</a>')
    return f'<p class="pager">{" · ".join(links)}</p>'


# -- one run --------------------------------------------------------------------------------

def run_html(view: dict[str, Any]) -> str:
    a, run = view["answer"], view["run"]
    out = [f'<p class="crumbs"><a href="/">runs</a> / {_e(run["run_id"])}</p>',
           f'<h1>{_e(a["workflow"])} <span class="state-name" id="state">{_e(a["state"])}'
           f'</span> {_pill(a["status"])}</h1>',
           f'<p class="meta">run <code>{_e(run["run_id"])}</code> · session '
           f'<code>{_e(run["session"])}</code> · version {_e(a["version"])} · started '
           f'{_time(run["created_at"])} · updated {_time(run["updated_at"])}']
    if run.get("parent_run"):
        out.append(f" · child of {_run_link(run['parent_run'])}")
    out.append("</p>")
    if a.get("advice"):
        out.append(f'<p class="advice">{_e(a["advice"])}</p>')
    if a.get("pending_approval"):
        out.append(_approval_html(a["pending_approval"]))
    passing = {t["event"]: bool(t.get("passes")) for t in a.get("transitions") or ()}
    out.append('<section class="card graph-card"><h2>Graph</h2><div class="graph-wrap">'
               + render_svg(view["definition"], a["state"], passing) + "</div></section>")
    out.append('<div class="columns">')
    out.append(_transitions_html(a))
    out.append(_rules_html(a))
    out.append("</div>")
    if view["children"]:
        out.append('<section class="card"><h2>Child runs</h2><ul>')
        for c in view["children"]:
            what = c.get("branch") or "invoked"
            out.append(f'<li>{_run_link(c["run_id"])} ({_e(what)}): {_e(c["workflow"])} in '
                       f'{_e(c["state"])} {_pill(c["status"])}</li>')
        out.append("</ul></section>")
    out.append(_history_html(view["history"], view["children"]))
    return "".join(out)


def _approval_html(pa: dict[str, Any]) -> str:
    aid = _e(pa.get("approval_id"))
    data = pa.get("data") or {}
    shown = (f'<details open><summary>data</summary><pre class="data">{_json(data)}</pre>'
             "</details>" if data else "")
    return (f'<section class="card approval" data-approval="{aid}"><h2>Waiting for your '
            f'approval</h2><p class="message">{_e(pa.get("message"))}</p>'
            f'<p><b>{_e(pa.get("event"))}</b> → <b>{_e(pa.get("target"))}</b> '
            f'<span class="muted">requested {_time(pa.get("requested_at"))} · {aid}</span></p>'
            f"{shown}"
            f'<form class="decide" data-approval="{aid}">'
            '<input name="reason" type="text" maxlength="2000" autocomplete="off" '
            'placeholder="reason for a rejection (recorded in history)">'
            '<button type="submit" name="decision" value="approve" class="approve">Approve'
            '</button><button type="submit" name="decision" value="reject" class="reject">'
            "Reject</button></form></section>")


def _transitions_html(a: dict[str, Any]) -> str:
    out = ['<section class="card"><h2>Transitions from here</h2>']
    ts = a.get("transitions") or []
    if not ts:
        out.append('<p class="muted">None: the run does not move on from here.</p>')
    else:
        out.append('<ul class="transitions">')
        for t in ts:
            ok = bool(t.get("passes"))
            extra = []
            if t.get("guards"):
                extra.append("guards: " + ", ".join(map(str, t["guards"])))
            if t.get("requires_approval"):
                extra.append("needs approval")
            if t.get("checks"):
                extra.append("runs checks " + ", ".join(map(str, t["checks"])))
            target = f" → {_e(t['target'])}" if t.get("target") else ""
            tail = f' <span class="muted">({_e("; ".join(extra))})</span>' if extra else ""
            out.append(f'<li class="{"pass" if ok else "blocked"}"><span class="mark">'
                       f'{"✓" if ok else "✗"}</span> <b>{_e(t.get("event"))}</b>{target}{tail}'
                       "</li>")
        out.append("</ul>")
    out.append("</section>")
    return "".join(out)


def _rules_html(a: dict[str, Any]) -> str:
    counters = a.get("counters") or {}
    rows = [("counters", ", ".join(people_budget(counters, used, limit, label)
                                   for used, limit, label, _s in BUDGETS)),
            ("allowed tools", names_text(a.get("allowed_tools"), "any", "(none)")),
            ("allowed commands", commands_text(a, "any"))]
    if a.get("blocked_env"):
        rows.append(("blocked env", ", ".join(a["blocked_env"])))
    if a.get("interrupt"):
        rows.append(("interrupt", f"{a['interrupt'].get('name')} (returns to "
                                  f"{a['interrupt'].get('return_to')})"))
    if a.get("timeout"):
        rows.append(("timeout", timeout_text(a["timeout"])))
    body = "".join(f"<tr><th>{_e(k)}</th><td>{_e(v)}</td></tr>" for k, v in rows)
    instr = (f'<p class="instructions">{_e(a["instructions"])}</p>'
             if a.get("instructions") else "")
    ctx = (f'<details><summary>context</summary><pre class="data">{_json(a["context"])}</pre>'
           "</details>" if a.get("context") else "")
    return (f'<section class="card"><h2>This state</h2>{instr}<table class="rules" '
            f'id="counters">{body}</table>{ctx}</section>')


def _history_data(h: dict[str, Any]) -> str:
    """A history row's data: a check's outcome in words with its output's tail, else JSON."""
    d = h.get("data") or {}
    if h.get("kind") != "check" or not isinstance(d, dict):
        return _data_html(d)
    ok = d.get("ok") is True
    how = "passed" if ok else (d.get("error") or f"failed (exit status {d.get('exit_code')})")
    s = d.get("summary")
    counts = (f" · {s.get('tests')} tests, {s.get('failures')} failures, {s.get('errors')} "
              f"errors, {s.get('skipped')} skipped" if isinstance(s, dict) else "")
    secs = (d.get("duration_ms") or 0) / 1000
    tail = d.get("output_tail") or ""
    shown = (f'<details class="output"><summary>output (last lines)</summary>'
             f'<pre class="data">{_e(tail)}</pre></details>' if tail else "")
    return (f'<span class="check {"pass" if ok else "fail"}"><b>check {_e(d.get("check"))}'
            f'</b> {_e(how)} <span class="muted">({secs:.1f} s{_e(counts)}; sandbox '
            f'{_e(d.get("sandbox"))})</span></span>{shown}')


def _history_html(history: list[dict[str, Any]], children: list[dict[str, Any]]) -> str:
    out = ['<section class="card"><h2>History <span class="muted">(newest first'
           + (f", the last {HISTORY_SHOWN}" if len(history) >= HISTORY_SHOWN else "")
           + ')</span></h2><table class="history"><thead><tr><th>#</th><th>time</th>'
           + ("<th>run</th>" if children else "")
           + "<th>actor</th><th>event</th><th>state</th><th>v</th><th>data</th></tr></thead>"
           "<tbody>"]
    for h in history:
        run = f"<td>{_e(h['run_id'])}</td>" if children else ""
        out.append(f'<tr class="{_e(h["kind"])}"><td>{_e(h["seq"])}</td><td>{_time(h["at"])}'
                   f'</td>{run}<td class="actor {_e(h["actor"])}">{_e(h["actor"])}</td>'
                   f'<td>{_e(h["kind"])}</td><td>{_e(h["state"])}</td><td>{_e(h["version"])}'
                   f'</td><td>{_history_data(h)}</td></tr>')
    out.append("</tbody></table></section>")
    return "".join(out)
