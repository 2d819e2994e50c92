"""The hook tool: Claude Code's `mcp_tool` hooks answered by the running `statewright serve`.

Claude Code can call a tool of a connected MCP server as a hook (`{"type": "mcp_tool",
"server": "statewright", "tool": "statewright_hook", "input": ...}`, written by
`statewright install claude`: `statewright.wiring.HOOK_TOOL_INPUT`), with the string
values of `input` interpolated from the hook input. That saves the two processes per tool call
of the `statewright-hook` form. The tool is never listed to the model and is served only over
stdio, where the only client is the host that started the proxy (docs/hooks.md).

This module only translates: interpolated fields -> the hook input dict -> the same
`statewright.hook.handlers.dispatch` the process hook uses -> the same JSON answer (`{}` for
"nothing to say"). It imports no MCP SDK code, so the stdio fast path can answer from it.
"""

from __future__ import annotations

import os

from ..config import project_root_dir
from ..errors import INVALID_ARGUMENTS, StatewrightError
from ..hook import PRE_TOOL_USE, normalize_event
from ..hook.handlers import HookInputError, dispatch, failure_output
from ..lean import TYPE_CHECKING, loads
from ..names import HOOK_TOOL

if TYPE_CHECKING:
    from typing import Any

__all__ = ["HOOK_TOOL", "JSON_FIELDS", "HookTool"]

#: fields whose value is JSON text (an object, a string, ...) rather than plain text
JSON_FIELDS = frozenset({"tool_input", "tool_response"})
#: at most this many projects' runtimes are kept open (normally one: the proxy's own)
MAX_RUNTIMES = 8


def hook_data(arguments: Any) -> tuple[str, dict[str, Any]]:
    """(event, hook input) from the tool's arguments; HookInputError when they are not what
    the host sends (the event is PreToolUse then, so the answer is a refusal)."""
    if not isinstance(arguments, dict):
        raise HookInputError("the hook tool's arguments must be an object")
    event = normalize_event(arguments.get("hook_event_name"))
    if event is None:
        raise HookInputError("the hook tool got no known hook_event_name "
                             f"({arguments.get('hook_event_name')!r})")
    data: dict[str, Any] = {}
    for key, value in arguments.items():
        if value == "" or value is None:
            continue  # a field the event does not have arrives empty
        if key in JSON_FIELDS and isinstance(value, str):
            try:
                value = loads(value)
            except ValueError:
                if key == "tool_input":
                    raise HookInputError(f"{key} is not JSON text") from None
        elif key == "stop_hook_active" and isinstance(value, str):
            value = value.strip().lower() == "true"
        data[key] = value
    data["hook_event_name"] = event
    return event, data


class HookTool:
    """Answers hook-tool calls with the proxy's runtime (others opened per project root)."""

    def __init__(self, rt: Any) -> None:
        self.rt = rt
        self._runtimes: dict[str, Any] = {rt.root_dir: rt}
        self._env_roots: dict[str, str] = {}

    def open(self, data: dict[str, Any] | None) -> Any:
        # Claude Code gives the servers it starts $CLAUDE_PROJECT_DIR, and with it set the root
        # is that directory whatever the cwd (`project_root_dir`): resolved once per value,
        # not on every hook call
        env = os.environ.get("CLAUDE_PROJECT_DIR")
        root = self._env_roots.get(env) if env else None
        if root is None:
            cwd = (data or {}).get("cwd")
            root = project_root_dir(None, cwd if isinstance(cwd, str) and cwd else None)
            if env:
                self._env_roots = {env: root}
        rt = self._runtimes.get(root)
        if rt is None:
            from ..runtime import Runtime

            if len(self._runtimes) >= MAX_RUNTIMES:
                self._runtimes = {self.rt.root_dir: self.rt}
            rt = self._runtimes[root] = Runtime.open(project=root)
        return rt

    def answer(self, arguments: Any, meta: Any = None) -> str:
        """The hook's JSON answer as text; `{}` when there is nothing to say. Never raises.
        With `"host": NAME` in the arguments (a literal the installer writes), the event is
        another host's (`statewright.hook.hosts`: Codex's `mcp_tool` hooks)."""
        if isinstance(arguments, dict) and arguments.get("host") not in (None, "", "claude"):
            return self.answer_host(arguments, meta_dict(meta))
        try:
            event, data = hook_data(arguments)
        except HookInputError as exc:
            event = PRE_TOOL_USE
            if isinstance(arguments, dict):
                event = normalize_event(arguments.get("hook_event_name")) or PRE_TOOL_USE
            out = failure_output(event, exc, arguments if isinstance(arguments, dict) else None,
                                 self.open)
        else:
            out = dispatch(event, data, self.open)
        return out or "{}"


    def answer_host(self, arguments: dict[str, Any], meta: dict[str, Any]) -> str:
        from ..hook.hosts import adapter, dispatch

        host = arguments.get("host")
        try:
            mod = adapter(host if isinstance(host, str) else "")
        except KeyError:
            return failure_output(PRE_TOOL_USE, HookInputError(
                f"the hook tool got an unknown host {host!r}"), None, self.open) or "{}"
        data: dict[str, Any] = {}
        problem: Exception | None = None
        for key, value in arguments.items():
            if key == "host" or value == "" or value is None:
                continue
            if key in JSON_FIELDS and isinstance(value, str):
                try:
                    value = loads(value)
                except ValueError:
                    if key == "tool_input":
                        problem = HookInputError(f"{key} is not JSON text")
            elif key == "stop_hook_active" and isinstance(value, str):
                value = value.strip().lower() == "true"
            data[key] = value
        # Codex cannot interpolate `agent_id` (a field only sub-agents' events have), but names
        # the calling thread in the request's `_meta`: a sub-agent's thread is its agent id
        thread = meta.get("threadId")
        if isinstance(thread, str) and thread and "agent_id" not in data and \
                thread != data.get("session_id"):
            data["agent_id"] = thread
        name = data.get("hook_event_name")
        out = dispatch(mod.NAME, name, None if problem else data, problem, self.open)
        return out or "{}"


def not_served() -> StatewrightError:
    return StatewrightError(INVALID_ARGUMENTS,
                            f"unknown tool {HOOK_TOOL!r}: the hook tool answers only the host "
                            "that started `statewright serve` on stdio")


def meta_dict(meta: Any) -> dict[str, Any]:
    """A request's `_meta` (a dict, or the SDK's model of it: its extra keys included) as a
    dict; {} for anything else. (Codex names the calling agent's thread there.)"""
    if isinstance(meta, dict):
        return meta
    try:
        out = meta.model_dump(by_alias=True) if meta is not None else {}
    except Exception:
        return {}
    return out if isinstance(out, dict) else {}
