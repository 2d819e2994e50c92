"""CLI command: `statewright init` — a starter workflow in `<root>/workflows/` and the Claude Code
wiring, in one go.

Idempotent like the installer: a second run changes nothing. An existing workflow file that
differs from the starter is kept (never overwritten without `--force`); the wiring is done
all the same. The wiring is `statewright install claude`'s own code path with its defaults
(`install.install_claude_files`): init adds no install logic of its own.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import typer

from ..config import find_project_root
from .app import ArgumentError, ProjectOpt, app
from .install_files import write_text_file

_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")


def starter_workflow(name: str) -> dict[str, Any]:
    """The starter: plan (read only), build (edits and the usual test runners), done. Valid with
    no warnings (tests/cli/test_init.py validates it)."""
    return {
        "$schema": "https://statewright.ai/workflow-schema.json",
        "id": name,
        "initial": "plan",
        "meta": {"task_type": "feature", "estimated_steps": 3},
        "states": {
            "plan": {
                "instructions": "Read the code and decide the change to make. Do not edit "
                                "anything yet. Send PLANNED when you know what to change.",
                "allowed_tools": ["Read", "Grep", "Glob"],
                "max_iterations": 40,
                "on": {"PLANNED": "build"},
            },
            "build": {
                "instructions": "Make the change and run the tests. Send DONE when they "
                                "pass, or REPLAN to go back to planning.",
                "allowed_tools": ["Read", "Grep", "Glob", "Edit", "Write", "MultiEdit", "Bash"],
                "allowed_commands": ["pytest", "npm test", "make test", "go test",
                                     "cargo test", "git status", "git diff"],
                "blocked_env": ["AWS_SECRET_ACCESS_KEY", "GITHUB_TOKEN"],
                "max_files_per_state": 10,
                "max_edit_lines": 200,
                "on": {"DONE": "done", "REPLAN": "plan"},
            },
            "done": {"type": "final"},
        },
    }


def _starter_text(name: str) -> str:
    return json.dumps(starter_workflow(name), indent=2) + "\n"


@app.command("init")
def init_cmd(
    name: str = typer.Option("starter", "--name", help="Id (and file name) of the workflow."),
    force: bool = typer.Option(False, "--force",
                               help="Overwrite workflows/NAME.json if it differs from the "
                                    "starter."),
    no_install: bool = typer.Option(False, "--no-install",
                                    help="Only write the workflow; do not wire Claude Code."),
    project: str | None = ProjectOpt,
) -> None:
    """Start a project: workflows/NAME.json (a starter workflow) and `install claude`.

    Run it at the root of your project (or pass --project). Then: `statewright start NAME`.
    """
    if not _ID.match(name):
        raise ArgumentError(f"--name {name!r}: a workflow id starts with a letter or digit, then "
                            "letters, digits, '_', '.', '-'")
    root = find_project_root(project)
    path = root / "workflows" / f"{name}.json"
    text = _starter_text(name)
    current = _read(path)
    if current is not None and current != text and not force:
        typer.echo(f"kept {path}: it differs from the starter workflow (yours is never "
                   "overwritten; --force replaces it, --name writes another)")
    elif current == text:
        typer.echo(f"workflow {name!r} already in {path} (unchanged)")
    else:
        write_text_file(path, text)
        typer.echo(f"{'overwrote' if current is not None else 'created'} {path} "
                   f"(workflow {name!r})")
    if not no_install:
        _install_claude(root)
    typer.echo(f"next: statewright validate {path.parent}; statewright start {name}; "
               "statewright status")


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise ArgumentError(f"{path}: cannot read: {exc}") from None


def _install_claude(root: Path) -> None:
    """The installer's own code path with its defaults (`install.install_claude_files`)."""
    from .install import install_claude_files

    for path, what in install_claude_files(root):
        if what.endswith("ignores it:"):
            typer.echo(f"git ({path}) {what} .claude/settings.local.json holds this machine's "
                       "paths")
            continue
        unchanged = what in ("not present in", "already up to date in")
        typer.echo(f"statewright {what} {path}" + (" (unchanged)" if unchanged else ""))
