"""CLI commands on workflow definitions: validate, list, show, graph.

Thin: every rule lives in `statewright.definition`; this module finds files, calls it and prints.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from rich.table import Table
from rich.text import Text

from ..config import Config, find_project_root, load_config
from ..errors import INVALID_ARGUMENTS
from .app import ArgumentError, ProjectOpt, answer, app, console, json_option
from .base import error_out, exit_status

if TYPE_CHECKING:
    from ..definition import CompiledWorkflow, ValidationResult
    from ..definition.compiled import State, Transition
    from ..definition.discovery import WorkflowEntry


def _config(project: str | None) -> Config:
    root = find_project_root(project)
    return load_config(root)


def _shown(path: Path, root: Path | None = None) -> str:
    try:
        if root is not None:
            return str(path.resolve().relative_to(root.resolve()))
    except (ValueError, OSError):
        pass
    return str(path)


def _shown_source(path: Path, config: Config) -> str:
    """A workflow file as people want it named: `(shipped)` for the examples that come with
    statewright (not a path into a venv), else relative to the project when inside it."""
    from ..config import examples_dir

    try:
        if path.resolve().parent == examples_dir().resolve():
            return f"shipped: {path.name}"
    except OSError:
        pass
    return _shown(path, config.root)


def _expand(paths: list[str]) -> tuple[list[Path], list[tuple[str, str]]]:
    """Files to validate, and one-line problems with the arguments themselves."""
    from ..definition.discovery import workflow_files

    files: list[Path] = []
    problems: list[tuple[str, str]] = []
    for raw in paths:
        p = Path(raw)
        if p.is_dir():
            found = workflow_files(p)
            if not found:
                problems.append((raw, f"{raw}: no workflow files (*.json) in this directory"))
            files.extend(found)
        elif p.exists():
            files.append(p)
        else:
            problems.append((raw, f"{raw}: no such file or directory"))
    # the same file named twice is validated once
    seen: set[Path] = set()
    unique = []
    for f in files:
        r = f.resolve()
        if r not in seen:
            seen.add(r)
            unique.append(f)
    return unique, problems


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
    from ..definition import validate
    from ..definition.discovery import make_resolver
    from ..definition.pipeline import read_source

    config = _config(project)
    files, problems = _expand(paths)
    # Documents validated together can invoke each other even off the search path.
    extra: dict[str, Any] = {}
    for f in files:
        doc = read_source(f).doc
        if isinstance(doc, dict) and isinstance(doc.get("id"), str):
            extra.setdefault(doc["id"], doc)
    resolver = make_resolver(config, extra)
    results = [(f, validate(f, resolver=resolver)) for f in files]

    n_err = sum(len(r.errors) for _, r in results) + len(problems)
    n_warn = sum(len(r.warnings) for _, r in results)
    failed = n_err > 0 or (strict and n_warn > 0)
    report = {
        "ok": not failed,
        "errors": n_err,
        "warnings": n_warn,
        "files": [dict(r.to_dict(), path=str(f)) for f, r in results],
        "problems": [{"path": p, "message": m} for p, m in problems],
    }
    answer(report, as_json, lambda: render_validation(results, problems, report))
    raise typer.Exit(exit_status(INVALID_ARGUMENTS) if problems else 1 if failed else 0)


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'s' if n != 1 else ''}"


def render_validation(results: list[tuple[Path, ValidationResult]],
                      problems: list[tuple[str, str]], report: dict[str, Any]) -> None:
    """Each file's verdict and diagnostics, then the totals."""
    for _, msg in problems:
        error_out(INVALID_ARGUMENTS, msg)
    for f, r in results:
        head = Text()
        if r.ok:
            head.append("ok    ", style="bold green")
        else:
            head.append("FAIL  ", style="bold red")
        head.append(str(f))
        if r.compiled is not None:
            head.append(f"  ({r.compiled.id})", style="dim")
        console.print(head, soft_wrap=True)
        for d in r.diagnostics:
            line = Text("    ")
            line.append(f"{d.severity:<8}", style="red" if d.severity == "error" else "yellow")
            line.append(d.pointer or "(document)", style="cyan")
            line.append(f"  {d.message}  ")
            line.append(f"[{d.code}]", style="dim")
            console.print(line, soft_wrap=True)
    summary = (f"{_plural(len(results), 'file')} checked: {_plural(report['errors'], 'error')}, "
               f"{_plural(report['warnings'], 'warning')}")
    console.print(Text(summary, style="bold green" if report["ok"] else "bold red"))


@app.command("list")
def list_cmd(
    as_json: bool = json_option("the list"),
    project: str | None = ProjectOpt,
) -> None:
    """List the workflows on the search path (the first file with an id wins)."""
    from ..definition.discovery import list_workflows

    config = _config(project)
    entries = list_workflows(config)
    listing = {"search_path": [str(d) for d in config.workflow_dirs()],
               "workflows": [e.to_dict() for e in entries]}
    answer(listing, as_json, lambda: render_list(entries, config))


def render_list(entries: list[WorkflowEntry], config: Config) -> None:
    from ..definition.pipeline import read_source

    if not entries:
        console.print("no workflows found; searched: "
                      + ", ".join(str(d) for d in config.workflow_dirs()),
                      markup=False, highlight=False)
        return
    table = Table(title="workflows", show_lines=False)
    table.add_column("id", style="bold")
    table.add_column("status")
    table.add_column("states", justify="right")
    table.add_column("file")
    for e in entries:
        doc = read_source(e.path).doc
        states = doc.get("states") if isinstance(doc, dict) else None
        n_states = str(len(states)) if isinstance(states, dict) else "-"
        table.add_row(Text(e.id or f"? ({e.path.stem})"), _list_status(e, config), n_states,
                      Text(_shown_source(e.path, config)))
    console.print(table)


def _list_status(e: WorkflowEntry, config: Config) -> Text:
    n_err = sum(1 for d in e.diagnostics if d.severity == "error")
    n_warn = sum(1 for d in e.diagnostics if d.severity == "warning")
    if e.duplicate_of is not None:
        return Text(f"shadowed by {_shown_source(e.duplicate_of, config)}", style="yellow")
    if n_err:
        return Text(f"invalid ({_plural(n_err, 'error')})", style="red")
    if n_warn:
        return Text(f"ok ({_plural(n_warn, 'warning')})", style="yellow")
    return Text("ok", style="green")


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
    config = _config(project)
    wf = _load_named(name, config)
    answer(wf.to_dict(), as_json, lambda: render_workflow(wf, config))
    if not as_json:
        from ..runtime import Runtime

        older = Runtime(config.root_dir, config).runs_on_older_file(wf.id)
        if older:
            console.print(Text(
                f"This is the file as it is now. {_plural(len(older), 'run')} of {wf.id} "
                f"({', '.join(older)}) started before it changed and obey the definition they "
                "started with: `statewright status` shows those rules.", style="bold yellow"))


def render_workflow(wf: CompiledWorkflow, config: Config) -> None:
    head = Text()
    head.append(wf.id, style="bold")
    head.append(f"  initial: {wf.initial}")
    if wf.source_path:
        head.append(f"  ({_shown_source(Path(wf.source_path), config)})", style="dim")
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
    config = _config(project)
    wf = _load_named(name, config)
    sys.stdout.write(to_mermaid(wf) if fmt == "mermaid" else to_dot(wf))
