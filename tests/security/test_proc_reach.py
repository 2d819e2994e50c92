"""`blocked_env` and the ways to /proc that its text does not show (check 6, DESIGN section 4):
a search from `/` (a link to it, `..` from the project, the host's working directory), a line run
in a process's directory (a link to one, the host's working directory, a change of directory the
analysis cannot follow), and a link the deciding process may not read. Through the pure gate and
the real hook (served and deciding alone), with everyday controls beside the attacks; the
corpus `corpus/channels.txt` holds the cases that need no file system."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO, clean_env

sys.path.insert(0, str(REPO))
from statewright.definition.compiled import State
from statewright.policy import Counters, GateContext, ToolCall, gate
from tests.hook.harness import Project, allowed, denied

pytestmark = pytest.mark.e2e

FLOW = {"id": "env-flow", "initial": "work", "states": {
    "work": {"blocked_env": ["SECRET_TOKEN"], "on": {"DONE": "done"}},
    "done": {"type": "final"}}}


@pytest.fixture(scope="module")
def proj(tmp_path_factory: pytest.TempPathFactory) -> Project:
    root = tmp_path_factory.mktemp("proc-reach") / "proj"
    (root / "workflows").mkdir(parents=True)
    (root / "src").mkdir()
    (root / "src" / "app.py").write_text("import os\nprint(os.environ)\n")
    os.symlink("/", root / "slash")  # links an agent could have made in an earlier state
    os.symlink(f"/proc/{os.getpid()}", root / "me")
    os.symlink(f"/proc/{os.getpid()}/environ", root / "el")
    (root / "deep").mkdir()
    os.symlink(f"/proc/{os.getpid()}/environ", root / "deep" / "notes.txt")
    p = Project(root)
    p.write_workflow(FLOW)
    p.start("env-flow")
    return p


def _gate(p: Project, tool: str, args: dict, cwd: str | None = None) -> bool:
    state = State(name="work", blocked_env=("SECRET_TOKEN",))
    ctx = GateContext(project_root=str(p.root), store_dir=str(p.root / ".statewright"),
                      protected_files=frozenset())
    return gate(state, Counters(), ToolCall(tool, args, cwd=cwd), ctx).allowed


def _hook(p: Project, tool: str, args: dict, cwd: str) -> list[dict | None]:
    """The hook's answers, served by the resident server and deciding alone."""
    payload = p.payload("PreToolUse", tool_name=tool, tool_input=args, tool_use_id="toolu_pr",
                        cwd=cwd)
    alone = dict(p.env, STATEWRIGHT_HOOK_RESIDENT="0")
    return [p.hook("pre-tool-use", payload), p.hook("pre-tool-use", payload, env=alone)]


