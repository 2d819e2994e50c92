"""`statewright` command line (typer + rich). Entry point: `main`."""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    import click

    from ..errors import StatewrightError
    from .app import app, err_console
    from . import workflows, runs, check, install, hook_cmd, serve  # noqa: F401  (register commands)

    try:  # typer >= 0.2x ships its own copy of click: its usage errors come from there
        from typer._click.exceptions import ClickException as _UsageErrors
    except ImportError:  # pragma: no cover
        _UsageErrors = click.exceptions.ClickException

    try:
        rv = app(args=argv, prog_name="statewright", standalone_mode=False)
        return rv if isinstance(rv, int) else 0
    except click.exceptions.Exit as e:
        return e.exit_code
    except click.exceptions.Abort:
        err_console.print("aborted")
        return 130
    except (click.exceptions.ClickException, _UsageErrors) as e:  # usage errors: exit 2
        e.show()
        return e.exit_code
    except StatewrightError as e:
        err_console.print(f"[bold red]error[/][{e.code}]: {e.message}", highlight=False, soft_wrap=True)
        return 1
    except KeyboardInterrupt:
        return 130
    except Exception as e:  # last line of defence: one line, never a traceback
        err_console.print(f"[bold red]error[/][INTERNAL]: {type(e).__name__}: {e}", highlight=False, soft_wrap=True)
        return 1


if __name__ == "__main__":
    sys.exit(main())
