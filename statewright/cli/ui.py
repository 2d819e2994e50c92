"""`statewright ui`: the local web page (runs, graphs, history, approvals)."""

from __future__ import annotations

import typer

from .app import ProjectOpt, app


@app.command("ui")
def ui_cmd(
    port: int = typer.Option(0, "--port", min=0, max=65535,
                             help="Port on 127.0.0.1 (default: any free port)."),
    token: str | None = typer.Option(
        None, "--token", help="Your approver's token (default: $STATEWRIGHT_TOKEN): the page's "
        "decisions name you; needed on a shared store.", show_default=False),
    project: str | None = ProjectOpt,
) -> None:
    """Serve the web page on 127.0.0.1: runs, each run's graph, history and approvals.

    Prints a sign-in link that works once: open it in your browser. Approving and rejecting
    from the page need it; nobody else on the machine (an agent's shell included) can. On a
    shared store the page shows every project's runs, and its decisions name the approver of
    the token it was started with.
    """
    from ..runtime import Runtime
    from ..runtime.people import approver
    from ..ui.server import serve

    rt = Runtime.open(project)
    who = approver(rt, token)
    try:
        serve(rt, port, who)
    except KeyboardInterrupt:
        pass
