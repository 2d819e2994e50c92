"""Escapes through the other hosts' adapters, by class, each fed as the host's own hook JSON to
the real `statewright-hook --host=NAME EVENT` against a project with a running workflow, with
the legitimate calls of the same shape beside them that must still pass.

Classes:
- the hosts' own configuration (`.codex/`, `.gemini/`, `.github/hooks/`, `.github/copilot/`, and
  the per-user `~/.codex`, `~/.gemini`, `~/.copilot`): their hook and settings files wire
  statewright in and can switch every hook off, as `.claude/` does for Claude Code; written by
  an edit tool, a redirect, a patch, or code a sandboxed line runs (the rewritten line run with
  `bash -c`, as the host runs it, and the file checked on disk);
- argument names a host accepts that the map did not rename (Gemini CLI's `read_many_files`
  `include`, `grep_search` `include_pattern`, `is_background`, `replace`'s `allow_multiple`;
  Copilot CLI's `async`, `mode: "async"`, `grep`'s `paths`);
- two host arguments that are one to statewright (`path` beside `file_path`): the host uses
  one, statewright would have judged the other.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from conftest import clean_env

from statewright.sandbox import probe

from .harness import Project

pytestmark = pytest.mark.e2e

WF = {
    "id": "hostesc",
    "initial": "work",
    "states": {
        "work": {"allowed_tools": ["Bash", "Read", "Write", "Edit", "Grep", "Glob", "LS",
                                   "Agent", "TodoWrite"],
                 "allowed_commands": ["echo", "cat", "ls", "python3", "rm", "mv", "cp", "sed",
                                      "mkdir", "touch"],
                 "blocked_env": ["SECRET"], "read_only": ["tests/**"], "max_edit_lines": 5,
                 "on": {"NEXT": "end"}},
        "end": {"type": "final"},
    },
}

#: the hosts' configuration files a project wired for them holds (and one it may not)
HOST_FILES = {
    ".gemini/settings.json": '{"hooks": {"BeforeTool": []}}\n',
    ".codex/hooks.json": '{"hooks": {}}\n',
    ".codex/config.toml": "[mcp_servers.statewright]\ncommand = \"statewright\"\n",
    ".github/hooks/statewright.json": '{"version": 1, "hooks": {}}\n',
    ".github/copilot/settings.json": "{}\n",
}
HOME_FILES = {".gemini/settings.json": "{}\n", ".codex/config.toml": "\n",
              ".copilot/config.json": "{}\n"}


@pytest.fixture
def proj(tmp_path: Path) -> Project:
    p = Project(tmp_path / "proj")
    home = tmp_path / "home"
    for rel, text in {**{f"{home}/{k}": v for k, v in HOME_FILES.items()},
                      **{f"{p.root}/{k}": v for k, v in HOST_FILES.items()},
                      f"{p.root}/.github/workflows/ci.yml": "on: push\n",
                      f"{p.root}/tests/test_a.py": "def test_a(): pass\n",
                      f"{p.root}/src/a.py": "a = 1\n",
                      f"{p.root}/src/many.py": "x = 0\n" * 12,
                      f"{p.root}/README.md": "readme\n"}.items():
        Path(rel).parent.mkdir(parents=True, exist_ok=True)
        Path(rel).write_text(text)
    p.env = clean_env(CLAUDE_PROJECT_DIR=str(p.root), HOME=str(home), SECRET="s3cr3t")
    p.write_workflow(WF)
    p.start("hostesc")
    return p


def call(p: Project, host: str, tool: str, args: dict[str, Any]) -> Any:
    """The host's PreToolUse-like event for `tool(args)`, as its hook JSON; the parsed answer."""
    if host == "gemini":
        event, data = "BeforeTool", {"session_id": "s1", "cwd": str(p.root),
                                     "hook_event_name": "BeforeTool", "tool_name": tool,
                                     "tool_input": args}
    elif host == "copilot":
        event, data = "preToolUse", {"sessionId": "s1", "cwd": str(p.root),
                                     "timestamp": 1, "toolName": tool, "toolArgs": args}
    else:
        event, data = "PreToolUse", {"session_id": "s1", "cwd": str(p.root),
                                     "hook_event_name": "PreToolUse", "tool_name": tool,
                                     "tool_input": args, "tool_use_id": "call_1"}
    rc, out, err = p.run_hook([f"--host={host}", event], json.dumps(data).encode())
    assert rc == 0, err
    return json.loads(out) if out.strip() else None


