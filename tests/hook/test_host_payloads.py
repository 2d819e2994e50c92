"""The other hosts' adapters on the hook payloads their real CLIs sent (tests/hosts/golden/,
captured by tests/hosts/capture_golden.py from Codex, Gemini CLI and Copilot CLI), fed to the
real `statewright-hook --host=NAME EVENT` (and Codex's `mcp_tool` form to the proxy's hook
tool) against a project with a running workflow.

Each host's answer is checked in the host's own form: a refusal the model reads, a rewritten
line in the host's shape, nothing for an allowed call; unknown tools and unreadable patches
refused; the events that only account or inform never refuse.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import REPO

from statewright.hook.hosts import TOOL_MAP

from .harness import Project

pytestmark = pytest.mark.e2e

GOLDEN = REPO / "tests" / "hosts" / "golden"

WF = {
    "id": "hosts",
    "initial": "work",
    "states": {
        "work": {"allowed_tools": ["Bash", "Read", "Write", "Edit", "Agent", "TodoWrite"],
                 "allowed_commands": ["echo", "statewright"], "blocked_env": ["SECRET"],
                 "max_edit_lines": 5, "max_files_per_state": 2, "on": {"NEXT": "end"}},
        "end": {"type": "final"},
    },
}


def golden(host: str, name: str, root: Path) -> dict[str, Any]:
    data = json.loads((GOLDEN / host / name).read_text())
    data["cwd"] = str(root)
    for key in ("toolArgs", "tool_input"):
        args = data.get(key)
        if isinstance(args, dict) and isinstance(args.get("path"), str):
            args["path"] = str(root / Path(args["path"]).name)
    return data


@pytest.fixture
def proj(tmp_path: Path) -> Project:
    p = Project(tmp_path / "proj")
    p.write_workflow(WF)
    p.start("hosts")
    (p.root / "new.txt").write_text("one\ntwo\n")
    return p


def run(p: Project, host: str, event: str, data: dict[str, Any] | bytes) -> tuple[int, Any]:
    stdin = data if isinstance(data, bytes) else json.dumps(data).encode()
    rc, out, _err = p.run_hook([f"--host={host}", event], stdin)
    return rc, json.loads(out) if out.strip() else None


def deny_reason(host: str, out: Any) -> str:
    """The refusal's reason in the host's form ('' when the answer is no refusal)."""
    if not isinstance(out, dict):
        return ""
    if host == "codex":
        hso = out.get("hookSpecificOutput") or {}
        return hso.get("permissionDecisionReason", "") if \
            hso.get("permissionDecision") == "deny" else ""
    if host == "gemini":
        return out.get("reason", "") if out.get("decision") == "deny" else ""
    return out.get("permissionDecisionReason", "") if \
        out.get("permissionDecision") == "deny" else ""


def rewritten_line(host: str, out: Any) -> str | None:
    if not isinstance(out, dict):
        return None
    if host == "codex":
        return out["hookSpecificOutput"]["updatedInput"]["command"]
    if host == "gemini":
        return out["hookSpecificOutput"]["tool_input"]["command"]
    return out["modifiedArgs"]["command"]


SHELL = {"codex": ("PreToolUse", "PreToolUse-Bash.json", "tool_input"),
         "gemini": ("BeforeTool", "BeforeTool-run_shell_command.json", "tool_input"),
         "copilot": ("preToolUse", "preToolUse-bash.json", "toolArgs")}


@pytest.mark.parametrize("host", ["codex", "gemini", "copilot"])
def test_a_shell_line_is_rewritten_or_refused_in_the_hosts_form(proj: Project,
                                                                host: str) -> None:
    event, name, key = SHELL[host]
    data = golden(host, name, proj.root)
    rc, out = run(proj, host, event, data)
    assert rc == 0 and not deny_reason(host, out), out
    line = rewritten_line(host, out)
    # rewritten: the blocked variable removed (by `unset`, or by the kernel tier's launcher
    # where this machine has one), the line itself inside
    assert line is not None and line != "echo hello" and "echo hello" in line, line
    assert "unset SECRET" in line or "--unset SECRET" in line, line
    if host == "gemini":  # (Gemini CLI refuses command substitution in a line)
        assert "$(" not in line, line
    if host == "codex":  # (Codex applies updatedInput only beside an allow: see codex.py)
        assert out["hookSpecificOutput"]["permissionDecision"] == "allow"
    data[key]["command"] = "rm -rf workflows"
    rc, out = run(proj, host, event, data)
    assert rc == 0 and "rm -rf workflows" in deny_reason(host, out), out
    data[key]["command"] = "echo $SECRET"
    rc, out = run(proj, host, event, data)
    assert "SECRET" in deny_reason(host, out)


EDITS = {
    "codex": [("PreToolUse", "PreToolUse-apply_patch.json")],
    "gemini": [("BeforeTool", "BeforeTool-write_file.json"),
               ("BeforeTool", "BeforeTool-replace.json")],
    "copilot": [("preToolUse", "preToolUse-create.json"), ("preToolUse", "preToolUse-edit.json")],
}


@pytest.mark.parametrize("host", ["codex", "gemini", "copilot"])
def test_edits_are_judged_like_every_edit(proj: Project, host: str) -> None:
    for event, name in EDITS[host]:
        rc, out = run(proj, host, event, golden(host, name, proj.root))
        assert rc == 0 and out is None, (name, out)  # small edits of new.txt: allowed
    # the same edit tool on a protected file, and over the state's edit budget
    event, name = EDITS[host][0]
    data = golden(host, name, proj.root)
    protected = "workflows/hosts.json"
    big = "".join(f"l{i}\n" for i in range(8))
    if host == "codex":
        data["tool_input"]["command"] = ("*** Begin Patch\n*** Update File: " + protected +
                                         "\n@@\n-x\n+y\n*** End Patch\n")
        over = dict(data, tool_input={"command": "*** Begin Patch\n*** Add File: big.txt\n" +
                                      "".join("+" + x + "\n" for x in big.split()) +
                                      "*** End Patch\n"})
    elif host == "gemini":
        data["tool_input"]["file_path"] = protected
        over = dict(data, tool_input={"file_path": "big.txt", "content": big})
    else:
        data["toolArgs"]["path"] = str(proj.root / protected)
        over = dict(data, toolArgs={"path": str(proj.root / "big.txt"), "file_text": big})
    _rc, out = run(proj, host, event, data)
    assert "workflow" in deny_reason(host, out), out
    _rc, out = run(proj, host, event, over)
    assert "8 lines" in deny_reason(host, out), out


def test_a_patch_is_judged_as_all_its_edits(proj: Project) -> None:
    data = golden("codex", "PreToolUse-apply_patch.json", proj.root)

    def patch(body: str) -> dict[str, Any]:
        return dict(data, tool_input={"command": f"*** Begin Patch\n{body}*** End Patch\n"})

    # three new files at once: over max_files_per_state (2), all or nothing
    three = "".join(f"*** Add File: f{i}.txt\n+x\n" for i in range(3))
    _rc, out = run(proj, "codex", "PreToolUse", patch(three))
    assert "at most 2 files" in deny_reason("codex", out), out
    assert proj.status()["counters"]["files_edited"] == []
    # a move onto a protected file; a deletion of one
    for body in ("*** Update File: new.txt\n*** Move to: workflows/hosts.json\n@@\n-one\n+1\n",
                 "*** Delete File: workflows/hosts.json\n"):
        _rc, out = run(proj, "codex", "PreToolUse", patch(body))
        assert "workflow" in deny_reason("codex", out), (body, out)
    # not a patch: refused, never let through unread
    _rc, out = run(proj, "codex", "PreToolUse", dict(data, tool_input={"command": "rm -rf ."}))
    assert "could not read" in deny_reason("codex", out), out
    # two files: allowed, both counted, one iteration
    _rc, out = run(proj, "codex", "PreToolUse",
                   patch("*** Add File: a.txt\n+a\n*** Update File: new.txt\n@@\n-one\n+uno\n"))
    assert out is None, out
    counters = proj.status()["counters"]
    assert counters["files_edited"] == ["a.txt", "new.txt"] and counters["iterations"] == 1


@pytest.mark.parametrize("host,event,name", [
    ("codex", "PreToolUse", "PreToolUse-Bash.json"),
    ("gemini", "BeforeTool", "BeforeTool-read_file.json"),
    ("copilot", "preToolUse", "preToolUse-view.json"),
])
def test_a_tool_the_map_does_not_know_is_refused_naming_the_host(proj: Project, host: str,
                                                                 event: str, name: str) -> None:
    data = golden(host, name, proj.root)
    data["toolName" if host == "copilot" else "tool_name"] = "brand_new_tool"
    _rc, out = run(proj, host, event, data)
    reason = deny_reason(host, out)
    assert f"{host} tool `brand_new_tool`" in reason, out
    # in a state with no rule it could get around, it is decided (and counted) as any call
    proj.transition("NEXT")
    _rc, out = run(proj, host, event, data)
    assert out is None, out


@pytest.mark.parametrize("host,name", [
    ("codex", "PostToolUse-Bash.json"), ("codex", "PostToolUse-apply_patch.json"),
    ("codex", "UserPromptSubmit.json"), ("codex", "Stop.json"),
    ("codex", "SessionStart.json"),
    ("gemini", "AfterTool-run_shell_command.json"), ("gemini", "AfterTool-replace.json"),
    ("gemini", "BeforeAgent.json"), ("gemini", "AfterAgent.json"),
    ("copilot", "postToolUse-bash.json"), ("copilot", "postToolUse-edit.json"),
    ("copilot", "userPromptSubmitted.json"), ("copilot", "agentStop.json"),
    ("copilot", "sessionStart.json"),
])
def test_the_other_events_account_and_inform_without_refusing(proj: Project, host: str,
                                                              name: str) -> None:
    data = golden(host, name, proj.root)
    event = name.split("-")[0].removesuffix(".json")
    rc, out = run(proj, host, event, data)
    stop = event in ("Stop", "AfterAgent", "agentStop")
    assert rc == 0 and (stop or not deny_reason(host, out)), out
    if event in ("UserPromptSubmit", "BeforeAgent", "userPromptSubmitted"):
        text = json.dumps(out)
        assert "work" in text and "NEXT" in text, out  # the state's briefing
    if stop:
        assert "NEXT" in out["reason"], out  # not a final state: the reminder


def test_a_codex_subagent_is_resolved_by_its_agent_id(proj: Project) -> None:
    data = golden("codex", "PreToolUse-subagent-Bash.json", proj.root)
    assert data.get("agent_id")
    # the statewright CLI run by the sub-agent gets the sub-agent's own key (so that
    # `statewright fork BRANCH` binds the sub-agent, not its session)
    data["tool_input"]["command"] = "statewright status"
    _rc, out = run(proj, "codex", "PreToolUse", data)
    line = out["hookSpecificOutput"]["updatedInput"]["command"]
    assert f"codex:{data['session_id']}" in line and data["agent_id"] in line, line


def test_broken_input_is_refused_in_the_hosts_form(proj: Project) -> None:
    for host, event in (("codex", "PreToolUse"), ("gemini", "BeforeTool"),
                        ("copilot", "preToolUse")):
        rc, out = run(proj, host, event, b"not json")
        assert rc == 0 and "fails closed" in deny_reason(host, out), out
        rc, out = run(proj, host, "NoSuchEvent", b"{}")
        assert rc == 0 and "unknown" in deny_reason(host, out), out


def test_codex_mcp_tool_payloads_through_the_hook_tool(proj: Project) -> None:
    """Codex's `mcp_tool` hooks as the real Codex sent them to the proxy (`tools/call` params,
    `_meta.threadId` included), answered by the proxy's hook tool."""
    from statewright.proxy.hooktool import HookTool
    from statewright.runtime import Runtime

    rt = Runtime.open(project=str(proj.root))
    try:
        tool = HookTool(rt)
        params = json.loads((GOLDEN / "codex" / "mcp_tool-PreToolUse.json").read_text())
        args = dict(params["arguments"], cwd=str(proj.root))
        out = json.loads(tool.answer(args, params["_meta"]))
        assert "echo hi" in out["hookSpecificOutput"]["updatedInput"]["command"]
        args["tool_input"] = {"command": "rm -rf ."}
        out = json.loads(tool.answer(args, params["_meta"]))
        assert out["hookSpecificOutput"]["permissionDecision"] == "deny"
        # a sub-agent: its thread is not the session's; the key is the sub-agent's
        meta = dict(params["_meta"], threadId="01a2-sub-agent-thread")
        args["tool_input"] = {"command": "statewright status"}
        out = json.loads(tool.answer(args, meta))
        assert "01a2-sub-agent-thread" in out["hookSpecificOutput"]["updatedInput"]["command"]
        for ev in ("PostToolUse", "UserPromptSubmit", "Stop"):
            params = json.loads((GOLDEN / "codex" / f"mcp_tool-{ev}.json").read_text())
            out = json.loads(tool.answer(dict(params["arguments"], cwd=str(proj.root)),
                                         params["_meta"]))
            assert "deny" not in json.dumps(out), (ev, out)
    finally:
        rt.close()


