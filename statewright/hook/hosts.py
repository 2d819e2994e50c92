"""Hosts other than Claude Code: Codex, Gemini CLI, Copilot CLI (DESIGN section 5, "Hosts").

One workflow governs every host: each host's own tool names map onto the names workflows use
(`Bash`, `Edit`, `Write`, `Read`, ...) by `TOOL_MAP`, one table, as data; each host's hook
JSON is read into a `ToolCall` by its module (`statewright.hook.codex`, `.gemini`,
`.copilot`), the same `Runtime` decides, and the module words the `Decision` in the host's own
answer form. The runtime never learns which host asked.

Invoked as `statewright-hook --host=NAME EVENT` (the host's own event name, or ours), or
through the proxy's hook tool with `"host": NAME` in its input (Codex's `mcp_tool` hooks).

- A host tool the map does not know is refused in a state with rules it could get around,
  with a reason naming the host (`runtime.batch.authorize_unnamed`); elsewhere it is decided (and
  counted) by its own name.
- A patch (`apply_patch`) is judged as the edits it makes (`statewright.hook.patch`), all or
  nothing (`runtime.batch.authorize_all`), and its result is recorded per file (interrupts).
- A rewritten input (`Decision.updated_input`: blocked variables removed, `env_overrides`
  exported, the caller's session for the statewright CLI, the kernel tier's launcher) is
  passed back in the host's form, mapped back to the host's own argument names; a host (or a
  tool of a host) that cannot take a rewritten input gets a refusal instead: a line the
  policy rewrote never runs as it was written (fail closed).

Start-up cost matters as for the Claude Code hook: stdlib and our pure layers only.
"""

from __future__ import annotations

from ..lean import TYPE_CHECKING
from ..lean import dumps as _json_dumps
from ..names import (
    POST_TOOL_USE,
    PRE_TOOL_USE,
    SESSION_START,
    STOP,
    USER_PROMPT_SUBMIT,
    normalize_event,
)

if TYPE_CHECKING:  # pragma: no cover
    from typing import Any

HOST_ARG = "--host="
HOSTS = ("codex", "gemini", "copilot")
#: the name workflows use for a file-editing patch (judged as the edits it makes)
PATCH = "apply_patch"

