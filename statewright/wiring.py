"""What `statewright install claude` writes where (DESIGN section 5, "Hooks"), as pure data.

Scopes (like `claude mcp add`):
- `local` (the default): only files that are not committed: the hooks in
  `<project>/.claude/settings.local.json`, the proxy in Claude Code's own per-user file
  (`~/.claude.json`, or `$CLAUDE_CONFIG_DIR/.claude.json`) under the project's path.
  Absolute paths of this machine's installation are fine there.
- `project`: files a team commits: `<project>/.claude/settings.json` and `<project>/.mcp.json`.
  They never carry one machine's paths: programs are found on PATH, through a small portable
  launcher (`PORTABLE_LAUNCHER`) that, where statewright is not installed, lets a project
  without a store work normally and refuses tool calls (saying how to install it) where the
  project has a store.
- `user`: `~/.claude/settings.json` and the user-wide servers of `~/.claude.json`.

Hook forms:
- `mcp` (the default, except in the project scope): the per-call events are `mcp_tool` hooks
  answered by the running proxy's hook tool (no process per call); PreToolUse has
  `onFailure: "block"`, so a call the proxy cannot answer is refused, never let through.
  SessionStart stays a process hook: the host fires it before MCP servers are connected.
- `process`: every event runs `statewright-hook EVENT`.

The proxy's entry has `alwaysLoad` in both forms: the host waits for it at start (at most 5 s),
so its tools are listed from the first turn and no call comes before the hook tool can answer.

Merging is idempotent and conservative: the user's own hooks and servers are never dropped,
re-running changes nothing, uninstalling removes only what is ours.
"""

from __future__ import annotations

import copy
import os
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .names import HOOK_TOOL, NATIVE_HOOK_SCRIPT

HOOK_SCRIPT = "statewright-hook"
#: the programs a process-form hook of ours runs: the Python hook, or its native client
HOOK_PROGRAMS = (HOOK_SCRIPT, NATIVE_HOOK_SCRIPT)
CLI_SCRIPT = "statewright"
MCP_SERVER_NAME = "statewright"
SCOPES = ("local", "project", "user")
HOOK_FORMS = ("mcp", "process")
# Every tool, statewright's own server's included: the hook itself asks which calls the proxy
# gates (`Runtime.gated_by_proxy`), because a tool name alone cannot tell our proxy from another
# server registered under the name `statewright`. ("*" = all tools for Claude Code.)
TOOL_MATCHER = "*"
SESSION_MATCHER = "startup|resume|clear|compact"  # letters and '|' only: an exact list
TIMEOUT = 30  # seconds (Claude Code's unit); SQLite waits for concurrent writers

# event -> (argument for statewright-hook, matcher or None, onFailure block?, mcp_tool form?)
HOOK_EVENTS: dict[str, tuple[str, str | None, bool, bool]] = {
    "PreToolUse": ("pre-tool-use", TOOL_MATCHER, True, True),
    "PostToolUse": ("post-tool-use", TOOL_MATCHER, False, True),
    "PostToolUseFailure": ("post-tool-use-failure", TOOL_MATCHER, False, True),
    # fired before the host has connected its MCP servers: always the process hook
    "SessionStart": ("session-start", SESSION_MATCHER, False, False),
    "UserPromptSubmit": ("user-prompt-submit", None, False, True),
    "Stop": ("stop", None, False, True),
}

#: the hook input the host interpolates into the hook tool's arguments (`${field}`)
HOOK_TOOL_INPUT: dict[str, str] = {
    name: "${" + name + "}"
    for name in ("hook_event_name", "session_id", "cwd", "agent_id", "tool_name", "tool_input",
                 "tool_response", "error", "stop_hook_active", "source")
}

_DENY_NOT_INSTALLED = (
    '{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny", '
    '"permissionDecisionReason": "statewright is wired into this project (.claude/settings.json) '
    'and the project has a statewright store (.statewright/), but statewright is not installed '
    'on this machine (no statewright-hook on PATH), so the call is refused: install it from '
    'its source (python3 -m venv VENV && VENV/bin/pip install PATH/TO/statewright, or pipx '
    'install PATH/TO/statewright, then put VENV/bin on PATH; see its README) or remove '
    '.statewright/ if the project no longer uses it."}}')
