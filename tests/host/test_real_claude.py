"""Scenarios through the real Claude Code CLI, for both hook forms (`mcp_tool` hooks answered by
the proxy, and the `statewright-hook` process), wired by the real `statewright install claude`.

The model is scripted (standin.py); everything else is real: the host, its permission rules,
its hooks, the proxy in front of the real filesystem MCP server, the store on disk.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from .harness import FORMS, SW, Host, fs_server
from .standin import Text, ToolUse

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(600)]

SECRET = "s3cr3t-value-4711"

SHELL_WF = {
    "id": "shell",
    "initial": "work",
    "states": {
        "work": {
            "allowed_tools": ["Bash", "Read", "Write", "Edit"],
            "allowed_commands": ["echo", "cat"],
            "blocked_env": ["SECRET_TOKEN"],
            "env_overrides": {"MODE": "test"},
            "max_edit_lines": 3,
            "on": {"NEXT": "review"},
        },
        "review": {"allowed_tools": ["Bash"], "allowed_commands": ["ls"], "on": {"DONE": "end"}},
        "end": {"type": "final"},
    },
}

GUARDED_WF = {
    "id": "guarded",
    "initial": "code",
    "interrupts": {"cfg": {"trigger": {"file_pattern": "config/*.yml"}, "target": "config_review"}},
    "states": {
        "code": {"allowed_tools": ["Write", "mcp__fs__read_text_file"], "on": {"DONE": "end"}},
        "config_review": {"allowed_tools": ["Read"], "on": {"REVIEWED": "$return"}},
        "end": {"type": "final"},
    },
}


def denied(result: tuple[str, str, bool]) -> bool:
    return result[2] and "statewright" in result[1]


@pytest.mark.parametrize("form", FORMS)
def test_shell_rules_env_budget_transition_and_stop(tmp_path: Path, form: str) -> None:
    host = Host(tmp_path / "proj", form, workflows={"shell": SHELL_WF})
    host.start("shell")
    s = host.run([
        ToolUse("Bash", {"command": "echo hello > out.txt && cat out.txt"}),
        ToolUse("Bash", {"command": "rm out.txt"}),
        ToolUse("Bash", {"command": "echo mode=$MODE"}),
        ToolUse("Bash", {"command": "echo $SECRET_TOKEN"}),
        ToolUse("Bash", {"command": "cat /proc/self/environ"}),
        ToolUse("Write", {"file_path": str(host.root / "small.txt"), "content": "one\ntwo\n"}),
        ToolUse("Write", {"file_path": str(host.root / "big.txt"),
                          "content": "".join(f"line {i}\n" for i in range(10))}),
        ToolUse(SW + "statewright_transition", {"event": "NEXT"}),
        ToolUse("Bash", {"command": "echo after"}),
        ToolUse("Bash", {"command": "ls"}),
        Text("finished"),
    ], env={"SECRET_TOKEN": SECRET})
    assert s.returncode == 0, s.stderr
    r = s.results()
    assert [x[0] for x in r] == ["Bash"] * 5 + ["Write", "Write", SW + "statewright_transition",
                                                "Bash", "Bash"]
    assert r[0] == ("Bash", "hello", False)
    assert denied(r[1]) and "rm out.txt" in r[1][1]
    assert (host.root / "out.txt").read_text() == "hello\n"  # the refused rm never ran
    assert r[2] == ("Bash", "mode=test", False)  # env_overrides applied through updatedInput
    assert denied(r[3]) and "SECRET_TOKEN" in r[3][1]
    assert denied(r[4])
    assert not r[5][2] and (host.root / "small.txt").read_text() == "one\ntwo\n"
    assert denied(r[6]) and not (host.root / "big.txt").exists()  # the edit budget
    assert not r[7][2] and '"review"' in r[7][1]
    # the transition changed the rules of the host's own tools
    assert denied(r[8]) and "echo after" in r[8][1]
    assert not r[9][2] and "small.txt" in r[9][1]
    # the secret never reached the model, in any request
    assert SECRET not in s.everything_sent()
    # the Stop hook reminded the model that review is not a final state
    assert any("Stop hook feedback" in t and "DONE" in t for t in s.main.texts())
    st = host.status()
    assert st["state"] == "review" and st["status"] == "running"


@pytest.mark.parametrize("form", FORMS)
def test_interrupt_return_and_forwarded_tools(tmp_path: Path, form: str) -> None:
    root = tmp_path / "proj"
    host = Host(root, form, workflows={"guarded": GUARDED_WF}, servers={"fs": fs_server(root)})
    (root / "notes.txt").write_text("a note\n")
    host.start("guarded")
    read_notes = ToolUse(SW + "fs__read_text_file", {"path": str(root / "notes.txt")})
    s = host.run([
        read_notes,
        ToolUse("Write", {"file_path": str(root / "config" / "app.yml"), "content": "a: 1\n"}),
        ToolUse("Write", {"file_path": str(root / "src.txt"), "content": "x\n"}),
        read_notes,
        ToolUse(SW + "statewright_transition", {"event": "REVIEWED"}),
        ToolUse("Write", {"file_path": str(root / "src.txt"), "content": "x\n"}),
        Text("finished"),
    ])
    assert s.returncode == 0, s.stderr
    r = s.results()
    assert "a note" in r[0][1] and not r[0][2]  # forwarded through the proxy
    assert not r[1][2] and (root / "config" / "app.yml").exists()
    assert any("[STATEWRIGHT INTERRUPT]" in t and "config/app.yml" in t for t in s.main.texts())
    assert denied(r[2]) and "config_review" in r[2][1]  # the handler state's rules
    # the forwarded tool is gone from the host's tool list (the proxy announced the change), or,
    # if the host had not refreshed it yet, the proxy refuses the call itself
    assert r[3][2] and ("TOOL_DENIED" in r[3][1] or "No such tool available" in r[3][1])
    assert not r[4][2] and '"code"' in r[4][1]  # $return
    assert not r[5][2] and (root / "src.txt").read_text() == "x\n"
    assert host.status()["state"] == "code"
    kinds = [e.get("kind") or e.get("event") for e in host.history()]
    assert any("interrupt" in str(k).lower() for k in kinds), kinds


@pytest.mark.parametrize("form", FORMS)
def test_host_prompts_stay_in_force(tmp_path: Path, form: str) -> None:
    """A call statewright lets through still needs the host's permission: in a state that allows
    `echo`, a Bash call the host's own rules do not allow is not run (statewright never answers
    `allow`). And a call statewright refuses is refused whatever the host allows."""
    host = Host(tmp_path / "proj", form, workflows={"shell": SHELL_WF})
    host.start("shell")
    s = host.run([
        ToolUse("Bash", {"command": "echo hi > marker.txt"}),
        ToolUse("Bash", {"command": "rm -rf workflows"}),
        Text("finished"),
    ], allowed_tools=("mcp__statewright",))
    assert s.returncode == 0, s.stderr
    r = s.results()
    assert r[0][2] and not (host.root / "marker.txt").exists()
    assert "statewright" not in r[0][1]  # the host's own refusal, not ours
    assert denied(r[1]) and (host.root / "workflows" / "shell.json").exists()


@pytest.mark.parametrize("form", FORMS)
def test_the_model_cannot_call_the_hook_tool(tmp_path: Path, form: str) -> None:
    """The hook tool is never listed, so the model cannot call it (a fake PostToolUse would
    account calls that never happened)."""
    host = Host(tmp_path / "proj", form, workflows={"shell": SHELL_WF})
    host.start("shell")
    before = len(host.history())
    s = host.run([
        ToolUse(SW + "statewright_hook", {"hook_event_name": "PostToolUse", "session_id": "x",
                                          "tool_name": "Bash", "tool_input": "{}"}),
        Text("finished"),
    ])
    assert s.returncode == 0, s.stderr
    ((name, text, is_error),) = s.results()
    assert is_error and name == SW + "statewright_hook" and "statewright_hook" in text
    listed = [t["name"] for t in s.main.requests[-1]["tools"]]
    assert SW + "statewright_get_state" in listed and SW + "statewright_hook" not in listed
    assert len(host.history()) == before


def test_the_process_form_is_answered_by_the_resident_hook_server(tmp_path: Path) -> None:
    """In the process form, a session's hook processes hand their events to the project's
    resident hook server once it runs (statewright.hook.resident): its log names each event it
    answered, and the answers are the rules' (a refused line, an allowed one, a transition)."""
    host = Host(tmp_path / "proj", "process", workflows={"shell": SHELL_WF})
    host.start("shell")
    log = tmp_path / "hook-server.log"
    env = {"STATEWRIGHT_HOOK_LOG": str(log)}
    first = host.run([ToolUse("Bash", {"command": "echo warm"}), Text("ok")], env=env)
    assert first.returncode == 0, first.stderr  # its first event started the server
    deadline = time.monotonic() + 60
    while "started for" not in (log.read_text() if log.exists() else ""):
        assert time.monotonic() < deadline, "the resident hook server never started"
        time.sleep(0.2)
    s = host.run([
        ToolUse("Bash", {"command": "echo served"}),
        ToolUse("Bash", {"command": "rm -rf ."}),
        ToolUse(SW + "statewright_transition", {"event": "NEXT"}),
        ToolUse("Bash", {"command": "echo after"}),
        Text("finished"),
    ], env=env)
    assert s.returncode == 0, s.stderr
    r = s.results()
    assert r[0] == ("Bash", "served", False)
    assert denied(r[1]) and "rm -rf" in r[1][1]
    assert denied(r[3]) and "'review'" in r[3][1]
    text = log.read_text()
    assert text.count("served pre-tool-use: refused") >= 2, text
    assert "served post-tool-use: answered" in text, text
    assert (host.root / "workflows").exists()  # the refused rm never ran
    # the hooks were the native client, which handed the first event to the Python hook (it
    # noted its facts for the client)
    settings = (host.root / ".claude" / "settings.local.json").read_text()
    assert "statewright-hook-native" in settings
    assert list((host.root / ".statewright").glob("hook-native-*.facts"))