#: host -> the host's tool name (as its hook reports it) -> (the name workflows use, {the
#: host's argument name: the workflow's}). Arguments not renamed keep their names.
#: `PATCH` as the workflow's name: a patch, judged as the `Edit`/`Write` calls it makes.
TOOL_MAP: dict[str, dict[str, tuple[str, dict[str, str]]]] = {
    "codex": {
        # (Codex reports its shell tools, exec_command / shell / local_shell, as Bash)
        "Bash": ("Bash", {}),
        "apply_patch": (PATCH, {"command": "patch"}),
        "write_stdin": ("Bash", {"chars": "command"}),
        "view_image": ("Read", {"path": "file_path"}),
        "update_plan": ("TodoWrite", {}),
        "web_search": ("WebSearch", {}),
        "request_user_input": ("AskUserQuestion", {}),
        # sub-agents (the `collaboration` namespace, as the hook names its tools)
        "collaborationspawn_agent": ("Agent", {}),
        "collaborationwait_agent": ("Agent", {}),
        "collaborationsend_message": ("Agent", {}),
        "collaborationfollowup_task": ("Agent", {}),
        "collaborationlist_agents": ("Agent", {}),
        "collaborationinterrupt_agent": ("Agent", {}),
        "spawn_agent": ("Agent", {}),
        "wait_agent": ("Agent", {}),
        "get_goal": ("TodoWrite", {}),
        "create_goal": ("TodoWrite", {}),
        "update_goal": ("TodoWrite", {}),
    },
    "gemini": {
        "run_shell_command": ("Bash", {"dir_path": "cwd", "is_background": "run_in_background"}),
        "write_file": ("Write", {}),
        # (`allow_multiple`, older `expected_replacements`: every occurrence is replaced)
        "replace": ("Edit", {"allow_multiple": "replace_all",
                             "expected_replacements": "replace_all"}),
        "read_file": ("Read", {"absolute_path": "file_path"}),
        # (its `include`: paths and globs of the files it reads, several at once)
        "read_many_files": ("Read", {"include": "paths"}),
        "list_directory": ("LS", {"dir_path": "path"}),
        "glob": ("Glob", {"dir_path": "path"}),
        "grep_search": ("Grep", {"dir_path": "path", "include": "glob",
                                 "include_pattern": "glob"}),
        "search_file_content": ("Grep", {"dir_path": "path", "include": "glob",
                                         "include_pattern": "glob"}),
        "web_fetch": ("WebFetch", {}),
        "google_web_search": ("WebSearch", {}),
        "write_todos": ("TodoWrite", {}),
        "invoke_agent": ("Agent", {}),
        "list_background_processes": ("BashOutput", {}),
        "read_background_output": ("BashOutput", {}),
        "update_topic": ("TodoWrite", {}),
        "enter_plan_mode": ("ExitPlanMode", {}),
        "activate_skill": ("Skill", {}),
    },
    "copilot": {
        "bash": ("Bash", {"async": "run_in_background"}),
        # typing into a running shell runs what it types: judged as a line
        "write_bash": ("Bash", {"input": "command"}),
        "read_bash": ("BashOutput", {}),
        "list_bash": ("BashOutput", {}),
        "stop_bash": ("KillShell", {}),
        "view": ("Read", {"path": "file_path"}),
        "create": ("Write", {"path": "file_path", "file_text": "content"}),
        "edit": ("Edit", {"path": "file_path", "old_str": "old_string", "new_str": "new_string"}),
        "str_replace": ("Edit", {"path": "file_path", "old_str": "old_string",
                                 "new_str": "new_string"}),
        "apply_patch": (PATCH, {"input": "patch", "patch": "patch"}),
        "grep": ("Grep", {}),
        "rg": ("Grep", {}),
        "glob": ("Glob", {}),
        "web_fetch": ("WebFetch", {}),
        "task": ("Agent", {}),
        "read_agent": ("Agent", {}),
        "list_agents": ("Agent", {}),
        "write_agent": ("Agent", {}),
        "update_todo": ("TodoWrite", {}),
        "report_intent": ("TodoWrite", {}),
        "think": ("TodoWrite", {}),
        "skill": ("Skill", {}),
        "fetch_copilot_cli_documentation": ("WebFetch", {}),
    },
}


#: host -> the host's tool name -> (argument, value): the call leaves its work running after it
#: returns, as `run_in_background` does (read as `run_in_background: true`)
BACKGROUND: dict[str, dict[str, tuple[str, str]]] = {
    "copilot": {"bash": ("mode", "async")},
}


class ArgumentClash(ValueError):
    """Two of a host call's arguments are one argument under the workflow's names (`path` and
    `file_path` of Copilot CLI's `create`): which one the host uses is the host's to say, so
    the call is refused rather than judged by the other."""


def host_of(args: list[str]) -> str | None:
    """The host named by `--host=NAME` as the first argument, else None (Claude Code)."""
    if args and args[0].startswith(HOST_ARG):
        return args[0][len(HOST_ARG):]
    return None


def adapter(host: str) -> Any:
    """The module of `host` (KeyError for a host statewright does not know)."""
    if host not in HOSTS:
        raise KeyError(host)
    import sys

    name = f"{__package__}.{host}"
    __import__(name)  # (not `importlib`: it costs the hook `warnings` and more)
    return sys.modules[name]


def dump(obj: dict[str, Any]) -> str:
    return _json_dumps(obj, ensure_ascii=True)


class Mapped:
    """A host's tool call in the workflow's terms."""

    __slots__ = ("args", "inverse", "known", "name", "raw")

    def __init__(self, raw: str, name: str, args: dict[str, Any], inverse: dict[str, str],
                 known: bool) -> None:
        self.raw = raw  # the host's name
        self.name = name  # the workflow's name (the host's own when unknown)
        self.args = args  # the arguments under the workflow's names
        self.inverse = inverse  # workflow argument -> host argument
        self.known = known


