"""One workflow, three more hosts: the real Codex, Gemini CLI and Copilot CLI (npm, pinned),
each driven offline by a scripted stand-in of its model API, in a project wired by the real
`statewright install <host>` (DESIGN section 5, "Hosts"; section 7).

The model is scripted (standins.py); everything else is real: the host, its hooks, its own
tools and sandbox, statewright's hook (Gemini CLI, Copilot CLI, Codex's process form) or its
proxy answering Codex's `mcp_tool` hooks, the store on disk.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from .harness import HostProject
from .standins import Outside, Text, ToolUse

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

#: (host, hook form) pairs: Codex in both its forms, the others in their one
CASES = [("codex", "mcp"), ("codex", "process"), ("gemini", None), ("copilot", None)]


# -- the steps each host's model takes, in its own tools ------------------------------------------

def shell(host: str, line: str) -> ToolUse:
    if host == "codex":
        return ToolUse("exec_command", {"cmd": line})
    if host == "gemini":
        return ToolUse("run_shell_command", {"command": line, "description": "run"})
    return ToolUse("bash", {"command": line, "description": "run"})


def new_file(host: str, root: Path, rel: str, content: str) -> ToolUse:
    if host == "codex":
        body = "".join(f"+{line}\n" for line in content.splitlines())
        return ToolUse("apply_patch", {"input": f"*** Begin Patch\n*** Add File: {rel}\n{body}"
                                                "*** End Patch\n"})
    if host == "gemini":
        return ToolUse("write_file", {"file_path": rel, "content": content})
    return ToolUse("create", {"path": str(root / rel), "file_text": content})


def edit(host: str, root: Path, rel: str, old: str, new: str) -> ToolUse:
    if host == "codex":
        return ToolUse("apply_patch", {"input": f"*** Begin Patch\n*** Update File: {rel}\n@@\n"
                                                f"-{old}\n+{new}\n*** End Patch\n"})
    if host == "gemini":
        return ToolUse("replace", {"file_path": rel, "old_string": old, "new_string": new,
                                   "instruction": "change it"})
    return ToolUse("edit", {"path": str(root / rel), "old_str": old, "new_str": new})


def transition(host: str, project: HostProject, event: str, then: ToolUse) -> list[Any]:
    """The agent fires `event` through the proxy's tool (Codex, Gemini CLI), then takes step
    `then`. Copilot CLI has no proxy wired: a human fires it between two turns."""
    if host == "codex":
        return [ToolUse("mcp__statewright.statewright_transition", {"event": event}), then]
    if host == "gemini":
        return [ToolUse("mcp_statewright_statewright_transition", {"event": event}), then]
    return [Outside(lambda: project.cli("transition", event), then)]


def refused(text: str) -> bool:
    return "statewright refused" in text


@pytest.mark.parametrize("host,form", CASES, ids=[f"{h}-{f}" if f else h for h, f in CASES])
def test_one_workflow_governs_the_host(tmp_path: Path, host: str, form: str | None) -> None:
    p = HostProject(tmp_path / "proj", host, workflows={"shell": SHELL_WF}, form=form)
    p.start("shell")
    root = p.root
    wf_before = (root / "workflows" / "shell.json").read_text()
    steps = [
        shell(host, "echo hello > out.txt && cat out.txt"),
        shell(host, "rm out.txt"),
        shell(host, "echo mode=$MODE"),
        shell(host, "echo $SECRET_TOKEN"),
        shell(host, "cat /proc/self/environ"),
        new_file(host, root, "small.txt", "one\ntwo\n"),
        new_file(host, root, "big.txt", "".join(f"line {i}\n" for i in range(10))),
        edit(host, root, "workflows/shell.json", '    "work": {', '    "free": {'),
        *transition(host, p, "NEXT", shell(host, "echo after")),
        shell(host, "ls"),
        Text("finished"),
    ]
    s = p.run(steps, env={"SECRET_TOKEN": SECRET})
    assert s.returncode == 0, s.stderr[-3000:]
    texts = [t for _name, t in s.results()]
    proxy = 1 if host != "copilot" else 0  # (the transition's own result)
    assert len(texts) == 10 + proxy, texts
    # the stand-in timed each call the host made (what benchmarks/bench_hosts.py reads)
    gaps = s.standin.main.call_gaps()
    assert len(gaps) == 10 + proxy and all(0 < g < 120 for g in gaps), gaps
    assert "hello" in texts[0] and not refused(texts[0])
    assert refused(texts[1]) and "rm out.txt" in texts[1]
    assert (root / "out.txt").read_text() == "hello\n"  # the refused rm never ran
    assert "mode=test" in texts[2]  # env_overrides applied through the rewritten input
    assert refused(texts[3]) and "SECRET_TOKEN" in texts[3]
    assert refused(texts[4])
    assert not refused(texts[5]) and (root / "small.txt").read_text() == "one\ntwo\n"
    assert refused(texts[6]) and "lines" in texts[6] and not (root / "big.txt").exists()
    assert refused(texts[7]) and "workflow" in texts[7]
    assert (root / "workflows" / "shell.json").read_text() == wf_before
    if proxy:
        assert '"review"' in texts[8], texts[8]
    # the transition changed the rules of the host's own tools
    assert refused(texts[8 + proxy]) and "echo after" in texts[8 + proxy]
    assert not refused(texts[9 + proxy]) and "small.txt" in texts[9 + proxy]
    # the secret never reached the model, in any request
    assert SECRET not in s.everything_sent()
    st = p.status()
    assert st["state"] == "review" and st["status"] == "running"
    sources = {e.get("data", {}).get("source") for e in p.history()
               if e.get("kind") in ("tool_allowed", "tool_denied")}
    assert host in sources, sources
    if form != "mcp":
        # the process hooks ran the native client (from PATH, as the project's files name it),
        # which handed the first event to the Python hook, which noted its facts for it
        assert list((root / ".statewright").glob("hook-native-*.facts"))


def test_codex_keeps_its_own_sandbox_for_a_rewritten_line(tmp_path: Path) -> None:
    """Codex takes a rewritten input only beside `permissionDecision: "allow"`: that allow
    grants nothing. Under Codex's read-only sandbox the rewritten line still cannot write."""
    wf = {"id": "env", "initial": "work", "states": {
        "work": {"allowed_tools": ["Bash"], "allowed_commands": ["echo"],
                 "env_overrides": {"MODE": "test"}, "on": {"DONE": "end"}},
        "end": {"type": "final"}}}
    p = HostProject(tmp_path / "proj", "codex", workflows={"env": wf})
    p.start("env")
    p.codex_sandbox = "read-only"
    s = p.run([shell("codex", "echo mode=$MODE > written.txt"), Text("finished")])
    assert s.returncode == 0, s.stderr[-3000:]
    ((_name, text),) = s.results()
    assert not refused(text) and "Read-only file system" in text, text
    assert not (p.root / "written.txt").exists()


