"""A project wired with `install claude --scope project` on one machine, cloned on another:
the committed files carry no machine's paths, so the real Claude Code works there with
statewright installed (enforced), without it and without a store (untouched), and without it
but with a store (refused, saying how to install it)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import bin_path

from .harness import Host
from .standin import Text, ToolUse

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(600)]

WF = {"id": "tdd", "initial": "red", "states": {
    "red": {"allowed_tools": ["Bash", "Write"], "allowed_commands": ["echo"],
            "on": {"DONE": "end"}},
    "end": {"type": "final"}}}
VENV_BIN = str(Path(bin_path("statewright")).parent)


def path_without_statewright() -> str:
    parts = [p for p in os.environ.get("PATH", "/usr/bin:/bin").split(os.pathsep)
             if p and os.path.realpath(p) != os.path.realpath(VENV_BIN)]
    path = os.pathsep.join(parts)
    assert shutil.which("statewright", path=path) is None
    return path


def clone(tmp_path: Path, path: str) -> Host:
    """Machine A wires and commits; machine B clones (committed files only) into a new Host."""
    a = Host(tmp_path / "a", "process", workflows={"tdd": WF}, scope="project")
    subprocess.run(["git", "-C", str(a.root), "add", "-A"], check=True)
    subprocess.run(["git", "-C", str(a.root), "-c", "user.email=a@a", "-c", "user.name=a",
                    "commit", "-qm", "wired"], check=True)
    b_root = tmp_path / "b"
    subprocess.run(["git", "clone", "-q", str(a.root), str(b_root)], check=True)
    committed = (b_root / ".claude" / "settings.json").read_text() + \
        (b_root / ".mcp.json").read_text()
    assert str(tmp_path) not in committed and VENV_BIN not in committed
    b = Host.existing(b_root, "process", path)  # its own Claude Code config: another machine
    # the user of machine B approves the project's MCP server once (Claude Code asks)
    (b_root / ".claude" / "settings.local.json").write_text(
        json.dumps({"enableAllProjectMcpServers": True}))
    return b


STEPS = [ToolUse("Bash", {"command": "echo hi > out.txt"}),
         ToolUse("Bash", {"command": "rm out.txt"}), Text("done")]


def test_clone_with_statewright_installed_is_enforced(tmp_path: Path) -> None:
    b = clone(tmp_path, VENV_BIN + os.pathsep + path_without_statewright())
    b.start("tdd")
    s = b.run(STEPS, allowed_tools=("Bash",))
    assert s.returncode == 0, s.stderr
    r = s.results()
    assert not r[0][2] and r[1][2] and "statewright refused" in r[1][1]
    assert (b.root / "out.txt").exists()


def test_clone_without_statewright_and_without_a_store_works_normally(tmp_path: Path) -> None:
    b = clone(tmp_path, path_without_statewright())
    s = b.run(STEPS, allowed_tools=("Bash",))
    assert s.returncode == 0, s.stderr
    assert [x[2] for x in s.results()] == [False, False]
    assert not (b.root / "out.txt").exists()  # the rm ran: nothing was enforced
    assert not (b.root / ".statewright").exists()


def test_clone_without_statewright_but_with_a_store_is_refused(tmp_path: Path) -> None:
    b = clone(tmp_path, path_without_statewright())
    b.start("tdd")  # this machine's statewright was removed after a run was started
    s = b.run(STEPS, allowed_tools=("Bash",))
    assert s.returncode == 0, s.stderr
    r = s.results()
    assert all(x[2] and "pip install PATH/TO/statewright" in x[1] for x in r)
    assert not (b.root / "out.txt").exists()
