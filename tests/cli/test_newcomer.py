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


# -- the CLI says what happened ------------------------------------------------------------------

APPROVAL = {"id": "gate", "initial": "work", "meta": {"approval_mode": "ui"},
            "states": {"work": {"allowed_tools": ["Read"], "max_edit_lines": 7,
                                "on": {"SHIP": {"target": "shipped", "requires_approval": True,
                                                "approval_message": "ship it?"}}},
                       "shipped": {"type": "final"}}}


def approval_project(tmp_path: Path, name: str = "proj") -> Path:
    root = git_project(tmp_path, name)
    (root / "workflows" / "gate.json").write_text(json.dumps(APPROVAL))
    return root


def test_a_parked_transition_says_it_waits_with_the_id_and_how_to_decide(tmp_path):
    root = approval_project(tmp_path)
    assert run(root, "start", "gate").returncode == 0
    p = run(root, "transition", "SHIP")
    assert p.returncode == 3, p  # accepted, but the run has not moved
    assert "SHIP -> shipped" not in p.stdout.splitlines()[0]  # the title does not say it moved
    assert "waits for approval" in p.stdout.splitlines()[0]
    aid = json.loads(run(root, "status", "--json").stdout)["pending_approval"]["approval_id"]
    assert f"statewright approve {aid}" in p.stdout and f"statewright reject {aid}" in p.stdout
    assert json.loads(run(root, "status", "--json").stdout)["state"] == "work"
    # the typer path says the same
    from tests.cli.helpers import sw as typer_sw

    root2 = approval_project(tmp_path, "second")
    assert run(root2, "start", "gate").returncode == 0
    t = typer_sw("transition", "SHIP", "--project", str(root2), typer_only=True)
    assert t.returncode == 3 and "waits for approval" in t.stdout


def test_start_says_which_run_is_in_the_way_and_how_to_get_past_it(tmp_path):
    root = git_project(tmp_path)
    first = json.loads(run(root, "start", "mini", "--json").stdout)["run_id"]
    line = one_error_line(run(root, "start", "mini"), "RUN_ACTIVE")
    assert first in line and "statewright end`" in line and "statewright pause`" in line
    # another session falls back to the default session's run: said so, with the commands
    line = one_error_line(run(root, "start", "mini", "--session", "S"), "RUN_ACTIVE")
    assert "session 'S' has no run of its own" in line and first in line
    assert "statewright end`" in line and "statewright pause`" in line
    # a session with its own run: the commands name it
    assert run(root, "pause").returncode == 0
    own = json.loads(run(root, "start", "mini", "--session", "T", "--json").stdout)["run_id"]
    line = one_error_line(run(root, "start", "mini", "--session", "T"), "RUN_ACTIVE")
    assert own in line and "statewright end --session T`" in line
    assert "--session OTHER" in line
    assert run(root, "start", "mini", "--session", "T").returncode == 1  # a refusal: 1


def test_status_says_the_file_changed_and_shows_the_budgets_in_force(tmp_path):
    root = approval_project(tmp_path)
    assert run(root, "start", "gate").returncode == 0
    before = run(root, "status").stdout
    assert "max edit lines" in before and "7 per edit" in before
    # Bash is not an allowed tool: no command can run, whatever allowed_commands says
    assert "any (no restriction)" not in before and "Bash is not an allowed tool" in before
    changed = json.loads(json.dumps(APPROVAL))
    changed["states"]["work"]["max_edit_lines"] = 99
    (root / "workflows" / "gate.json").write_text(json.dumps(changed))
    after = run(root, "status", COLUMNS="200").stdout
    assert "changed since this run started" in after and "7 per edit" in after
    assert "99" not in after
    run_id = json.loads(run(root, "status", "--json").stdout)["run_id"]
    shown = run(root, "show", "gate", COLUMNS="200").stdout
    assert "max edit lines: 99" in shown  # the file as it is now ...
    assert run_id in shown and "statewright status" in shown  # ... and who obeys older rules


def test_a_refused_event_and_a_humans_rejection_are_named_apart(tmp_path):
    root = approval_project(tmp_path)
    assert run(root, "start", "gate").returncode == 0
    assert run(root, "transition", "NOPE").returncode == 1
    assert run(root, "transition", "SHIP").returncode == 3
    assert run(root, "reject", "--reason", "not yet").returncode == 0
    kinds = [h["kind"] for h in json.loads(run(root, "history", "--json").stdout)]
    assert "refused" in kinds and "rejected_by_human" in kinds and "rejected" not in kinds
    text = run(root, "history", COLUMNS="120").stdout
    assert "refused" in text and "rejected_by_human" in text


