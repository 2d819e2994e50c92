"""Self-protection against the agent running statewright's own human-only CLI from a shell.

The attack lines live in attacks.txt (section "statewright's own CLI"); here they are checked
in states that restrict nothing, in final states and in a state that allows `statewright`
itself, where only check 1 (self-protection) can refuse them.
"""

from __future__ import annotations

import os

import pytest

from statewright.definition.compiled import State
from statewright.policy import Counters, GateContext, ToolCall, gate
from statewright.policy.protect.cli import CLI_AGENT_COMMANDS, CLI_HUMAN_COMMANDS

from .corpus import sections

CLI_ATTACKS = sections("attacks.txt")["statewright's own CLI (human-only commands)"]

#: lines an agent may run whatever the state (check 1 must let them through)
CLI_LEGIT = [
    "statewright status",
    "statewright status --json",
    "statewright check",
    "statewright validate workflows/flow.json",
    "statewright list",
    "statewright show implement",
    "statewright graph implement --format dot",
    "statewright history",
    "statewright runs --all",
    "statewright --help",
    "statewright",
    "statewright transition TESTS_PASS",
    "statewright fork",
    "statewright fork lint --json",
    "statewright transition DONE --data '{\"ok\": true}'",
    ".venv/bin/statewright status",
    "uv run statewright status",
    "python -m statewright list",
    "python -m statewright.cli status",
    "ls | xargs statewright status",
    "statewright status && statewright transition DONE",
    # talking about the CLI is not running it
    "git commit -m \"docs: statewright approve is human-only\"",
    "grep -rn \"statewright approve\" docs",
    "echo 'ask a human to run statewright approve'",
    # a directory or package called statewright (this very repository)
    "ls statewright",
    "ls -l .venv/bin/statewright-hook-native",
    "pytest statewright -q",
    "cat statewright/cli/runs.py",
    "cat statewright/ui/pages.py",
    "pytest tests/ui -q",
    "python -m pytest tests/policy -q",
]

FREE = State(name="free")
FINAL = State(name="done", final=True)
ALLOWS_CLI = State(name="ops", allowed_commands=("statewright", "python", "uv run", "env"))


@pytest.fixture(scope="module")
def ctx(tmp_path_factory):
    root = tmp_path_factory.mktemp("proj")
    (root / ".statewright").mkdir()
    return GateContext(project_root=str(root), store_dir=str(root / ".statewright"),
                       events=("TESTS_PASS",))


def _decide(state, line, ctx, cwd=None):
    return gate(state, Counters(), ToolCall("Bash", {"command": line}, cwd=cwd), ctx)


def test_corpus_section_is_substantial():
    assert len(CLI_ATTACKS) >= 60
    assert CLI_AGENT_COMMANDS.isdisjoint(CLI_HUMAN_COMMANDS)


@pytest.mark.parametrize("state", [FREE, FINAL, ALLOWS_CLI], ids=["free", "final", "allows"])
@pytest.mark.parametrize("line", CLI_ATTACKS)
def test_cli_attack_denied_by_self_protection(line, state, ctx):
    d = _decide(state, line, ctx)
    assert not d.allowed, f"human-only CLI reachable: {line!r}\n" + "\n".join(d.explanation)
    assert d.rule == "self_protection", (line, d.rule, d.reason)
    assert d.code == "TOOL_DENIED"
    assert "TESTS_PASS" in d.reason  # the agent is told how to move on instead


@pytest.mark.parametrize("line", CLI_LEGIT)
def test_cli_read_only_and_transition_allowed(line, ctx):
    for state in (FREE, FINAL):
        d = _decide(state, line, ctx)
        assert d.allowed, f"{line!r} denied in {state.name}: {d.reason}"


@pytest.mark.parametrize("sub", sorted(CLI_HUMAN_COMMANDS))
def test_every_human_only_command_denied_through_every_route(sub, ctx):
    for line in (f"statewright {sub}", f"python3 -m statewright {sub}",
                 f"uv run statewright {sub}", f"env statewright {sub}",
                 f"sudo -u root statewright {sub} x", f"bash -c 'statewright {sub}'",
                 f"node -e \"require('child_process').execSync('statewright {sub}')\""):
        d = _decide(FREE, line, ctx)
        assert not d.allowed and d.rule == "self_protection", line


def test_unknown_subcommand_is_denied_not_only_the_listed_ones(ctx):
    # default deny: a command added to the CLI later is human-only until listed
    d = _decide(FREE, "statewright frobnicate", ctx)
    assert not d.allowed and d.rule == "self_protection"
    assert "statewright frobnicate" in d.reason


def test_allowed_commands_still_apply_to_read_only_cli(ctx):
    # check 1 lets `statewright status` through; check 5 still needs it to be allowed
    realistic = State(name="implement", allowed_commands=("pytest",))
    d = _decide(realistic, "statewright status", ctx)
    assert not d.allowed and d.rule == "allowed_commands"
    d = _decide(ALLOWS_CLI, "statewright status", ctx)
    assert d.allowed, d.reason


def test_link_to_the_cli_made_by_an_earlier_call_is_seen(tmp_path):
    """`ln -s .venv/bin/statewright sw` in one call, `./sw approve` in the next."""
    (tmp_path / ".statewright").mkdir()
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "statewright").write_text("#!/bin/sh\n")
    ctx = GateContext(project_root=str(tmp_path), store_dir=str(tmp_path / ".statewright"))
    assert _decide(FREE, "./sw approve", ctx).allowed  # not a link yet: some other program
    os.symlink(tmp_path / "bin" / "statewright", tmp_path / "sw")
    d = _decide(FREE, "./sw approve", ctx)
    assert not d.allowed and d.rule == "self_protection"
    assert _decide(FREE, "./sw status", ctx).allowed
    # relative to the agent's working directory, not the process's
    (tmp_path / "sub").mkdir()
    os.symlink(tmp_path / "bin" / "statewright", tmp_path / "sub" / "sw")
    d = _decide(FREE, "./sw approve", ctx, cwd=str(tmp_path / "sub"))
    assert not d.allowed
    d = _decide(FREE, "python3 ./sw approve", ctx, cwd=str(tmp_path / "sub"))
    assert not d.allowed


def test_mcp_shell_tools_get_the_same_protection(tmp_path):
    (tmp_path / ".statewright").mkdir()
    ctx = GateContext(project_root=str(tmp_path), store_dir=str(tmp_path / ".statewright"),
                      shell_tools={"mcp__shell__run": "cmd"})
    d = gate(FREE, Counters(), ToolCall("mcp__shell__run", {"cmd": "statewright approve"}), ctx)
    assert not d.allowed and d.rule == "self_protection"
    d = gate(FREE, Counters(), ToolCall("mcp__shell__run", {"cmd": "statewright status"}), ctx)
    assert d.allowed
