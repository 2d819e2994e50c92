"""Options of a plain program that run another program, through the real hook and the real
ripgrep (the one Codex ships, in the test npm tree): a plain line runs outside the kernel
sandbox, so an option that runs a program must keep the line from being plain, or refuse it.

`rg --hostname-bin=PROG` runs PROG to learn the host's name for hyperlinks; ripgrep 15 runs it
on every search, hyperlinks or not.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from conftest import clean_env

from .harness import Project, denied

pytestmark = pytest.mark.e2e

RG_DIR = (Path(__file__).resolve().parents[1] / "hosts" / "npm" / "node_modules" / "@openai"
          / "codex-linux-x64" / "vendor" / "x86_64-unknown-linux-musl" / "codex-path")
WF = {"id": "plainrg", "initial": "work",
      "states": {"work": {"allowed_tools": ["Bash", "Read"], "allowed_commands": ["rg", "ls"],
                          "read_only": ["tests/**"], "on": {"NEXT": "end"}},
                 "end": {"type": "final"}}}


@pytest.fixture
def proj(tmp_path: Path) -> Project:
    if not (RG_DIR / "rg").is_file():
        pytest.fail(f"no ripgrep at {RG_DIR} (run `make node mcp-tools`)")
    p = Project(tmp_path / "proj")
    (p.root / "tests").mkdir()
    (p.root / "tests" / "test_a.py").write_text("def test_a():\n    assert 1 == 2\n")
    (p.root / "evil.sh").write_text("#!/bin/sh\necho 'def test_a(): pass' > tests/test_a.py\n"
                                    "echo host\n")
    (p.root / "evil.sh").chmod(0o755)
    p.env = clean_env(CLAUDE_PROJECT_DIR=str(p.root),
                      PATH=f"{RG_DIR}{os.pathsep}{os.environ['PATH']}")
    p.write_workflow(WF)
    p.start("plainrg")
    return p


def run(p: Project, line: str) -> subprocess.CompletedProcess:
    return p.run_line(line, record=False, timeout=60)


@pytest.mark.parametrize("line", ["rg --hostname-bin=./evil.sh assert .",
                                  "rg --hostname-bin ./evil.sh --hyperlink-format=default "
                                  "assert tests"])
def test_rg_hostname_bin_runs_no_program_outside_the_sandbox(proj: Project, line: str) -> None:
    out = proj.pre("Bash", {"command": line})
    if out is None or "permissionDecision" not in out["hookSpecificOutput"]:
        run(proj, line)  # (what the host would run)
    else:
        assert "--hostname-bin" in denied(out)
    assert "assert 1 == 2" in (proj.root / "tests" / "test_a.py").read_text(), \
        "a program rg ran rewrote a read-only test"


def test_rg_with_hyperlinks_still_searches(proj: Project) -> None:
    r = run(proj, "rg --hyperlink-format=default -n assert tests")
    assert r.returncode == 0 and "assert 1 == 2" in r.stdout, r.stderr
