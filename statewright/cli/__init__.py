"""`statewright` command line (typer + rich). Entry point: `main`."""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    # typer >= 0.20 vendors its own copy of click: usage errors come from typer._click, Exit and
    # Abort from typer.exceptions. Older typer raises plain click's.
    try:
        from typer._click.exceptions import ClickException
        from typer.exceptions import Abort, Exit
    except ImportError:  # pragma: no cover
        from click.exceptions import Abort, ClickException, Exit

    from ..errors import StatewrightError
    from . import check, hook_cmd, install, runs, serve, workflows  # noqa: F401  (register commands)
    from .app import app, err_console

    try:
        rv = app(args=argv, prog_name="statewright", standalone_mode=False)
        return rv if isinstance(rv, int) else 0
    except Exit as e:
        return e.exit_code
    except Abort:
        err_console.print("aborted")
        return 130
    except ClickException as e:  # usage errors: exit 2
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
