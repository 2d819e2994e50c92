"""The typer application and what every command module shares: the consoles, the options
declared once (`--session`, `--project`, `--json`), JSON in and out.

One module per command group registers its commands on `app` when imported:
workflows.py (validate/list/show/graph), runs.py (start/status/transition/...), check.py,
install.py, hook_cmd.py, serve.py, ui.py. Errors are not handled here: commands raise
`StatewrightError` and `statewright.cli.main` prints it.

Commands import the layer they drive (runtime, definition, proxy) when they run, so
`statewright --help` does not pay for them.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import Any

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


def _print_version(value: bool) -> None:
    if value:
        from .. import __version__

        console.print(f"statewright {__version__}", highlight=False)
        raise typer.Exit()


@app.callback()
def _main(version: bool = typer.Option(
        False, "--version", help="Print the version and exit.", callback=_print_version,
        is_eager=True)) -> None:
    """Keep coding agents on a declared path: validate workflows, drive runs, enforce rules."""

# Shared option declarations.
SessionOpt = typer.Option(
    None, "--session", "-s", help="Session id (default: $STATEWRIGHT_SESSION, else 'default').")
ProjectOpt = typer.Option(
    None, "--project", "-p",
    help="Project root (default: $CLAUDE_PROJECT_DIR or the nearest dir with .statewright/, "
         "statewright.json or .git).")


def json_option(what: str | None = None) -> Any:
    """The `--json` flag of a command that answers with data: `Print WHAT as JSON.`"""
    return typer.Option(False, "--json",
                        help=f"Print {what} as JSON." if what else "Print JSON.")


StateJsonOpt = json_option("the state answer")


class ArgumentError(StatewrightError):
    """A bad argument a command finds itself: `error[INVALID_ARGUMENTS]`, exit status 2 like
    the usage errors typer finds."""

    exit_code = 2

    def __init__(self, message: str) -> None:
        super().__init__(INVALID_ARGUMENTS, message)


def parse_json_option(value: str | None, what: str) -> Any:
    if value is None:
        return None
    try:
        return json.loads(value)
    except json.JSONDecodeError as exc:
        raise StatewrightError(INVALID_ARGUMENTS, f"{what} is not valid JSON: {exc.msg} "
                               f"(at column {exc.colno})") from None
    except RecursionError:
        raise StatewrightError(INVALID_ARGUMENTS, f"{what} is nested too deeply") from None


def object_option(value: str | None, what: str) -> dict[str, Any] | None:
    """A JSON-object option (`--input`, `--data`, `--context`), or None when not given."""
    parsed = parse_json_option(value, what)
    if parsed is not None and not isinstance(parsed, dict):
        raise StatewrightError(INVALID_ARGUMENTS,
                               f"{what} must be a JSON object, like '{{\"key\": 1}}'")
    return parsed


def print_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, indent=2, sort_keys=False, default=str) + "\n")


def answer(data: Any, as_json: bool, render: Callable[[], None]) -> None:
    """Print a command's answer: `data` as JSON with `--json`, else its rendering for people."""
    if as_json:
        print_json(data)
    else:
        render()
