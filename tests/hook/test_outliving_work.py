"""Work that outlives the call, by class, through the real hook and the real `bash -c` of the
line it lets run: started in a permissive state, acting after the move to a stricter one.

A process substitution (`<(...)`, `>(...)`) is started by bash and never waited for: `: >(sleep
1; cp x src/a.py)` returns at once and its `cp` runs on, after the call, after the transition,
under rules that would refuse it, counted by nobody. Every command of such a line may be one
whose effects the line shows (`:`, `sleep`, `cp`), so the line was proven plain and ran outside
the kernel sandbox. Now a line holding one runs under the kernel sandbox (its PID namespace ends
what the line left), and where it cannot (`sandbox: "off"`, no kernel tier, another tool than
Bash) it is refused as `&` is. The legitimate uses (`diff <(sort a) <(sort b)`, the text `<(`
inside quotes) keep working.
"""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from statewright.sandbox import probe

from .harness import BASH_OK, Project, allowed, denied

pytestmark = pytest.mark.e2e

COMMANDS = ["echo", "cat", "sleep", "cp", ":", "diff", "sort", "head", "grep", "bash", "true"]
WF = {
    "id": "outlive",
    "initial": "work",
    "states": {
        "work": {"allowed_tools": ["Bash", "Read"], "allowed_commands": COMMANDS,
                 "on": {"NEXT": "review", "LOOSE": "loose"}},
        "loose": {"allowed_tools": ["Bash", "Read"], "allowed_commands": COMMANDS,
                  "sandbox": "off", "on": {"NEXT": "review"}},
        "review": {"allowed_tools": ["Bash", "Read"], "allowed_commands": ["cat", "ls"],
                   "read_only": ["src/**"], "max_files_per_state": 1, "on": {"DONE": "end"}},
        "end": {"type": "final"},
    },
}
ORIGINAL = "a = 1\n"
#: lines whose work goes on after the line ends, each overwriting src/a.py a second later
ATTACKS = [
    ": >(sleep 1; cp planted.py src/a.py)",
    ": <(sleep 1; cp planted.py src/a.py)",
    "true >(sleep 1; cp planted.py src/a.py) && echo done",
    "head -c1 <(echo x; sleep 1; cp planted.py src/a.py)",
    "echo <(sleep 1; cp planted.py src/a.py) > /dev/null",
    "bash -c ': >(sleep 1; cp planted.py src/a.py)'",
]


@pytest.fixture
def proj(tmp_path: Path) -> Project:
    p = Project(tmp_path / "proj")
    (p.root / "src").mkdir()
    (p.root / "src/a.py").write_text(ORIGINAL)
    (p.root / "planted.py").write_text("import os\nos.system('curl evil')\n")
    (p.root / "one.txt").write_text("b\na\nc\n")
    (p.root / "two.txt").write_text("c\nb\na\nd\n")
    p.write_workflow(WF)
    p.start("outlive")
    return p


def kernel() -> None:
    if probe.tier().kind == "none":
        pytest.fail(f"this machine has no kernel tier: {probe.tier().why}")


def run_line(p: Project, line: str, out: dict[str, Any] | None) -> subprocess.CompletedProcess:
    """The line as the host runs it after the hook's answer (the rewritten one if any), its
    output to files (as a host that does not wait for a pipe's last writer)."""
    allowed(out)
    text = out["hookSpecificOutput"]["updatedInput"]["command"] if out else line
    log = p.root.parent / "bash.log"
    with open(log, "wb") as f:
        r = subprocess.run(["bash", "-c", text], cwd=p.root, env=p.env, stdout=f, stderr=f,
                           timeout=60)
    r.stdout = log.read_bytes()
    return r


def move_on_and_wait(p: Project, line: str) -> None:
    p.post("Bash", {"command": line}, BASH_OK)
    assert p.transition("NEXT")["state"] == "review"
    time.sleep(2.5)  # (past the attack's `sleep 1`)


@pytest.mark.parametrize("line", ATTACKS)
def test_a_process_substitution_runs_under_the_kernel_and_ends_with_the_line(
        proj: Project, line: str) -> None:
    kernel()
    out = proj.pre("Bash", {"command": line})
    run_line(proj, line, out)
    move_on_and_wait(proj, line)
    assert (proj.root / "src/a.py").read_text() == ORIGINAL, \
        "work the line left acted after the move to a state where src/ is read-only"
    assert out is not None and "swbox" in out["hookSpecificOutput"]["updatedInput"]["command"]


@pytest.mark.parametrize("line", ATTACKS)
def test_without_the_kernel_a_process_substitution_is_refused(proj: Project,
                                                               line: str) -> None:
    assert proj.transition("LOOSE")["state"] == "loose"
    why = denied(proj.pre("Bash", {"command": line}))
    assert "process substitution" in why, why
    assert (proj.root / "src/a.py").read_text() == ORIGINAL


#: (line, what its output holds): everyday uses that must keep working
LEGIT = [
    ("diff <(sort one.txt) <(sort two.txt)", b"> d"),
    ("sort one.txt | diff - <(sort two.txt)", b"> d"),
    ("cat <(echo hello)", b"hello"),
]


@pytest.mark.parametrize(("line", "expect"), LEGIT)
def test_a_process_substitution_that_ends_still_works_under_the_kernel(
        proj: Project, line: str, expect: bytes) -> None:
    kernel()
    out = proj.pre("Bash", {"command": line})
    r = run_line(proj, line, out)
    assert expect in r.stdout, r.stdout
    plain = subprocess.run(["bash", "-c", line], cwd=proj.root, capture_output=True)
    assert r.returncode == plain.returncode and plain.stdout in r.stdout


@pytest.mark.parametrize("line", ["echo '<(x)' '>(y)'", "grep -c '<(' one.txt",
                                  "echo a\\<\\(b", "diff one.txt two.txt"])
def test_the_text_of_one_is_not_one(proj: Project, line: str) -> None:
    """Quoted or escaped, `<(` is text: plain where the kernel is, allowed where it is not."""
    kernel()
    out = proj.pre("Bash", {"command": line})
    allowed(out)
    assert out is None or "swbox" not in json.dumps(out), "a plain line was sandboxed"
    assert proj.transition("LOOSE")["state"] == "loose"
    allowed(proj.pre("Bash", {"command": line}))
