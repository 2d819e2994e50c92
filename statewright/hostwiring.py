"""What `statewright install codex|gemini|copilot` writes where (DESIGN section 5, "Hosts"), as
pure data and pure merges; `statewright.cli.install_hosts` reads, checks and writes the files.

Scopes:
- `project` (the default): files a team commits, in the project. They never carry one
  machine's paths: programs are found on `PATH`.
- `user`: the host's per-user files (`$CODEX_HOME`, `~/.gemini`, `$COPILOT_HOME`), for every
  project of this user, with the absolute paths of this installation.

Hosts:
- **codex**: `.codex/hooks.json` (hooks) and `.codex/config.toml` (the proxy as the MCP server
  `statewright`). Form `mcp` (default): the per-call events are `mcp_tool` hooks answered by
  the running proxy's hook tool with `"host": "codex"`; SessionStart stays a process hook.
  Form `process`: `statewright-hook --host=codex EVENT` for every event.
- **gemini**: `.gemini/settings.json`: hooks `statewright-hook --host=gemini EVENT` (Gemini CLI
  has no MCP hook type) and the proxy under `mcpServers`.
- **copilot**: `.github/hooks/statewright.json` (a file of statewright's own; user scope:
  `$COPILOT_HOME/hooks/statewright.json`): hooks `statewright-hook --host=copilot EVENT`.

Merging is idempotent and conservative, as for Claude Code (`statewright.wiring`): the user's
own hooks and servers are kept, re-running changes nothing, uninstalling removes only ours.
"""

from __future__ import annotations

import copy
import os
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .hook.hosts import HOOK_TIMEOUT_S
from .names import HOOK_TOOL, NATIVE_HOOK_SCRIPT
from .wiring import CLI_SCRIPT, HOOK_PROGRAMS, HOOK_SCRIPT, MCP_SERVER_NAME, is_our_server

HOSTS = ("codex", "gemini", "copilot")
HOST_SCOPES = ("project", "user")
HOST_FORMS = ("mcp", "process")
HOST_TAG = "--host="

#: host -> [(host event, matcher or None, mcp_tool form possible)]
HOST_EVENTS: dict[str, list[tuple[str, str | None, bool]]] = {
    "codex": [("PreToolUse", "*", True), ("PostToolUse", "*", True),
              ("SessionStart", None, False), ("UserPromptSubmit", None, True),
              ("Stop", None, True)],
    "gemini": [("BeforeTool", ".*", False), ("AfterTool", ".*", False),
               ("SessionStart", None, False), ("BeforeAgent", None, False),
               ("AfterAgent", None, False)],
    "copilot": [("preToolUse", None, False), ("postToolUse", None, False),
                ("sessionStart", None, False), ("userPromptSubmitted", None, False),
                ("agentStop", None, False)],
}

#: what each host does when its hook fails, and what statewright closes (`statewright doctor`)
POSTURE: dict[str, str] = {
    "claude": "closed: PreToolUse has onFailure \"block\"; a hook that cannot answer refuses "
              "the call",
    "codex": "open by the host: Codex runs a call whose hook crashes, times out or whose MCP "
             "server is missing. statewright answers every call it can (a refusal on any "
             "failure of its own) and its proxy answers in milliseconds; the kernel tier is "
             "the guarantee where Codex's hooks are not",
    "gemini": "open by the host on exit 1, timeout or spawn failure: statewright's hook never "
              "exits 1 (exit 2, a refusal, when it cannot write its answer) and refuses by "
              f"itself after {int(HOOK_TIMEOUT_S * 2 / 3)} s, under the {HOOK_TIMEOUT_S} s "
              "timeout it installs",
    "copilot": "closed on a crash or non-zero exit; open on timeout: statewright's hook "
               f"refuses by itself after {int(HOOK_TIMEOUT_S * 2 / 3)} s, under the "
               f"{HOOK_TIMEOUT_S} s timeout it installs",
}

