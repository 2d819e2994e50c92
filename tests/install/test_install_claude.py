"""`statewright install claude`: driven through the real installed `statewright` CLI."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from conftest import REPO, bin_path, clean_env, hook_program

HOOK_EVENTS = ["PreToolUse", "PostToolUse", "PostToolUseFailure", "SessionStart",
               "UserPromptSubmit", "Stop"]
HOOK_ARGS = ["pre-tool-use", "post-tool-use", "post-tool-use-failure", "session-start",
             "user-prompt-submit", "stop"]
PROJECT = ("--scope", "project")


@pytest.fixture(autouse=True)
def claude_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Claude Code's per-user files live here during a test (never the real ~/.claude.json)."""
    cfg = tmp_path / "claude-config"
    cfg.mkdir()
    monkeypatch.setenv("SW_TEST_CLAUDE_CONFIG_DIR", str(cfg))
    return cfg


def sw(*args: str, env: dict | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess:
    env = env or clean_env(CLAUDE_CONFIG_DIR=os.environ["SW_TEST_CLAUDE_CONFIG_DIR"])
    return subprocess.run([bin_path("statewright"), *args], capture_output=True, text=True,
                          env=env, cwd=cwd, timeout=120)


def read(p: Path):
    return json.loads(p.read_text())


def is_ours(h: dict) -> bool:
    if h.get("type") == "mcp_tool":
        return h.get("server") == "statewright" and h.get("tool") == "statewright_hook"
    return (os.path.basename(h.get("command", "")) in ("statewright-hook",
                                                       "statewright-hook-native")
            or "statewright-hook" in h.get("args", []))


def our_handlers(settings: dict, event: str) -> list[dict]:
    return [h for g in settings["hooks"].get(event, []) for h in g["hooks"] if is_ours(h)]


def test_default_local_scope_writes_only_uncommitted_files(tmp_path: Path, claude_config: Path) -> None:
    """The default: hooks in .claude/settings.local.json, the proxy in Claude Code's per-user
    file under this project; per-call hooks are answered by the proxy (mcp_tool), SessionStart
    by the process hook (the host fires it before MCP servers connect)."""
    proj = tmp_path / "p"
    proj.mkdir()
    (claude_config / ".claude.json").write_text(json.dumps({"userID": "u", "projects": {
        "/elsewhere": {"mcpServers": {"x": {"command": "x"}}}}}))
    r = sw("install", "claude", "--project", str(proj))
    assert r.returncode == 0, r.stderr
    assert not (proj / ".claude" / "settings.json").exists() and not (proj / ".mcp.json").exists()
    settings = read(proj / ".claude" / "settings.local.json")
    for event, arg in zip(HOOK_EVENTS, HOOK_ARGS, strict=True):
        (group,) = settings["hooks"][event]
        (h,) = group["hooks"]
        assert isinstance(h["timeout"], int) and 1 <= h["timeout"] <= 120  # seconds, not ms
        assert ("onFailure" in h) == (event == "PreToolUse")
        if event == "SessionStart":
            assert h == {"type": "command", "command": hook_program(), "args": [arg],
                         "timeout": h["timeout"]}
        else:
            assert h["type"] == "mcp_tool" and h["server"] == "statewright"
            assert h["tool"] == "statewright_hook"
            assert h["input"]["tool_input"] == "${tool_input}"
            assert h["input"]["hook_event_name"] == "${hook_event_name}"
    assert settings["hooks"]["PreToolUse"][0]["hooks"][0]["onFailure"] == "block"
    assert settings["hooks"]["SessionStart"][0]["matcher"] == "startup|resume|clear|compact"
    assert "matcher" not in settings["hooks"]["Stop"][0]
    state = read(claude_config / ".claude.json")
    assert state["userID"] == "u" and state["projects"]["/elsewhere"]  # the rest is untouched
    entry = state["projects"][str(proj.resolve())]["mcpServers"]["statewright"]
    assert entry == {"type": "stdio", "command": bin_path("statewright"), "args": ["serve"],
                     "alwaysLoad": True}
    # idempotent, and uninstall removes the file it created and the server entry
    assert "unchanged" in sw("install", "claude", "--project", str(proj)).stdout
    r = sw("install", "claude", "--project", str(proj), "--uninstall")
    assert r.returncode == 0, r.stderr
    assert not (proj / ".claude").exists()
    state = read(claude_config / ".claude.json")
    assert str(proj.resolve()) not in state["projects"]  # (no empty project entry left)
    assert state["userID"] == "u" and state["projects"]["/elsewhere"]


def test_process_hooks_on_request(tmp_path: Path) -> None:
    proj = tmp_path / "p"
    proj.mkdir()
    assert sw("install", "claude", "--hooks", "process", "--project", str(proj)).returncode == 0
    settings = read(proj / ".claude" / "settings.local.json")
    for event, arg in zip(HOOK_EVENTS, HOOK_ARGS, strict=True):
        (h,) = settings["hooks"][event][0]["hooks"]
        assert h["command"] == hook_program() and h["args"] == [arg]
    # switching forms replaces ours, never duplicates
    assert sw("install", "claude", "--project", str(proj)).returncode == 0
    settings = read(proj / ".claude" / "settings.local.json")
    assert [len(our_handlers(settings, ev)) for ev in HOOK_EVENTS] == [1] * len(HOOK_EVENTS)
    assert our_handlers(settings, "PreToolUse")[0]["type"] == "mcp_tool"


def test_project_scope_is_portable(tmp_path: Path) -> None:
    """Committed files carry no machine's paths: programs are found on PATH, through a launcher
    that lets a clone without statewright and without a store work normally."""
    proj = tmp_path / "p"
    proj.mkdir()
    r = sw("install", "claude", *PROJECT, "--project", str(proj))
    assert r.returncode == 0, r.stderr
    text = (proj / ".claude" / "settings.json").read_text() + (proj / ".mcp.json").read_text()
    assert str(tmp_path) not in text and str(Path(bin_path("statewright")).parent) not in text
    assert not (proj / ".claude" / "settings.local.json").exists()
    mcp = read(proj / ".mcp.json")
    assert mcp == {"mcpServers": {"statewright": {"type": "stdio", "command": "statewright",
                                                  "args": ["serve"], "alwaysLoad": True}}}
    settings = read(proj / ".claude" / "settings.json")
    for event, arg in zip(HOOK_EVENTS, HOOK_ARGS, strict=True):
        (h,) = settings["hooks"][event][0]["hooks"]
        assert h["command"] == "sh" and h["args"][0] == "-c" and h["args"][2:] == ["statewright-hook", arg]


def launcher(proj: Path, event: str, path: str, stdin: bytes = b"{}") -> subprocess.CompletedProcess:
    (h,) = read(proj / ".claude" / "settings.json")["hooks"][event][0]["hooks"]
    return subprocess.run([h["command"], *h["args"]], input=stdin, capture_output=True, timeout=60,
                          env={"PATH": path, "CLAUDE_PROJECT_DIR": str(proj)})


def test_project_scope_launcher_on_a_machine_without_statewright(tmp_path: Path) -> None:
    proj = tmp_path / "p"
    proj.mkdir()
    assert sw("install", "claude", *PROJECT, "--project", str(proj)).returncode == 0
    bare = "/usr/bin:/bin"
    # no store: nothing to enforce, every event passes silently
    for event in HOOK_EVENTS:
        r = launcher(proj, event, bare)
        assert r.returncode == 0 and r.stdout == b"", (event, r)
    # a store (statewright was used here): tool calls are refused, saying how to install it
    (proj / ".statewright").mkdir()
    (proj / ".statewright" / "state.db").write_bytes(b"")
    out = json.loads(launcher(proj, "PreToolUse", bare).stdout)["hookSpecificOutput"]
    assert out["hookEventName"] == "PreToolUse" and out["permissionDecision"] == "deny"
    assert "pip install PATH/TO/statewright" in out["permissionDecisionReason"]
    assert launcher(proj, "PostToolUse", bare).stdout == b""
    # with statewright on PATH the launcher runs the installed hook
    path = str(Path(bin_path("statewright-hook")).parent) + ":" + bare
    out = json.loads(launcher(proj, "PreToolUse", path, b"not json").stdout)["hookSpecificOutput"]
    assert "not valid JSON" in out["permissionDecisionReason"]


def test_tool_matcher_covers_every_tool_including_the_proxys(tmp_path: Path) -> None:
    """The hook runs for every tool: it decides itself which calls the proxy gates (a name alone
    cannot tell our proxy from another server registered as `statewright`)."""
    proj = tmp_path / "p"
    proj.mkdir()
    assert sw("install", "claude", *PROJECT, "--project", str(proj)).returncode == 0
    settings = read(proj / ".claude" / "settings.json")
    for event in ("PreToolUse", "PostToolUse", "PostToolUseFailure"):
        (group,) = settings["hooks"][event]
        assert group["matcher"] == "*"  # Claude Code: "*" matches all tools


OLD_MATCHER = "^(?!mcp__(?:statewright|plugin_statewright_statewright)__).*$"


def test_install_upgrades_an_old_install_without_duplicating(tmp_path: Path) -> None:
    """An install made by an older statewright (matcher excluding the proxy's tools) is replaced,
    not duplicated; the user's handler sharing a group with ours is kept; uninstall removes ours."""
    proj = tmp_path / "p"
    (proj / ".claude").mkdir(parents=True)
    old_bin = "/old/venv/bin/statewright-hook"
    old = {"hooks": {
        "PreToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "/usr/local/bin/my-guard"}]},
            {"matcher": OLD_MATCHER, "hooks": [{"type": "command", "command": old_bin,
                                                "args": ["pre-tool-use"], "timeout": 30,
                                                "onFailure": "block"}]},
        ],
        "PostToolUse": [
            {"matcher": OLD_MATCHER, "hooks": [
                {"type": "command", "command": old_bin, "args": ["post-tool-use"], "timeout": 30},
                {"type": "command", "command": "echo mine"}]},
        ],
    }}
    (proj / ".claude" / "settings.json").write_text(json.dumps(old))
    r = sw("install", "claude", *PROJECT, "--project", str(proj))
    assert r.returncode == 0, r.stderr
    s = read(proj / ".claude" / "settings.json")
    for ev in HOOK_EVENTS:
        (h,) = our_handlers(s, ev)  # exactly one, the current one
        assert h["command"] == "sh" and "statewright-hook" in h["args"]
    assert OLD_MATCHER not in json.dumps(s["hooks"]["PreToolUse"])
    assert s["hooks"]["PreToolUse"][0] == old["hooks"]["PreToolUse"][0]
    assert [g["matcher"] for g in s["hooks"]["PreToolUse"]] == ["Bash", "*"]
    # the user's handler keeps its group (and that group's matcher); ours moved to "*"
    assert s["hooks"]["PostToolUse"][0] == {"matcher": OLD_MATCHER,
                                            "hooks": [{"type": "command", "command": "echo mine"}]}
    assert s["hooks"]["PostToolUse"][1]["matcher"] == "*"
    before = (proj / ".claude" / "settings.json").read_bytes()
    assert "unchanged" in sw("install", "claude", *PROJECT, "--project", str(proj)).stdout
    assert (proj / ".claude" / "settings.json").read_bytes() == before
    assert sw("install", "claude", *PROJECT, "--project", str(proj), "--uninstall").returncode == 0
    s = read(proj / ".claude" / "settings.json")
    assert all(not our_handlers(s, ev) for ev in s["hooks"])
    assert s["hooks"] == {"PreToolUse": [old["hooks"]["PreToolUse"][0]],
                          "PostToolUse": [{"matcher": OLD_MATCHER, "hooks": [
                              {"type": "command", "command": "echo mine"}]}]}


