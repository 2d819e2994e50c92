"""The CLI's commands, listed once: name, the module that defines it, its one-line help.

Stdlib only. Two things read this table without importing typer:
- `statewright --help` (and a bare `statewright`) prints `top_help()`, on the fast path and
  from the typer app alike (`app.StatewrightGroup`), so the two cannot differ;
- the typer path imports only the module of the command it runs (`modules_for`), not all of
  them: `statewright start` does not pay for `rich.table` or the installer.

A command module's commands must be listed here (tests/cli/test_entry.py checks the table
against the typer app).
"""

from __future__ import annotations

from .. import __version__

#: (heading, [(command, module in statewright.cli, one-line help)])
COMMANDS: tuple[tuple[str, tuple[tuple[str, str, str], ...]], ...] = (
    ("Set up", (
        ("init", "init", "Start here: a starter workflow in workflows/ and the Claude Code "
                         "wiring, in one go."),
        ("install", "install", "Wire statewright into an agent host (install claude)."),
        ("doctor", "doctor", "What this machine enforces: the kernel tier sandboxed lines run "
                             "under, the hosts wired and their hook forms."),
        ("schema", "schema_cmd", "Print (or --output) the published JSON schema of "
                                 "workflows (--config: of statewright.json)."),
    )),
    ("Workflows", (
        ("validate", "workflows", "Check workflow files: every problem at once, with its JSON "
                                  "Pointer."),
        ("list", "workflows", "List the workflows on the search path."),
        ("show", "workflows", "Show a workflow's states, rules, transitions and guards."),
        ("graph", "workflows", "Print a workflow's state graph (Mermaid or Graphviz DOT)."),
    )),
    ("Runs", (
        ("start", "runs", "Start a run of workflow NAME for the session."),
        ("status", "runs", "Show the session's run: state, rules, counters, transitions."),
        ("transition", "runs", "Fire EVENT on the session's run."),
        ("pause", "runs", "Pause the session's run (enforcement stops until resumed)."),
        ("resume", "runs", "Resume the newest paused run of NAME (or start one); no NAME: "
                           "the session's own."),
        ("fork", "runs", "List the fork's branches and who works each, or bind to BRANCH."),
        ("end", "runs", "End the session's run for good (status ended)."),
        ("approve", "runs", "Approve a parked transition; it completes now."),
        ("reject", "runs", "Reject a parked transition; the run stays where it is."),
        ("force-state", "runs", "Jump the run to STATE, bypassing guards (a human action)."),
        ("runs", "listing", "List runs: id, workflow, state, status, last change."),
        ("history", "listing", "Show a run's events: time, actor, event, state, summary."),
        ("ui", "ui", "Serve the local web page: runs, graphs, history, approvals."),
    )),
    ("Teams", (
        ("token", "team", "Make, list and revoke the tokens that name approvers and admins."),
        ("audit", "team", "Export the history with its hash chain; verify an export offline."),
    )),
    ("Enforcement", (
        ("check", "check", "Dry-run and explain the decision for one tool call."),
        ("serve", "serve", "Run the MCP proxy (stdio, or --http HOST:PORT)."),
        ("hook", "hook_cmd", "Answer one Claude Code hook event (reads its JSON on stdin)."),
    )),
)

SUMMARY = "Keep coding agents on a declared path: validate workflows, drive runs, enforce rules."

#: the top-level options (typer's completion options included), as `--help` lists them
OPTIONS = (
    ("--version", "Print the version and exit."),
    ("--install-completion", "Install completion for the current shell."),
    ("--show-completion", "Show completion for the current shell, to copy it or customize "
                          "the installation."),
    ("-h, --help", "Show this message and exit."),
)


def module_of(command: str) -> str | None:
    for _heading, rows in COMMANDS:
        for name, module, _help in rows:
            if name == command:
                return module
    return None


def all_modules() -> list[str]:
    seen: list[str] = []
    for _heading, rows in COMMANDS:
        for _name, module, _help in rows:
            if module not in seen:
                seen.append(module)
    return seen


def command_names() -> list[str]:
    return [name for _heading, rows in COMMANDS for name, _m, _h in rows]


def _fill(text: str, width: int, indent: int, first: str = "") -> list[str]:
    """`first` then `text` word-wrapped in `width` columns, continuation lines at `indent`."""
    words = text.split()
    lines: list[str] = []
    cur = first.ljust(indent) if first else " " * indent
    start = len(cur)
    for w in words:
        if len(cur) > start and len(cur) + 1 + len(w) > width:
            lines.append(cur.rstrip())
            cur = " " * indent
            start = indent
        cur += (" " if len(cur) > start else "") + w
    lines.append(cur.rstrip())
    return lines


def top_help(width: int) -> str:
    """The text of `statewright --help` for a terminal `width` columns wide (at most 80 used)."""
    width = max(min(width, 80) - 2, 50)
    out = ["Usage: statewright [OPTIONS] COMMAND [ARGS]...", ""]
    out += _fill(SUMMARY, width, 2)
    out += ["", "Options:"]
    col = max(len(o) for o, _ in OPTIONS) + 4
    for opt, text in OPTIONS:
        if len(opt) + 4 > col:
            out.append(f"  {opt}")
            out += _fill(text, width, col)
        else:
            out += _fill(text, width, col, first=f"  {opt}")
    col = max(len(n) for _h, rows in COMMANDS for n, _m, _t in rows) + 4
    for heading, rows in COMMANDS:
        out += ["", f"{heading}:"]
        for name, _module, text in rows:
            out += _fill(text, width, col, first=f"  {name}")
    out.append("")
    out += _fill(f"statewright {__version__}. `statewright COMMAND --help` shows a command's "
                 "options and arguments.", width, 0)
    return "\n".join(out) + "\n"