#: the hook tool's input for Codex's `mcp_tool` hooks, per event (Codex interpolates
#: `${field}`, and a hook naming a field its event lacks fails, and fails open: so only the
#: fields every such event has; a sub-agent is named by the request's `_meta.threadId`)
_CODEX_COMMON = ("hook_event_name", "session_id", "cwd")
CODEX_TOOL_FIELDS: dict[str, tuple[str, ...]] = {
    "PreToolUse": (*_CODEX_COMMON, "tool_name", "tool_input"),
    "PostToolUse": (*_CODEX_COMMON, "tool_name", "tool_input", "tool_response"),
    "UserPromptSubmit": _CODEX_COMMON,
    "Stop": (*_CODEX_COMMON, "stop_hook_active"),
}


def codex_tool_input(event: str) -> dict[str, str]:
    return {"host": "codex", **{f: "${" + f + "}" for f in CODEX_TOOL_FIELDS[event]}}


@dataclass(frozen=True)
class HostPlan:
    host: str
    scope: str
    form: str  # "mcp" | "process"
    hooks_file: Path
    servers_file: Path | None  # where the proxy is registered (None: not for this host)
    hook_bin: str  # absolute path, or the bare name (found on PATH)
    cli_bin: str


def codex_home() -> Path:
    env = os.environ.get("CODEX_HOME")
    return Path(env).expanduser() if env else Path.home() / ".codex"


def copilot_home() -> Path:
    env = os.environ.get("COPILOT_HOME")
    return Path(env).expanduser() if env else Path.home() / ".copilot"


def gemini_dir() -> Path:
    return Path.home() / ".gemini"


def plan(host: str, scope: str, form: str, root: Path, hook_bin: str, cli_bin: str
         ) -> HostPlan:
    portable = scope == "project"
    hb = HOOK_SCRIPT if portable else hook_bin
    cb = CLI_SCRIPT if portable else cli_bin
    if host == "codex":
        base = root / ".codex" if portable else codex_home()
        return HostPlan(host, scope, form, base / "hooks.json", base / "config.toml", hb, cb)
    if host == "gemini":
        base = root / ".gemini" if portable else gemini_dir()
        return HostPlan(host, scope, "process", base / "settings.json", base / "settings.json",
                        hb, cb)
    base = root / ".github" / "hooks" if portable else copilot_home() / "hooks"
    return HostPlan(host, scope, "process", base / "statewright.json", None, hb, cb)


def hook_command(p: HostPlan, event: str) -> str:
    """The hook's command line. The project scope names programs on PATH: the native client
    where it is installed, else `statewright-hook` (a teammate without the client, or on
    another system, runs the Python hook; never a missing program, which a host lets through);
    the user scope, this installation's program by its path."""
    tail = f"{HOST_TAG}{p.host} {event}"
    if p.hook_bin == HOOK_SCRIPT:
        return (f"command -v {NATIVE_HOOK_SCRIPT} >/dev/null 2>&1 && "
                f"exec {NATIVE_HOOK_SCRIPT} {tail}; exec {HOOK_SCRIPT} {tail}")
    return f"{shlex.quote(p.hook_bin)} {tail}"


def is_our_command(cmd: Any) -> bool:
    """A hook command running statewright-hook or its native client (any install location,
    or the project scope's form that picks one from PATH) for another host."""
    if not isinstance(cmd, str):
        return False
    try:
        parts = shlex.split(cmd)
    except ValueError:
        parts = cmd.split()
    if parts[:3] == ["command", "-v", NATIVE_HOOK_SCRIPT]:
        parts = parts[parts.index(HOOK_SCRIPT) - 1:] if HOOK_SCRIPT in parts else []
        parts = parts[1:] if parts[:1] == ["exec"] else []
    return bool(parts) and os.path.basename(parts[0]) in HOOK_PROGRAMS and any(
        a.startswith(HOST_TAG) for a in parts[1:2])


