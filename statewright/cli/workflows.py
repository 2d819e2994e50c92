"""CLI commands on workflow definitions: validate, list, show, graph.

Thin: every rule lives in `statewright.definition`; this module finds files, calls it and prints.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.table import Table
from rich.text import Text

from ..config import Config
from .app import ArgumentError, ProjectOpt, answer, app, console, json_option
from .workflow_text import list_workflows_cmd, plural, project_config, shown_source, validate

if TYPE_CHECKING:
    from ..definition import CompiledWorkflow
    from ..definition.compiled import State, Transition


PathsArg = typer.Argument(..., metavar="PATH...", show_default=False,
                          help="Workflow files or directories (their *.json files).")


@app.command("validate")
def validate_cmd(
    paths: list[str] = PathsArg,
    as_json: bool = json_option("the results"),
    strict: bool = typer.Option(False, "--strict", help="Treat warnings as errors."),
    project: str | None = ProjectOpt,
) -> None:
    """Validate workflow definitions: schema, types and every semantic rule, with JSON Pointers.

    Exit status: 0 all valid, 1 any error (or warning with --strict), 2 usage error (a PATH
    that does not exist or holds no workflow file).
    """
    code = validate(paths, as_json, strict, project)
    raise typer.Exit(code or 0)


@app.command("list")
def list_cmd(
    as_json: bool = json_option("the list"),
    project: str | None = ProjectOpt,
) -> None:
    """List the workflows on the search path (the first file with an id wins)."""
    list_workflows_cmd(as_json, project)


def _load_named(name: str, config: Config) -> CompiledWorkflow:
    """A workflow by id on the search path, or by file path when NAME is an existing .json file."""
    from ..definition import load_path
    from ..definition.discovery import find_workflow, make_resolver

    p = Path(name)
    path = p if (p.suffix == ".json" and p.is_file()) else find_workflow(name, config)
    return load_path(path, resolver=make_resolver(config))


def _rules(st: State) -> Text:
    t = Text()

    def line(label: str, value: str, style: str = "") -> None:
        if t:
            t.append("\n")
        t.append(f"{label}: ", style="dim")
        t.append(value, style=style)

    if st.final:
        line("final", "run completes here", "bold")
        return t
    tools = st.allowed_tools
    line("tools", "any" if tools is None else (", ".join(tools) or "statewright only"))
    if st.disallowed_tools:
        line("never", ", ".join(st.disallowed_tools), "red")
    if st.allowed_commands is not None:
        line("commands", ", ".join(st.allowed_commands) or "none")
    if st.blocked_env:
        line("blocked env", ", ".join(st.blocked_env), "red")
    if st.env_overrides:
        line("env", ", ".join(f"{k}={v}" for k, v in st.env_overrides.items()))
    if st.read_only:
        line("read only", ", ".join(st.read_only), "red")
    kernel = [f"sandbox {st.sandbox}"] if st.sandbox != "auto" else []
    kernel += (["no network"] if not st.network else []) + \
        (["unix sockets allowed"] if st.unix_sockets else [])
    if kernel:
        line("kernel", ", ".join(kernel))
    limits = (("max iterations", st.max_iterations, ""), ("max edit lines", st.max_edit_lines, ""),
              ("max files", st.max_files_per_state, ""),
              ("context budget", st.context_budget_bytes, " bytes"))
    for label, value, unit in limits:
        if value is not None:
            line(label, f"{value}{unit}")
    return t


def _transitions(st: State) -> Text:
    t = Text()
    for event, tr in st.on.items():
        if t:
            t.append("\n")
        t.append(event, style="bold")
        if tr.kind == "invoke":
            t.append(f" -> invoke {tr.invoke} -> {tr.on_complete}")
            if tr.on_fail:
                t.append(f" (failed -> {tr.on_fail})")
            if tr.input:
                t.append(f" input {json.dumps(tr.input)}", style="dim")
        elif tr.kind == "fork" and tr.fork is not None:
            f = tr.fork
            branches = ", ".join(f"{n}: {b.initial}..{b.terminal}" for n, b in f.branches.items())
            t.append(f" -> fork [{branches}] join {f.join} -> {f.on_complete}")
            if f.on_fail:
                t.append(f" (failed -> {f.on_fail})")
        else:
            _append_targets(t, tr)
    if st.safe_next:
        if t:
            t.append("\n")
        t.append("*", style="bold")
        t.append(f" (any other event) -> {st.safe_next}", style="dim")
    if st.timeout_s is not None:
        if t:
            t.append("\n")
        t.append(f"after {st.timeout_s:g} s", style="bold")
        t.append(f" statewright fires {st.on_timeout}", style="dim")
    return t


def _append_targets(t: Text, tr: Transition) -> None:
    """A simple, guarded or branched transition: its targets with their guards."""
    parts = []
    for b in tr.branches:
        s = b.target
        if b.guards:
            s += " if " + " & ".join(b.guards)
        elif tr.kind == "branched":
            s += " (default)"
        parts.append(s)
    t.append(" -> " + " | ".join(parts))
    if tr.checks:
        t.append(" [runs " + ", ".join(tr.checks) + "]", style="cyan")
    if tr.requires_approval:
        t.append(" [needs approval]", style="yellow")


@app.command("show")
def show_cmd(
    name: str = typer.Argument(..., help="Workflow id (or a path to a workflow file)."),
    as_json: bool = json_option("the compiled workflow"),
    project: str | None = ProjectOpt,
) -> None:
    """Show a workflow: its states with their rules and transitions, guards and interrupts."""
    config = project_config(project)
    wf = _load_named(name, config)
    answer(wf.to_dict(), as_json, lambda: render_workflow(wf, config))
    if not as_json:
        from ..runtime import Runtime

        older = Runtime(config.root_dir, config).runs_on_older_file(wf.id)
        if older:
            console.print(Text(
                f"This is the file as it is now. {plural(len(older), 'run')} of {wf.id} "
                f"({', '.join(older)}) started before it changed and obey the definition they "
                "started with: `statewright status` shows those rules.", style="bold yellow"))


def render_workflow(wf: CompiledWorkflow, config: Config) -> None:
    head = Text()
    head.append(wf.id, style="bold")
    head.append(f"  initial: {wf.initial}")
    if wf.source_path:
        head.append(f"  ({shown_source(Path(wf.source_path), config)})", style="dim")
    console.print(head)  # (wrapped at the terminal's width, like every line below)
    if wf.meta:
        console.print(Text("meta: " + json.dumps(wf.meta, ensure_ascii=False), style="dim"))
    table = Table(show_lines=True)
    table.add_column("state", style="bold")
    table.add_column("rules")
    table.add_column("transitions")
    for sname, st in wf.states.items():
        label = Text(sname)
        if sname == wf.initial:
            label.append(" (initial)", style="dim")
        if st.instructions:
            label.append("\n" + st.instructions, style="italic dim")
        table.add_row(label, _rules(st), _transitions(st))
    console.print(table)
    if wf.guards:
        gt = Table(title="guards")
        gt.add_column("guard", style="bold")
        gt.add_column("check")
        for g in wf.guards.values():
            check = f"{g.field} {g.op}" + (f" {json.dumps(g.value)}" if g.has_value else "")
            gt.add_row(Text(g.name), Text(check))
        console.print(gt)
    if wf.interrupts:
        it = Table(title="interrupts")
        it.add_column("interrupt", style="bold")
        it.add_column("file pattern")
        it.add_column("handler")
        for i in wf.interrupts:
            it.add_row(Text(i.name), Text(i.file_pattern),
                       Text(i.target + ("  (widens: may grant what it interrupts refused)"
                                        if i.widen else "")))
        console.print(it)
    if wf.checks:
        ct = Table(title="checks (statewright runs them itself)")
        ct.add_column("check", style="bold")
        ct.add_column("runs")
        ct.add_column("frozen")
        ct.add_column("passes on")
        for c in wf.checks.values():
            where = f"  (in {c.cwd})" if c.cwd else ""
            ct.add_row(Text(c.name), Text(f"{c.run}{where}  [timeout {c.timeout_s:g} s]"),
                       Text(", ".join(c.read_only) or "-"),
                       Text("exit " + ", ".join(map(str, c.expect_exit))
                            + (f"; report {c.report}" if c.report else "")))
        console.print(ct)


@app.command("graph")
def graph_cmd(
    name: str = typer.Argument(..., help="Workflow id (or a path to a workflow file)."),
    fmt: str = typer.Option("mermaid", "--format", "-f", help="Output format: mermaid or dot."),
    project: str | None = ProjectOpt,
) -> None:
    """Print the workflow's state graph as Mermaid (stateDiagram-v2) or Graphviz DOT."""
    from ..definition.graph import to_dot, to_mermaid

    if fmt not in ("mermaid", "dot"):
        raise ArgumentError(f"unknown --format {fmt!r}: use mermaid or dot")
    config = project_config(project)
    wf = _load_named(name, config)
    sys.stdout.write(to_mermaid(wf) if fmt == "mermaid" else to_dot(wf))