def reason(host: str, out: Any) -> str:
    """The refusal's reason in the host's form ('' for anything else)."""
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


def rewritten(host: str, out: Any) -> str | None:
    """The line the host is told to run instead (None: no rewrite)."""
    if not isinstance(out, dict) or reason(host, out):
        return None
    if host == "codex":
        return (out.get("hookSpecificOutput") or {}).get("updatedInput", {}).get("command")
    if host == "gemini":
        return (out.get("hookSpecificOutput") or {}).get("tool_input", {}).get("command")
    return (out.get("modifiedArgs") or {}).get("command")


def patch(*body: str) -> str:
    return "*** Begin Patch\n" + "".join(b + "\n" for b in body) + "*** End Patch\n"


# -- the hosts' own configuration ---------------------------------------------------------------

CONFIG_ATTACKS = [
    ("gemini", "write_file", {"file_path": ".gemini/settings.json", "content": "{}"}),
    ("gemini", "replace", {"file_path": ".gemini/settings.json", "old_string": "BeforeTool",
                           "new_string": "Off"}),
    ("gemini", "write_file", {"file_path": ".codex/hooks.json", "content": "{}"}),
    ("gemini", "run_shell_command", {"command": "echo '{}' > .gemini/settings.json"}),
    ("gemini", "run_shell_command", {"command": "rm -rf .gemini"}),
    ("gemini", "run_shell_command", {"command": "mv .github .github.off"}),
    ("gemini", "run_shell_command", {"command": "sed -i s/hooks/off/ .codex/hooks.json"}),
    ("gemini", "write_file", {"file_path": "~/.gemini/settings.json", "content": "{}"}),
    ("copilot", "create", {"path": ".github/hooks/zz.json", "file_text": "{}"}),
    ("copilot", "edit", {"path": ".github/hooks/statewright.json", "old_str": "hooks",
                         "new_str": "off"}),
    ("copilot", "create", {"path": ".github/copilot/settings.local.json",
                           "file_text": '{"disableAllHooks": true}'}),
    ("copilot", "bash", {"command": "cp README.md .github/hooks/statewright.json"}),
    ("copilot", "bash", {"command": "mkdir -p .codex && touch .codex/config.toml"}),
    ("codex", "apply_patch", {"command": patch("*** Update File: .codex/hooks.json", "@@",
                                               "-{\"hooks\": {}}", "+{}")}),
    ("codex", "apply_patch", {"command": patch("*** Add File: .codex/config.toml",
                                               "+[features]", "+codex_hooks = false")}),
    ("codex", "apply_patch", {"command": patch("*** Update File: README.md",
                                               "*** Move to: .github/hooks/evil.json", "@@",
                                               "-readme", "+{}")}),
    ("codex", "Bash", {"command": "echo x >> .github/copilot/settings.json"}),
    ("codex", "Bash", {"command": "rm -f .gemini/settings.json"}),
]

CONFIG_CONTROLS = [
    ("gemini", "write_file", {"file_path": ".github/workflows/ci.yml", "content": "on: pr\n"}),
    ("gemini", "read_file", {"file_path": ".gemini/settings.json"}),
    ("gemini", "run_shell_command", {"command": "cat .codex/config.toml"}),
    ("copilot", "create", {"path": "docs/gemini.md", "file_text": "notes\n"}),
    ("copilot", "view", {"path": ".github/hooks/statewright.json"}),
    ("copilot", "bash", {"command": "ls .github"}),
    ("codex", "apply_patch", {"command": patch("*** Add File: .github/workflows/lint.yml",
                                               "+on: push")}),
    ("codex", "Bash", {"command": "echo ok > .github/workflows/note.txt"}),
]


@pytest.mark.parametrize("host,tool,args", CONFIG_ATTACKS,
                         ids=[f"{h}-{t}-{i}" for i, (h, t, _a) in enumerate(CONFIG_ATTACKS)])