def test_rerun_changes_nothing(tmp_path: Path) -> None:
    proj = tmp_path / "p"
    proj.mkdir()
    assert sw("install", "claude", *PROJECT, "--project", str(proj)).returncode == 0
    s1 = (proj / ".claude" / "settings.json").read_bytes()
    m1 = (proj / ".mcp.json").read_bytes()
    st1 = (proj / ".claude" / "settings.json").stat().st_mtime_ns
    r = sw("install", "claude", *PROJECT, "--project", str(proj))
    assert r.returncode == 0, r.stderr
    assert "unchanged" in r.stdout
    assert (proj / ".claude" / "settings.json").read_bytes() == s1
    assert (proj / ".mcp.json").read_bytes() == m1
    assert (proj / ".claude" / "settings.json").stat().st_mtime_ns == st1  # not even rewritten


USER_SETTINGS = {
    "permissions": {"allow": ["Bash(npm test:*)"], "deny": ["Read(./.env)"]},
    "env": {"FOO": "1"},
    "hooks": {
        "PreToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "/usr/local/bin/my-guard", "timeout": 5}]},
            # a group mixing the user's handler with a stale statewright handler (old install, shell form)
            {"matcher": "Write", "hooks": [
                {"type": "command", "command": "/old/venv/bin/statewright-hook pre-tool-use"},
                {"type": "command", "command": "echo keep-me"}]},
        ],
        "Notification": [{"hooks": [{"type": "command", "command": "notify-send hi"}]}],
    },
}
USER_MCP = {"mcpServers": {"github": {"command": "gh-mcp", "args": ["--stdio"], "env": {"T": "x"}}}}


