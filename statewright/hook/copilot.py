"""GitHub Copilot CLI's hooks (`statewright-hook --host=copilot EVENT`), in its own camelCase
form (`preToolUse`, `postToolUse`, `sessionStart`, `userPromptSubmitted`, `agentStop`).

Input: `sessionId`, `cwd`, `toolName`, `toolArgs` (an object; older versions sent JSON text);
no call id and no sub-agent id (a sub-agent's calls are its session's). A refusal is
`{"permissionDecision": "deny", "permissionDecisionReason": ...}`; a rewritten input is
`modifiedArgs`. Copilot CLI refuses a call whose hook crashes or exits non-zero, and lets it
through when the hook times out: the hook answers within its deadline, far under the timeout
`statewright install copilot` writes.
"""

from __future__ import annotations

from ..lean import TYPE_CHECKING
from ..names import POST_TOOL_USE, PRE_TOOL_USE, SESSION_START, STOP, USER_PROMPT_SUBMIT
from .hosts import dump, response_size, session_keys, text_of

if TYPE_CHECKING:  # pragma: no cover
    from typing import Any

    from .hosts import Mapped

NAME = "copilot"
EVENTS = {"preToolUse": PRE_TOOL_USE, "postToolUse": POST_TOOL_USE,
          "sessionStart": SESSION_START, "userPromptSubmitted": USER_PROMPT_SUBMIT,
          "agentStop": STOP}


def session(data: dict[str, Any]) -> tuple[str, str]:
    return session_keys(NAME, data.get("sessionId"))


def cwd(data: dict[str, Any]) -> str | None:
    return text_of(data.get("cwd"))


def tool(data: dict[str, Any]) -> tuple[str, dict[str, Any], None]:
    from ..lean import loads
    from .handlers import HookInputError

    name = data.get("toolName")
    if not isinstance(name, str) or not name:
        raise HookInputError("the copilot hook input has no toolName")
    args = data.get("toolArgs")
    if isinstance(args, str):
        try:
            args = loads(args) if args.strip() else {}
        except ValueError:
            args = {"input": args}  # (a freeform tool's text: apply_patch)
    if args is None:
        args = {}
    if not isinstance(args, dict):
        raise HookInputError(f"toolArgs of {name} must be a JSON object")
    return name, args, None


def deny(reason: str) -> str:
    return dump({"permissionDecision": "deny", "permissionDecisionReason": reason})


def rewrite(m: Mapped, args: dict[str, Any]) -> str | None:
    if m.name != "Bash":
        return None
    return dump({"modifiedArgs": args})


def context(event: str, text: str) -> str:
    return dump({"additionalContext": text})


def stop(reason: str) -> str:
    return dump({"decision": "block", "reason": reason})


def outcome(data: dict[str, Any], name: str) -> tuple[int, bool, int | None]:
    """(bytes the model got, failed, exit status): `toolResult.textResultForLlm` is what the
    model reads; a shell line ends it with `exit code N`."""
    res = data.get("toolResult")
    if not isinstance(res, dict):
        return response_size(res), False, None
    text = res.get("textResultForLlm")
    failed = res.get("resultType") not in (None, "success")
    code: int | None = None
    if name == "Bash" and isinstance(text, str):
        at = text.rfind("exit code ")
        if at >= 0:
            digits = ""
            for ch in text[at + 10:at + 16]:
                if not ch.isdigit():
                    break
                digits += ch
            code = int(digits) if digits else None
        failed = failed or bool(code)
    return response_size(text if text is not None else res), failed, code


def printed(data: dict[str, Any]) -> Any:
    """What a shell line printed: the text the model reads (`toolResult.textResultForLlm`)."""
    res = data.get("toolResult")
    return res.get("textResultForLlm") if isinstance(res, dict) else res
