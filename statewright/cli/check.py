"""CLI command: `statewright check TOOL [INPUT_JSON]` — dry-run one decision and explain it.

The tool input comes from the argument, from `--input-file FILE`, or from stdin when the
argument is omitted or `-` (`echo '{"command": "ls"}' | statewright check Bash`).

The same code path as a real call (`Runtime.explain`: `policy.gate`, `fail_open`) with no
accounting: nothing is counted, nothing is written to history. Exit status 0 when the call would be
allowed, 1 when it would be refused (or on an error).
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any

import typer
from rich.markup import escape

from ..errors import INVALID_ARGUMENTS, StatewrightError
from ..visible import visible
from .app import (
    ArgumentError,
    ProjectOpt,
    SessionOpt,
    app,
    console,
    json_option,
    parse_json_option,
    print_json,
)

if TYPE_CHECKING:
    from ..policy.types import Decision


@app.command("check")
def check_cmd(
    tool: str = typer.Argument(
        ..., help="Tool name as the agent calls it: Bash, Edit, mcp__github__create_issue, ..."),
    input_json: str | None = typer.Argument(
        None, metavar="[INPUT_JSON]", show_default=False,
        help='The tool input as a JSON object, e.g. \'{"command": "npm test"}\'; omitted or '
             '"-": read from stdin.'),
    input_file: str | None = typer.Option(
        None, "--input-file", metavar="FILE", help="Read the tool input from FILE."),
    as_json: bool = json_option("the decision"),
    session: str | None = SessionOpt,
    project: str | None = ProjectOpt,
) -> None:
    """Dry-run the decision for TOOL with its input in the current state, and explain it.

    Exit status 0: the call would be allowed; 1: it would be refused (or an error).
    """
    from ..policy.types import ToolCall
    from ..runtime import Runtime

    text, what = _input_text(input_json, input_file)
    tool_input = parse_json_option(text, what)
    if not isinstance(tool_input, dict):
        raise StatewrightError(INVALID_ARGUMENTS,
                               f"{what} must be a JSON object (the tool's input)")
    if not tool.strip():
        raise StatewrightError(INVALID_ARGUMENTS, "TOOL must be a tool name")
    rt = Runtime.open(project=project)
    sess = rt.resolve_session(session)
    decision, run, wf = rt.explain(sess, ToolCall(tool_name=tool, tool_input=tool_input,
                                                  source="cli", cwd=os.getcwd()))
    if as_json:
        print_json(_decision_json(decision, sess, run, wf))
    else:
        render_decision(tool, tool_input, decision, sess, run, wf)
    raise typer.Exit(0 if decision.allowed else 1)


def _input_text(input_json: str | None, input_file: str | None) -> tuple[str, str]:
    """The tool input's text and how to name it in an error."""
    if input_file is not None:
        if input_json not in (None, "-"):
            raise ArgumentError("give the tool input once: INPUT_JSON or --input-file")
        try:
            with open(input_file, encoding="utf-8") as fh:
                return fh.read(), f"--input-file {input_file}"
        except (OSError, UnicodeDecodeError) as exc:
            raise ArgumentError(f"--input-file: cannot read {input_file}: "
                                f"{getattr(exc, 'strerror', None) or exc}") from None
    if input_json is not None and input_json != "-":
        return input_json, "INPUT_JSON"
    if sys.stdin is None or sys.stdin.isatty():
        raise ArgumentError("no tool input: pass INPUT_JSON, pipe it on stdin, or use "
                            "--input-file FILE")
    return sys.stdin.read(), "the tool input on stdin"


def _decision_json(decision: Decision, sess: str, run: Any, wf: Any) -> dict[str, Any]:
    return {
        "allowed": decision.allowed, "rule": decision.rule, "reason": decision.reason,
        "code": decision.code or None, "explanation": list(decision.explanation),
        "files": list(decision.files), "updated_input": decision.updated_input,
        "session": sess, "run_id": getattr(run, "run_id", None),
        "workflow": getattr(wf, "id", None), "state": getattr(run, "state", None),
    }


def render_decision(tool: str, tool_input: dict[str, Any], decision: Decision, sess: str,
                    run: Any, wf: Any) -> None:
    """The decision explained for people: verdict, the run it was decided in, why. Every line
    fits the terminal (80 columns when piped): long ones wrap under their label."""
    verdict = "[bold green]ALLOWED[/]" if decision.allowed else "[bold red]DENIED[/]"
    console.print(f"{verdict}  {escape(visible(tool))}", highlight=False)
    if run is None and decision.rule == "no_active_run":
        _say(f"session {sess}: no running workflow, so every call is allowed")
    elif run is not None and wf is not None:
        _say(f"workflow {wf.id}, run {run.run_id}, state {run.state} ({run.status}); session "
             f"{sess}; counters: {run.iterations} call(s), {len(run.files_edited)} file(s), "
             f"{run.bytes_read} byte(s)")
    if decision.rule:
        console.print(f"decided by: [bold]{escape(decision.rule)}[/]", highlight=False)
    if decision.reason:
        _say(f"reason: {decision.reason}", 4)
    if decision.explanation:
        console.print("how it was decided:")
        for line in decision.explanation:
            _say(f"  - {line}", 6)
    if decision.files:
        _say("files this call edits: " + ", ".join(decision.files), 4)
    if decision.updated_input is not None:
        console.print("the call would run rewritten as:", highlight=False)
        for k, v in decision.updated_input.items():
            if tool_input.get(k) != v:
                for i, part in enumerate(str(v).split("\n")):
                    _say(f"  {k}: {part}" if i == 0 else f"    {part}", 6)
    console.print("(dry run: nothing was counted or recorded)", style="dim")


def _say(text: str, indent: int = 2) -> None:
    """One line of the explanation, wrapped at the terminal's width under its label."""
    import textwrap

    width = max(console.width, 40)
    lines = textwrap.wrap(visible(text), width, subsequent_indent=" " * indent,
                          break_on_hyphens=False, drop_whitespace=True) or [""]
    for line in lines:
        console.print(escape(line), highlight=False, soft_wrap=True)