def test_merge_keeps_user_hooks_and_servers_and_uninstall_restores_them(tmp_path: Path) -> None:
    proj = tmp_path / "p"
    (proj / ".claude").mkdir(parents=True)
    (proj / ".claude" / "settings.json").write_text(json.dumps(USER_SETTINGS, indent=4))
    (proj / ".mcp.json").write_text(json.dumps(USER_MCP))
    r = sw("install", "claude", *PROJECT, "--project", str(proj))
    assert r.returncode == 0, r.stderr
    s = read(proj / ".claude" / "settings.json")
    assert s["permissions"] == USER_SETTINGS["permissions"] and s["env"] == {"FOO": "1"}
    assert s["hooks"]["Notification"] == USER_SETTINGS["hooks"]["Notification"]
    pre = s["hooks"]["PreToolUse"]
    assert pre[0] == USER_SETTINGS["hooks"]["PreToolUse"][0]
    assert pre[1] == {"matcher": "Write", "hooks": [{"type": "command", "command": "echo keep-me"}]}
    for ev in HOOK_EVENTS:  # exactly one statewright handler per event, the current one
        (h,) = our_handlers(s, ev)
        assert h["command"] == "sh" and "statewright-hook" in h["args"]
    m = read(proj / ".mcp.json")
    assert m["mcpServers"]["github"] == USER_MCP["mcpServers"]["github"]
    assert m["mcpServers"]["statewright"]["args"] == ["serve"]

    # idempotent after a merge too
    before = (proj / ".claude" / "settings.json").read_bytes()
    assert sw("install", "claude", *PROJECT, "--project", str(proj)).returncode == 0
    assert (proj / ".claude" / "settings.json").read_bytes() == before

    r = sw("install", "claude", *PROJECT, "--project", str(proj), "--uninstall")
    assert r.returncode == 0, r.stderr
    s = read(proj / ".claude" / "settings.json")
    expected = json.loads(json.dumps(USER_SETTINGS))
    expected["hooks"]["PreToolUse"][1]["hooks"] = [{"type": "command", "command": "echo keep-me"}]
    assert s == expected
    assert read(proj / ".mcp.json") == USER_MCP
    # uninstalling again is a no-op
    r = sw("install", "claude", *PROJECT, "--project", str(proj), "--uninstall")
    assert r.returncode == 0 and "unchanged" in r.stdout


