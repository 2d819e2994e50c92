"""The typer application and the helpers every command module shares.

One module per command group registers its commands on `app` when imported (pre-commit style):
workflows.py (validate/list/show/graph), runs.py (start/status/transition/...), check.py,
install.py, hook_cmd.py, serve.py.
"""

from __future__ import annotations

import json
import sys
from typing import Any, NoReturn

import typer
from rich.console import Console

from ..errors import INVALID_ARGUMENTS, StatewrightError

app = typer.Typer(
    name="statewright",
    help="Keep coding agents on a declared path: validate workflows, drive runs, enforce rules.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode="rich",
)

console = Console()
err_console = Console(stderr=True)

# Shared option declarations for run-scoped commands.
SessionOpt = typer.Option(None, "--session", "-s", help="Session id (default: $STATEWRIGHT_SESSION, else 'default').")
ProjectOpt = typer.Option(None, "--project", "-p", help="Project root (default: $CLAUDE_PROJECT_DIR or the nearest dir with .statewright/ or statewright.json).")


def fail(code: str, message: str, exit_code: int = 1) -> NoReturn:
    """Print one clear line on stderr and exit. Never a traceback."""
    err_console.print(f"[bold red]error[/][{code}]: {message}", highlight=False, soft_wrap=True)
    raise typer.Exit(exit_code)


def parse_json_option(value: str | None, what: str) -> Any:
    if value is None:
        return None
    try:
        return json.loads(value)
    except json.JSONDecodeError as exc:
        raise StatewrightError(INVALID_ARGUMENTS, f"{what} is not valid JSON: {exc.msg} (at column {exc.colno})") from None
    except RecursionError:
        raise StatewrightError(INVALID_ARGUMENTS, f"{what} is nested too deeply") from None


def print_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, indent=2, sort_keys=False, default=str) + "\n")
