"""CLI command: `statewright install claude [--scope project|user] [--uninstall]`.

Wires statewright into Claude Code in one command:
- the hooks go into `.claude/settings.json` (project scope) or `~/.claude/settings.json` (user
  scope), in exec form (`command` = absolute path of the installed `statewright-hook`, `args` =
  the event), with a `timeout` in seconds and `onFailure: "block"` on PreToolUse, so a hook that
  cannot run refuses the call instead of letting it through;
- the proxy goes into the project's `.mcp.json` as `mcpServers.statewright`
  (`statewright serve`).

Merging is idempotent and conservative, like pre-commit's installer: the user's own hooks and
servers are never dropped, re-running changes nothing, `--uninstall` removes only what is ours.
A settings file that is not valid JSON, or not of Claude Code's shape, is an error and is left
untouched. Files are written atomically (temp file + rename) and only when they change.
"""

from __future__ import annotations

import copy
import json
import os
import shlex
import sys
import tempfile
from pathlib import Path
from typing import Any

import typer

from ..errors import INVALID_ARGUMENTS, StatewrightError
from .app import ProjectOpt, app, console

HOOK_SCRIPT = "statewright-hook"
CLI_SCRIPT = "statewright"
MCP_SERVER_NAME = "statewright"
# Every tool, statewright's own server's included: the hook itself asks which calls the proxy
# gates (`Runtime.gated_by_proxy`), because a tool name alone cannot tell our proxy from another
# server registered under the name `statewright`. ("*" = all tools for Claude Code.)
TOOL_MATCHER = "*"
SESSION_MATCHER = "startup|resume|clear|compact"  # letters and '|' only: an exact list
PRE_TIMEOUT = 30  # seconds (Claude Code's unit); SQLite waits for concurrent writers
OTHER_TIMEOUT = 30

# event -> (argument for statewright-hook, matcher or None, onFailure block?)
HOOK_EVENTS: dict[str, tuple[str, str | None, bool]] = {
    "PreToolUse": ("pre-tool-use", TOOL_MATCHER, True),
    "PostToolUse": ("post-tool-use", TOOL_MATCHER, False),
    "PostToolUseFailure": ("post-tool-use-failure", TOOL_MATCHER, False),
    "SessionStart": ("session-start", SESSION_MATCHER, False),
    "UserPromptSubmit": ("user-prompt-submit", None, False),
    "Stop": ("stop", None, False),
}

install_app = typer.Typer(help="Wire statewright into an agent host.", no_args_is_help=True)
app.add_typer(install_app, name="install")


# -- locating the installed scripts ------------------------------------------------------------

def script_path(name: str) -> str:
    """Absolute path of an installed console script: next to the running interpreter first
    (the venv statewright is installed in), else on PATH."""
    import shutil

    candidates = [Path(sys.executable).parent / name, Path(sys.argv[0]).resolve().parent / name]
    for c in candidates:
        if c.is_file() and os.access(c, os.X_OK):
            return str(c.absolute())
    found = shutil.which(name)
    if found:
        return str(Path(found).absolute())
    raise StatewrightError(INVALID_ARGUMENTS,
                           f"cannot find the installed `{name}` script (looked next to "
                           f"{sys.executable} and on PATH); install statewright with pip first")


# -- pure merging ------------------------------------------------------------------------------

def hook_handler(hook_bin: str, event: str) -> dict[str, Any]:
    arg, _matcher, block = HOOK_EVENTS[event]
    h: dict[str, Any] = {"type": "command", "command": hook_bin, "args": [arg],
                         "timeout": PRE_TIMEOUT if event == "PreToolUse" else OTHER_TIMEOUT}
    if block:
        h["onFailure"] = "block"
    return h


def hook_group(hook_bin: str, event: str) -> dict[str, Any]:
    _arg, matcher, _block = HOOK_EVENTS[event]
    g: dict[str, Any] = {}
    if matcher is not None:
        g["matcher"] = matcher
    g["hooks"] = [hook_handler(hook_bin, event)]
    return g


