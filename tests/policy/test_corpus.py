"""The shell corpora: every attack denied, every legitimate line allowed, under a realistic state."""

from __future__ import annotations

import os
import subprocess

import pytest

from statewright.definition.compiled import State
from statewright.policy import Counters, GateContext, ToolCall, gate
from statewright.sandbox.launcher import unwrap

from .corpus import REALISTIC_STATE, attacks, legit, sections


@pytest.fixture(scope="module")
def ctx(tmp_path_factory):
    root = tmp_path_factory.mktemp("proj")
    (root / ".statewright").mkdir()
    (root / "sub").mkdir()
    return GateContext(project_root=str(root), store_dir=str(root / ".statewright"),
                       events=("TESTS_PASS", "ABORT"))


def test_corpus_sizes():
    assert len(attacks()) >= 150
    assert len(legit()) >= 40
    assert len(set(attacks())) == len(attacks()), "duplicate attack lines"


@pytest.mark.parametrize("line", attacks())
def test_attack_denied(line, ctx):
    d = gate(REALISTIC_STATE, Counters(), ToolCall("Bash", {"command": line}), ctx)
    assert not d.allowed, f"attack allowed: {line!r}\n" + "\n".join(d.explanation)
    assert d.code == "TOOL_DENIED"
    assert d.rule in ("self_protection", "allowed_commands", "blocked_env")
    # the agent is told what it may do instead
    assert "TESTS_PASS" in d.reason


@pytest.mark.parametrize("state,line", [
    (REALISTIC_STATE if section == "realistic" else State(name="free"), line)
    for section, lines in sections("kernel_bound.txt").items() for line in lines])
def test_kernel_bound_lines_run_sandboxed_and_change_nothing(state, line, tmp_path):
    """What the text alone could only guess at (a glob that could reach the store), the kernel
    binds: the line is allowed under the sandbox, and running it as the host would leaves the
    store and the workflows untouched and prints neither."""
    root = tmp_path / "proj"
    (root / ".statewright").mkdir(parents=True)
    (root / ".statewright" / "state.db").write_text("the store\n")
    (root / "workflows").mkdir()
    (root / "workflows" / "flow.json").write_text("{}\n")
    ctx = GateContext(project_root=str(root), store_dir=str(root / ".statewright"),
                      protected_files=frozenset({str(root / "workflows" / "flow.json")}))
    d = gate(state, Counters(), ToolCall("Bash", {"command": line}), ctx)
    assert d.allowed and d.sandboxed, (line, d.reason)
    r = subprocess.run(["bash", "-c", d.updated_input["command"]], cwd=root,
                       capture_output=True, text=True, timeout=60,
                       env={**os.environ, "D": ".s", "AWS_SECRET_ACCESS_KEY": "k3y"})
    assert "the store" not in r.stdout + r.stderr and "k3y" not in r.stdout + r.stderr
    assert (root / ".statewright" / "state.db").read_text() == "the store\n"
    assert sorted(p.name for p in (root / ".statewright").iterdir()) == ["state.db"]
    assert (root / "workflows" / "flow.json").read_text() == "{}\n"


@pytest.mark.parametrize("line", legit())
def test_legit_allowed(line, ctx):
    d = gate(REALISTIC_STATE, Counters(), ToolCall("Bash", {"command": line}), ctx)
    assert d.allowed, f"legit line denied: {line!r}: {d.reason}\n" + "\n".join(d.explanation)
    # blocked_env is set, so the command runs under the sandbox, which scrubs the blocked
    # variables before exec, and the line itself with them unset
    assert d.updated_input is not None and d.sandboxed
    command = d.updated_input["command"]
    assert "--unset AWS_SECRET_ACCESS_KEY --unset PROD_DB_URL" in command
    inner = unwrap(command)
    assert inner is not None and inner.endswith(line)
    assert inner.startswith("unset AWS_SECRET_ACCESS_KEY PROD_DB_URL")


@pytest.mark.parametrize("line", sections("attacks.txt")["environment reads and dumps"])
def test_env_attacks_denied_by_blocked_env_alone(line, ctx):
    """Check 6 stands on its own: no allowed_commands, only blocked_env."""
    state = State(name="s", blocked_env=REALISTIC_STATE.blocked_env)
    d = gate(state, Counters(), ToolCall("Bash", {"command": line}), ctx)
    assert not d.allowed, f"env read allowed: {line!r}\n" + "\n".join(d.explanation)
    assert d.rule == "blocked_env"


@pytest.mark.parametrize("line", sections("attacks.txt")["store tampering"])
def test_store_attacks_denied_without_any_rule(line, ctx):
    """Self-protection applies even when the state restricts nothing."""
    d = gate(State(name="free"), Counters(), ToolCall("Bash", {"command": line}), ctx)
    assert not d.allowed, f"store tampering allowed: {line!r}"
    assert d.rule == "self_protection"