@pytest.mark.parametrize("content, needle", [
    ('{"hooks": {"PreToolUse": [ }', "not valid JSON"),
    ('["not", "an", "object"]', "must be a JSON object"),
    ('{"hooks": ["PreToolUse"]}', "/hooks"),
    ('{"hooks": {"PreToolUse": {"matcher": "Bash"}}}', "/hooks/PreToolUse"),
    ('{"hooks": {"Stop": [{"hooks": "x"}]}}', "/hooks/Stop/0/hooks"),
])
def test_malformed_settings_is_a_clear_error_and_nothing_changes(tmp_path: Path, content: str, needle: str) -> None:
    proj = tmp_path / "p"
    (proj / ".claude").mkdir(parents=True)
    path = proj / ".claude" / "settings.json"
    path.write_text(content)
    r = sw("install", "claude", *PROJECT, "--project", str(proj))
    assert r.returncode != 0
    assert "Traceback" not in r.stderr and "Traceback" not in r.stdout
    assert needle in r.stderr and "nothing was changed" in r.stderr
    assert path.read_text() == content
    assert not (proj / ".mcp.json").exists()  # all files are checked before any is written


def test_malformed_mcp_json_leaves_settings_untouched(tmp_path: Path) -> None:
    proj = tmp_path / "p"
    proj.mkdir()
    (proj / ".mcp.json").write_text('{"mcpServers": [1, 2]}')
    r = sw("install", "claude", *PROJECT, "--project", str(proj))
    assert r.returncode != 0 and "/mcpServers" in r.stderr
    assert not (proj / ".claude" / "settings.json").exists()
    assert (proj / ".mcp.json").read_text() == '{"mcpServers": [1, 2]}'


