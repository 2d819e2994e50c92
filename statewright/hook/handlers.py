"""Claude Code hook events -> runtime calls -> Claude Code hook answers.

Thin on purpose: every rule lives in `statewright.runtime` / `statewright.policy`; this module
only validates the hook input, picks the session and project, and words the answer in Claude
Code's contract (see `statewright.hook` and docs/hooks.md).

Session choice: the session is the input's `session_id`. Inside a sub-agent Claude Code adds an
`agent_id`: the call is resolved by the sub-agent's own key (`runtime.chain.agent_key`), which
until the sub-agent binds itself to a parallel fork branch resolves to its session's run: it
works for the same run, under the same state's rules and counters, so spawning a sub-agent
cannot be used to escape a state. Once bound (`statewright_fork(branch)`, or `statewright fork
BRANCH` through its shell), its calls obey the branch's rules.

The CLI run through the agent's shell cannot see the hook input, so a Bash line that runs
`statewright` gets the caller's key exported as `STATEWRIGHT_SESSION` (`updatedInput`, which
grants nothing): `statewright fork BRANCH` run by a sub-agent binds that sub-agent, and
`statewright transition` fires on the run whose rules the caller obeys.
"""

from __future__ import annotations

from ..lean import dumps as _json_dumps
from ..lean import loads as _json_loads
from ..names import (
    POST_TOOL_USE,
    POST_TOOL_USE_FAILURE,
    PRE_TOOL_USE,
    SESSION_START,
    STOP,
    USER_PROMPT_SUBMIT,
    normalize_event,
)

_EVENT_LIST = ("pre-tool-use, post-tool-use, post-tool-use-failure, session-start, "
               "user-prompt-submit, stop")


class HookInputError(Exception):
    """The hook input is not what Claude Code sends."""


def handle(args: list[str], raw: bytes | None, opener=None) -> str:
    """One Claude Code hook invocation (`statewright.hook.handle` sends another host's to
    `hosts`): returns the text to print on stdout ('' for nothing). `opener` as for
    `dispatch` (the resident hook server passes its own)."""
    data, problem = parse_input(raw)
    if args:
        event = normalize_event(args[0])
        if event is None:
            return deny_json(f"statewright-hook: unknown hook event {args[0]!r} (expected one of "
                             f"{_EVENT_LIST}); the call is refused (fail closed)")
    else:
        event = normalize_event(data.get("hook_event_name") if data else None)
        if event is None:
            what = (data or {}).get("hook_event_name")
            return deny_json("statewright-hook: no hook event given (pass one of "
                             f"{_EVENT_LIST}, or send hook_event_name; got {what!r}); "
                             "the call is refused (fail closed)")
    if problem is not None or data is None:
        return failure_output(event, problem or HookInputError("no hook input"), data, opener)
    return dispatch(event, data, opener)


def preload() -> None:
    """Import what a decision needs, a shell line's parser included: a long-running process
    (the resident hook server, `statewright serve`'s early lane) does it before it answers, and
    before any other thread imports (two threads importing the same modules at once can be
    handed one half-initialised: Python's answer to a circular import between threads)."""
    from ..policy.gate import gate  # noqa: F401  (imported for its side: loaded)
    from ..policy.shell import analyze
    from ..runtime import Runtime  # noqa: F401

    analyze("true")


def dispatch(event: str, data: dict, opener=None) -> str:
    """Answer one hook event whose input is already a dict: the text to print ('' for
    nothing). `opener(data)` gives the runtime that decides (default: open the project's);
    the proxy's hook tool passes its own. Never raises: a failure is `failure_output`."""
    opener = opener or open_runtime
    try:
        return _HANDLERS[event](data, opener)
    except BaseException as exc:
        return failure_output(event, exc, data, opener)


def parse_input(raw: bytes | None) -> tuple[dict | None, HookInputError | None]:
    if not raw or not raw.strip():
        return None, HookInputError("the hook received no input on stdin "
                                    "(expected Claude Code's hook JSON)")
    try:
        data = _json_loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        return None, HookInputError(f"the hook input is not valid JSON ({exc})")
    if not isinstance(data, dict):
        return None, HookInputError("the hook input must be a JSON object, "
                                    f"not {type(data).__name__}")
    return data, None


def _session(data: dict) -> str:
    """The key the call is resolved by: the session, or inside a sub-agent its own key."""
    sid = data.get("session_id")
    if not isinstance(sid, str) or not sid.strip():
        raise HookInputError("the hook input has no session_id")
    agent = data.get("agent_id")
    if isinstance(agent, str) and agent.strip():
        from ..runtime.chain import agent_key

        return agent_key(sid, agent)
    return sid


def _cwd(data: dict) -> str | None:
    cwd = data.get("cwd")
    return cwd if isinstance(cwd, str) and cwd else None


