"""The hook tool of `statewright serve` (Claude Code's `mcp_tool` hooks): never listed, served
only on stdio, answering exactly what the `statewright-hook` process answers for the same hook
input, in both protocol eras (the fast path answers it; the SDK Client checks the envelope)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from .harness import ProxyClient, bin_path, clean_env, make_project, statewright, text_of

pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("proxy_hook_tool")]

HOOK = "statewright_hook"
SESSION = "host-session-1"
WF = {
    "id": "hooked",
    "initial": "work",
    "interrupts": {"cfg": {"trigger": {"file_pattern": "config/*.yml"}, "target": "cfg_review"}},
    "states": {
        "work": {"allowed_tools": ["Bash", "Read", "Write"], "allowed_commands": ["echo", "cat"],
                 "blocked_env": ["SECRET"], "env_overrides": {"MODE": "t"}, "max_edit_lines": 2,
                 "on": {"DONE": "end"}},
        "cfg_review": {"allowed_tools": ["Read"], "on": {"OK": "$return"}},
        "end": {"type": "final"},
    },
}


def hook_args(root: Path, event: str, tool: str = "", tool_input: Any = None,
              response: Any = None, **extra: str) -> dict[str, str]:
    """The tool's arguments as Claude Code interpolates them (every field text, absent = "")."""
    args = {k: "" for k in ("hook_event_name", "session_id", "cwd", "agent_id", "tool_name",
                            "tool_input", "tool_response", "error", "stop_hook_active", "source")}
    args.update(hook_event_name=event, session_id=SESSION, cwd=str(root), tool_name=tool,
                tool_input="" if tool_input is None else json.dumps(tool_input),
                tool_response="" if response is None else json.dumps(response), **extra)
    return args


def process_hook(root: Path, event_arg: str, args: dict[str, str]) -> dict:
    """The same input through the real `statewright-hook` process."""
    data: dict[str, Any] = {k: v for k, v in args.items() if v != ""}
    for k in ("tool_input", "tool_response"):
        if k in data:
            data[k] = json.loads(data[k])
    if "stop_hook_active" in data:  # a boolean in the host's JSON, text once interpolated
        data["stop_hook_active"] = data["stop_hook_active"] == "true"
    r = subprocess.run([bin_path("statewright-hook"), event_arg], input=json.dumps(data).encode(),
                       capture_output=True, env=clean_env(CLAUDE_PROJECT_DIR=str(root)), timeout=60)
    return json.loads(r.stdout) if r.stdout.strip() else {}


def corpus(root: Path) -> list[tuple[str, dict[str, str]]]:
    w = lambda name, text: {"file_path": str(root / name), "content": text}  # noqa: E731
    return [
        ("user-prompt-submit", hook_args(root, "UserPromptSubmit")),
        ("pre-tool-use", hook_args(root, "PreToolUse", "Bash", {"command": "echo hi"})),
        ("pre-tool-use", hook_args(root, "PreToolUse", "Bash", {"command": "rm -rf ."})),
        ("pre-tool-use", hook_args(root, "PreToolUse", "Bash", {"command": "echo $SECRET"})),
        ("pre-tool-use", hook_args(root, "PreToolUse", "Write", w("a.txt", "1\n2\n3\n"))),
        ("pre-tool-use", hook_args(root, "PreToolUse", "Edit", {"file_path": str(root / "x")})),
        ("pre-tool-use", hook_args(root, "PreToolUse", "Read",
                                   {"file_path": str(root / ".statewright" / "state.db")})),
        ("post-tool-use", hook_args(root, "PostToolUse", "Bash", {"command": "echo hi"},
                                    {"stdout": "hi", "stderr": ""})),
        ("post-tool-use-failure", hook_args(root, "PostToolUseFailure", "Bash",
                                            {"command": "cat nope"}, error="Exit code 1")),
        ("stop", hook_args(root, "Stop", stop_hook_active="false")),
        ("stop", hook_args(root, "Stop", stop_hook_active="true")),
    ]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = make_project(tmp_path / "p", {}, {"hooked": WF})
    statewright("start", "hooked", project=root, session=SESSION)
    return root