def test_a_hosts_configuration_is_protected(proj: Project, host: str, tool: str,
                                            args: dict[str, Any]) -> None:
    out = call(proj, host, tool, args)
    assert reason(host, out), out
    for rel, text in HOST_FILES.items():
        assert (proj.root / rel).read_text() == text


@pytest.mark.parametrize("host,tool,args", CONFIG_CONTROLS,
                         ids=[f"{h}-{t}-{i}" for i, (h, t, _a) in enumerate(CONFIG_CONTROLS)])
def test_everyday_work_beside_a_hosts_configuration_passes(proj: Project, host: str, tool: str,
                                                           args: dict[str, Any]) -> None:
    out = call(proj, host, tool, args)
    assert not reason(host, out), out


#: code a sandboxed line runs (the analysis cannot read what it does): python writing the
#: hosts' configuration in the project and in the home directory
CODE = ("import os, pathlib\n"
        "for f in ['.gemini/settings.json', '.codex/hooks.json', '.github/hooks/statewright.json',"
        " '.github/copilot/settings.json', '.github/hooks/new.json', '.codex/new.toml',"
        " os.path.expanduser('~/.gemini/settings.json'), os.path.expanduser('~/.copilot/x.json')]:\n"
        "    try:\n"
        "        pathlib.Path(f).write_text('{\"disableAllHooks\": true}')\n"
        "        print('wrote', f)\n"
        "    except OSError as e:\n"
        "        print('refused', f, e.errno)\n"
        "pathlib.Path('src/made.txt').write_text('ok')\n")


@pytest.mark.parametrize("host,tool,key", [("gemini", "run_shell_command", "command"),
                                           ("copilot", "bash", "command"),
                                           ("codex", "Bash", "command")])
def test_code_a_sandboxed_line_runs_cannot_write_a_hosts_configuration(
        proj: Project, host: str, tool: str, key: str) -> None:
    if probe.tier().kind == "none":
        pytest.fail(f"this machine has no kernel tier: {probe.tier().why}")
    (proj.root / "gen.py").write_text(CODE)
    out = call(proj, host, tool, {key: "python3 gen.py"})
    line = rewritten(host, out)
    assert line is not None and "swbox" in line, out  # (run under the kernel's launcher)
    home = Path(proj.env["HOME"])
    before = {f: f.read_bytes() for f in [*home.rglob("*"), *proj.root.rglob("*")]
              if f.is_file() and ".statewright" not in f.parts and f.name != "gen.py"}
    r = subprocess.run(["bash", "-c", line], cwd=proj.root, capture_output=True, text=True,
                       env=proj.env, timeout=120)
    assert "refused" in r.stdout, (r.stdout, r.stderr)
    for f, data in before.items():
        assert f.read_bytes() == data, f
    for new in (".github/hooks/new.json", ".codex/new.toml"):
        assert not (proj.root / new).exists(), new
    assert not (home / ".copilot" / "x.json").exists()
    # the line's own work went through
    assert (proj.root / "src" / "made.txt").read_text() == "ok", (r.stdout, r.stderr)
    assert os.environ.get("SECRET") is None or "s3cr3t" not in r.stdout


# -- argument names a host accepts that the map did not rename ----------------------------------