def map_tool(host: str, raw: str, args: dict[str, Any],
             mcp: tuple[str, str] | None = None) -> Mapped:
    """The workflow's view of a host call. `mcp`: (server, tool) when the host says the call
    goes to an MCP server: then the name is `mcp__<server>__<tool>`, as workflows name it."""
    if mcp is not None:
        return Mapped(raw, f"mcp__{mcp[0]}__{mcp[1]}", args, {}, True)
    if raw.startswith("mcp__"):
        return Mapped(raw, raw, args, {}, True)
    entry = TOOL_MAP[host].get(raw)
    if entry is None:
        return Mapped(raw, raw, args, {}, False)
    name, renames = entry
    out: dict[str, Any] = {}
    for k, v in args.items():
        w = renames.get(k, k)
        if w in out:
            if isinstance(v, list) and isinstance(out[w], list):
                out[w] = out[w] + v  # (two lists of paths: every one is judged)
                continue
            first = next(a for a in args if renames.get(a, a) == w)
            raise ArgumentClash(f"{host}'s `{raw}` was given both `{first}` and `{k}`, which "
                                f"are one argument (`{w}`) to statewright")
        out[w] = v
    background = BACKGROUND.get(host, {}).get(raw)
    if background is not None and out.get(background[0]) == background[1]:
        out["run_in_background"] = True
    return Mapped(raw, name, out, {v: k for k, v in renames.items()}, True)


def host_args(m: Mapped, updated: dict[str, Any], original: dict[str, Any]) -> dict[str, Any]:
    """A rewritten input (workflow names) back in the host's argument names, over the
    host's original arguments."""
    out = dict(original)
    for k, v in updated.items():
        k = m.inverse.get(k, k)
        if k in _SYNTHETIC and k not in original:
            continue
        out[k] = v
    return out


#: arguments `map_tool` may add that the host never had (not given back to it)
_SYNTHETIC = frozenset({"run_in_background"})


def unknown_reason(host: str, raw: str) -> str:
    return (f"{host} tool `{raw}` is not in statewright's map of {host}'s tools, so no rule of "
            "this state can be checked on it. Use the host's shell, file and edit tools, or "
            "ask a human to add the tool to the map")


# -- one event ---------------------------------------------------------------------------------

def handle(host: str, args: list[str], raw: bytes | None, opener: Any = None) -> str:
    """`statewright-hook --host=NAME EVENT` (args: the rest): the text to print."""
    from .handlers import open_runtime, parse_input

    data, problem = parse_input(raw)
    name = args[0] if args else (data or {}).get("hook_event_name")
    return dispatch(host, name, data, problem, opener or open_runtime)


def dispatch(host: str, name: Any, data: dict[str, Any] | None, problem: Exception | None,
             opener: Any) -> str:
    """Answer the host's event `name` whose input is `data` (None, and `problem`, when it
    could not be read): the text to print ('' for nothing). Never raises."""
    mod = adapter(host)
    event = mod.EVENTS.get(name) if isinstance(name, str) else None
    if event is None:
        event = normalize_event(name)
    if event is None:
        return mod.deny(f"statewright-hook: unknown {host} hook event {name!r}; the call is "
                        "refused (fail closed)")
    if problem is not None or data is None:
        return failure(mod, event, problem or ValueError("no hook input"), data, opener)
    try:
        return _EVENTS[event](mod, data, opener)
    except BaseException as exc:
        return failure(mod, event, exc, data, opener)


def failure(mod: Any, event: str, exc: BaseException, data: dict[str, Any] | None,
            opener: Any) -> str:
    """The answer when the hook could not decide: the runtime's `failure_decision` (a
    refusal, or nothing under `fail_open`) in the host's form; other events get nothing
    (they never block) but a PreToolUse-like refusal."""
    from ..runtime.enforcement import describe_exception, failure_decision

    try:
        rt = opener(data if isinstance(data, dict) else None)
    except BaseException:
        rt = None
    decision = failure_decision(rt, exc)
    if event != PRE_TOOL_USE or decision.allowed:
        return ""
    return mod.deny(decision.reason or
                    f"statewright could not decide this call ({describe_exception(exc)})")