def test_user_scope_writes_the_users_files_only(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    proj = tmp_path / "p"
    proj.mkdir()
    env = clean_env(HOME=str(home))
    r = sw("install", "claude", "--scope", "user", env=env, cwd=proj)
    assert r.returncode == 0, r.stderr
    s = read(home / ".claude" / "settings.json")
    assert our_handlers(s, "PreToolUse")[0]["onFailure"] == "block"
    assert read(home / ".claude.json")["mcpServers"]["statewright"]["alwaysLoad"] is True
    assert not (proj / ".mcp.json").exists() and not (proj / ".claude").exists()
    r = sw("install", "claude", "--scope", "user", "--uninstall", env=env, cwd=proj)
    assert r.returncode == 0
    assert not (home / ".claude" / "settings.json").exists()
    assert read(home / ".claude.json") == {}  # (no empty "mcpServers" left behind)


def test_bad_scope_is_an_error(tmp_path: Path) -> None:
    r = sw("install", "claude", "--scope", "global", "--project", str(tmp_path))
    assert r.returncode != 0 and "--scope" in r.stderr and "Traceback" not in r.stderr
    r = sw("install", "claude", "--hooks", "http", "--project", str(tmp_path))
    assert r.returncode != 0 and "--hooks" in r.stderr and "Traceback" not in r.stderr


def test_plugin_files_match_the_installer() -> None:
    """hooks/hooks.json (plugin), hooks/settings-snippet.json and plugin.json say what install writes."""
    from statewright.wiring import hook_group, merge_hooks, plan

    process = plan("local", "process", Path("/p"), "/ABSOLUTE/PATH/TO/.venv/bin/statewright-hook", "")
    snippet = json.loads((REPO / "hooks" / "settings-snippet.json").read_text())
    assert snippet == merge_hooks({}, process)
    plugin_hooks = json.loads((REPO / "hooks" / "hooks.json").read_text())
    assert plugin_hooks["description"]
    plugin = plan("local", "process", Path("/p"), "${CLAUDE_PLUGIN_ROOT}/hooks/run", "")
    for ev in HOOK_EVENTS:
        expected = hook_group(plugin, ev)
        for h in expected["hooks"]:
            h["args"] = ["statewright-hook", *h["args"]]
        assert plugin_hooks["hooks"][ev] == [expected]
    manifest = json.loads((REPO / ".claude-plugin" / "plugin.json").read_text())
    assert manifest["name"] == "statewright" and manifest["version"]
    assert manifest["mcpServers"]["statewright"] == {"command": "${CLAUDE_PLUGIN_ROOT}/hooks/run",
                                                     "args": ["statewright", "serve"]}
    assert os.access(REPO / "hooks" / "run", os.X_OK)


def test_plugin_launcher_fails_closed_without_an_installed_hook(tmp_path: Path) -> None:
    """With no statewright-hook anywhere, the plugin's launcher still refuses PreToolUse calls."""
    env = {"PATH": "/usr/bin:/bin", "CLAUDE_PLUGIN_ROOT": str(tmp_path)}
    r = subprocess.run([str(REPO / "hooks" / "run"), "statewright-hook", "pre-tool-use"],
                       input=b"{}", capture_output=True, env=env, timeout=30)
    assert r.returncode == 0
    out = json.loads(r.stdout)
    assert out["hookSpecificOutput"]["hookEventName"] == "PreToolUse"
    assert out["hookSpecificOutput"]["permissionDecision"] == "deny"


def test_plugin_launcher_runs_the_installed_hook(tmp_path: Path) -> None:
    env = {"PATH": str(Path(bin_path("statewright-hook")).parent) + ":/usr/bin:/bin",
           "CLAUDE_PLUGIN_ROOT": str(tmp_path), "CLAUDE_PROJECT_DIR": str(tmp_path)}
    r = subprocess.run([str(REPO / "hooks" / "run"), "statewright-hook", "pre-tool-use"],
                       input=b"not json", capture_output=True, env=env, timeout=60)
    assert r.returncode == 0
    out = json.loads(r.stdout)
    assert out["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert "not valid JSON" in out["hookSpecificOutput"]["permissionDecisionReason"]