def test_input_the_host_would_never_send_is_refused(project: Path) -> None:
    with ProxyClient(project, mode="auto") as c:
        for args in ({"hook_event_name": "PreToolUse", "session_id": SESSION, "cwd": str(project),
                      "tool_name": "Bash", "tool_input": "{not json"},
                     {"hook_event_name": "Nonsense", "session_id": SESSION},
                     {"session_id": SESSION, "tool_name": "Bash", "tool_input": "{}"}):
            out = json.loads(text_of(c.call(HOOK, args)))["hookSpecificOutput"]
            assert out["permissionDecision"] == "deny", args
            assert "fails closed" in out["permissionDecisionReason"]


@pytest.mark.parametrize("mode", ["legacy", "auto"])
def test_hook_tool_answers_what_the_process_hook_answers(project: Path, mode: str) -> None:
    with ProxyClient(project, mode=mode) as c:
        assert HOOK not in c.tool_names()
        for event_arg, args in corpus(project):
            result = c.call(HOOK, args)
            assert not result.is_error
            via_tool = json.loads(text_of(result))
            assert via_tool == process_hook(project, event_arg, args), (event_arg, args)
            decision = via_tool.get("hookSpecificOutput", {}).get("permissionDecision")
            assert decision in (None, "deny")  # never "allow": the host's prompts stay


def test_interrupt_through_the_hook_tool_is_announced(project: Path) -> None:
    """A PostToolUse that fires an interrupt moves the run; the proxy announces the change (a raw
    line client: the SDK Client re-lists the tools after calling an unlisted tool)."""
    (project / "config").mkdir()
    (project / "config" / "app.yml").write_text("a: 1\n")
    p = subprocess.Popen([bin_path("statewright"), "serve", "--project", str(project)],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         env=clean_env(STATEWRIGHT_SESSION=SESSION))
    assert p.stdin is not None and p.stdout is not None

    def send(msg: dict) -> None:
        p.stdin.write((json.dumps(msg) + "\n").encode())
        p.stdin.flush()

    try:
        send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "raw", "version": "1"}}})
        assert json.loads(p.stdout.readline())["id"] == 1
        send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        send({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
        assert json.loads(p.stdout.readline())["id"] == 2
        args = hook_args(project, "PostToolUse", "Write",
                         {"file_path": str(project / "config" / "app.yml"), "content": "a: 1\n"},
                         {"type": "create"})
        send({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
              "params": {"name": HOOK, "arguments": args}})
        answer = json.loads(p.stdout.readline())
        out = json.loads(answer["result"]["content"][0]["text"])
        assert "[STATEWRIGHT INTERRUPT]" in out["hookSpecificOutput"]["additionalContext"]
        note = json.loads(p.stdout.readline())  # the next line: the announcement
        assert note == {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}
    finally:
        p.stdin.close()
        p.wait(30)
    st = json.loads(statewright("status", "--json", project=project, session=SESSION).stdout)
    assert st["state"] == "cfg_review"


def test_hook_tool_is_not_served_over_http(project: Path) -> None:
    """Over HTTP any local process could connect: the hook tool does not exist there."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with ProxyClient(project, http=f"127.0.0.1:{port}") as c:
        assert HOOK not in c.tool_names()
        result = c.call(HOOK, hook_args(project, "PreToolUse", "Bash", {"command": "echo hi"}))
        assert result.is_error and "hook tool" in text_of(result)
    # nothing was decided nor counted: an allowed PreToolUse counts an iteration
    st = json.loads(statewright("status", "--json", project=project, session=SESSION).stdout)
    assert st["counters"]["iterations"] == 0
    with ProxyClient(project) as c:  # on stdio the same call is accounted
        c.call(HOOK, hook_args(project, "PreToolUse", "Bash", {"command": "echo hi"}))
    st = json.loads(statewright("status", "--json", project=project, session=SESSION).stdout)
    assert st["counters"]["iterations"] == 1