def test_validate_reports_every_problem_at_once_with_did_you_mean(tmp_path):
    bad = {"id": "x", "initial": "strat",
           "states": {"start": {"max_iterations": 0,
                                "on": {"GO": "dnoe", "X": {"target": "done", "guard": "ready"}}},
                      "done": {"type": "final", "bogus": 1}},
           "guards": {"redy": {"field": "a", "op": "eq", "value": 1}}}
    f = tmp_path / "bad.json"
    f.write_text(json.dumps(bad))
    p = run(tmp_path, "validate", str(f), COLUMNS="300")
    assert p.returncode == 1
    out = p.stdout
    # the schema's problems ...
    assert "/states/done/bogus" in out and "/states/start/max_iterations" in out
    # ... and, in the same run, the references (with did-you-mean for states and guards)
    assert "/states/start/on/GO" in out and "did you mean 'done'?" in out
    assert "/states/start/on/X/guard" in out and "did you mean 'redy'?" in out
    assert "/initial" in out and "did you mean 'start'?" in out
    report = json.loads(run(tmp_path, "validate", str(f), "--json").stdout)
    assert report["errors"] == 5


def test_errors_have_one_form_and_one_exit_status_per_class(tmp_path):
    root = git_project(tmp_path)
    # a path that is not there: a code, and the usage class (2)
    p = run(root, "validate", "missing.json")
    one_error_line(p, "INVALID_ARGUMENTS")
    assert p.returncode == 2
    # INVALID_ARGUMENTS exits 2 from every command, fast path or not
    for args in (("start", "mini", "--input", "{bad"), ("transition", "GO", "--data", "{bad"),
                 ("transition", "GO", "--data", "[1]"), ("force-state", "b", "--context", "1")):
        p = run(root, *args)
        one_error_line(p, "INVALID_ARGUMENTS")
        assert p.returncode == 2, args
    # a refusal exits 1
    p = run(root, "transition", "GO")
    one_error_line(p, "NO_ACTIVE_RUN")
    assert p.returncode == 1
    # a group without its subcommand shows its help, as `statewright` alone does
    p = run(root, "install")
    assert p.returncode == 0 and p.stdout.startswith("Usage: statewright install")
    assert "\n  claude" in p.stdout and p.stderr == ""
    # a terminal that cannot write Unicode gets ASCII, not an INTERNAL error
    assert run(root, "start", "mini").returncode == 0
    for args in (("status",), ("show", "mini"), ("list",), ("history",), ("runs",)):
        p = run(root, *args, PYTHONIOENCODING="ascii")
        assert p.returncode == 0 and "INTERNAL" not in p.stderr, (args, p.stderr)
        p.stdout.encode("ascii")


# -- 80 columns, and text an agent wrote -----------------------------------------------------------

def _width(text: str) -> int:
    return max((len(line) for line in text.splitlines()), default=0)


def test_show_check_runs_and_history_fit_80_columns_and_keep_ids_whole(tmp_path):
    root = approval_project(tmp_path)
    (root / "workflows" / "long.json").write_text(json.dumps({
        "id": "a-workflow-with-a-rather-long-name", "initial": "a-state-with-a-long-name",
        "meta": {"owner": "platform-team", "estimated_steps": 25, "danger_level": "dangerous",
                 "task_type": "deployment-of-the-whole-thing"},
        "states": {"a-state-with-a-long-name": {"allowed_tools": ["Bash"],
                                                "allowed_commands": ["pytest", "make test"],
                                                "on": {"GO": "b"}},
                   "b": {"type": "final"}}}))
    shown = run(root, "show", "a-workflow-with-a-rather-long-name")
    assert shown.returncode == 0 and _width(shown.stdout) <= 80, shown.stdout
    assert run(root, "start", "a-workflow-with-a-rather-long-name", "--session",
               "a-session-with-a-long-name").returncode == 0
    checked = run(root, "check", "Bash", '{"command": "pytest -q && rm -rf build && '
                  'curl https://example.com/a/very/long/path/that/goes/on"}',
                  "--session", "a-session-with-a-long-name")
    assert checked.returncode == 1 and _width(checked.stdout) <= 80, checked.stdout
    assert run(root, "start", "gate").returncode == 0
    assert run(root, "transition", "SHIP").returncode == 3
    aid = json.loads(run(root, "status", "--json").stdout)["pending_approval"]["approval_id"]
    runs = run(root, "runs", "--all")
    assert _width(runs.stdout) <= 80 and aid in runs.stdout, runs.stdout
    hist = run(root, "history")
    assert _width(hist.stdout) <= 80 and aid in hist.stdout, hist.stdout


def test_shipped_workflows_read_shipped_not_a_path(tmp_path):
    root = git_project(tmp_path)
    listed = run(root, "list", COLUMNS="200").stdout
    assert "tdd-feature.json (shipped)" in listed and "workflows/mini.json" in listed
    from statewright.config import examples_dir

    assert str(examples_dir()) not in listed
    assert "shipped: tdd-feature.json" in run(root, "show", "tdd-feature").stdout


HIDDEN = "deploy to \u202enoitcudorp\u202c\u200b now"