def is_our_handler(h: Any) -> bool:
    if not isinstance(h, dict):
        return False
    if h.get("type") == "mcp_tool":
        return h.get("server") == MCP_SERVER_NAME and h.get("tool") == HOOK_TOOL
    return is_our_command(h.get("command")) or is_our_command(h.get("bash"))


# -- codex and gemini: Claude Code's shape of nested groups ---------------------------------------

def nested_handler(p: HostPlan, event: str, mcp_form: bool) -> dict[str, Any]:
    if p.host == "codex" and p.form == "mcp" and mcp_form:
        return {"type": "mcp_tool", "server": MCP_SERVER_NAME, "tool": HOOK_TOOL,
                "input": codex_tool_input(event), "timeout": HOOK_TIMEOUT_S}
    h: dict[str, Any] = {"type": "command", "command": hook_command(p, event)}
    if p.host == "gemini":
        h["name"] = "statewright"
        h["timeout"] = HOOK_TIMEOUT_S * 1000  # (Gemini CLI's unit is the millisecond)
    else:
        h["timeout"] = HOOK_TIMEOUT_S
    return h


def merge_nested(doc: dict[str, Any], p: HostPlan | None, host: str) -> dict[str, Any]:
    """`doc` (a file with `{"hooks": {event: [groups]}}`) with our groups in place (a plan) or
    removed (None); the user's own handlers are never touched."""
    out = copy.deepcopy(doc)
    hooks = out.get("hooks")
    if hooks is None:
        if p is None:
            return out
        hooks = out["hooks"] = {}
    for event, matcher, mcp_form in HOST_EVENTS[host]:
        groups = hooks.get(event, [])
        kept: list[Any] = []
        for g in groups:
            handlers = g.get("hooks", []) if isinstance(g, dict) else []
            if not any(is_our_handler(h) for h in handlers):
                kept.append(g)
                continue
            others = [h for h in handlers if not is_our_handler(h)]
            if others:
                kept.append({**g, "hooks": others})
        if p is not None:
            group: dict[str, Any] = {}
            if matcher is not None:
                group["matcher"] = matcher
            group["hooks"] = [nested_handler(p, event, mcp_form)]
            kept.append(group)
        if kept:
            hooks[event] = kept
        elif event in hooks:
            del hooks[event]
    if not hooks:
        del out["hooks"]
    return out


def nested_problems(doc: Any) -> list[tuple[str, str]]:
    from .wiring import settings_problems

    return settings_problems(doc)


# -- gemini: the proxy in settings.json ----------------------------------------------------------

def merge_json_server(doc: dict[str, Any], p: HostPlan | None) -> dict[str, Any]:
    out = copy.deepcopy(doc)
    servers = out.get("mcpServers")
    if p is None:
        if isinstance(servers, dict) and is_our_server(servers.get(MCP_SERVER_NAME)):
            del servers[MCP_SERVER_NAME]
            if not servers:
                del out["mcpServers"]
        return out
    if not isinstance(servers, dict):
        servers = out["mcpServers"] = {}
    entry = servers.get(MCP_SERVER_NAME)
    keep = entry if isinstance(entry, dict) and is_our_server(entry) else {}
    servers[MCP_SERVER_NAME] = {**keep, "command": p.cli_bin, "args": ["serve"]}
    return out


def server_taken(doc: Any) -> bool:
    """A server named `statewright` that is not statewright's proxy (never replaced)."""
    servers = doc.get("mcpServers") if isinstance(doc, dict) else None
    entry = servers.get(MCP_SERVER_NAME) if isinstance(servers, dict) else None
    return entry is not None and not is_our_server(entry)


# -- codex: the proxy in config.toml ---------------------------------------------------------------

_TOML_HEADER = f"[mcp_servers.{MCP_SERVER_NAME}]"


def toml_server_block(p: HostPlan) -> str:
    return (f"{_TOML_HEADER}\n# statewright's proxy: its tools, and the hook tool that answers "
            "Codex's mcp_tool hooks\n"
            f"command = {_toml_str(p.cli_bin)}\nargs = [\"serve\"]\n")