def _call_id(data: dict) -> str | None:
    """Claude Code's id of the tool call, the same in its PreToolUse and its PostToolUse."""
    cid = data.get("tool_use_id")
    return cid if isinstance(cid, str) and cid else None


def _tool(data: dict) -> tuple[str, dict]:
    name = data.get("tool_name")
    if not isinstance(name, str) or not name:
        raise HookInputError("the hook input has no tool_name")
    inp = data.get("tool_input")
    if not isinstance(inp, dict):
        raise HookInputError(f"tool_input of {name} must be a JSON object")
    return name, inp


def open_runtime(data: dict | None):
    """The runtime for this hook call: project root = $CLAUDE_PROJECT_DIR, else the input's
    `cwd` resolved per DESIGN section 5."""
    from ..runtime import Runtime

    return Runtime.open(project=None, cwd=_cwd(data or {}))


# -- events ------------------------------------------------------------------------------------

def _runtime_unless_proxy(name: str, data: dict, opener):
    """The runtime that decides this call, or None when statewright's proxy gates and accounts
    it itself (its own tools and the ones it forwards)."""
    rt = opener(data)
    return None if rt.gated_by_proxy(name) else rt


def pre_tool_use(data: dict, opener) -> str:
    session = _session(data)
    name, inp = _tool(data)
    rt = _runtime_unless_proxy(name, data, opener)
    if rt is None:
        if session != data.get("session_id"):
            _note_agent_call(data, session, name, inp, opener)
        return ""
    from ..policy.types import ToolCall

    decision = rt.authorize(session, ToolCall(tool_name=name, tool_input=inp, source="claude",
                                              cwd=_cwd(data), call_id=_call_id(data)))
    if not decision.allowed:
        return deny_json(decision.reason or "statewright: refused")
    updated = (with_caller_session(name, decision.updated_input or inp, session)
               or decision.updated_input)
    if updated is not None:
        # the rewritten input alone, with no permission decision: the host's own rules and
        # prompts still apply to the call (statewright only narrows what the host allows)
        return _dump({"hookSpecificOutput": {"hookEventName": PRE_TOOL_USE,
                                             "updatedInput": updated}})
    return ""


def _note_agent_call(data: dict, key: str, name: str, inp: dict, opener) -> None:
    """A sub-agent calls one of statewright's own tools: the proxy answering it will see only
    the session, so leave it the sub-agent's key (`Runtime.note_agent_call`)."""
    from ..policy.tools import is_statewright_tool

    sid = data.get("session_id")
    if isinstance(sid, str) and is_statewright_tool(name):
        opener(data).note_agent_call(sid, key, name, inp)


def with_caller_session(name: str, inp: dict, session: str) -> dict | None:
    """A Bash input whose line runs statewright's CLI, with `STATEWRIGHT_SESSION` exported as
    the caller's key first; None for any other input (left as it is)."""
    command = inp.get("command") if name == "Bash" else None
    if not isinstance(command, str) or "statewright" not in command:
        return None
    quoted = "'" + session.replace("'", "'\"'\"'") + "'"
    return {**inp, "command": f"export STATEWRIGHT_SESSION={quoted}\n{command}"}


def post_tool_use(data: dict, opener, event: str = POST_TOOL_USE) -> str:
    session = _session(data)
    name, inp = _tool(data)
    rt = _runtime_unless_proxy(name, data, opener)
    if rt is None:
        return ""  # the proxy accounted the result
    from ..policy.types import OUTPUT_TAIL, ToolResult

    if event == POST_TOOL_USE_FAILURE:  # no tool_response: the host sends `error` (text)
        error = data.get("error")
        size = response_size(error)
        failed, code = True, failure_exit_code(name, error)
        output = error if name == "Bash" and isinstance(error, str) else ""
    else:
        response = data.get("tool_response")
        size = response_size(response)
        failed, code = success_status(name, inp, response)
        output = shell_output(name, response)
    outcome = rt.record(session, ToolResult(tool_name=name, tool_input=inp, output_bytes=size,
                                            is_error=failed, cwd=_cwd(data), exit_code=code,
                                            output=output[-OUTPUT_TAIL:],
                                            call_id=_call_id(data)))
    if not outcome.messages:
        return ""
    return context_json(event, "\n\n".join(outcome.messages))


def post_tool_use_failure(data: dict, opener) -> str:
    return post_tool_use(data, opener, POST_TOOL_USE_FAILURE)


def shell_output(name: str, response) -> str:
    """What a Bash line printed, as Claude Code reports it (`stdout`, `stderr`)."""
    if name != "Bash" or not isinstance(response, dict):
        return ""
    out, err = response.get("stdout"), response.get("stderr")
    return (out if isinstance(out, str) else "") + "\n" + (err if isinstance(err, str) else "")