ARGUMENT_ATTACKS = [
    # Gemini CLI's read_many_files reads what `include` names (paths and globs)
    ("gemini", "read_many_files", {"include": [".statewright/state.db"]}),
    ("gemini", "read_many_files", {"include": ["**/state.db"], "useDefaultExcludes": False}),
    ("gemini", "read_many_files", {"include": ["src/a.py", "/proc/self/environ"]}),
    ("gemini", "read_many_files", {"include": ["/proc/*/env*"]}),
    ("gemini", "read_many_files", {"paths": ["src"], "include": [".statewright/*"]}),
    # its grep_search filters by `include_pattern`
    ("gemini", "grep_search", {"pattern": "run", "dir_path": ".",
                               "include_pattern": ".statewright/*", "no_ignore": True}),
    # Copilot CLI's grep searches `paths` (text or a list)
    ("copilot", "grep", {"pattern": "SECRET", "paths": "/proc/self/environ"}),
    ("copilot", "grep", {"pattern": "SECRET", "paths": ["src", "/proc/self/environ"]}),
    ("copilot", "rg", {"pattern": "SECRET", "paths": ["/proc/self"]}),
    # every occurrence replaced: twelve lines change, not one (max_edit_lines 5)
    ("gemini", "replace", {"file_path": "src/many.py", "old_string": "x = 0",
                           "new_string": "x = 1", "allow_multiple": True}),
    ("gemini", "replace", {"file_path": "src/many.py", "old_string": "x = 0",
                           "new_string": "x = 1", "expected_replacements": 12}),
    # lines left running after the call (they would act under a later state's rules)
    ("gemini", "run_shell_command", {"command": "echo hi", "is_background": True}),
    ("copilot", "bash", {"command": "echo hi", "mode": "async"}),
    ("copilot", "bash", {"command": "echo hi", "async": True}),
    # two arguments that are one to statewright: the host uses its own
    ("copilot", "create", {"path": ".gemini/settings.json", "file_path": "ok.txt",
                           "file_text": "{}"}),
    ("copilot", "edit", {"file_path": "src/a.py", "path": "tests/test_a.py",
                         "old_str": "pass", "new_str": "assert 0"}),
    ("copilot", "view", {"file_path": "README.md", "path": "/proc/self/environ"}),
    ("gemini", "grep_search", {"pattern": "SECRET", "path": ".", "dir_path": "/proc/self"}),
    ("gemini", "list_directory", {"path": "src", "dir_path": ".statewright"}),
]

ARGUMENT_CONTROLS = [
    ("gemini", "read_many_files", {"include": ["src/**/*.py", "README.md"],
                                   "exclude": ["**/*.log"], "recursive": True}),
    ("gemini", "read_many_files", {"paths": ["src"], "include": ["README.md"]}),
    ("gemini", "grep_search", {"pattern": "a", "dir_path": "src", "include_pattern": "*.py"}),
    ("gemini", "replace", {"file_path": "src/a.py", "old_string": "a = 1", "new_string": "a = 2",
                           "allow_multiple": True}),
    ("gemini", "replace", {"file_path": "src/a.py", "old_string": "a = 1", "new_string": "a = 2",
                           "allow_multiple": False}),
    ("gemini", "run_shell_command", {"command": "echo hi", "is_background": False}),
    ("copilot", "bash", {"command": "echo hi", "mode": "sync", "initial_wait": 10}),
    ("copilot", "bash", {"command": "echo hi", "async": False}),
    ("copilot", "create", {"path": "src/b.py", "file_text": "b = 2\n"}),
    ("copilot", "grep", {"pattern": "a", "paths": ["src", "README.md"], "glob": "*.py"}),
    ("copilot", "grep", {"pattern": "a", "output_mode": "content"}),
    ("copilot", "view", {"path": "README.md"}),
    ("gemini", "list_directory", {"dir_path": "src"}),
]


@pytest.mark.parametrize("host,tool,args", ARGUMENT_ATTACKS,
                         ids=[f"{h}-{t}-{i}" for i, (h, t, _a) in enumerate(ARGUMENT_ATTACKS)])
def test_an_argument_the_host_reads_is_judged(proj: Project, host: str, tool: str,
                                              args: dict[str, Any]) -> None:
    out = call(proj, host, tool, args)
    assert reason(host, out), out


@pytest.mark.parametrize("host,tool,args", ARGUMENT_CONTROLS,
                         ids=[f"{h}-{t}-{i}" for i, (h, t, _a) in enumerate(ARGUMENT_CONTROLS)])
def test_everyday_calls_with_those_arguments_pass(proj: Project, host: str, tool: str,
                                                  args: dict[str, Any]) -> None:
    out = call(proj, host, tool, args)
    assert not reason(host, out), out
    line = rewritten(host, out)
    if line is not None:  # a rewritten line gets back no argument the host never had
        answer = out.get("modifiedArgs") or (out.get("hookSpecificOutput") or {}).get(
            "tool_input") or {}
        assert "run_in_background" not in answer, answer