def _toml_str(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def merge_toml_server(text: str, p: HostPlan | None) -> str:
    """config.toml's text with our `[mcp_servers.statewright]` table in place (a plan) or
    removed (None). Only that table (and its sub-tables) is touched; ValueError when the file
    is not TOML, or a `statewright` server is defined there that is not statewright's proxy
    (or not as a table of its own)."""
    import tomllib

    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"not valid TOML ({exc}); fix or remove it") from None
    servers = data.get("mcp_servers")
    entry = servers.get(MCP_SERVER_NAME) if isinstance(servers, dict) else None
    if entry is not None and not is_our_server(entry):
        raise ValueError(f"/mcp_servers/{MCP_SERVER_NAME}: a server of that name that is not "
                         "statewright's proxy is already configured; rename it first")
    lines = text.splitlines(keepends=True)
    out: list[str] = []
    skipping = False
    found = False
    for line in lines:
        head = line.strip()
        if head.startswith("["):
            name = head.strip("[]").strip()
            ours = name == f"mcp_servers.{MCP_SERVER_NAME}" or name.startswith(
                f"mcp_servers.{MCP_SERVER_NAME}.")
            if ours:
                found = True
            skipping = ours
        if not skipping:
            out.append(line)
    if entry is not None and not found:
        raise ValueError(f"/mcp_servers/{MCP_SERVER_NAME} is defined inline; move it to a "
                         f"`{_TOML_HEADER}` table of its own (or remove it) first")
    result = "".join(out).rstrip("\n")
    if p is not None:
        result = (result + "\n\n" if result else "") + toml_server_block(p)
    elif result:
        result += "\n"
    return result


# -- copilot: a hooks file of our own -------------------------------------------------------------

def copilot_hooks(p: HostPlan) -> dict[str, Any]:
    return {"version": 1, "hooks": {
        event: [{"type": "command", "bash": hook_command(p, event),
                 "timeoutSec": HOOK_TIMEOUT_S}]
        for event, _m, _f in HOST_EVENTS["copilot"]}}


def wired_hosts(root: Path) -> list[dict[str, Any]]:
    """Each host wired in this project or for this user: {host, scope, file, form, posture}
    (`statewright doctor`). Reads files only; an unreadable file is reported as such."""
    import json

    found: list[dict[str, Any]] = []

    def add(host: str, scope: str, path: Path, form: str | None) -> None:
        if form is not None:
            found.append({"host": host, "scope": scope, "file": str(path), "form": form,
                          "posture": POSTURE[host]})

    def nested_form(path: Path) -> str | None:
        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as exc:
            return f"unreadable ({exc})"
        hooks = doc.get("hooks") if isinstance(doc, dict) else None
        forms = set()
        for groups in hooks.values() if isinstance(hooks, dict) else ():
            for g in groups if isinstance(groups, list) else ():
                for h in g.get("hooks", []) if isinstance(g, dict) else ():
                    if is_our_handler(h):
                        forms.add("mcp_tool" if h.get("type") == "mcp_tool" else "process")
                    elif isinstance(h, dict) and _runs_claude_hook(h):
                        forms.add("process")
        return " + ".join(sorted(forms)) or None

    for scope, base in (("project", root / ".codex"), ("user", codex_home())):
        add("codex", scope, base / "hooks.json", nested_form(base / "hooks.json"))
    for scope, base in (("project", root / ".gemini"), ("user", gemini_dir())):
        add("gemini", scope, base / "settings.json", nested_form(base / "settings.json"))
    for scope, base in (("project", root / ".github" / "hooks"),
                        ("user", copilot_home() / "hooks")):
        f = base / "statewright.json"
        add("copilot", scope, f, "process" if f.is_file() else None)
    for name, path in (("project", root / ".claude" / "settings.json"),
                       ("local", root / ".claude" / "settings.local.json")):
        add("claude", name, path, nested_form(path))
    return found


def _runs_claude_hook(h: dict[str, Any]) -> bool:
    from .wiring import is_our_handler as claude_handler

    return claude_handler(h)
