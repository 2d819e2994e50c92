"""Run the installed `statewright` console script (and, for comparison, its typer path alone)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.conftest import bin_path, clean_env

# the same `main` with the fast path switched off: every argument goes to the typer app
TYPER_ONLY = ("import sys; import statewright.cli.fast as f; f.fast = lambda argv: None; "
              "from statewright.cli import main; sys.exit(main(sys.argv[1:]))")


def sw(*args: str, cwd: Path | None = None, stdin: str | None = None, typer_only: bool = False,
       **env: str) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-c", TYPER_ONLY, *args] if typer_only else [bin_path("statewright"),
                                                                       *args]
    return subprocess.run(cmd, capture_output=True, text=True, cwd=cwd, input=stdin,
                          env=clean_env(COLUMNS=env.pop("COLUMNS", "80"), **env), timeout=120)


def one_error_line(p: subprocess.CompletedProcess, code: str) -> str:
    """The process failed with exactly one line `error[CODE]: ...` on stderr, no traceback."""
    assert p.returncode != 0, p
    assert "Traceback" not in p.stderr + p.stdout
    lines = [ln for ln in p.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith(f"error[{code}]: "), p.stderr
    return lines[0]
