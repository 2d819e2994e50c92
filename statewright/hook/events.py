"""The hook events statewright answers, by Claude Code's names, and how the hook's arguments
may spell them; the environment switch of the resident hook server. Stdlib only, no import:
every hook process reads this (`statewright.hook` and its modules share it from here)."""

from __future__ import annotations

PRE_TOOL_USE = "PreToolUse"
POST_TOOL_USE = "PostToolUse"
POST_TOOL_USE_FAILURE = "PostToolUseFailure"
SESSION_START = "SessionStart"
USER_PROMPT_SUBMIT = "UserPromptSubmit"
STOP = "Stop"
EVENTS = (PRE_TOOL_USE, POST_TOOL_USE, POST_TOOL_USE_FAILURE, SESSION_START, USER_PROMPT_SUBMIT,
          STOP)
#: "0" in the hook's environment: every event is decided in the hook process, no resident
#: hook server (`statewright.hook.resident`) is asked or started
RESIDENT_ENV = "STATEWRIGHT_HOOK_RESIDENT"
# accepted spellings -> Claude Code's event name ("pre-tool-use", "PreToolUse", "pre_tool_use")
_ALIASES = {e.lower(): e for e in EVENTS}


def normalize_event(name: object) -> str | None:
    """`pre-tool-use` / `PreToolUse` / `pre_tool_use` -> `PreToolUse`; None if unknown."""
    if not isinstance(name, str):
        return None
    return _ALIASES.get(name.replace("-", "").replace("_", "").strip().lower())
