"""`statewright install codex|gemini|copilot` and `statewright doctor`, through the real CLI:
the files each writes (project scope portable, user scope in the host's own home), idempotent,
`--uninstall` removing only what is ours, bad files reported with their spot and nothing
changed. (The wiring working in the real hosts: tests/hosts.)"""

from __future__ import annotations

import json
import subprocess
import tomllib
from pathlib import Path

import pytest
from conftest import VENV_BIN, bin_path, clean_env, hook_program

pytestmark = pytest.mark.e2e

FILES = {"codex": [".codex/hooks.json", ".codex/config.toml"],
         "gemini": [".gemini/settings.json"],
         "copilot": [".github/hooks/statewright.json"]}


def sw(root: Path, home: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    env = clean_env(HOME=str(home), CODEX_HOME=str(home / ".codex"),
                    COPILOT_HOME=str(home / ".copilot"))
    r = subprocess.run([bin_path("statewright"), *args, "--project", str(root)],
                       capture_output=True, text=True, env=env, timeout=120)
    assert "Traceback" not in r.stderr, r.stderr
    if check:
        assert r.returncode == 0, r.stderr
    return r


@pytest.fixture
def dirs(tmp_path: Path) -> tuple[Path, Path]:
    root, home = tmp_path / "proj", tmp_path / "home"
    root.mkdir()
    home.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    return root, home


@pytest.mark.parametrize("host", ["codex", "gemini", "copilot"])
def test_project_scope_is_portable_idempotent_and_uninstalls_cleanly(dirs, host: str) -> None:
    root, home = dirs
    r = sw(root, home, "install", host)
    assert "When a hook fails" in r.stdout and "trust" in r.stdout.lower()
    for rel in FILES[host]:
        text = (root / rel).read_text()
        # no machine paths in files a team commits: programs are found on PATH
        assert str(root) not in text and str(VENV_BIN) not in text and str(home) not in text
        assert "statewright" in text
    r = sw(root, home, "install", host)
    assert r.stdout.count("(unchanged)") == len(FILES[host]), r.stdout
    sw(root, home, "install", host, "--uninstall")
    for rel in FILES[host]:
        assert not (root / rel).exists(), rel
    assert sorted(p.name for p in root.iterdir()) == [".git"]  # no empty directory left


def test_codex_hooks_and_the_proxy(dirs) -> None:
    root, home = dirs
    sw(root, home, "install", "codex")
    hooks = json.loads((root / ".codex" / "hooks.json").read_text())["hooks"]
    pre = hooks["PreToolUse"][0]["hooks"][0]
    assert pre["type"] == "mcp_tool" and pre["tool"] == "statewright_hook"
    # only fields every PreToolUse has (Codex fails a hook naming a field its event lacks)
    assert pre["input"] == {"host": "codex", "hook_event_name": "${hook_event_name}",
                            "session_id": "${session_id}", "cwd": "${cwd}",
                            "tool_name": "${tool_name}", "tool_input": "${tool_input}"}
    start = hooks["SessionStart"][0]["hooks"][0]
    # the native client from PATH where it is installed, else the Python hook
    assert start["type"] == "command" and start["command"] == (
        "command -v statewright-hook-native >/dev/null 2>&1 && exec statewright-hook-native "
        "--host=codex SessionStart; exec statewright-hook --host=codex SessionStart")
    config = tomllib.loads((root / ".codex" / "config.toml").read_text())
    assert config["mcp_servers"]["statewright"] == {"command": "statewright", "args": ["serve"]}
    sw(root, home, "install", "codex", "--hooks", "process")
    hooks = json.loads((root / ".codex" / "hooks.json").read_text())["hooks"]
    assert all(len(groups) == 1 and groups[0]["hooks"][0]["command"].startswith(
        "command -v statewright-hook-native >/dev/null 2>&1 && exec statewright-hook-native "
        "--host=codex ") for groups in hooks.values())


def test_the_users_own_wiring_is_kept(dirs) -> None:
    root, home = dirs
    (root / ".codex").mkdir()
    mine = {"type": "command", "command": "my-linter", "timeout": 5}
    (root / ".codex" / "hooks.json").write_text(json.dumps(
        {"hooks": {"PreToolUse": [{"matcher": "^Bash$", "hooks": [mine]}]}}))
    (root / ".codex" / "config.toml").write_text(
        'model = "o9"\n\n[mcp_servers.docs]\ncommand = "docs-server"\n\n'
        '[mcp_servers.docs.env]\nKEY = "v"\n')
    (root / ".gemini").mkdir()
    (root / ".gemini" / "settings.json").write_text(json.dumps(
        {"theme": "dark", "mcpServers": {"docs": {"command": "docs-server"}}}))
    for host in ("codex", "gemini"):
        sw(root, home, "install", host)
    config = tomllib.loads((root / ".codex" / "config.toml").read_text())
    assert config["model"] == "o9" and config["mcp_servers"]["docs"]["env"] == {"KEY": "v"}
    assert config["mcp_servers"]["statewright"]["args"] == ["serve"]
    for host in ("codex", "gemini"):
        sw(root, home, "install", host, "--uninstall")
    hooks = json.loads((root / ".codex" / "hooks.json").read_text())
    assert hooks == {"hooks": {"PreToolUse": [{"matcher": "^Bash$", "hooks": [mine]}]}}
    config = tomllib.loads((root / ".codex" / "config.toml").read_text())
    assert config == {"model": "o9", "mcp_servers": {"docs": {"command": "docs-server",
                                                               "env": {"KEY": "v"}}}}
    assert json.loads((root / ".gemini" / "settings.json").read_text()) == {
        "theme": "dark", "mcpServers": {"docs": {"command": "docs-server"}}}


def test_bad_files_are_reported_and_nothing_changes(dirs) -> None:
    root, home = dirs
    (root / ".codex").mkdir()
    (root / ".codex" / "hooks.json").write_text("{}")
    (root / ".codex" / "config.toml").write_text('[mcp_servers.statewright]\ncommand = "x"\n')
    r = sw(root, home, "install", "codex", check=False)
    assert r.returncode != 0 and "/mcp_servers/statewright" in r.stderr
    assert (root / ".codex" / "hooks.json").read_text() == "{}"
    (root / ".gemini").mkdir()
    (root / ".gemini" / "settings.json").write_text('{"hooks": {"BeforeTool": {}}}')
    r = sw(root, home, "install", "gemini", check=False)
    assert r.returncode != 0 and "/hooks/BeforeTool" in r.stderr
    (root / ".codex" / "config.toml").write_text("not = [toml")
    r = sw(root, home, "install", "codex", check=False)
    assert r.returncode != 0 and "TOML" in r.stderr and "error[" in r.stderr


def test_user_scope_writes_the_hosts_homes_with_this_installation(dirs) -> None:
    root, home = dirs
    for host in ("codex", "gemini", "copilot"):
        sw(root, home, "install", host, "--scope", "user")
    hooks = (home / ".codex" / "hooks.json").read_text()
    assert hook_program() in hooks
    assert (home / ".codex" / "config.toml").is_file()
    gemini = json.loads((home / ".gemini" / "settings.json").read_text())
    assert gemini["hooks"]["BeforeTool"][0]["hooks"][0]["command"].split()[0] == hook_program()
    assert (home / ".copilot" / "hooks" / "statewright.json").is_file()
    assert not any((root / rel).exists() for rels in FILES.values() for rel in rels)
    r = sw(root, home, "install", "codex", "--scope", "local", check=False)
    assert r.returncode != 0 and "--scope" in r.stderr


def test_doctor_lists_each_wired_host_and_its_posture(dirs) -> None:
    root, home = dirs
    r = sw(root, home, "doctor")
    assert "no host is wired" in r.stdout
    sw(root, home, "install", "codex")
    sw(root, home, "install", "copilot", "--scope", "user")
    sw(root, home, "install", "claude", "--scope", "project")
    data = json.loads(sw(root, home, "doctor", "--json").stdout)
    wired = {(w["host"], w["scope"]): w for w in data["hosts"]}
    assert set(wired) == {("codex", "project"), ("copilot", "user"), ("claude", "project")}
    assert wired[("codex", "project")]["form"] == "mcp_tool + process"
    assert "open" in wired[("codex", "project")]["posture"]
    assert "timeout" in wired[("copilot", "user")]["posture"]
    assert "closed" in wired[("claude", "project")]["posture"]
    text = sw(root, home, "doctor").stdout
    assert "codex (project, mcp_tool + process)" in text and "when a hook fails" in text


def test_doctor_says_which_program_the_process_hooks_run(dirs, tmp_path: Path) -> None:
    """The project scope's process hooks find their program on PATH: doctor names the one
    they run there (the native client with the Python hook beside it, the Python hook alone,
    a client without the Python hook, nothing)."""
    import shutil

    root, home = dirs
    sw(root, home, "install", "gemini")
    alone = tmp_path / "alone"
    alone.mkdir()
    shutil.copy2(VENV_BIN / "statewright-hook-native", alone / "statewright-hook-native")
    only_py = tmp_path / "only-python"
    only_py.mkdir()
    (only_py / "statewright-hook").symlink_to(VENV_BIN / "statewright-hook")

    def doctor(path: str) -> str:
        env = clean_env(HOME=str(home), PATH=path)
        r = subprocess.run([bin_path("statewright"), "doctor", "--project", str(root)],
                           capture_output=True, text=True, env=env, timeout=120)
        assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
        text = " ".join(r.stdout.split())  # (however the console wrapped it)
        return text[text.index("process hooks found on PATH"):]

    assert "statewright-hook-native" in doctor(f"{VENV_BIN}:/usr/bin:/bin") and \
        "the native client" in doctor(f"{VENV_BIN}:/usr/bin:/bin")
    assert "Python: no native client" in doctor(f"{only_py}:/usr/bin:/bin")
    assert "is refused" in doctor(f"{alone}:/usr/bin:/bin")
    assert "nothing" in doctor("/usr/bin:/bin")


#: Gemini CLI 0.61's events that run once per tool call or per model turn
GEMINI_PER_CALL = ("BeforeTool", "AfterTool", "BeforeModel", "AfterModel", "BeforeToolSelection")


def test_gemini_runs_one_process_per_event_and_two_per_tool_call(dirs, tmp_path: Path) -> None:
    """What each Gemini CLI tool call costs is set by the install: two events per call, both
    judging every tool (a tool Gemini CLI adds later included), each one process, because bash
    (Gemini CLI runs every hook as `bash -c COMMAND`) `exec`s the program the command names.
    The programs here are stand-ins that print their pid: the command's form is under test."""
    import re

    root, home = dirs
    sw(root, home, "install", "gemini")
    hooks = json.loads((root / ".gemini" / "settings.json").read_text())["hooks"]
    assert [e for e in GEMINI_PER_CALL if e in hooks] == ["BeforeTool", "AfterTool"]
    for event in ("BeforeTool", "AfterTool"):
        (group,) = hooks[event]
        for tool in ("run_shell_command", "write_file", "mcp_other_do", "a_tool_added_later"):
            # Gemini CLI: `new RegExp(matcher).test(toolName)`
            assert re.search(group["matcher"], tool), (event, tool)
        (h,) = group["hooks"]
        for present in ("statewright-hook-native", "statewright-hook"):
            fake = tmp_path / f"bin-{event}-{present}"
            fake.mkdir()
            (fake / present).write_text('#!/bin/sh\ncat >/dev/null\necho "$$ $(basename "$0") $*"\n')
            (fake / present).chmod(0o755)
            p = subprocess.Popen(["bash", "-c", h["command"]], stdin=subprocess.PIPE,
                                 stdout=subprocess.PIPE, text=True,
                                 env={"PATH": f"{fake}:/usr/bin:/bin"})
            out, _ = p.communicate("{}", timeout=30)
            assert p.returncode == 0
            # the program runs as bash's own process, given the host and the event
            assert out.split() == [str(p.pid), present, "--host=gemini", event], out
