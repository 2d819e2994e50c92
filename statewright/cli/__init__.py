"""`statewright` command line. Entry point: `main`, the one error handler of every path.

Stdlib only at import: `main` first tries the fast path (`cli/fast.py`: `--help`, `--version`,
`status`, `transition`, answered without typer/rich/pydantic), and hands everything else to the
typer app (`cli/full.py`), which imports only the module of the command it runs
(`cli/commands.py` lists them). Every failure ends here as one line `error[CODE]: message` on
stderr (JSON under `--json`) and a non-zero exit status, never a traceback.
"""

from __future__ import annotations

import sys

from ..errors import StatewrightError
from .base import error_out, exit_status, tolerant_streams


def wants_json(argv: list[str]) -> bool:
    """`--json` among the options (not after `--`): then errors are JSON too."""
    for a in argv:
        if a == "--":
            return False
        if a == "--json":
            return True
    return False


def main(argv: list[str] | None = None) -> int:
    """Run one command; return its exit status (`base.exit_status`: 0 ok, 1 refused or failed,
    2 usage error, 3 a transition parked for approval)."""
    args = list(sys.argv[1:] if argv is None else argv)
    as_json = wants_json(args)
    tolerant_streams()
    try:
        from .fast import fast

        rv = fast(args)
        if rv is None:
            from .full import run

            rv = run(args, as_json)
        return rv
    except StatewrightError as e:
        error_out(e.code, e.message, as_json, e.to_dict() if as_json else None)
        return exit_status(e.code)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # `statewright history | head`
        return 0
    except Exception as e:  # last line of defence: one line, never a traceback
        error_out("INTERNAL", f"{type(e).__name__}: {e}", as_json)
        return 1


if __name__ == "__main__":
    sys.exit(main())