def test_the_map_names_only_tools_workflows_know() -> None:
    """Every host tool maps onto a name a workflow can list (Claude Code's tool names, or the
    patch judged as its edits)."""
    known = {"Bash", "Read", "Write", "Edit", "LS", "Glob", "Grep", "WebFetch", "WebSearch",
             "TodoWrite", "Agent", "BashOutput", "KillShell", "AskUserQuestion",
             "ExitPlanMode", "Skill", "apply_patch"}
    for host, table in TOOL_MAP.items():
        for raw, (name, renames) in table.items():
            assert name in known, (host, raw, name)
            assert all(isinstance(k, str) and isinstance(v, str) for k, v in renames.items())


@pytest.mark.parametrize("host,event,name", [
    ("gemini", "BeforeTool", "BeforeTool-run_shell_command.json"),
    ("copilot", "preToolUse", "preToolUse-bash.json"),
    ("codex", "PreToolUse", "PreToolUse-Bash.json"),
])
def test_a_hook_that_cannot_decide_in_time_refuses_before_the_host_gives_up(
        proj: Project, host: str, event: str, name: str) -> None:
    """Gemini CLI and Copilot CLI let a call through when its hook times out: with the store
    held by another writer (SQLite would wait 30 s, the installed timeout), the hook's own
    deadline answers a refusal in the host's form first, exit status 0."""
    import sqlite3

    db = sqlite3.connect(proj.root / ".statewright" / "state.db", isolation_level=None)
    try:
        db.execute("BEGIN EXCLUSIVE")
        env = {**proj.env, "STATEWRIGHT_HOOK_DEADLINE": "2", "STATEWRIGHT_HOOK_RESIDENT": "0"}
        rc, out, _err = proj.run_hook([f"--host={host}", event],
                                      json.dumps(golden(host, name, proj.root)).encode(), env)
    finally:
        db.execute("ROLLBACK")
        db.close()
    assert rc == 0 and "did not decide in time" in deny_reason(host, json.loads(out)), out
