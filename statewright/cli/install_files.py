"""What `statewright install` and its per-host commands share: the `install` command group, the
installed scripts' paths, and Claude Code's and the other hosts' JSON files read (a file that is
not JSON is an error naming the spot) and written atomically (temp file + rename)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import typer

from ..atomic import write_atomic
from ..errors import INVALID_ARGUMENTS, StatewrightError
from .app import app

install_app = typer.Typer(help="Wire statewright into an agent host.", no_args_is_help=True)
app.add_typer(install_app, name="install")


def hook_program() -> str:
    """The absolute path of the program a process-form hook runs: this installation's native
    client (`statewright-hook-native`) where it was built, else `statewright-hook`."""
    from ..hook.native import program_beside
    from ..wiring import HOOK_SCRIPT

    hook = script_path(HOOK_SCRIPT)
    return program_beside(hook) or hook


def script_path(name: str) -> str:
    """Absolute path of an installed console script: next to the running interpreter first
    (the venv statewright is installed in), else on PATH."""
    import shutil

    candidates = [Path(sys.executable).parent / name, Path(sys.argv[0]).resolve().parent / name]
    for c in candidates:
        if c.is_file() and os.access(c, os.X_OK):
            return str(c.absolute())
    found = shutil.which(name)
    if found:
        return str(Path(found).absolute())
    raise StatewrightError(INVALID_ARGUMENTS,
                           f"cannot find the installed `{name}` script (looked next to "
                           f"{sys.executable} and on PATH); install statewright with pip first")


# -- files -------------------------------------------------------------------------------------

def read_json_file(path: Path) -> tuple[dict[str, Any] | None, bool]:
    """(content, existed). A file that is not JSON is an error naming the spot."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None, False
    except (OSError, UnicodeDecodeError) as exc:
        raise StatewrightError(INVALID_ARGUMENTS,
                               f"{path}: cannot read: {exc}; nothing was changed") from None
    if not text.strip():
        return {}, True
    try:
        return json.loads(text), True
    except json.JSONDecodeError as exc:
        raise StatewrightError(INVALID_ARGUMENTS,
                               f"{path}: not valid JSON ({exc.msg} at line {exc.lineno}, column "
                               f"{exc.colno}); fix or remove it; nothing was changed") from None


def write_json_file(path: Path, data: dict[str, Any]) -> None:
    write_text_file(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")


def write_text_file(path: Path, text: str) -> None:
    """`text` into `path` atomically (a temporary file beside it, renamed over it), keeping an
    existing file's mode; a new file gets the usual mode."""
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        mode = path.stat().st_mode & 0o777
    except FileNotFoundError:  # a new file gets the usual mode
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
    write_atomic(str(path), text.encode("utf-8"), mode)


def _bad(path: Path, problems: list[tuple[str, str]]) -> StatewrightError:
    lines = "; ".join(f"{ptr or '/'}: {what}" for ptr, what in problems)
    return StatewrightError(INVALID_ARGUMENTS, f"{path}: {lines}; nothing was changed")