def is_our_handler(h: Any) -> bool:
    """A hook handler that runs statewright-hook (any install location, exec or shell form)."""
    if not isinstance(h, dict) or not isinstance(h.get("command"), str):
        return False
    cmd = h["command"].strip()
    if "args" in h:
        first = cmd
    else:
        try:
            parts = shlex.split(cmd)
        except ValueError:
            parts = cmd.split()
        first = parts[0] if parts else ""
    return os.path.basename(first) == HOOK_SCRIPT


def _check_settings_shape(data: Any, path: Path) -> None:
    def bad(pointer: str, what: str) -> StatewrightError:
        return StatewrightError(INVALID_ARGUMENTS,
                                f"{path}: {pointer or '/'}: {what}; nothing was changed")

    if not isinstance(data, dict):
        raise bad("", "the settings must be a JSON object")
    hooks = data.get("hooks")
    if hooks is None:
        return
    if not isinstance(hooks, dict):
        raise bad("/hooks", "must be an object mapping event names to lists of matcher groups")
    for event, groups in hooks.items():
        ptr = "/hooks/" + event.replace("~", "~0").replace("/", "~1")
        if not isinstance(groups, list):
            raise bad(ptr, "must be a list of matcher groups")
        for i, g in enumerate(groups):
            if not isinstance(g, dict):
                raise bad(f"{ptr}/{i}", "must be an object with `hooks`")
            if "hooks" in g and not isinstance(g["hooks"], list):
                raise bad(f"{ptr}/{i}/hooks", "must be a list of hook handlers")


def merge_hooks(settings: dict[str, Any], hook_bin: str | None) -> dict[str, Any]:
    """Settings with our hook groups in place (hook_bin) or removed (hook_bin None). Never
    touches a handler that is not ours; a group that held ours and others keeps the others."""
    out = copy.deepcopy(settings)
    hooks = out.get("hooks")
    if hooks is None:
        if hook_bin is None:
            return out
        hooks = out["hooks"] = {}
    for event in HOOK_EVENTS:
        groups = hooks.get(event, [])
        new_groups: list[Any] = []
        placed = hook_bin is None
        for g in groups:
            handlers = g.get("hooks", [])
            if not any(is_our_handler(h) for h in handlers):
                new_groups.append(g)
                continue
            others = [h for h in handlers if not is_our_handler(h)]
            if others:
                new_groups.append({**g, "hooks": others})
            if hook_bin is not None and not placed:
                new_groups.append(hook_group(hook_bin, event))
                placed = True
        if hook_bin is not None and not placed:
            new_groups.append(hook_group(hook_bin, event))
        if new_groups:
            hooks[event] = new_groups
        elif event in hooks:
            del hooks[event]
    if not hooks:
        del out["hooks"]
    return out


def _check_mcp_shape(data: Any, path: Path) -> None:
    if not isinstance(data, dict):
        raise StatewrightError(INVALID_ARGUMENTS,
                               f"{path}: /: must be a JSON object; nothing was changed")
    servers = data.get("mcpServers")
    if servers is not None and not isinstance(servers, dict):
        raise StatewrightError(INVALID_ARGUMENTS,
                               f"{path}: /mcpServers: must be an object of servers; "
                               "nothing was changed")


def is_our_server(entry: Any) -> bool:
    return (isinstance(entry, dict) and isinstance(entry.get("command"), str)
            and os.path.basename(entry["command"]) == CLI_SCRIPT
            and entry.get("args", [])[:1] == ["serve"])


def merge_mcp(data: dict[str, Any], cli_bin: str | None) -> dict[str, Any]:
    """`.mcp.json` content with `mcpServers.statewright` set (cli_bin) or removed (None). Keys
    the user added to our entry (e.g. `env`) are kept."""
    out = copy.deepcopy(data)
    servers = out.get("mcpServers")
    if cli_bin is None:
        if isinstance(servers, dict) and is_our_server(servers.get(MCP_SERVER_NAME)):
            del servers[MCP_SERVER_NAME]
        return out
    if servers is None:
        servers = out["mcpServers"] = {}
    entry = servers.get(MCP_SERVER_NAME)
    keep = {k: v for k, v in entry.items() if k not in ("type", "url", "headers")} \
        if isinstance(entry, dict) else {}
    new = {**keep, "command": cli_bin}
    new["args"] = ["serve"]
    servers[MCP_SERVER_NAME] = new
    return out


