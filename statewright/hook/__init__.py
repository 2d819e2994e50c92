"""Claude Code hook adapter: `statewright-hook EVENT` (DESIGN.md sections 4 and 5).

Reads one Claude Code hook JSON object on stdin, asks `statewright.runtime` what to do, and
answers in Claude Code's hook contract on stdout, with exit status 0 (2 only when a PreToolUse
answer cannot be written: see `emit`):

- PreToolUse: a refusal is `{"hookSpecificOutput": {"hookEventName": "PreToolUse",
  "permissionDecision": "deny", "permissionDecisionReason": ...}}`; an allowed call prints
  nothing, or only `updatedInput` when the policy rewrote the input. statewright never answers
  `permissionDecision: "allow"`: that would skip the host's own permission rules and prompts.
- PostToolUse / PostToolUseFailure: accounting and evidence (a failure is a failed call; a
  Bash line's exit status as the host reports it); interrupts and budget warnings come back as
  `additionalContext`.
- SessionStart / UserPromptSubmit: the current state's briefing as `additionalContext`.
- Stop: in a non-final state, `decision: "block"` reminding the agent which events finish the
  work (at most 3 times per state, never while `stop_hook_active`).

This module is the start-up path of every tool call, so it imports only `sys` and the event
names (`statewright.names`, which the resident server's client reads too) at the top; the
rest (json, the runtime, tree-sitter for Bash) is imported when it is needed. It never imports
mcp, pydantic, jsonschema, typer, rich or watchdog. Any failure becomes a refusal with its cause
(fail closed) unless the project config says `"fail_open": true`; no traceback is ever printed.
"""

from __future__ import annotations

import sys

from ..names import EVENTS as EVENTS
from ..names import NATIVE_ENV, PRE_TOOL_USE, RESIDENT_ENV, normalize_event
from ..names import POST_TOOL_USE as POST_TOOL_USE
from ..names import POST_TOOL_USE_FAILURE as POST_TOOL_USE_FAILURE
from ..names import SESSION_START as SESSION_START
from ..names import STOP as STOP
from ..names import USER_PROMPT_SUBMIT as USER_PROMPT_SUBMIT


def run() -> None:
    """The `statewright-hook` console script: the resident hook server's answer when it gives
    one (`resident.ask`), else `main` decides here; then the process ends at once
    (`lean.exit_now`), skipping the interpreter's teardown."""
    args = sys.argv[1:]
    import os

    handover = None
    if NATIVE_ENV in os.environ:  # exec'd by the native client (`statewright.hook.native`)
        try:
            from .native import take

            handover = take()
        except Exception:
            os.environ.pop(NATIVE_ENV, None)
    if handover is not None and handover.mode == "emit":
        # the server's answer, which the native client could not write: written by our rules
        # if it is proven the server's, else the event is decided as one without input
        from ..lean import exit_now
        from .native import proven_answer

        try:
            text = proven_answer(sys.stdin.buffer.read())
        except BaseException:
            text = None
        exit_now(main(args, b"") if text is None else answer(text, args, handover.sent))
    if args and args[0].startswith("--host="):
        # a host that lets a call through when its hook hangs: refuse it before the host
        # gives up waiting (`hosts.arm_deadline`; the native client's deadline, when it
        # handed the event over, counts from its start)
        try:
            from .hosts import arm_deadline

            arm_deadline(args, until=handover.deadline if handover is not None else None)
        except Exception:
            pass
    try:
        stdin = sys.stdin.buffer.read()
    except BaseException:
        stdin = None  # (`main` reads again and words the failure)
    out = None
    env = os.environ
    if args and args[0].startswith("--host=") and not env.get("CLAUDE_PROJECT_DIR"):
        # a host that does not name the project for its hooks (Codex) runs them in the
        # session's directory: its project, as every decision would resolve it, names the
        # resident server (Gemini CLI and Copilot CLI set CLAUDE_PROJECT_DIR themselves)
        try:
            from ..config import project_root_dir

            env["CLAUDE_PROJECT_DIR"] = project_root_dir(None, os.getcwd())
        except Exception:
            pass
    # (`resident.endpoint` says when a server is used; these two of its conditions are asked
    # first only so that a hook with none does not even import it)
    # (the native client asked the server already when it hands over with `self`)
    if stdin is not None and env.get("CLAUDE_PROJECT_DIR") and env.get(RESIDENT_ENV) != "0" \
            and (handover is None or handover.mode == "ask"):
        try:
            from .resident import ask

            out = ask(args, stdin, handover is not None)
        except Exception:  # (a broken install: the hook decides itself, as below)
            out = None
    from ..lean import exit_now, one_call_process

    if out is not None:
        exit_now(answer(out, args))
    one_call_process()
    exit_now(main(args, stdin))


def main(argv: list[str] | None = None, stdin: bytes | None = None) -> int:
    """Entry point of the `statewright-hook` console script and of `statewright hook EVENT`.

    Returns the exit status: 0 (Claude Code only parses stdout on exit 0, and a refusal must be
    parsed to be seen), or 2 when a PreToolUse answer could not be written at all (`emit`).
    """
    args = sys.argv[1:] if argv is None else list(argv)
    try:
        if stdin is None:
            stdin = sys.stdin.buffer.read()
        out = handle(args, stdin)
    except BaseException as exc:
        try:
            out = crash_output(args, stdin, exc)
        except BaseException as exc2:
            out = _last_resort(exc, exc2)
    return answer(out, args)


