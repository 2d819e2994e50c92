"""`statewright` command line (typer + rich). Entry point: `main`, the one error handler."""

from __future__ import annotations

import sys

import typer

from ..errors import StatewrightError
from . import check, hook_cmd, install, runs, serve, ui, workflows  # noqa: F401  (register commands)
from .app import ArgumentError, app, err_console

try:
    from typer import TyperException as UsageErrorBase  # typer >= 0.20 vendors click
except ImportError:  # pragma: no cover - older typer raises click's own exceptions
    from click import ClickException as UsageErrorBase  # type: ignore[assignment]


def main(argv: list[str] | None = None) -> int:
    """Run one command. Every failure ends here as one line `error[CODE]: message` on stderr
    and a non-zero exit status, never a traceback (usage errors: typer's usage text, exit 2)."""
    try:
        rv = app(args=argv, prog_name="statewright", standalone_mode=False)
        return rv if isinstance(rv, int) else 0
    except typer.Exit as e:
        return e.exit_code
    except typer.Abort:
        err_console.print("aborted")
        return 130
    except UsageErrorBase as e:
        return _show_usage_error(e)
    except StatewrightError as e:
        _error_line(e.code, e.message)
        return e.exit_code if isinstance(e, ArgumentError) else 1
    except KeyboardInterrupt:
        return 130
    except Exception as e:  # last line of defence: one line, never a traceback
        _error_line("INTERNAL", f"{type(e).__name__}: {e}")
        return 1


def _error_line(code: str, message: str) -> None:
    err_console.print(f"[bold red]error[/][{code}]: {message}", highlight=False, soft_wrap=True)


def _show_usage_error(e: Exception) -> int:
    """Typer's own wording of a usage error (usage line, hint, `Error: ...`); exit 2."""
    show = getattr(e, "show", None)
    if callable(show):
        show()
    else:  # pragma: no cover - every usage error typer raises can show itself
        _error_line("USAGE", str(e))
    return int(getattr(e, "exit_code", 2))


if __name__ == "__main__":
    sys.exit(main())