def success_status(name: str, inp: dict, response) -> tuple[bool, int | None]:
    """(failed, exit code) of a PostToolUse result. Claude Code reports a Bash line that exited
    non-zero as PostToolUseFailure, except for programs whose non-zero status it reads as an
    answer (`grep` finding nothing): then `returnCodeInterpretation` is set, and the line did
    not exit 0. An interrupted line failed; a background one has no status yet."""
    if _is_error(response):
        return True, None
    if name != "Bash":
        return False, None
    if not isinstance(response, dict):
        return False, None  # not the shape Claude Code reports: the status is unknown
    if response.get("interrupted") is True or response.get("returnCodeInterpretation"):
        return True, None
    if inp.get("run_in_background") is True or response.get("backgroundTaskId"):
        return False, None
    return False, 0


def failure_exit_code(name: str, error) -> int | None:
    """The exit status in a PostToolUseFailure's `error` for Bash: Claude Code's text starts
    with `Exit code N` (before the command's own output); None when it does not."""
    if name != "Bash" or not isinstance(error, str):
        return None
    head = error[:40]
    if head.startswith("Error: "):
        head = head[7:]
    if not head.startswith("Exit code "):
        return None
    digits = ""
    for ch in head[10:]:
        if not ch.isdigit():
            break
        digits += ch
    return int(digits) if digits else None


def session_context(event: str):
    def handler(data: dict, opener) -> str:
        session = _session(data)
        text = opener(data).briefing(session)
        return context_json(event, text) if text else ""

    return handler


def stop(data: dict, opener) -> str:
    session = _session(data)
    if data.get("stop_hook_active") is True:
        return ""  # already continuing because of a Stop hook: never loop
    reason = opener(data).stop_reminder(session)
    if not reason:
        return ""
    return _dump({"decision": "block", "reason": reason})


_HANDLERS = {
    PRE_TOOL_USE: pre_tool_use,
    POST_TOOL_USE: post_tool_use,
    POST_TOOL_USE_FAILURE: post_tool_use_failure,
    SESSION_START: session_context(SESSION_START),
    USER_PROMPT_SUBMIT: session_context(USER_PROMPT_SUBMIT),
    STOP: stop,
}


# -- output ------------------------------------------------------------------------------------

def _dump(obj: dict) -> str:
    # ASCII only: whatever a refusal quotes (odd characters, lone surrogates), the answer can be
    # written to any stdout encoding, so printing a refusal cannot fail on the text itself
    return _json_dumps(obj, ensure_ascii=True)


def deny_json(reason: str) -> str:
    return _dump({"hookSpecificOutput": {"hookEventName": PRE_TOOL_USE,
                                         "permissionDecision": "deny",
                                         "permissionDecisionReason": reason}})


def context_json(event: str, text: str) -> str:
    return _dump({"hookSpecificOutput": {"hookEventName": event, "additionalContext": text}})


def response_size(response) -> int:
    """Bytes of the tool result the agent received (UTF-8 of the text, or of its JSON)."""
    if response is None:
        return 0
    if isinstance(response, str):
        return len(response.encode("utf-8", "replace"))
    return len(_json_dumps(response, ensure_ascii=False).encode("utf-8", "replace"))


def _is_error(response) -> bool:
    return isinstance(response, dict) and (response.get("isError") is True
                                           or response.get("is_error") is True)


def failure_output(event: str, exc: BaseException, data: dict | None, opener=None) -> str:
    """The answer when the hook could not do its job: the runtime's `failure_decision` (a
    refusal with the cause, or an allow under `fail_open`), worded for `event`."""
    from ..runtime.enforcement import describe_exception, failure_decision

    try:
        rt = (opener or open_runtime)(data if isinstance(data, dict) else None)
    except BaseException:
        rt = None  # no runtime, no trusted config: failure_decision then fails closed
    decision = failure_decision(rt, exc)
    cause = describe_exception(exc)
    if decision.allowed:
        if event == PRE_TOOL_USE:
            return ""
        return _dump({"systemMessage": f"statewright hook failed ({cause}); fail_open is set, "
                                       "so nothing is enforced"})
    if event == PRE_TOOL_USE:
        return deny_json(decision.reason or f"statewright could not decide this call ({cause})")
    msg = (f"statewright hook failed ({cause}). Until this is fixed, statewright refuses tool "
           "calls in this project (it fails closed).")
    if event in (SESSION_START, USER_PROMPT_SUBMIT, POST_TOOL_USE, POST_TOOL_USE_FAILURE):
        return _dump({"systemMessage": msg, "hookSpecificOutput": {"hookEventName": event,
                                                                   "additionalContext": msg}})
    return _dump({"systemMessage": msg})  # Stop: never trap the agent on a broken store
