"""`statewright ui`: the local web page (runs, graphs, history, approvals)."""

from __future__ import annotations

import typer

from .app import ProjectOpt, app


@app.command("ui")
def ui_cmd(
    port: int = typer.Option(0, "--port", min=0, max=65535,
                             help="Port on 127.0.0.1 (default: any free port)."),
    project: str | None = ProjectOpt,
) -> None:
    """Serve the web page on 127.0.0.1: runs, each run's graph, history and approvals.

    Prints a sign-in link that works once: open it in your browser. Approving and rejecting
    from the page need it; nobody else on the machine (an agent's shell included) can.
    """
    from ..runtime import Runtime
    from ..ui.server import serve

    try:
        serve(Runtime.open(project), port)
    except KeyboardInterrupt:
        pass
