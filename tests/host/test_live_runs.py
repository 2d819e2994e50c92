"""Live runs through the real Claude Code CLI (scripted model), both hook forms: evidence the
agent cannot fake gating DONE, an interrupt fired by a Bash redirect and one fired by another
process between two model turns, resume after a pause in another session (DESIGN section 3,
issue 13)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from .harness import FORMS, SW, Host
from .standin import Outside, Text, ToolUse

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(600)]

EVIDENCE_WF = {
    "id": "evidence",
    "initial": "work",
    "guards": {"passed": {"field": "_observed.commands.test.ok", "op": "eq", "value": True}},
    "states": {
        "work": {"allowed_tools": ["Bash", "Write"], "allowed_commands": ["test"],
                 "on": {"DONE": {"target": "end", "guard": "passed"}}},
        "end": {"type": "final"},
    },
}

WATCHED_WF = {
    "id": "watched",
    "initial": "work",
    "interrupts": {"cfg": {"trigger": {"file_pattern": "config/**/*.yml"},
                           "target": "config_review"}},
    "states": {
        "work": {"allowed_tools": ["Bash"], "allowed_commands": ["echo", "cat"],
                 "on": {"DONE": "end"}},
        "config_review": {"allowed_tools": ["Read"], "on": {"REVIEWED": "$return"}},
        "end": {"type": "final"},
    },
}

PAUSABLE_WF = {
    "id": "pausable",
    "initial": "work",
    "meta": {"allow_agent_pause": True},
    "states": {
        "work": {"allowed_tools": ["Bash"], "allowed_commands": ["echo"], "on": {"DONE": "end"}},
        "end": {"type": "final"},
    },
}


@pytest.mark.parametrize("form", FORMS)
def test_done_needs_the_check_statewright_saw_pass(tmp_path: Path, form: str) -> None:
    host = Host(tmp_path / "proj", form, workflows={"evidence": EVIDENCE_WF})
    host.start("evidence")
    done = ToolUse(SW + "statewright_transition", {"event": "DONE",
                                                   "data": {"tests_passed": True}})
    s = host.run([
        done,                                              # only saying so
        ToolUse("Bash", {"command": "test -f passed.txt"}),  # exits 1
        done,
        ToolUse("Bash", {"command": "test -f passed.txt || true"}),  # exits 0: not test's own
        done,
        ToolUse("Write", {"file_path": str(host.root / "passed.txt"), "content": "ok\n"}),
        ToolUse("Bash", {"command": "test -f passed.txt"}),  # exits 0
        done,
        Text("finished"),
    ])
    assert s.returncode == 0, s.stderr
    r = s.results()
    for i, seen in ((0, "nothing (the field is not set)"), (2, "saw false"), (4, "saw false")):
        assert r[i][2] and "GUARD_REJECTED" in r[i][1], r[i]
        assert "_observed.commands.test.ok" in r[i][1] and seen in r[i][1], r[i]
    assert not r[7][2] and '"end"' in r[7][1], r[7]
    obs = [h for h in host.history() if h["kind"] == "observed"]
    assert [h["data"]["ok"] for h in obs] == [False, True]


@pytest.mark.parametrize("form", FORMS)
def test_a_bash_redirect_fires_the_interrupt(tmp_path: Path, form: str) -> None:
    host = Host(tmp_path / "proj", form, workflows={"watched": WATCHED_WF})
    (host.root / "config").mkdir()
    (host.root / "config" / "app.yml").write_text("replicas: 1\n")
    host.start("watched")
    s = host.run([
        ToolUse("Bash", {"command": "echo starting"}),
        ToolUse("Bash", {"command": "echo 'replicas: 3' > config/app.yml"}),
        ToolUse("Bash", {"command": "echo after"}),
        Text("finished"),
    ])
    assert s.returncode == 0, s.stderr
    r = s.results()
    assert not r[1][2] and (host.root / "config" / "app.yml").read_text() == "replicas: 3\n"
    # the handler's rules apply to the next call (Read only)
    assert r[2][2] and "config_review" in r[2][1], r[2]
    assert host.status()["state"] == "config_review"
    fired = [h for h in host.history() if h["kind"] == "interrupted"]
    assert [h["data"]["file"] for h in fired] == ["config/app.yml"]


@pytest.mark.parametrize("form,resident", [("mcp", "1"), ("process", "1"), ("process", "0")],
                         ids=["mcp", "process", "process-alone"])
def test_a_file_changed_by_another_process_fires_the_interrupt(tmp_path: Path, form: str,
                                                               resident: str) -> None:
    """Between two model turns a process that is not the agent (an editor, a deploy script: here
    a Python process the test starts) rewrites a watched file. The agent's next call is refused
    under the handler's rules, and that refusal tells it why. In the `mcp` form serve's file
    watcher fires it (a change made while the SDK still loads is found when the watcher starts);
    in the process form the hook compares the marks of the watched files at the next call,
    answered by the resident hook server or by the hook process alone."""
    host = Host(tmp_path / "proj", form, workflows={"watched": WATCHED_WF})
    (host.root / "config").mkdir()
    app = host.root / "config" / "app.yml"
    app.write_text("replicas: 1\n")
    host.start("watched")

    def edit_elsewhere() -> None:
        subprocess.run([sys.executable, "-c", "import sys; open(sys.argv[1], 'w')"
                        ".write('replicas: 5\\n')", str(app)], check=True)
        if form == "mcp":  # serve's watcher fires it by itself: wait until it has (bounded)
            deadline = time.monotonic() + 60
            while host.status()["state"] != "config_review" and time.monotonic() < deadline:
                time.sleep(0.2)

    s = host.run([
        ToolUse("Bash", {"command": "echo starting"}),
        Outside(edit_elsewhere, ToolUse("Bash", {"command": "echo after"})),
        Text("finished"),
    ], env={"STATEWRIGHT_HOOK_RESIDENT": resident})
    assert s.returncode == 0, s.stderr
    r = s.results()
    assert not r[0][2], r[0]
    # the handler's rules (Read only) apply to the call after the change, which says why
    assert r[1][2] and "config_review" in r[1][1], r[1]
    assert "[STATEWRIGHT INTERRUPT] config/app.yml changed" in r[1][1], r[1]
    assert app.read_text() == "replicas: 5\n"  # statewright changed nothing itself
    assert host.status()["state"] == "config_review"
    fired = [h for h in host.history() if h["kind"] == "interrupted"]
    assert [h["data"]["file"] for h in fired] == ["config/app.yml"]


@pytest.mark.parametrize("form", FORMS)
def test_resume_after_pause_in_another_session(tmp_path: Path, form: str) -> None:
    host = Host(tmp_path / "proj", form, workflows={"pausable": PAUSABLE_WF})
    run_id = host.start("pausable")["run_id"]
    first = host.run([ToolUse(SW + "statewright_pause", {}),
                      ToolUse("Bash", {"command": "rm -f nothing.txt"}),  # nothing enforced
                      Text("paused")])
    assert first.returncode == 0, first.stderr
    r = first.results()
    assert not r[0][2] and '"paused"' in r[0][1]
    assert "statewright" not in r[1][1]
    second = host.run([ToolUse(SW + "statewright_resume", {"name": "pausable"}),
                       ToolUse("Bash", {"command": "rm -f nothing.txt"}),
                       ToolUse("Bash", {"command": "echo back"}),
                       Text("resumed")])
    assert second.returncode == 0, second.stderr
    r = second.results()
    assert not r[0][2] and '"running"' in r[0][1], r[0]
    assert r[1][2] and "statewright" in r[1][1]  # the rules apply again in this session
    assert r[2] == ("Bash", "back", False)
    rows = json.loads(host.cli("history", run_id, "--json").stdout)
    resumed = [h for h in rows if h["kind"] == "resumed"]
    assert "paused" in [h["kind"] for h in rows] and resumed
    assert resumed[0]["data"]["session"] != "default"  # the second Claude session took it


PARALLEL_WF = {
    "id": "parallel",
    "initial": "dispatch",
    "meta": {"parallel_forks": True},
    "states": {
        "dispatch": {
            "allowed_tools": ["Agent", "Task", "Read"],
            "on": {"SPLIT": {"fork": {"branches": {
                "alpha": {"initial": "alpha_work", "terminal": "alpha_done"},
                "beta": {"initial": "beta_work", "terminal": "beta_done"}},
                "join": "all", "on_complete": "review"}}},
        },
        "alpha_work": {"allowed_tools": ["Write"], "on": {"DONE": "alpha_done"}},
        "alpha_done": {"type": "final"},
        "beta_work": {"allowed_tools": ["Bash"], "allowed_commands": ["echo"],
                      "on": {"DONE": "beta_done"}},
        "beta_done": {"type": "final"},
        "review": {"allowed_tools": ["Read"], "on": {"APPROVE": "end"}},
        "end": {"type": "final"},
    },
}


@pytest.mark.parametrize("form", FORMS)
def test_two_subagents_work_a_parallel_fork_under_their_branch_rules(tmp_path: Path,
                                                                     form: str) -> None:
    host = Host(tmp_path / "proj", form, workflows={"parallel": PARALLEL_WF})
    host.start("parallel")
    root = host.root
    agent = "Agent"
    steps = {
        "": [
            ToolUse(SW + "statewright_transition", {"event": "SPLIT"}),
            ToolUse(agent, {"description": "alpha", "prompt": "[[alpha]] work branch alpha",
                            "subagent_type": "general-purpose"}),
            ToolUse(agent, {"description": "beta", "prompt": "[[beta]] work branch beta",
                            "subagent_type": "general-purpose"}),
            ToolUse("Write", {"file_path": str(root / "parent.txt"), "content": "x\n"}),
            Text("finished"),
        ],
        "[[alpha]]": [
            ToolUse(SW + "statewright_fork", {"branch": "alpha"}),
            ToolUse("Write", {"file_path": str(root / "alpha.txt"), "content": "a\n"}),
            ToolUse("Bash", {"command": "echo from-alpha"}),
            ToolUse(SW + "statewright_transition", {"event": "DONE"}),
            Text("alpha done"),
        ],
        "[[beta]]": [
            ToolUse(SW + "statewright_fork", {"branch": "alpha"}),  # held by alpha
            ToolUse(SW + "statewright_fork", {"branch": "beta"}),
            ToolUse("Bash", {"command": "echo from-beta"}),
            ToolUse("Write", {"file_path": str(root / "beta.txt"), "content": "b\n"}),
            ToolUse(SW + "statewright_transition", {"event": "DONE"}),
            Text("beta done"),
        ],
    }
    s = host.run(steps, allowed_tools=("Bash", "Read", "Write", "Edit", "Agent", "Task",
                                       "mcp__statewright"))
    assert s.returncode == 0, s.stderr
    alpha = [(r.name, r.text, r.is_error) for r in s.standin.conversations["[[alpha]]"].results()]
    beta = [(r.name, r.text, r.is_error) for r in s.standin.conversations["[[beta]]"].results()]
    assert not alpha[0][2] and '"alpha_work"' in alpha[0][1], alpha[0]
    assert not alpha[1][2] and (root / "alpha.txt").exists()     # alpha's rules: Write
    assert alpha[2][2] and "statewright" in alpha[2][1]            # ... not Bash
    assert not alpha[3][2] and '"alpha_done"' in alpha[3][1], alpha[3]
    assert beta[0][2] and "TOOL_DENIED" in beta[0][1], beta[0]    # one agent per branch
    assert not beta[1][2] and '"beta_work"' in beta[1][1], beta[1]
    assert beta[2] == ("Bash", "from-beta", False)                # beta's rules: Bash echo
    assert beta[3][2] and not (root / "beta.txt").exists()       # ... not Write
    assert not beta[4][2], beta[4]
    r = s.results()
    assert r[3][2] and not (root / "parent.txt").exists()        # the parent: dispatch rules
    assert host.status()["state"] == "review"                    # joined
