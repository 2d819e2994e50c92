"""What a newcomer hits in the first hour, driven through the installed `statewright` entry point
in temporary projects: where the project is, what failed commands leave behind, `init` run
again, what install writes and leaves, and how the CLI says what happened."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.cli.helpers import one_error_line
from tests.conftest import bin_path, clean_env

MINI = {"id": "mini", "initial": "a",
        "states": {"a": {"on": {"GO": "b"}}, "b": {"type": "final"}}}


def run(cwd: Path, *args: str, home: Path | None = None, **env: str
        ) -> subprocess.CompletedProcess:
    """The installed `statewright`, run in `cwd` (no --project: the root is found)."""
    extra = {"COLUMNS": env.pop("COLUMNS", "80"), **env}
    if home is not None:
        extra["HOME"] = str(home)
        extra["CLAUDE_CONFIG_DIR"] = str(home)
    return subprocess.run([bin_path("statewright"), *args], capture_output=True, text=True,
                          cwd=cwd, env=clean_env(**extra), timeout=120)


def git_project(tmp_path: Path, name: str = "proj") -> Path:
    root = tmp_path / name
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    (root / "workflows").mkdir()
    (root / "workflows" / "mini.json").write_text(json.dumps(MINI))
    return root


# -- install and project root --------------------------------------------------------------------

def test_a_venv_named_like_the_store_does_not_make_home_a_project(tmp_path):
    """A venv at ~/.statewright (where the README once installed) is no store: from a folder
    under $HOME without .git, the project is that folder; nothing is written into the venv."""
    home = tmp_path / "home"
    venv = home / ".statewright"
    (venv / "bin").mkdir(parents=True)
    (venv / "pyvenv.cfg").write_text("home = /usr/bin\n")
    work = home / "scratch"
    work.mkdir()
    (work / "workflows").mkdir()
    (work / "workflows" / "mini.json").write_text(json.dumps(MINI))
    p = run(work, "start", "mini", "--json", home=home)
    assert p.returncode == 0, p.stderr
    assert (work / ".statewright" / "state.db").is_file()
    assert not (venv / "state.db").exists() and not (home / "workflows").exists()
    # and naming the venv's parent as the project is refused rather than writing into a venv
    p = run(work, "start", "tdd-feature", "--project", str(home), home=home)
    one_error_line(p, "STORE_ERROR")
    assert "virtual environment" in p.stderr and not (venv / "state.db").exists()


@pytest.mark.parametrize("args", [
    ("transition", "GO"), ("approve",), ("reject", "--reason", "no"), ("end",), ("pause",),
    ("resume",), ("force-state", "b"), ("fork", "x"), ("approve", "apr_000000000000"),
])
def test_failed_commands_create_no_store(tmp_path, args):
    root = git_project(tmp_path)
    p = run(root, *args)
    assert p.returncode == 1, p
    code = "NO_PENDING_APPROVAL" if args[0] in ("approve", "reject") else "NO_ACTIVE_RUN"
    one_error_line(p, code)
    assert not (root / ".statewright").exists()


def test_init_again_after_the_starter_was_edited_keeps_it_and_wires(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    root = git_project(tmp_path)
    starter = root / "workflows" / "starter.json"
    starter.parent.mkdir(exist_ok=True)
    edited = json.dumps({**MINI, "id": "starter"}, indent=2) + "\n"
    starter.write_text(edited)
    p = run(root, "init", home=home)
    assert p.returncode == 0, p.stderr
    assert starter.read_text() == edited  # kept
    assert "kept" in p.stdout and "--force" in p.stdout
    assert (root / ".claude" / "settings.local.json").is_file()  # and wired all the same
    again = run(root, "init", home=home)
    assert again.returncode == 0 and starter.read_text() == edited


def test_settings_local_json_is_git_ignored_after_init_and_install(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    for cmd in (("init",), ("install", "claude")):
        root = git_project(tmp_path, f"p{len(cmd)}")
        assert run(root, *cmd, home=home).returncode == 0
        assert (root / ".claude" / "settings.local.json").is_file()
        st = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"], cwd=root,
                            capture_output=True, text=True, check=True).stdout
        assert ".claude/settings.local.json" not in st, st
        assert not (root / ".gitignore").exists()  # no committed file is written
        # twice: one line, not two
        assert run(root, *cmd, home=home).returncode == 0
        exclude = (root / ".git" / "info" / "exclude").read_text().splitlines()
        assert exclude.count("/.claude/settings.local.json") == 1
        # uninstalling takes the line out again
        assert run(root, "install", "claude", "--uninstall", home=home).returncode == 0
        assert "/.claude/settings.local.json" not in (
            root / ".git" / "info" / "exclude").read_text().splitlines()


def test_uninstall_leaves_no_empty_entries_in_claude_json(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    (home / ".claude.json").write_text(json.dumps({"userID": "u", "projects": {
        "/elsewhere": {"allowedTools": ["Read"]}}}))
    root = git_project(tmp_path)
    assert run(root, "install", "claude", home=home).returncode == 0
    assert run(root, "install", "claude", "--uninstall", home=home).returncode == 0
    assert json.loads((home / ".claude.json").read_text()) == {
        "userID": "u", "projects": {"/elsewhere": {"allowedTools": ["Read"]}}}
    assert run(root, "install", "claude", "--scope", "user", home=home).returncode == 0
    assert run(root, "install", "claude", "--scope", "user", "--uninstall",
               home=home).returncode == 0
    assert json.loads((home / ".claude.json").read_text()) == {
        "userID": "u", "projects": {"/elsewhere": {"allowedTools": ["Read"]}}}


def test_not_installed_messages_say_how_this_project_is_installed(tmp_path):
    from statewright.wiring import PORTABLE_LAUNCHER
    from tests.conftest import REPO

    root = tmp_path / "p"
    (root / ".statewright").mkdir(parents=True)
    (root / ".statewright" / "state.db").write_bytes(b"")
    env = {"PATH": "/usr/bin:/bin", "CLAUDE_PROJECT_DIR": str(root)}
    out = subprocess.run(["sh", "-c", PORTABLE_LAUNCHER, "statewright-hook", "pre-tool-use"],
                         capture_output=True, text=True, env=env, timeout=30)
    reason = json.loads(out.stdout)["hookSpecificOutput"]["permissionDecisionReason"]
    plugin = subprocess.run(["sh", str(REPO / "hooks" / "run"), "statewright-hook",
                             "pre-tool-use"], capture_output=True, text=True, timeout=30,
                            env={**env, "CLAUDE_PLUGIN_ROOT": str(tmp_path / "plugin")})
    plugin_reason = json.loads(plugin.stdout)["hookSpecificOutput"]["permissionDecisionReason"]
    cli = subprocess.run(["sh", str(REPO / "hooks" / "run"), "statewright", "status"],
                         capture_output=True, text=True, timeout=30,
                         env={**env, "CLAUDE_PLUGIN_ROOT": str(tmp_path / "plugin")})
    assert cli.returncode == 1
    for text in (reason, plugin_reason, cli.stderr):
        assert "pip install statewright" not in text  # no such package on an index
        assert "README" in text
    assert "make venv" in plugin_reason and "make venv" in cli.stderr
    assert "pip install PATH/TO/statewright" in reason