def pre_tool_use(mod: Any, data: dict[str, Any], opener: Any) -> str:
    from ..policy.types import ToolCall
    from .handlers import _note_agent_call, with_caller_session

    session, agent_key = mod.session(data)
    raw, original, mcp = mod.tool(data)
    try:
        m = map_tool(mod.NAME, raw, original, mcp)
    except ArgumentClash as exc:
        return mod.deny(f"statewright refused this call: {exc}. Give the argument once")
    rt = opener(data)
    cwd = call_cwd(mod.cwd(data), m)
    if rt.gated_by_proxy(m.name):
        if agent_key != session:
            _note_agent_call({**data, "session_id": session}, agent_key, m.name, m.args, opener)
        return ""
    key = agent_key
    if not m.known:
        from ..runtime.batch import authorize_unnamed

        d = authorize_unnamed(rt, rt.resolve_session(key), ToolCall(m.name, m.args, mod.NAME,
                                                                     cwd),
                              unknown_reason(mod.NAME, raw))
    elif m.name == PATCH:
        from .patch import PatchError, patch_edits

        try:
            edits = patch_edits(m.args.get("patch"))
        except PatchError as exc:
            return mod.deny(f"statewright refused the {mod.NAME} patch: {exc}; it judges every "
                            "edit, and could not read this one")
        from ..runtime.batch import authorize_all

        d = authorize_all(rt, rt.resolve_session(key),
                          [ToolCall(n, a, mod.NAME, cwd) for n, a in edits])
    else:
        d = rt.authorize(key, ToolCall(m.name, m.args, mod.NAME, cwd))
    if not d.allowed:
        return mod.deny(d.reason or "statewright: refused")
    updated = with_caller_session(m.name, d.updated_input or m.args, key) or d.updated_input
    if m.raw in getattr(mod, "PINNED_CWD_TOOLS", ()) and cwd is not None:
        # the host may run the line elsewhere than the hook is told (Codex's `workdir` is not
        # in its hook input): the line runs where it was judged, or not at all
        base = updated if updated is not None else m.args
        if isinstance(base.get("command"), str):
            updated = {**base, "command": f"cd -- {_quote(cwd)} || exit 1\n{base['command']}"}
    if updated is None:
        return ""
    out = mod.rewrite(m, host_args(m, updated, original))
    if out is None:
        return mod.deny(f"statewright must run this {m.name} call rewritten (its environment "
                        f"scrubbed or confined), and {mod.NAME} cannot take a rewritten "
                        f"`{raw}` call, so it is refused rather than run as written")
    return out


def call_cwd(cwd: str | None, m: Mapped) -> str | None:
    """The directory a call runs in: the host's working directory, or the one the call names
    (Gemini CLI's `dir_path`, read as `cwd`), resolved against it."""
    named = m.args.get("cwd") if m.name == "Bash" else None
    if isinstance(named, str) and named.strip():
        import os

        return os.path.normpath(os.path.join(cwd or ".", named))
    return cwd


def _quote(text: str) -> str:
    return "'" + text.replace("'", "'\"'\"'") + "'"


def post_tool_use(mod: Any, data: dict[str, Any], opener: Any) -> str:
    from ..policy.types import OUTPUT_TAIL, ToolResult

    _session, key = mod.session(data)
    raw, original, mcp = mod.tool(data)
    m = map_tool(mod.NAME, raw, original, mcp)
    rt = opener(data)
    if rt.gated_by_proxy(m.name):
        return ""
    size, failed, code = mod.outcome(data, m.name)
    cwd = call_cwd(mod.cwd(data), m)
    # what a shell line printed: read for the kernel's refusals, which the agent is told about
    printed = mod.printed(data) if m.name == "Bash" else None
    output = printed[-OUTPUT_TAIL:] if isinstance(printed, str) else ""
    results = [(m.name, m.args)]
    if m.name == PATCH:
        from .patch import PatchError, patch_edits

        try:
            results = patch_edits(m.args.get("patch"))
        except PatchError:
            results = [(m.name, m.args)]
    messages: list[str] = []
    for i, (name, inp) in enumerate(results):
        outcome = rt.record(key, ToolResult(name, inp, size if i == 0 else 0, failed, cwd,
                                            code if i == 0 else None, output))
        messages += outcome.messages
    if not messages:
        return ""
    return mod.context(POST_TOOL_USE, "\n\n".join(messages))


def session_context(event: str) -> Any:
    def handler(mod: Any, data: dict[str, Any], opener: Any) -> str:
        _session, key = mod.session(data)
        text = opener(data).briefing(key)
        return mod.context(event, text) if text else ""

    return handler


def stop(mod: Any, data: dict[str, Any], opener: Any) -> str:
    _session, key = mod.session(data)
    if data.get("stop_hook_active") is True:
        return ""
    reason = opener(data).stop_reminder(key)
    return mod.stop(reason) if reason else ""


