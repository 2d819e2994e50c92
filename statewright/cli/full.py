"""The typer path of `statewright` (everything the fast path leaves): import the command
modules the arguments need, run the typer app, and turn typer's own outcomes (exit, abort,
usage error) into exit statuses and the one-line error form.

Usage errors (unknown option, missing argument, bad value) are click's exceptions, raised to us
because the app runs with `standalone_mode=False`: that is the hook where they are printed as
`error[USAGE]: <click's message> (see 'statewright CMD --help')`, exit status 2, instead of
typer's boxed panel.
"""

from __future__ import annotations

import importlib
import os
import sys

import typer

from .app import app
from .base import USAGE, error_out
from .commands import all_modules, module_of

try:
    from typer import TyperException as UsageErrorBase  # typer >= 0.20 vendors click
except ImportError:  # pragma: no cover - older typer raises click's own exceptions
    from click import ClickException as UsageErrorBase  # type: ignore[assignment]


def load_commands(argv: list[str]) -> None:
    """Register the commands `argv` can reach: the module of its command, or all of them (for
    completion, an unknown command, or no command)."""
    first = next((a for a in argv if not a.startswith("-")), None)
    module = module_of(first) if first and not os.environ.get("_STATEWRIGHT_COMPLETE") else None
    for name in [module] if module else all_modules():
        importlib.import_module(f"statewright.cli.{name}")


def run(argv: list[str], as_json: bool = False) -> int:
    load_commands(argv)
    try:
        rv = app(args=argv, prog_name="statewright", standalone_mode=False)
        return rv if isinstance(rv, int) else 0
    except typer.Exit as e:
        return e.exit_code
    except typer.Abort:
        error_out("ABORTED", "aborted", as_json)
        return 130
    except UsageErrorBase as e:
        return usage_error(e, as_json)


def usage_error(e: Exception, as_json: bool) -> int:
    """A usage error click found, in the one-line form (JSON under --json); exit status 2.
    A command group run without its subcommand (`statewright install`) shows its help, as a
    bare `statewright` does: nothing was wrong but what to choose."""
    ctx = getattr(e, "ctx", None)
    if type(e).__name__ == "NoArgsIsHelpError" and ctx is not None and not as_json:
        sys.stdout.write(ctx.get_help() + "\n")
        return 0
    fmt = getattr(e, "format_message", None)
    message = " ".join((fmt() if callable(fmt) else str(e)).split())
    path = getattr(ctx, "command_path", None) or "statewright"
    error_out(USAGE, f"{message} (see '{path} --help')", as_json)
    return int(getattr(e, "exit_code", 2) or 2)