# -- files -------------------------------------------------------------------------------------

def read_json_file(path: Path) -> tuple[dict[str, Any] | None, bool]:
    """(content, existed). A file that is not JSON is an error naming the spot."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None, False
    except (OSError, UnicodeDecodeError) as exc:
        raise StatewrightError(INVALID_ARGUMENTS,
                               f"{path}: cannot read: {exc}; nothing was changed") from None
    if not text.strip():
        return {}, True
    try:
        return json.loads(text), True
    except json.JSONDecodeError as exc:
        raise StatewrightError(INVALID_ARGUMENTS,
                               f"{path}: not valid JSON ({exc.msg} at line {exc.lineno}, column "
                               f"{exc.colno}); fix or remove it; nothing was changed") from None


def write_json_file(path: Path, data: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    mode = None
    try:
        mode = path.stat().st_mode & 0o777
    except FileNotFoundError:
        pass
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=str(path.parent))
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def plan_claude_install(*, settings_path: Path, mcp_path: Path | None, hook_bin: str | None,
                        cli_bin: str | None) -> list[tuple[Path, dict[str, Any], bool]]:
    """Read, check and merge every file first, so one bad file changes nothing anywhere.
    Returns [(path, new content, changed)]."""
    plan = []
    current, _existed = read_json_file(settings_path)
    current = {} if current is None else current
    _check_settings_shape(current, settings_path)
    new = merge_hooks(current, hook_bin)
    plan.append((settings_path, new, new != current))
    if mcp_path is not None:
        cur, _existed = read_json_file(mcp_path)
        cur = {} if cur is None else cur
        _check_mcp_shape(cur, mcp_path)
        new = merge_mcp(cur, cli_bin)
        plan.append((mcp_path, new, new != cur))
    return plan


# -- command -----------------------------------------------------------------------------------

@install_app.command(
    "claude", help="Install (or --uninstall) the statewright hooks and MCP proxy for Claude Code.")
def install_claude(
    scope: str = typer.Option("project", "--scope",
                              help="project: <project>/.claude/settings.json and "
                              "<project>/.mcp.json; user: ~/.claude/settings.json."),
    uninstall: bool = typer.Option(False, "--uninstall",
                                   help="Remove only statewright's hooks and server."),
    project: str | None = ProjectOpt,
) -> None:
    from ..config import find_project_root

    if scope not in ("project", "user"):
        raise StatewrightError(INVALID_ARGUMENTS,
                               f"--scope must be 'project' or 'user', not {scope!r}")
    hook_bin = None if uninstall else script_path(HOOK_SCRIPT)
    cli_bin = None if uninstall else script_path(CLI_SCRIPT)
    if scope == "project":
        root = find_project_root(project)
        settings_path = root / ".claude" / "settings.json"
        mcp_path: Path | None = root / ".mcp.json"
    else:
        settings_path = Path.home() / ".claude" / "settings.json"
        mcp_path = None
    plan = plan_claude_install(settings_path=settings_path, mcp_path=mcp_path,
                               hook_bin=hook_bin, cli_bin=cli_bin)
    for path, content, changed in plan:
        if changed:
            write_json_file(path, content)
    verb = "removed from" if uninstall else "installed in"
    for path, _content, changed in plan:
        what = "hooks" if path.name == "settings.json" else "MCP server 'statewright'"
        if changed:
            console.print(f"statewright {what} {verb} {path}", highlight=False, soft_wrap=True)
        else:
            state = "not present in" if uninstall else "already up to date in"
            console.print(f"statewright {what} {state} {path} (unchanged)", highlight=False,
                          soft_wrap=True)
    if scope == "user" and not uninstall:
        cli_quoted = shlex.quote(cli_bin or "")
        console.print("The MCP proxy is per project: add it with `statewright install claude` in "
                      "the project, or `claude mcp add --scope user statewright -- "
                      f"{cli_quoted} serve`.",
                      highlight=False, soft_wrap=True)