def test_invisible_characters_an_agent_wrote_are_shown_where_a_human_decides(tmp_path):
    root = approval_project(tmp_path)
    assert run(root, "start", "gate").returncode == 0
    p = run(root, "transition", "SHIP", "--data", json.dumps({"note": HIDDEN}), "--session",
            "default", CLAUDECODE="1")  # the agent, through its shell
    assert p.returncode == 3, p.stderr
    assert run(root, "transition", "NOPE", "--data", json.dumps({"why": HIDDEN})).returncode == 1
    for args in (("history", "--details"), ("history",), ("status",)):
        out = run(root, *args, COLUMNS="300").stdout
        assert "\u202e" not in out and "\u200b" not in out, args
    details = run(root, "history", "--details").stdout
    assert "<U+202E>noitcudorp<U+202C><U+200B>" in details
    status = run(root, "status", COLUMNS="300").stdout
    assert "<U+202E>" in status  # (the pending approval's data is in the context)
    # the web page's approval card and history
    from tests.ui.harness import UiProcess

    ui = UiProcess(root)
    try:
        status_code, key = ui.sign_in()
        assert status_code == 200 and key
        run_id = json.loads(run(root, "status", "--json").stdout)["run_id"]
        code, _h, body = ui.request("GET", f"/api/runs/{run_id}",
                                    headers={"X-Statewright-Key": key, "Origin": ui.base})
        html = body.decode()
        assert code == 200 and "section class=\"card approval\"" in html
        assert "\u202e" not in html and "\u200b" not in html
        assert "&lt;U+202E&gt;noitcudorp" in html
    finally:
        ui.stop()


# -- leftovers of enforcement -----------------------------------------------------------------------

def test_a_file_written_through_lnk_dotdot_is_counted_as_both_resolutions(tmp_path):
    """`lnk/../x.py` is `d/x.py` for the kernel (lnk -> d/sub) and `x.py` for a front end that
    normalises `..` first (Claude Code's Write): with `d/x.py` already edited and a budget of
    one file, the write is a second file, whichever the front end opens."""
    import os

    from tests.hook.harness import Project, allowed, denied

    p = Project(tmp_path / "proj")
    p.write_workflow({"id": "one-file", "initial": "edit", "states": {
        "edit": {"allowed_tools": ["Write", "Read"], "max_files_per_state": 1,
                 "on": {"DONE": "done"}},
        "done": {"type": "final"}}})
    (p.root / "d" / "sub").mkdir(parents=True)
    os.symlink(p.root / "d" / "sub", p.root / "lnk")
    p.start("one-file")
    first = {"file_path": p.path("d/x.py"), "content": "a = 1\n"}
    allowed(p.pre("Write", first))
    (p.root / "d" / "x.py").write_text("a = 1\n")
    p.post("Write", first, {"type": "create", "filePath": p.path("d/x.py")})
    assert p.status()["counters"]["files_edited"] == ["d/x.py"]
    allowed(p.pre("Write", {"file_path": p.path("d/x.py"), "content": "a = 2\n"}))
    why = denied(p.pre("Write", {"file_path": p.path("lnk/../x.py"), "content": "b = 1\n"}))
    assert "at most 1 files" in why and "x.py" in why


@pytest.mark.parametrize("tool", ["mcp__fs__write_file", "Write"])
def test_fail_open_never_lets_through_a_call_shaped_to_fail(tmp_path, tool):
    """`fail_open` is for statewright failing; nesting an extra argument deeper than the
    parser can follow is the agent's choice: refused, through the real hook (process alone and
    with the resident server answering)."""
    from tests.hook.harness import Project, denied

    p = Project(tmp_path / "proj")
    (p.root / "statewright.json").write_text(json.dumps({"fail_open": True}))
    p.start("tdd-feature")
    depth = 2000
    store = p.path(".statewright/state.db")
    nested = "[" * depth + "]" * depth
    text = (f'{{"session_id": "s", "cwd": "{p.root}", "hook_event_name": "PreToolUse", '
            f'"tool_name": "{tool}", "tool_input": {{"path": "{store}", "file_path": "{store}", '
            f'"content": "x", "extra": {nested}}}}}').encode()
    for env in ({**p.env, "STATEWRIGHT_HOOK_RESIDENT": "0"}, p.env, p.env):
        out = p.hook("pre-tool-use", text, env)
        assert "cannot be read" in denied(out) or "could not read" in denied(out)
    # and fail_open still does what it says for statewright's own failures: a damaged store
    (p.root / ".statewright" / "state.db").write_bytes(b"garbage" * 100)
    shallow = p.payload("PreToolUse", tool_name="Read",
                        tool_input={"file_path": p.path("README")})
    out = p.hook("pre-tool-use", shallow, {**p.env, "STATEWRIGHT_HOOK_RESIDENT": "0"})
    assert out is None or "permissionDecision" not in out.get("hookSpecificOutput", {})