@pytest.mark.parametrize("form", ["mcp", "process"])
def test_a_confined_line_inside_codexs_own_sandbox_stays_confined(tmp_path: Path,
                                                                   form: str) -> None:
    """Codex with its own sandbox on (`workspace-write`: the project writable): the kernel
    tier's launcher runs inside it, where the namespace's id maps are refused, and falls back
    to Landlock alone; a script the agent runs still cannot change the workflow, while its
    other writes in the project go through (in a directory that is not on the way to a
    protected path: the Landlock tier keeps those directories' own entries as they are)."""
    wf = {"id": "kernel", "initial": "work", "states": {
        "work": {"allowed_tools": ["Bash"], "allowed_commands": ["bash", "cat"],
                 "sandbox": "required", "on": {"DONE": "end"}},
        "end": {"type": "final"}}}
    p = HostProject(tmp_path / "proj", "codex", workflows={"kernel": wf}, form=form)
    p.start("kernel")
    p.codex_sandbox = "workspace-write"
    (p.root / "out").mkdir()
    (p.root / "way_out.sh").write_text(
        "if echo x >> workflows/kernel.json; then r=DONE; else r=refused; fi\n"
        "echo \"write workflow: $r\" > out/findings.txt\n")
    before = (p.root / "workflows" / "kernel.json").read_text()
    s = p.run([shell("codex", "bash way_out.sh; cat out/findings.txt"), Text("finished")])
    assert s.returncode == 0, s.stderr[-3000:]
    ((_name, text),) = s.results()
    assert not refused(text), text
    assert (p.root / "out" / "findings.txt").read_text() == "write workflow: refused\n", text
    assert (p.root / "workflows" / "kernel.json").read_text() == before


