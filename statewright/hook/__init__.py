"""Claude Code hook adapter: `statewright-hook EVENT` (DESIGN.md sections 4 and 5).

Reads one Claude Code hook JSON object on stdin, asks `statewright.runtime` what to do, and
answers in Claude Code's hook contract on stdout, always with exit status 0:

- PreToolUse: a refusal is `{"hookSpecificOutput": {"hookEventName": "PreToolUse",
  "permissionDecision": "deny", "permissionDecisionReason": ...}}`; an allowed call prints
  nothing, or `permissionDecision: "allow"` + `updatedInput` when the policy rewrote the input.
- PostToolUse: accounting; interrupts and budget warnings come back as `additionalContext`.
- SessionStart / UserPromptSubmit: the current state's briefing as `additionalContext`.
- Stop: in a non-final state, `decision: "block"` reminding the agent which events finish the
  work (at most 3 times per state, never while `stop_hook_active`).

This module is the start-up path of every tool call, so it imports only `sys` at the top; the
rest (json, the runtime, tree-sitter for Bash) is imported when it is needed. It never imports
mcp, pydantic, jsonschema, typer, rich or watchdog. Any failure becomes a refusal with its cause
(fail closed) unless the project config says `"fail_open": true`; no traceback is ever printed.
"""

from __future__ import annotations

import sys

PRE_TOOL_USE = "PreToolUse"
POST_TOOL_USE = "PostToolUse"
SESSION_START = "SessionStart"
USER_PROMPT_SUBMIT = "UserPromptSubmit"
STOP = "Stop"
EVENTS = (PRE_TOOL_USE, POST_TOOL_USE, SESSION_START, USER_PROMPT_SUBMIT, STOP)
# accepted spellings -> Claude Code's event name ("pre-tool-use", "PreToolUse", "pre_tool_use")
_ALIASES = {e.lower(): e for e in EVENTS}


def normalize_event(name: object) -> str | None:
    """`pre-tool-use` / `PreToolUse` / `pre_tool_use` -> `PreToolUse`; None if unknown."""
    if not isinstance(name, str):
        return None
    return _ALIASES.get(name.replace("-", "").replace("_", "").strip().lower())


def main(argv: list[str] | None = None, stdin: bytes | None = None) -> int:
    """Entry point of the `statewright-hook` console script and of `statewright hook EVENT`.

    Returns the exit status (always 0: Claude Code only parses stdout on exit 0, and a refusal
    must be parsed to be seen). Output is written to stdout.
    """
    args = sys.argv[1:] if argv is None else list(argv)
    try:
        if stdin is None:
            stdin = sys.stdin.buffer.read()
        from .handlers import handle

        out = handle(args, stdin)
    except BaseException as exc:  # noqa: BLE001 - the last line of defence: fail closed
        try:
            from .handlers import crash_output

            out = crash_output(args, stdin, exc)
        except BaseException as exc2:  # noqa: BLE001 - even the handlers cannot be imported
            out = _last_resort(exc, exc2)
    if out:
        try:
            sys.stdout.write(out + "\n")
            sys.stdout.flush()
        except BaseException:  # noqa: BLE001 - a closed pipe must not become a traceback
            pass
    return 0


def _last_resort(*excs: BaseException) -> str:
    """A PreToolUse refusal built without importing anything (json may be what is broken)."""
    cause = "; ".join(f"{type(e).__name__}: {e}" for e in excs)
    cause = "".join(c if c.isprintable() and c not in '"\\' else " " for c in cause)[:500]
    return ('{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny", '
            f'"permissionDecisionReason": "statewright: the hook failed ({cause}); the call is '
            'refused because statewright fails closed"}}')


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
