"""CLI command: `statewright doctor [--json]`: what this machine and its hosts enforce.

The report is a list of sections, each a function `(root) -> Section` in `SECTIONS`; a new
concern (the kernel tier, the store) adds its own section there. A section never raises: what
it cannot find out is said in its lines.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .app import ProjectOpt, app, console, json_option
from .base import answer


@dataclass
class Section:
    title: str
    lines: list[str] = field(default_factory=list)
    data: Any = None  # what --json prints for this section


def kernel_section(root: Path) -> Section:
    """The kernel tier this machine gives sandboxed lines, what the kernel offers, and what
    each state setting means here (`doctor_kernel`)."""
    from .doctor_kernel import kernel_report

    try:
        lines, data = kernel_report()
    except Exception as exc:  # (a section never raises)
        return Section("Kernel", [f"could not find out what the kernel enforces: {exc}"], None)
    return Section("Kernel", lines, data)


#: the report's sections, in order
SECTIONS = [kernel_section]


@app.command("doctor", help="What this machine enforces: the kernel tier sandboxed lines run "
                            "under, the hosts wired, their hook forms and what each does when "
                            "a hook fails.")
def doctor_cmd(as_json: bool = json_option("the report"),
               project: str | None = ProjectOpt) -> None:
    from ..config import find_project_root

    root = find_project_root(project)
    sections = [make(root) for make in SECTIONS]
    data = {s.title.lower(): s.data for s in sections}

    def show() -> None:
        for s in sections:
            console.print(f"[bold]{s.title}[/bold]")
            for line in s.lines:
                console.print(f"  {line}", highlight=False, soft_wrap=True, markup=False)

    answer(data, as_json, show)
