"""The typer application and what every command module shares: the options declared once
(`--session`, `--project`, `--json`) and the rich consoles of the commands that draw tables.

One module per command group registers its commands on `app` when imported (`cli/commands.py`
lists which module holds which command; `cli/full.py` imports only the one a command line
needs). Errors are not handled here: commands raise `StatewrightError` and
`statewright.cli.main` prints it. JSON in and out, the error form and the state panel are in
`cli/base.py` (stdlib only), shared with the fast path.

Help is click's plain text (`rich_markup_mode=None`): the same look for every command, and the
top-level `--help` is `commands.top_help`, whichever path prints it.
"""

from __future__ import annotations

from typing import Any

import typer
from rich.console import Console

from .base import ArgumentError, answer, object_option, parse_json_option, print_json, term_width
from .commands import SUMMARY, top_help

__all__ = ["ArgumentError", "answer", "object_option", "parse_json_option", "print_json"]


class StatewrightGroup(typer.core.TyperGroup):
    """The top-level group: its help is `commands.top_help` (what the fast path prints)."""

    def format_help(self, ctx: Any, formatter: Any) -> None:
        formatter.write(top_help(term_width()))


app = typer.Typer(
    name="statewright",
    cls=StatewrightGroup,
    help=SUMMARY,
    no_args_is_help=True,
    add_completion=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
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
    pass  # the group's help is commands.SUMMARY

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
