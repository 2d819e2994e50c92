"""The bodies of `statewright validate` and `statewright list`, in the stdlib only.

Both paths run them: the typer commands (`cli/workflows.py`) validate every file (and remember
the verdict on each valid one: `definition.verdicts`); the fast path (`cli/fast.py`) calls them
with `recalled_only=True`, answering from remembered verdicts alone and returning None, before
printing anything, as soon as one file has none (then the typer command runs). Same data, same
rendering: the two answers are the same bytes (tests/cli_workflows/test_fast_workflows.py).
"""

from __future__ import annotations

import sys
from pathlib import Path

from ..config import Config, examples_dir, find_project_root, load_config
from ..definition.diagnostics import ERROR, WARNING, Diagnostic
from ..definition.discovery import (
    WorkflowEntry,
    check_file,
    list_workflows,
    make_resolver,
    recalled_workflows,
    workflow_files,
)
from ..definition.verdicts import read_bytes, verdicts_dir
from ..errors import INVALID_ARGUMENTS
from ..lean import TYPE_CHECKING, loads
from .base import answer, color_enabled, error_out, exit_status, styled, table

if TYPE_CHECKING:
    from typing import Any

#: one checked file: (path as given, ok, id, diagnostics)
Checked = tuple[Path, bool, "str | None", list[Diagnostic]]


def project_config(project: str | None) -> Config:
    return load_config(find_project_root(project))


def plural(n: int, word: str) -> str:
    return f"{n} {word}{'s' if n != 1 else ''}"


def shown(path: Path, root: Path | None = None) -> str:
    try:
        if root is not None:
            return str(path.resolve().relative_to(root.resolve()))
    except (ValueError, OSError):
        pass
    return str(path)


def is_shipped(path: Path) -> bool:
    try:
        return path.resolve().parent == examples_dir().resolve()
    except OSError:
        return False


def shown_source(path: Path, config: Config) -> str:
    """A workflow file as people want it named: `shipped: NAME` for the examples that come
    with statewright (not a path into a venv), else relative to the project when inside it."""
    return f"shipped: {path.name}" if is_shipped(path) else shown(path, config.root)


# -- validate ------------------------------------------------------------------------------------

def expand(paths: list[str]) -> tuple[list[Path], list[tuple[str, str]]]:
    """Files to validate, and one-line problems with the arguments themselves."""
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


def _document(path: Path) -> Any:
    data = read_bytes(path)
    try:
        return loads(data.decode("utf-8-sig")) if data is not None else None
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None


def validate(paths: list[str], as_json: bool = False, strict: bool = False,
             project: str | None = None, recalled_only: bool = False) -> int | None:
    """`statewright validate`: print every file's verdict and return the exit status (0 all
    valid, 1 any error or, with `strict`, warning, 2 a PATH that is no workflow file)."""
    config = project_config(project)
    files, problems = expand(paths)
    # Documents validated together can invoke each other even off the search path.
    extra: dict[str, Any] = {}
    for f in files:
        doc = _document(f)
        if isinstance(doc, dict) and isinstance(doc.get("id"), str):
            extra.setdefault(doc["id"], doc)
    resolver = make_resolver(config, extra)
    directory = verdicts_dir(config.root_dir)
    results: list[Checked] = []
    for f in files:
        found = check_file(f, resolver, directory, recalled_only=recalled_only)
        if found is None:
            return None
        results.append((f, *found))
    n_err = sum(d.severity == ERROR for r in results for d in r[3]) + len(problems)
    n_warn = sum(d.severity == WARNING for r in results for d in r[3])
    failed = n_err > 0 or (strict and n_warn > 0)
    report = {
        "ok": not failed,
        "errors": n_err,
        "warnings": n_warn,
        "files": [{"ok": ok, "path": str(f), "id": wid if ok else None,
                   "diagnostics": [d.to_dict() for d in diags]}
                  for f, ok, wid, diags in results],
        "problems": [{"path": p, "message": m} for p, m in problems],
    }
    answer(report, as_json, lambda: render_validation(results, problems, report))
    return exit_status(INVALID_ARGUMENTS) if problems else 1 if failed else 0


def render_validation(results: list[Checked], problems: list[tuple[str, str]],
                      report: dict[str, Any]) -> None:
    """Each file's verdict and diagnostics, then the totals."""
    for _, msg in problems:
        error_out(INVALID_ARGUMENTS, msg)
    color = color_enabled(sys.stdout)
    out = []
    for f, ok, wid, diags in results:
        head = styled("ok    ", "bold green", color) if ok else styled("FAIL  ", "bold red", color)
        head += str(f) + (styled(f"  ({wid})", "dim", color) if ok and wid else "")
        out.append(head)
        for d in diags:
            out.append("    " + styled(f"{d.severity:<8}", "red" if d.severity == ERROR
                                       else "yellow", color)
                       + styled(d.pointer or "(document)", "cyan", color)
                       + f"  {d.message}  " + styled(f"[{d.code}]", "dim", color))
    summary = (f"{plural(len(results), 'file')} checked: {plural(report['errors'], 'error')}, "
               f"{plural(report['warnings'], 'warning')}")
    out.append(styled(summary, "bold green" if report["ok"] else "bold red", color))
    sys.stdout.write("\n".join(out) + "\n")


# -- list ----------------------------------------------------------------------------------------

def list_workflows_cmd(as_json: bool = False, project: str | None = None,
                       recalled_only: bool = False) -> int | None:
    """`statewright list`: the workflows on the search path (the first file with an id wins)."""
    config = project_config(project)
    entries = recalled_workflows(config) if recalled_only else list_workflows(config)
    if entries is None:
        return None
    listing = {"search_path": [str(d) for d in config.workflow_dirs()],
               "workflows": [e.to_dict() for e in entries]}
    answer(listing, as_json, lambda: render_list(entries, config))
    return 0


def render_list(entries: list[WorkflowEntry], config: Config) -> None:
    if not entries:
        sys.stdout.write("no workflows found; searched: "
                         + ", ".join(str(d) for d in config.workflow_dirs()) + "\n")
        return
    rows = []
    for e in entries:
        doc = _document(e.path)
        states = doc.get("states") if isinstance(doc, dict) else None
        where = f"{e.path.name} (shipped)" if is_shipped(e.path) else shown(e.path, config.root)
        rows.append([e.id or f"? ({e.path.stem})", list_status(e, config),
                     str(len(states)) if isinstance(states, dict) else "-", where])
    table([("id", None), ("status", None), ("states", 6), ("file", None)], rows)


def list_status(e: WorkflowEntry, config: Config) -> str:
    n_err = sum(1 for d in e.diagnostics if d.severity == ERROR)
    n_warn = sum(1 for d in e.diagnostics if d.severity == WARNING)
    if e.duplicate_of is not None:
        return f"shadowed by {shown_source(e.duplicate_of, config)}"
    if n_err:
        return f"invalid ({plural(n_err, 'error')})"
    if n_warn:
        return f"ok ({plural(n_warn, 'warning')})"
    return "ok"
