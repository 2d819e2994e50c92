"""Which allowed lines run under the kernel sandbox, and what a state's sandbox protects
(`policy.confine`)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from statewright.definition.compiled import State
from statewright.policy import Counters, GateContext, ToolCall, gate
from statewright.policy.confine import needs_sandbox, profile_for, refusal_note
from statewright.policy.shell import analyze
from statewright.sandbox.launcher import unwrap

FREE = State(name="free")

#: lines whose every effect the analysis sees: they run as they are
PLAIN = [
    "ls -la", "cat README.md | head -3", "echo done > notes.txt", "grep -rn TODO src",
    "rg -n 'def main' src", "mkdir -p build && touch build/.keep", "cp a.txt b.txt",
    "mv old.txt new.txt", "rm -f tmp.txt", "sed -n 1,5p file.py", "sed -i s/a/b/ file.py",
    "wc -l $(ls *.py)", "cd src && ls", "pwd", "diff a b", "sort x | uniq -c",
    "statewright status", "statewright transition DONE", "date; whoami", "f() { ls; }; f",
]
#: lines that run code, or write paths, their text does not show
SANDBOXED = [
    "pytest -q", "python3 script.py", "python3 -m pytest", "bash build.sh", "./run.sh",
    "make", "npm test", "npm run lint", "node index.js", "cargo test", "go test ./...",
    "git status", "git commit -m x", "git apply fix.patch", "patch -p1 < fix.patch",
    "git checkout main", "tar xf a.tar", "unzip a.zip", "find . -name '*.pyc' -delete",
    "xargs rm < list.txt", "awk '{print}' f", "sed -f script.sed f", "sed -nf s.sed f",
    "LD_PRELOAD=./x.so ls", "PATH=./bin:$PATH ls", "x=1; echo $x", "source env.sh",
    "/bin/ls", "./ls", "$CMD", "eval ls", "sh -c 'ls'", "pip install -e .", "curl -o x u",
    "ls && pytest", "echo $(python3 -c 'print(1)')",
]


@pytest.mark.parametrize("line", PLAIN)
def test_plain_lines_run_as_they_are(line: str) -> None:
    assert not needs_sandbox(analyze(line), FREE), line


@pytest.mark.parametrize("line", SANDBOXED)
def test_lines_that_run_unseen_code_are_sandboxed(line: str) -> None:
    assert needs_sandbox(analyze(line), FREE), line


def test_a_state_with_blocked_env_sandboxes_every_line() -> None:
    state = State(name="s", blocked_env=("TOKEN",))
    assert all(needs_sandbox(analyze(line), state) for line in PLAIN)


def test_sandbox_off_sandboxes_nothing() -> None:
    state = State(name="s", blocked_env=("TOKEN",), sandbox="off")
    assert not any(needs_sandbox(analyze(line), state) for line in SANDBOXED)


@pytest.fixture
def ctx(tmp_path: Path) -> GateContext:
    root = tmp_path / "proj"
    (root / "workflows").mkdir(parents=True)
    (root / ".statewright").mkdir()
    (root / "tests" / "unit").mkdir(parents=True)
    (root / "tests" / "unit" / "test_a.py").write_text("")
    (root / "src").mkdir()
    (root / "src" / "a.lock").write_text("")
    return GateContext(str(root), str(root / ".statewright"),
                       frozenset({str(root / "workflows" / "flow.json")}))


def test_the_profile_holds_what_check_one_protects(ctx: GateContext) -> None:
    state = State(name="green", blocked_env=("TOKEN", "KEY"), env_overrides={"CI": "1"},
                  read_only=("tests/**", "src/*.lock"), network=False)
    p = profile_for(state, ctx)
    root = os.path.realpath(ctx.project_root)
    home = os.path.realpath(os.path.expanduser("~"))
    for path in (f"{root}/workflows", f"{root}/statewright.json", f"{root}/.mcp.json",
                 f"{root}/.claude", f"{home}/.claude", f"{home}/.claude.json",
                 f"{root}/.git/hooks", f"{root}/.git/config", f"{root}/tests",
                 f"{root}/src/a.lock"):
        assert path in p.read_only, path
    assert root not in p.read_only and not any(
        (root + "/").startswith(q + "/") for q in p.read_only)
    assert p.hidden[0] == os.path.realpath(ctx.store_dir)
    assert p.scrub[:2] == ("TOKEN", "KEY") and "STATEWRIGHT_STORE" in p.scrub
    assert p.setenv == (("CI", "1"),)
    assert p.network is False and p.unix_sockets is False
    # statewright's own programs (this package) are among them
    import statewright
    assert any(os.path.dirname(statewright.__file__).startswith(q) for q in p.read_only)


def test_the_gate_rewrites_only_what_needs_it(ctx: GateContext) -> None:
    state = State(name="s", allowed_commands=("pytest", "ls"))
    plain = gate(state, Counters(), ToolCall("Bash", {"command": "ls"}), ctx)
    assert plain.allowed and not plain.sandboxed and plain.updated_input is None
    run = gate(state, Counters(), ToolCall("Bash", {"command": "pytest -q", "timeout": 9}), ctx)
    assert run.allowed and run.sandboxed
    assert run.updated_input["timeout"] == 9 and unwrap(run.updated_input["command"]) == \
        "pytest -q"
    assert any("sandbox" in t for t in run.explanation)


def test_required_without_a_tier_refuses_with_the_reason(ctx: GateContext, monkeypatch) -> None:
    from statewright.sandbox import probe

    monkeypatch.setattr(probe, "_KEPT", [probe.Tier("none", 0, "no Landlock")])
    state = State(name="s", sandbox="required")
    d = gate(state, Counters(), ToolCall("Bash", {"command": "pytest"}), ctx)
    assert not d.allowed and d.rule == "sandbox" and "no Landlock" in d.reason
    # a plain line needs no sandbox; `auto` lets the analysis alone bind
    assert gate(state, Counters(), ToolCall("Bash", {"command": "ls"}), ctx).allowed
    auto = gate(State(name="a"), Counters(), ToolCall("Bash", {"command": "pytest"}), ctx)
    assert auto.allowed and not auto.sandboxed and auto.updated_input is None


def test_the_refusal_note_names_the_rule() -> None:
    state = State(name="green", read_only=("tests/**",))
    note = refusal_note(state, "rm: cannot remove 'workflows/f.json': Read-only file system")
    assert note is not None and note.startswith("[STATEWRIGHT SANDBOX]")
    assert "'green'" in note and "tests/**" in note
    assert refusal_note(state, "1 passed in 0.1s") is None


def test_what_runs_later_outside_any_sandbox_is_protected(ctx: GateContext, tmp_path: Path,
                                                         monkeypatch) -> None:
    """The user's start-up files, every directory on PATH, the hook's own Python, and the
    program the host's settings name for statewright (here: a hook in the project's own virtual
    environment) are read-only for a sandboxed line."""
    import json
    import sys

    root = Path(ctx.project_root)
    venv = root / ".venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "pyvenv.cfg").write_text("home = /usr/bin\n")
    (venv / "bin" / "statewright-hook").write_text("#!/bin/sh\n")
    (root / ".claude").mkdir()
    (root / ".claude" / "settings.json").write_text(json.dumps({"hooks": {"PreToolUse": [
        {"matcher": "*", "hooks": [{"type": "command", "command":
                                    '"$CLAUDE_PROJECT_DIR"/.venv/bin/statewright-hook pre'}]}]}}))
    p = profile_for(State(name="s2", blocked_env=("X",)), ctx)
    home = os.path.realpath(os.path.expanduser("~"))
    for path in (f"{home}/.bashrc", f"{home}/.gitconfig", f"{home}/.local/bin", "/etc",
                 os.path.realpath(os.path.dirname(os.__file__)), os.path.realpath(sys.executable),
                 os.path.realpath(venv)):
        assert path in p.read_only, path
    for d in os.environ["PATH"].split(os.pathsep):
        assert os.path.realpath(d) in p.read_only, d


def test_a_path_inside_the_project_makes_no_line_plain(ctx: GateContext, monkeypatch) -> None:
    """`ls` would be whatever the agent's code put in an activated project venv's bin."""
    assert not needs_sandbox(analyze("ls"), FREE, ctx)
    monkeypatch.setenv("PATH", f"{ctx.project_root}/.venv/bin{os.pathsep}/usr/bin")
    assert needs_sandbox(analyze("ls"), FREE, ctx)
    monkeypatch.setenv("PATH", f".{os.pathsep}/usr/bin")
    assert needs_sandbox(analyze("ls"), FREE, ctx)


def test_what_the_text_rules_refused_and_the_kernel_now_binds(ctx: GateContext) -> None:
    """Everyday calls the text rules refused (they only guessed), allowed now; what names the
    store itself is still refused early."""
    root = ctx.project_root
    free = State(name="free")
    allowed = [
        ("Bash", {"command": 'git commit -m "fix the state.db migration"'}, True),
        ("Bash", {"command": "sqlite3 data/state.db .tables"}, True),
        ("Bash", {"command": "find . -name '*.pyc' -delete"}, True),
        ("Bash", {"command": "pytest > /tmp/x.log"}, True),
        ("Bash", {"command": "cat data/state.db"}, True),
        ("Grep", {"pattern": "state.db"}, False),
        ("Read", {"file_path": f"{root}/data/state.db"}, False),
        ("Edit", {"file_path": "data/state.db", "old_string": "a", "new_string": "b"}, False),
    ]
    for tool, args, sandboxed in allowed:
        d = gate(free, Counters(), ToolCall(tool, args, cwd=root), ctx)
        assert d.allowed and d.sandboxed is sandboxed, (tool, args, d.reason)
    for tool, args in [("Bash", {"command": "cat .statewright/state.db"}),
                       ("Bash", {"command": "pytest; rm -rf workflows"}),
                       ("Read", {"file_path": f"{root}/.statewright/state.db"}),
                       ("Grep", {"pattern": "x", "path": f"{root}/.statewright"})]:
        d = gate(free, Counters(), ToolCall(tool, args, cwd=root), ctx)
        assert not d.allowed and d.rule == "self_protection", (tool, args)
