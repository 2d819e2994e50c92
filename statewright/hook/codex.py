"""OpenAI Codex CLI's hooks (`statewright-hook --host=codex EVENT`, or its `mcp_tool` hooks
answered by the proxy's hook tool with `"host": "codex"`).

Codex's hook contract is Claude Code's: the same event names, `session_id`, `cwd`,
`tool_name`, `tool_input`, `tool_use_id`, `agent_id` inside a sub-agent; a refusal is
`hookSpecificOutput.permissionDecision: "deny"` with the reason the model reads; a rewritten
input is `hookSpecificOutput.updatedInput` (beside an allow Codex requires: `rewrite`).
Codex reports its shell tools as `Bash` with `{"command": ...}` and its patch tool as
`apply_patch` with the patch in `command` (`statewright.hook.hosts.TOOL_MAP`). A hook that
fails, hangs or is missing lets the call through (Codex fails open): the answer never depends
on the process ending well, and `statewright doctor` says so.
"""

from __future__ import annotations

from ..lean import TYPE_CHECKING
from ..names import POST_TOOL_USE, PRE_TOOL_USE, SESSION_START, STOP, USER_PROMPT_SUBMIT
from .hosts import dump, response_size, session_keys, text_of

if TYPE_CHECKING:  # pragma: no cover
    from typing import Any

    from .hosts import Mapped

NAME = "codex"
#: tools whose line Codex may run in another directory than its hook input's `cwd` (the model's
#: `workdir` is not in the hook input): the line is rewritten to run where it was judged
PINNED_CWD_TOOLS = ("Bash",)
EVENTS = {e: e for e in (PRE_TOOL_USE, POST_TOOL_USE, SESSION_START, USER_PROMPT_SUBMIT, STOP)}


def session(data: dict[str, Any]) -> tuple[str, str]:
    return session_keys(NAME, data.get("session_id"), data.get("agent_id"))


def cwd(data: dict[str, Any]) -> str | None:
    return text_of(data.get("cwd"))


def tool(data: dict[str, Any]) -> tuple[str, dict[str, Any], None]:
    from .handlers import _tool

    name, inp = _tool(data)
    return name, inp, None


def deny(reason: str) -> str:
    return dump({"hookSpecificOutput": {"hookEventName": PRE_TOOL_USE,
                                        "permissionDecision": "deny",
                                        "permissionDecisionReason": reason}})


def rewrite(m: Mapped, args: dict[str, Any]) -> str | None:
    """A rewritten shell line. Codex applies `updatedInput` only beside `permissionDecision:
    "allow"`, and that allow waives none of Codex's own rules: its sandbox and approval policy
    still apply to the rewritten line (tested: tests/hosts). It is the one allow statewright
    answers, and only with the rewritten input it stands for."""
    if m.name != "Bash":
        return None  # (only a shell line is ever rewritten; anything else is refused)
    return dump({"hookSpecificOutput": {"hookEventName": PRE_TOOL_USE,
                                        "permissionDecision": "allow", "updatedInput": args}})


def context(event: str, text: str) -> str:
    return dump({"hookSpecificOutput": {"hookEventName": event, "additionalContext": text}})


def stop(reason: str) -> str:
    return dump({"decision": "block", "reason": reason})


def outcome(data: dict[str, Any], name: str) -> tuple[int, bool, int | None]:
    """(bytes the model got, failed, exit status): Codex reports the output only."""
    return response_size(data.get("tool_response")), False, None


def printed(data: dict[str, Any]) -> Any:
    """What a shell line printed, as Codex reports it (the output alone)."""
    return data.get("tool_response")
