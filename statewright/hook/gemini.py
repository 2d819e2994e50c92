"""Google Gemini CLI's hooks (`statewright-hook --host=gemini EVENT`).

Events: `BeforeTool` (decide), `AfterTool` (account), `SessionStart`, `BeforeAgent` (the
state's briefing), `AfterAgent` (the reminder not to stop in a non-final state). Input:
`session_id`, `cwd`, `tool_name`, `tool_input` (+ `mcp_context` for an MCP tool); no call id
and no sub-agent id (a sub-agent's calls are its session's). A refusal is `{"decision":
"deny", "reason": ...}` (the model reads the reason as the tool's error); a rewritten input is
`hookSpecificOutput.tool_input`, merged over the call's arguments. Gemini CLI lets a call
through when its hook exits 1, times out or cannot start: the hook never exits 1 (an answer
it cannot write exits 2, which Gemini CLI takes as a refusal) and answers within its deadline.
"""

from __future__ import annotations

from ..lean import TYPE_CHECKING
from ..names import POST_TOOL_USE, PRE_TOOL_USE, SESSION_START, STOP, USER_PROMPT_SUBMIT
from .hosts import dump, response_size, session_keys, text_of

if TYPE_CHECKING:  # pragma: no cover
    from typing import Any

    from .hosts import Mapped

NAME = "gemini"
EVENTS = {"BeforeTool": PRE_TOOL_USE, "AfterTool": POST_TOOL_USE, "SessionStart": SESSION_START,
          "BeforeAgent": USER_PROMPT_SUBMIT, "AfterAgent": STOP}
_HOST_EVENT = {v: k for k, v in EVENTS.items()}


def session(data: dict[str, Any]) -> tuple[str, str]:
    return session_keys(NAME, data.get("session_id"))


def cwd(data: dict[str, Any]) -> str | None:
    return text_of(data.get("cwd"))


def tool(data: dict[str, Any]) -> tuple[str, dict[str, Any], tuple[str, str] | None]:
    from .handlers import _tool

    name, inp = _tool(data)
    ctx = data.get("mcp_context")
    mcp = None
    if isinstance(ctx, dict):
        server, remote = ctx.get("server_name"), ctx.get("tool_name")
        if isinstance(server, str) and server and isinstance(remote, str) and remote:
            mcp = (server, remote)
    return name, inp, mcp


def deny(reason: str) -> str:
    return dump({"decision": "deny", "reason": reason})


def rewrite(m: Mapped, args: dict[str, Any]) -> str | None:
    """A rewritten shell line. Gemini CLI runs each line in a new shell (no `cd` persists) and
    refuses a line holding command substitution, which the kernel tier's wrapping of a line
    uses to keep a `cd`: that line is given in the form without it (`launcher.fresh`)."""
    if m.name != "Bash":
        return None
    command = args.get("command")
    if isinstance(command, str):
        from ..sandbox.launcher import fresh

        args = {**args, "command": fresh(command)}
    return dump({"hookSpecificOutput": {"hookEventName": "BeforeTool", "tool_input": args}})


def context(event: str, text: str) -> str:
    return dump({"hookSpecificOutput": {"hookEventName": _HOST_EVENT.get(event, event),
                                        "additionalContext": text}})


def stop(reason: str) -> str:
    # (AfterAgent: a refusal sends the reason back to the model as its next prompt)
    return dump({"decision": "deny", "reason": reason})


def outcome(data: dict[str, Any], name: str) -> tuple[int, bool, int | None]:
    """(bytes the model got, failed, exit status): `tool_response.llmContent` is what the
    model reads; a shell line's status is in it as `Exit Code: N` when it is not 0."""
    resp = data.get("tool_response")
    if not isinstance(resp, dict):
        return response_size(resp), False, None
    text = resp.get("llmContent")
    failed = bool(resp.get("error"))
    code: int | None = None
    if name == "Bash" and isinstance(text, str):
        code = _exit_code(text, "Exit Code: ")
        if code is None and not failed:
            code = 0
        failed = failed or bool(code)
    return response_size(text if text is not None else resp), failed, code


def _exit_code(text: str, head: str) -> int | None:
    at = text.find(head)
    if at < 0:
        return None
    digits = ""
    for ch in text[at + len(head):at + len(head) + 6]:
        if not ch.isdigit():
            break
        digits += ch
    return int(digits) if digits else None


def printed(data: dict[str, Any]) -> Any:
    """What a shell line printed: the text the model reads (`tool_response.llmContent`)."""
    resp = data.get("tool_response")
    return resp.get("llmContent") if isinstance(resp, dict) else resp