def _cases(p: Project) -> tuple[list[tuple[str, dict, str]], list[tuple[str, dict, str]]]:
    root = str(p.root)
    mine = f"/proc/{os.getpid()}"
    attacks = [
        ("Bash", {"command": "grep -r _TOKEN= slash"}, root),
        ("Bash", {"command": "grep -r _TOKEN= slash/"}, root),
        ("Bash", {"command": "cd slash && grep -r _TOKEN= ."}, root),
        ("Bash", {"command": "cd me && cat e*"}, root),
        ("Bash", {"command": "cd me && cat *.py"}, root),  # (any word there reaches it)
        ("Bash", {"command": "grep -r _TOKEN= me"}, root),
        ("Bash", {"command": "env -C slash grep -r _TOKEN= ."}, root),
        ("Bash", {"command": "tar -cf - slash/proc | strings"}, root),
        ("Bash", {"command": "grep -r _TOKEN= ."}, "/"),
        ("Bash", {"command": "rg _TOKEN="}, "/"),
        ("Bash", {"command": "cat e*"}, mine),
        ("Bash", {"command": "cat *"}, root + "/me"),
        ("Grep", {"pattern": "_TOKEN="}, "/"),
        ("Grep", {"pattern": "_TOKEN=", "path": "slash"}, root),
        ("Grep", {"pattern": "_TOKEN=", "path": "."}, "/"),
        # a link given by a glob or under a link's directory, a link to a process environment
        ("Bash", {"command": "cat me/e*"}, root),
        ("Bash", {"command": "cat m*/e*"}, root),
        ("Bash", {"command": "cat me/$F"}, root),
        ("Bash", {"command": "cat el"}, root),
        ("Bash", {"command": "head -c 4096 el"}, root),
        ("Bash", {"command": "strings < el"}, root),
        ("Bash", {"command": "cat e?"}, root),
        ("Bash", {"command": "cd src && cat ../el"}, root),
        # a value the line gives a variable names a link to `/`
        ("Bash", {"command": "D=slash; grep -r _TOKEN= $D"}, root),
        ("Bash", {"command": "for d in slash; do rg _TOKEN= $d; done"}, root),
    ]
    attacks += [  # (a link in the directory a wrapper runs its command in)
        ("Bash", {"command": "env -C deep cat notes.txt"}, root),
        ("Bash", {"command": "env -C deep sh -c 'cat notes.txt'"}, root),
        ("Bash", {"command": "sudo env -C deep cat notes.txt"}, root),
    ]
    controls = [
        ("Bash", {"command": "env -C src cat app.py"}, root),
        ("Bash", {"command": "grep -rn environ src"}, root),
        ("Bash", {"command": "cat /proc/cpuinfo"}, root),
        ("Bash", {"command": "cd src && grep -rn main ."}, root),
        ("Bash", {"command": "grep -rn main ."}, root + "/src"),
        ("Bash", {"command": "ls"}, "/"),
        ("Bash", {"command": "cat src/app.py"}, root),
        ("Grep", {"pattern": "main"}, root),
        ("Grep", {"pattern": "environ", "path": "src"}, root),
        ("Read", {"file_path": "/proc/self/status"}, root),
        ("Bash", {"command": "cat src/*.py"}, root),
        ("Bash", {"command": "head -n 3 sr*/app.py"}, root),
        ("Bash", {"command": "grep -n el src/app.py"}, root),
        ("Bash", {"command": "D=src; grep -rn main -- $D"}, root),
        ("Bash", {"command": "cat me/status"}, root),
    ]
    return attacks, controls


def test_gate(proj: Project) -> None:
    attacks, controls = _cases(proj)
    for tool, args, cwd in attacks:
        assert not _gate(proj, tool, args, cwd), (tool, args, cwd)
    for tool, args, cwd in controls:
        assert _gate(proj, tool, args, cwd), (tool, args, cwd)


def test_hook(proj: Project) -> None:
    attacks, controls = _cases(proj)
    for tool, args, cwd in attacks:
        for out in _hook(proj, tool, args, cwd):
            assert "/proc/*/environ" in denied(out), (tool, args, cwd, out)
    for tool, args, cwd in controls:
        for out in _hook(proj, tool, args, cwd):
            allowed(out)


def test_a_link_the_decider_may_not_read_is_judged_as_written(proj: Project) -> None:
    """`os.path.realpath` raises on a link this process may not read (`/proc/1/cwd` when pid 1
    is another user's and this one is not root); such a path is judged as written (nor may the
    agent follow it), with no crash. (Run as root, the link resolves and the answers agree.)"""
    link = "/proc/1/cwd"
    assert not _gate(proj, "Grep", {"pattern": "x", "path": link})
    assert _gate(proj, "Read", {"file_path": link + "/etc/hostname"})
    for out in _hook(proj, "Grep", {"pattern": "x", "path": link}, str(proj.root)):
        denied(out)
    for out in _hook(proj, "Read", {"file_path": link + "/etc/hostname"}, str(proj.root)):
        allowed(out)


def test_a_line_run_in_a_process_directory_reads_its_environment(tmp_path: Path) -> None:
    """The effect the refusals above prevent: `cat e*` run in a process's directory prints its
    environment (a child holding a marker)."""
    env = dict(clean_env(), SECRET_TOKEN="marker-5f1c")
    child = subprocess.Popen(["sleep", "30"], env=env)
    try:
        out = subprocess.run(["bash", "-c", "cat e*"], cwd=f"/proc/{child.pid}",
                             capture_output=True, timeout=30, env=clean_env())
        assert b"SECRET_TOKEN=marker-5f1c" in out.stdout
    finally:
        child.kill()
        child.wait()
