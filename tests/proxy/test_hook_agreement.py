"""The hook and the proxy agree: one corpus of MCP calls, decided against the same run both by
the installed `statewright-hook` process (as if Claude Code called the filesystem/everything
servers directly, `mcp__<server>__<tool>`) and by `statewright serve` (`<server>__<tool>`)."""

from __future__ import annotations

import json
import subprocess

import pytest

from .harness import (
    ProxyClient,
    bin_path,
    clean_env,
    everything_server,
    fs_server,
    make_project,
    payload,
    text_of,
)

pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("proxy_agreement")]

AGREE = {
    "id": "agree",
    "initial": "work",
    "states": {
        "work": {
            "allowed_tools": ["mcp__fs__read_text_file", "mcp__fs__write_file", "mcp__fs__edit_file",
                              "mcp__fs__create_directory", "mcp__every__*"],
            "disallowed_tools": ["mcp__every__get-env"],
            "max_edit_lines": 3,
            "max_files_per_state": 3,
            "on": {"DONE": "end"},
        },
        "end": {"type": "final"},
    },
}


def corpus(root):
    p = lambda *parts: str(root.joinpath(*parts))  # noqa: E731
    return [
        ("fs", "read_text_file", {"path": p("notes.txt")}),
        ("fs", "write_file", {"path": p("x.txt"), "content": "1\n2\n"}),
        ("fs", "write_file", {"path": p("y.txt"), "content": "1\n2\n3\n4\n5\n"}),  # > 3 lines
        ("fs", "list_directory", {"path": p()}),  # not allowed
        ("every", "echo", {"message": "hi"}),
        ("every", "get-env", {}),  # disallowed
        ("fs", "write_file", {"path": p(".statewright", "state.db"), "content": ""}),  # the store
        ("fs", "write_file", {"path": p(".statewright", "x", "..", "notes"), "content": ""}),
        ("fs", "write_file", {"path": p("workflows", "agree.json"), "content": "{}"}),  # in use
        ("fs", "edit_file", {"path": p("x.txt"), "edits": [{"oldText": "1", "newText": "one"}]}),
        ("fs", "edit_file", {"path": p("x.txt"), "edits": [
            {"oldText": "one\n2\n", "newText": "a\nb\nc\nd\n"}]}),  # 4 lines
        ("fs", "write_file", {"path": p("z.txt"), "content": "z\n"}),
        ("fs", "write_file", {"path": p("sub", "..", "notes.txt"), "content": "n\n"}),  # 3rd file
        ("fs", "write_file", {"path": p("w.txt"), "content": "w\n"}),  # 4th file: over the limit
        ("fs", "write_file", {"path": p("x.txt"), "content": "one\n2\n"}),  # counted file again
        ("fs", "move_file", {"source": p("x.txt"), "destination": p("q.txt")}),
        ("fs", "create_directory", {"path": p("newdir")}),
        ("every", "get-sum", {"a": 1, "b": 2}),
    ]


def hook_decision(root, server, tool, args) -> bool:
    event = {"session_id": "claude-session-1", "transcript_path": "/dev/null", "cwd": str(root),
             "hook_event_name": "PreToolUse", "tool_name": f"mcp__{server}__{tool}",
             "tool_input": args, "tool_use_id": "toolu_1"}
    cp = subprocess.run([bin_path("statewright-hook"), "pre-tool-use"], input=json.dumps(event),
                        capture_output=True, text=True, env=clean_env(CLAUDE_PROJECT_DIR=str(root)),
                        timeout=60)
    assert cp.returncode == 0, cp.stderr
    if not cp.stdout.strip():
        return True
    out = json.loads(cp.stdout)["hookSpecificOutput"]
    return out.get("permissionDecision", "allow") != "deny"


def test_hook_and_proxy_decide_alike(tmp_path):
    root = make_project(tmp_path / "proj", {"fs": fs_server(tmp_path / "proj"),
                                            "every": everything_server()}, {"agree": AGREE})
    (root / "notes.txt").write_text("notes\n")
    with ProxyClient(root) as pc:
        assert not pc.call("statewright_load_workflow", {"name": "agree"}).is_error
        rows = []
        for server, tool, args in corpus(root):
            by_hook = hook_decision(root, server, tool, args)
            r = pc.call(f"{server}__{tool}", args)
            by_proxy = not (r.is_error and "TOOL_DENIED" in text_of(r))
            rows.append((f"{server}__{tool}", json.dumps(args)[-60:], by_hook, by_proxy))
        disagreements = [row for row in rows if row[2] != row[3]]
        assert not disagreements, disagreements
        # the corpus exercises both outcomes, several rules
        assert sum(1 for r in rows if r[2]) >= 7 and sum(1 for r in rows if not r[2]) >= 7
        st = payload(pc.call("statewright_get_state"))
        assert len(st["counters"]["files_edited"]) == 3