_EVENTS: dict[str, Any] = {
    PRE_TOOL_USE: pre_tool_use, POST_TOOL_USE: post_tool_use,
    SESSION_START: session_context(SESSION_START),
    USER_PROMPT_SUBMIT: session_context(USER_PROMPT_SUBMIT), STOP: stop}


# -- helpers for the host modules ---------------------------------------------------------------

def text_of(value: Any) -> str | None:
    return value if isinstance(value, str) and value.strip() else None


def session_keys(host: str, sid: Any, agent: Any = None) -> tuple[str, str]:
    """(the host session's key, the key this call is resolved by: the session's, or inside a
    sub-agent its own). Keys carry the host's name: `codex:<session id>`."""
    from .handlers import HookInputError

    if not isinstance(sid, str) or not sid.strip():
        raise HookInputError(f"the {host} hook input has no session id")
    session = f"{host}:{sid}"
    if isinstance(agent, str) and agent.strip():
        from ..runtime.chain import agent_key

        return session, agent_key(session, agent)
    return session, session


def response_size(value: Any) -> int:
    from .handlers import response_size as size

    return size(value)


def fallback_deny(host: str) -> str:
    """A refusal in the host's form built from constants (`statewright.hook.emit` prints it
    when the decision itself cannot be written)."""
    try:
        return adapter(host).deny("statewright: the hook could not write its decision, so the "
                                  "call is refused (statewright fails closed)")
    except BaseException:
        return ""


def host_event(args: list[str]) -> str | None:
    """Our name of the event in `--host=NAME EVENT` (None: unknown)."""
    try:
        mod = adapter(args[0][len(HOST_ARG):])
    except KeyError:
        return None
    name = args[1] if len(args) > 1 else None
    if name is None:
        return None
    return mod.EVENTS.get(name) or normalize_event(name)


#: seconds a host's hook process may take before it answers a refusal by itself: well under
#: the timeout `statewright install` writes for every host (`HOOK_TIMEOUT_S`), since a host
#: that stops waiting lets the call through (Codex, Gemini CLI, Copilot CLI all do)
DEADLINE_S = 20.0
HOOK_TIMEOUT_S = 30


#: `STATEWRIGHT_HOOK_DEADLINE=S`: another deadline (tests; a host configured with a shorter
#: timeout than the installer writes)
DEADLINE_ENV = "STATEWRIGHT_HOOK_DEADLINE"


def arm_deadline(args: list[str], seconds: float | None = None,
                 until: float | None = None) -> None:
    """Refuse the call (in the host's form) and end the process if no answer is written
    within `seconds`: a store held by another writer (SQLite waits up to 30 s), a resident
    server that stopped answering. A watchdog thread (`_thread`: no `threading` import) does
    it, since the main thread may be blocked inside SQLite or a socket, where no signal
    handler runs. Only a PreToolUse-like event refuses; the others end with nothing to say.
    `until` (seconds since the epoch): a deadline armed earlier (by the native client, which
    handed the event over); past it the refusal is written at once."""
    import os
    import time

    from ..lean import start_thread

    if seconds is None:
        try:
            seconds = float(os.environ.get(DEADLINE_ENV) or DEADLINE_S)
        except ValueError:
            seconds = DEADLINE_S
        if not 0 < seconds <= DEADLINE_S:  # (never later than the default: nan, inf, 0 too)
            seconds = DEADLINE_S
    deny = fallback_deny(args[0][len(HOST_ARG):]) if host_event(args) in (
        None, "PreToolUse") else ""
    text = (deny.replace("could not write its decision", "did not decide in time") + "\n"
            ).encode("ascii") if deny else b""
    if until is not None:
        seconds = min(seconds, until - time.time())
        if seconds <= 0:  # (the deadline passed before this process could decide)
            if _ANSWER.acquire(False):
                if text:
                    os.write(1, text)
                os._exit(0)
            return

    def watchdog() -> None:
        time.sleep(seconds)
        if not _ANSWER.acquire(False):
            return  # the answer is being written
        try:
            if text:
                os.write(1, text)
        finally:
            os._exit(0)

    start_thread(watchdog, ())


def claim_answer() -> bool:
    """Called before the hook writes its answer: False when the deadline already answered
    (the process is ending; write nothing)."""
    return _ANSWER.acquire(False)


def _new_lock() -> Any:
    from ..lean import new_lock

    return new_lock()


#: held by whoever writes the answer: the hook, or the deadline's watchdog
_ANSWER = _new_lock()
