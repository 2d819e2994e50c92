"""CLI command: `statewright hook EVENT` — the same entry point as the `statewright-hook` script.

Claude Code should call the lean `statewright-hook` console script (it never imports typer or
rich); this command exists so `statewright hook pre-tool-use < input.json` works the same way
for people who only have `statewright` on their PATH.
"""

from __future__ import annotations

import typer

from .app import app


@app.command("hook", help="Run a Claude Code hook: reads the hook JSON on stdin, answers on stdout "
                          "(EVENT: pre-tool-use, post-tool-use, session-start, user-prompt-submit, "
                          "stop).")
def hook(event: str = typer.Argument(..., help="pre-tool-use | post-tool-use | session-start | "
                                               "user-prompt-submit | stop (or PreToolUse, ...)"),
         ) -> None:
    from ..hook import main

    raise typer.Exit(main([event]))