def handle(args: list[str], raw: bytes | None, opener: object = None) -> str:
    """One hook invocation: returns the text to print on stdout ('' for nothing).
    `opener` as for `handlers.dispatch` (the resident hook server passes its own).
    `--host=NAME` first: another host's hook (`statewright.hook.hosts`); else Claude Code's
    (`statewright.hook.handlers`)."""
    if args and args[0].startswith("--host="):
        from .hosts import adapter
        from .hosts import handle as host_handle

        try:
            adapter(args[0][7:])
        except KeyError:
            from .handlers import deny_json

            return deny_json(f"statewright-hook: unknown host {args[0][7:]!r} (expected codex, "
                             "gemini or copilot); the call is refused (fail closed)")
        return host_handle(args[0][7:], args[1:], raw, opener)
    from .handlers import handle as claude_handle

    return claude_handle(args, raw, opener)


def crash_output(args: list[str], raw: bytes | None, exc: BaseException) -> str:
    """Used by `main` when even `handle` failed: a refusal in the PreToolUse shape (of the
    host `--host=NAME` names, if any)."""
    from .handlers import failure_output

    if args and args[0].startswith("--host="):
        from .hosts import fallback_deny

        return fallback_deny(args[0][7:]) or failure_output(PRE_TOOL_USE, exc, None)
    event = normalize_event(args[0]) if args else PRE_TOOL_USE
    return failure_output(event or PRE_TOOL_USE, exc, None)


def answer(out: str, args: list[str], sent: int = 0) -> int:
    """Print the answer `out` to the event in `args`; the exit status (see `emit`). `sent`:
    bytes of it another process already wrote (the native client, which failed to write it)."""
    if not out:
        return 0
    # A PreToolUse answer that cannot be delivered must still block the call (and so must an
    # answer whose event is unknown: it was a refusal).
    if args and args[0].startswith("--host="):  # another host (`statewright.hook.hosts`)
        from .hosts import claim_answer, fallback_deny, host_event

        if not claim_answer():  # the deadline answered: the process is ending
            import time

            time.sleep(60)
        return emit(out, host_event(args) in (None, PRE_TOOL_USE),
                    fallback_deny(args[0][7:]) or FALLBACK_DENY, sent)
    blocking = not args or normalize_event(args[0]) in (None, PRE_TOOL_USE)
    return emit(out, blocking, FALLBACK_DENY, sent)


# Printed when the decision itself could not be written; plain ASCII, nothing computed.
FALLBACK_DENY = ('{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": '
                 '"deny", "permissionDecisionReason": "statewright: the hook could not write its '
                 'decision, so the call is refused (statewright fails closed)"}}')
EXIT_BLOCK = 2  # Claude Code: exit 2 on PreToolUse blocks the call and shows stderr to Claude


def emit(out: str, blocking: bool, fallback: str = FALLBACK_DENY, already: int = 0) -> int:
    """Write the answer; the exit status to return.

    If the answer cannot be written (any error, including text that does not encode), a
    blocking answer falls back to `FALLBACK_DENY`; if that cannot be written either, or bytes of
    the first answer already went out (the output is then not JSON), the hook says why on stderr
    and exits 2, which Claude Code takes as a block. A non-blocking answer (context, reminders)
    that cannot be written is dropped: it never blocks anything. `already`: bytes of the
    answer that went out before a write failed in another process (the native client)."""
    sent = [already]
    try:
        if already:
            raise OSError("the answer was cut")
        _write(out + "\n", sent)
        return 0
    except BaseException:
        pass
    if not blocking:
        return 0
    if sent[0] == 0:
        try:
            _write(fallback + "\n", sent)
            return 0
        except BaseException:
            pass
    try:
        sys.stderr.write("statewright: the hook could not write its decision to stdout; the call "
                         "is refused (exit status 2) because statewright fails closed\n")
        sys.stderr.flush()
    except BaseException:
        pass
    return EXIT_BLOCK


def _write(text: str, sent: list[int]) -> None:
    """Write `text` (ASCII) to stdout completely, counting the bytes that went out in sent[0]."""
    data = text.encode("ascii")  # the answers are ASCII-only JSON; anything else is a failure
    stream = sys.stdout
    if stream is None:
        raise OSError("stdout is closed")
    try:
        fd = stream.fileno()
    except (AttributeError, OSError, ValueError):
        fd = None  # an in-memory stream (the CLI's test runner): write text
    if fd is None:
        stream.write(text)
        sent[0] += len(data)
        stream.flush()
        return
    import os

    stream.flush()
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        if n <= 0:
            raise OSError("stdout accepted no bytes")
        sent[0] += n
        view = view[n:]


def _last_resort(*excs: BaseException) -> str:
    """A PreToolUse refusal built without importing anything (json may be what is broken)."""
    cause = "; ".join(f"{type(e).__name__}: {e}" for e in excs)
    cause = "".join(c if " " <= c <= "~" and c not in '"\\' else " " for c in cause)[:500]
    return ('{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny", '
            f'"permissionDecisionReason": "statewright: the hook failed ({cause}); the call is '
            'refused because statewright fails closed"}}')


if __name__ == "__main__":  # pragma: no cover
    run()