#: `sh -c PORTABLE_LAUNCHER statewright-hook EVENT`: the installed hook from PATH (its native
#: client where one is installed); without it, nothing to say -- except a refusal where a store
#: shows statewright is in use here
PORTABLE_LAUNCHER = (
    'if command -v statewright-hook-native >/dev/null 2>&1; then '
    'exec statewright-hook-native "$1"; fi; '
    'if command -v statewright-hook >/dev/null 2>&1; then exec statewright-hook "$1"; fi; '
    'if [ "$1" = pre-tool-use ] && [ -e "${CLAUDE_PROJECT_DIR:-.}/.statewright/state.db" ]; '
    f"then printf '%s\\n' '{_DENY_NOT_INSTALLED}'; fi; exit 0")


@dataclass(frozen=True)
class Plan:
    """Where one install writes, and how it names the programs."""
    scope: str
    hooks: str  # "mcp" | "process"
    settings: Path  # Claude Code settings file holding the hooks
    servers: Path | None  # the JSON file holding the MCP server entry
    servers_key: tuple[str, ...]  # path of the `mcpServers` object inside it
    hook_bin: str | None  # absolute path, or None for the portable launcher
    cli_bin: str  # absolute path, or the bare name (found on PATH)


def claude_config_dir() -> Path:
    env = os.environ.get("CLAUDE_CONFIG_DIR")
    return Path(env).expanduser() if env else Path.home() / ".claude"


def claude_state_file() -> Path:
    """Claude Code's per-user state file, which holds local- and user-scope MCP servers."""
    env = os.environ.get("CLAUDE_CONFIG_DIR")
    return Path(env).expanduser() / ".claude.json" if env else Path.home() / ".claude.json"


def plan(scope: str, hooks: str, root: Path, hook_bin: str, cli_bin: str) -> Plan:
    if scope == "project":
        return Plan(scope, hooks, root / ".claude" / "settings.json", root / ".mcp.json",
                    ("mcpServers",), None, CLI_SCRIPT)
    if scope == "local":
        return Plan(scope, hooks, root / ".claude" / "settings.local.json", claude_state_file(),
                    ("projects", str(root), "mcpServers"), hook_bin, cli_bin)
    return Plan(scope, hooks, claude_config_dir() / "settings.json", claude_state_file(),
                ("mcpServers",), hook_bin, cli_bin)


# -- hook handlers -------------------------------------------------------------------------------

def hook_handler(p: Plan, event: str) -> dict[str, Any]:
    arg, _matcher, block, mcp_form = HOOK_EVENTS[event]
    h: dict[str, Any]
    if p.hooks == "mcp" and mcp_form:
        h = {"type": "mcp_tool", "server": MCP_SERVER_NAME, "tool": HOOK_TOOL,
             "input": dict(HOOK_TOOL_INPUT)}
    elif p.hook_bin is None:
        h = {"type": "command", "command": "sh",
             "args": ["-c", PORTABLE_LAUNCHER, HOOK_SCRIPT, arg]}
    else:
        h = {"type": "command", "command": p.hook_bin, "args": [arg]}
    h["timeout"] = TIMEOUT
    if block:
        h["onFailure"] = "block"
    return h


def hook_group(p: Plan, event: str) -> dict[str, Any]:
    matcher = HOOK_EVENTS[event][1]
    g: dict[str, Any] = {}
    if matcher is not None:
        g["matcher"] = matcher
    g["hooks"] = [hook_handler(p, event)]
    return g


def is_our_handler(h: Any) -> bool:
    """A hook handler of ours: the hook tool, or a command running statewright-hook (any install
    location, exec or shell form, directly or through the portable launcher)."""
    if not isinstance(h, dict):
        return False
    if h.get("type") == "mcp_tool":
        return h.get("server") == MCP_SERVER_NAME and h.get("tool") == HOOK_TOOL
    if not isinstance(h.get("command"), str):
        return False
    cmd = h["command"].strip()
    args = h.get("args")
    if isinstance(args, list) and os.path.basename(cmd) == "sh":  # the portable launcher
        return HOOK_SCRIPT in args
    if "args" in h:
        first = cmd
    else:
        try:
            parts = shlex.split(cmd)
        except ValueError:
            parts = cmd.split()
        first = parts[0] if parts else ""
    return os.path.basename(first) in HOOK_PROGRAMS