FORK_WF = {
    "id": "parallel",
    "initial": "dispatch",
    "meta": {"parallel_forks": True},
    "states": {
        "dispatch": {
            "allowed_tools": ["Agent", "Bash"], "allowed_commands": ["statewright"],
            "on": {"SPLIT": {"fork": {"branches": {
                "alpha": {"initial": "alpha_work", "terminal": "alpha_done"}},
                "join": "all", "on_complete": "review"}}},
        },
        "alpha_work": {"allowed_tools": ["Bash", "Write"],
                       "allowed_commands": ["echo", "statewright"],
                       "on": {"DONE": "alpha_done"}},
        "alpha_done": {"type": "final"},
        "review": {"allowed_tools": ["Read"], "on": {"APPROVE": "end"}},
        "end": {"type": "final"},
    },
}


@pytest.mark.parametrize("form", ["mcp", "process"])
def test_a_codex_subagent_works_its_fork_branch_under_its_rules(tmp_path: Path,
                                                                form: str) -> None:
    """Codex names a sub-agent's calls by its agent id: the sub-agent binds itself to a
    parallel fork branch and from then on obeys the branch's rules, while the parent's calls
    obey the parent's state."""
    p = HostProject(tmp_path / "proj", "codex", workflows={"parallel": FORK_WF}, form=form)
    p.start("parallel")
    p.cli("transition", "SPLIT")
    root = p.root
    steps = {
        "": [
            ToolUse("collaboration.spawn_agent", {"task_name": "alpha", "fork_turns": "none",
                                                  "message": "[[alpha]] work branch alpha"}),
            ToolUse("collaboration.wait_agent", {"timeout_ms": 120000}),
            shell("codex", "echo from-parent"),
            Text("finished"),
        ],
        "[[alpha]]": [
            shell("codex", "echo before-binding"),
            shell("codex", "statewright fork alpha"),
            shell("codex", "echo from-alpha"),
            new_file("codex", root, "alpha.txt", "a\n"),
            shell("codex", "statewright transition DONE"),
            Text("alpha done"),
        ],
    }
    s = p.run(steps)
    assert s.returncode == 0, s.stderr[-3000:]
    alpha = [t for _n, t in s.results("[[alpha]]")]
    assert len(alpha) == 5, alpha
    assert refused(alpha[0]) and "'dispatch'" in alpha[0]  # unbound: the parent's rules
    assert not refused(alpha[1]) and "alpha_work" in alpha[1], alpha[1]
    assert "from-alpha" in alpha[2] and not refused(alpha[2])  # the branch's rules
    assert not refused(alpha[3]) and (root / "alpha.txt").read_text() == "a\n"
    assert not refused(alpha[4]), alpha[4]
    parent = [t for _n, t in s.results()]
    assert refused(parent[-1]) and "echo from-parent" in parent[-1]  # dispatch: statewright only
    assert p.status()["state"] == "review"  # the branch finished: the fork joined
    listing = json.dumps(p.history())
    assert "codex:" in listing  # the host's sessions are named by the host


@pytest.mark.parametrize("host", ["codex", "gemini"])
def test_a_line_runs_where_it_was_judged(tmp_path: Path, host: str) -> None:
    """A shell call may name another directory than the session's (Codex's `workdir`,
    Gemini CLI's `dir_path`): the line is judged in that directory and runs there (Codex
    reports the directory as the hook's `cwd`, and the line is pinned to it), so a line that
    reads the store from its own directory is refused. (`sandbox: off`: the analysis alone, as
    on a machine with no kernel tier.)"""
    wf = {"id": "cat", "initial": "work", "states": {
        "work": {"allowed_tools": ["Bash"], "allowed_commands": ["cat", "pwd"],
                 "sandbox": "off", "on": {"DONE": "end"}},
        "end": {"type": "final"}}}
    p = HostProject(tmp_path / "proj", host, workflows={"cat": wf})
    p.start("cat")
    if host == "codex":
        steps = [ToolUse("exec_command", {"cmd": "cat state.db", "workdir": ".statewright"}),
                 ToolUse("exec_command", {"cmd": "pwd", "workdir": ".statewright"})]
    else:
        steps = [ToolUse("run_shell_command", {"command": "cat state.db",
                                               "dir_path": ".statewright"}),
                 ToolUse("run_shell_command", {"command": "pwd", "dir_path": "workflows"})]
    s = p.run([*steps, Text("finished")])
    assert s.returncode == 0, s.stderr[-3000:]
    texts = [t for _n, t in s.results()]
    assert len(texts) == 2, texts
    assert "SQLite format" not in texts[0] and refused(texts[0]), texts[0]
    where = ".statewright" if host == "codex" else "workflows"
    assert f"{p.root}/{where}" in texts[1], texts[1]  # it ran where it was judged
