"""CLI command: `statewright doctor [--json]`: what this machine and its hosts enforce.

The report is a list of sections, each a function `(root) -> Section` in `SECTIONS`; a new
concern (the kernel tier, the store) adds its own section there. A section never raises: what
it cannot find out is said in its lines.
"""

from __future__ import annotations

import os
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


def hosts_section(root: Path) -> Section:
    """Each host wired for this project or this user: its scope, file, hook form, and what
    the host does when a hook fails (its fail-closed posture)."""
    from ..hostwiring import wired_hosts

    try:
        wired = wired_hosts(root)
    except Exception as exc:  # (a section never raises)
        return Section("Hosts", [f"could not read the hosts' files: {exc}"], [])
    if not wired:
        return Section("Hosts", ["no host is wired: run `statewright install claude` (or codex, "
                                 "gemini, copilot)"], [])
    lines = []
    for w in wired:
        lines.append(f"{w['host']} ({w['scope']}, {w['form']}): {w['file']}")
        lines.append(f"  when a hook fails: {w['posture']}")
    if any("process" in w["form"] for w in wired):
        lines.append(f"process hooks found on PATH run: {hook_client()}")
    return Section("Hosts", lines, wired)


def hook_client() -> str:
    """Which program a process-form hook found on PATH runs here: the native client
    (`statewright-hook-native`, with the `statewright-hook` it hands over to beside it), or the
    Python hook."""
    import shutil

    from ..names import NATIVE_HOOK_SCRIPT
    from ..wiring import HOOK_SCRIPT

    native = shutil.which(NATIVE_HOOK_SCRIPT)
    if native:
        beside = os.path.join(os.path.dirname(os.path.realpath(native)), HOOK_SCRIPT)
        if os.path.isfile(beside) and os.access(beside, os.X_OK):
            return (f"{NATIVE_HOOK_SCRIPT} ({native}): the native client hands each event to "
                    "the resident hook server, and anything else to the statewright-hook "
                    "beside it")
        return (f"{NATIVE_HOOK_SCRIPT} ({native}) has no {HOOK_SCRIPT} beside it, so every "
                "event it cannot forward is refused: reinstall statewright")
    hook = shutil.which(HOOK_SCRIPT)
    if hook:
        return (f"{HOOK_SCRIPT} ({hook}), Python: no native client on PATH (it is built "
                "with a C compiler at install, on Linux)")
    return f"nothing: neither {NATIVE_HOOK_SCRIPT} nor {HOOK_SCRIPT} is on PATH"


#: the report's sections, in order
SECTIONS = [kernel_section, hosts_section]


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
