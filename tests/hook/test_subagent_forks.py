"""Sub-agents on parallel fork branches (DESIGN section 3), through the real `statewright-hook`
process: the hook input's `agent_id` tells sub-agents apart; a sub-agent binds itself with
`statewright fork BRANCH` run through its shell (the hook exports its key to the CLI); from then
on its calls obey the branch's rules, the parent's calls the parent's, and the join fires when
both branches are done."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from conftest import VENV_BIN

from .harness import BASH_OK as OK
from .harness import SESSION, Project, allowed, denied

pytestmark = pytest.mark.e2e



@pytest.fixture
def proj(tmp_path: Path) -> Project:
    p = Project(tmp_path / "proj")
    (p.root / "docs").mkdir()
    (p.root / "docs" / "guide.md").write_text("# Guide\n")
    p.start("parallel-subagents", "--session", SESSION)
    p.cli("transition", "PLAN_READY", "--session", SESSION)
    return p


def shell(p: Project, command: str, agent: str | None = None) -> subprocess.CompletedProcess:
    """Run a Bash line as Claude Code would after the PreToolUse hook allowed it: with the
    hook's `updatedInput` when it gave one, in the project, then report it (PostToolUse)."""
    extra = {"agent_id": agent, "agent_type": "general-purpose"} if agent else {}
    out = p.pre("Bash", {"command": command}, **extra)
    allowed(out)
    line = out["hookSpecificOutput"]["updatedInput"]["command"] if out else command
    env = {**p.env, "PATH": f"{VENV_BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    r = subprocess.run(["bash", "-c", line], cwd=p.root, capture_output=True, text=True,
                       env=env, timeout=120)
    payload = p.payload("PostToolUse" if r.returncode == 0 else "PostToolUseFailure",
                        tool_name="Bash", tool_input={"command": line}, tool_use_id="t", **extra)
    if r.returncode == 0:
        payload["tool_response"] = {**OK, "stdout": r.stdout}
        p.hook("post-tool-use", payload)
    else:
        payload["error"] = f"Exit code {r.returncode}\n{r.stderr}"
        p.hook("post-tool-use-failure", payload)
    return r


def edit(p: Project, agent: str | None) -> dict | None:
    extra = {"agent_id": agent} if agent else {}
    return p.pre("Edit", {"file_path": p.path("docs/guide.md"), "old_string": "# Guide",
                          "new_string": "# The guide"}, **extra)


def test_two_subagents_work_their_branches_under_their_rules_and_join(proj: Project) -> None:
    r = shell(proj, "statewright transition SPLIT")
    assert r.returncode == 0, r.stderr
    # meta.parallel_forks: the parent's calls obey the parent's state (dispatching) at once,
    # and a sub-agent that has not bound itself obeys its session's rules (no escape)
    assert "Edit" in denied(edit(proj, None))
    assert "Edit" in denied(edit(proj, "agent-docs"))
    assert "pytest" in denied(proj.pre("Bash", {"command": "pytest"}, agent_id="agent-docs"))
    r = shell(proj, "statewright fork docs", agent="agent-docs")
    assert r.returncode == 0, r.stderr
    assert "Edit" in denied(edit(proj, None))
    allowed(edit(proj, "agent-docs"))  # docs_writing allows edits...
    assert "pytest" in denied(proj.pre("Bash", {"command": "pytest"}, agent_id="agent-docs"))

    # the other sub-agent takes the other branch; nobody takes a held one or switches
    r = shell(proj, "statewright fork docs", agent="agent-tests")
    assert r.returncode != 0 and "TOOL_DENIED" in r.stderr and "another agent" in r.stderr
    assert shell(proj, "statewright fork tests", agent="agent-tests").returncode == 0
    r = shell(proj, "statewright fork tests", agent="agent-docs")
    assert r.returncode != 0 and "TOOL_DENIED" in r.stderr

    listing = proj.cli("fork", "--json", "--session", SESSION).stdout
    assert f"{SESSION}#agent=agent-docs" in listing and f"{SESSION}#agent=agent-tests" in listing

    # the parent still obeys its own rules while both branches are held
    assert "Edit" in denied(edit(proj, None))

    # tests branch: DONE only once pytest was seen passing (evidence is the branch run's own)
    (proj.root / "test_ok.py").write_text("def test_ok():\n    assert True\n")
    r = shell(proj, "statewright transition DONE", agent="agent-tests")
    assert r.returncode != 0 and "GUARD_REJECTED" in r.stderr
    assert shell(proj, "pytest -q", agent="agent-tests").returncode == 0
    assert shell(proj, "statewright transition DONE", agent="agent-tests").returncode == 0

    # the finished sub-agent is back under its session's rules; the docs branch finishes
    assert "Edit" in denied(edit(proj, "agent-tests"))
    assert shell(proj, "statewright transition DONE", agent="agent-docs").returncode == 0
    state = proj.status(SESSION)
    assert state["state"] == "reviewing", state
    rows = json.loads(proj.cli("history", "--json", "--session", SESSION).stdout)
    kinds = [h["kind"] for h in rows]
    assert kinds.count("bound") == 2 and "joined" in kinds