def merge_hooks(settings: dict[str, Any], p: Plan | None) -> dict[str, Any]:
    """Settings with our hook groups in place (a plan) or removed (None). Never touches a
    handler that is not ours; a group that held ours and others keeps the others."""
    out = copy.deepcopy(settings)
    hooks = out.get("hooks")
    if hooks is None:
        if p is None:
            return out
        hooks = out["hooks"] = {}
    for event in HOOK_EVENTS:
        groups = hooks.get(event, [])
        new_groups: list[Any] = []
        placed = p is None
        for g in groups:
            handlers = g.get("hooks", [])
            if not any(is_our_handler(h) for h in handlers):
                new_groups.append(g)
                continue
            others = [h for h in handlers if not is_our_handler(h)]
            if others:
                new_groups.append({**g, "hooks": others})
            if p is not None and not placed:
                new_groups.append(hook_group(p, event))
                placed = True
        if p is not None and not placed:
            new_groups.append(hook_group(p, event))
        if new_groups:
            hooks[event] = new_groups
        elif event in hooks:
            del hooks[event]
    if not hooks:
        del out["hooks"]
    return out


# -- the MCP server entry -------------------------------------------------------------------------

def is_our_server(entry: Any) -> bool:
    return (isinstance(entry, dict) and isinstance(entry.get("command"), str)
            and os.path.basename(entry["command"]) == CLI_SCRIPT
            and entry.get("args", [])[:1] == ["serve"])


def server_entry(p: Plan, keep: dict[str, Any]) -> dict[str, Any]:
    new = {k: v for k, v in keep.items() if k not in ("type", "url", "headers")}
    # alwaysLoad: the host waits for the proxy at start, so its tools are there from the first
    # turn and (mcp hooks) no tool call comes before the hook tool can answer
    new.update({"type": "stdio", "command": p.cli_bin, "args": ["serve"], "alwaysLoad": True})
    return new


def merge_server(data: dict[str, Any], key: tuple[str, ...], p: Plan | None) -> dict[str, Any]:
    """`data` with our server at `key` set (a plan) or removed (None). Keys the user added to
    our entry (e.g. `env`) are kept; nothing else in the file is touched."""
    out = copy.deepcopy(data)
    node: Any = out
    for k in key[:-1]:
        if not isinstance(node.get(k), dict):
            if p is None:
                return out
            node[k] = {}
        node = node[k]
    servers = node.get(key[-1])
    if p is None:
        if isinstance(servers, dict) and is_our_server(servers.get(MCP_SERVER_NAME)):
            del servers[MCP_SERVER_NAME]
            _prune_empty(out, key)
        return out
    if servers is None:
        servers = node[key[-1]] = {}
    entry = servers.get(MCP_SERVER_NAME)
    servers[MCP_SERVER_NAME] = server_entry(p, entry if isinstance(entry, dict) else {})
    return out


def _prune_empty(data: dict[str, Any], key: tuple[str, ...]) -> None:
    """Remove the objects along `key` that removing our entry left empty, deepest first
    (`{"mcpServers": {}}`, a project entry holding nothing else): uninstalling leaves the file
    as it would be had statewright never been installed."""
    for depth in range(len(key), 0, -1):
        node: Any = data
        for k in key[:depth - 1]:
            node = node.get(k) if isinstance(node, dict) else None
        if not isinstance(node, dict) or node.get(key[depth - 1]) != {}:
            return
        del node[key[depth - 1]]


def settings_problems(data: Any) -> list[tuple[str, str]]:
    """(JSON Pointer, problem) for a settings document not of Claude Code's shape."""
    if not isinstance(data, dict):
        return [("", "the settings must be a JSON object")]
    hooks = data.get("hooks")
    if hooks is None:
        return []
    if not isinstance(hooks, dict):
        return [("/hooks", "must be an object mapping event names to lists of matcher groups")]
    out = []
    for event, groups in hooks.items():
        ptr = "/hooks/" + event.replace("~", "~0").replace("/", "~1")
        if not isinstance(groups, list):
            out.append((ptr, "must be a list of matcher groups"))
            continue
        for i, g in enumerate(groups):
            if not isinstance(g, dict):
                out.append((f"{ptr}/{i}", "must be an object with `hooks`"))
            elif "hooks" in g and not isinstance(g["hooks"], list):
                out.append((f"{ptr}/{i}/hooks", "must be a list of hook handlers"))
    return out


def servers_problems(data: Any, key: tuple[str, ...]) -> list[tuple[str, str]]:
    if not isinstance(data, dict):
        return [("", "must be a JSON object")]
    node: Any = data
    ptr = ""
    for k in key:
        ptr += "/" + k.replace("~", "~0").replace("/", "~1")
        node = node.get(k) if isinstance(node, dict) else None
        if node is None:
            return []
        if not isinstance(node, dict):
            return [(ptr, "must be an object")]
    return []
