"""Tool-call enforcement and accounting for every front end (DESIGN.md section 4).

`authorize(rt, session, call)` decides one tool call in ONE store transaction (BEGIN
IMMEDIATE): it finds the session's effective run, gathers the facts the pure `policy.gate`
needs (counters, protected files, shell tools, the events available now, a real file reader),
decides, and accounts the decision (counters + a `tool_allowed` / `tool_denied` history row).
Reading and writing under the same write lock means two processes deciding at once can never
both pass a limit that only one of them may use. One-off costs (the tree-sitter import and
parse of a shell line) are paid before the lock is taken (`_warm`).

`record(rt, session, result)` accounts what an allowed call did, also in one transaction:
tool-result bytes, files changed (which may fire an interrupt), and returns the messages the
agent must read (`[STATEWRIGHT INTERRUPT] ...`, budget warnings).

Every other helper here turns runtime facts into the plain statements front ends show the agent
(`briefing`, `stop_reminder`), so the hook and the proxy word things the same way.

Stdlib + our pure layers only: this module is on the hook's start-up path.
"""

from __future__ import annotations

import os

from ..engine.run import RUNNING
from ..errors import StatewrightError
from ..policy.types import Counters, Decision, GateContext, ToolCall, ToolResult

STOP_REMINDERS_PER_STATE = 3
# fraction of a budget after which PostToolUse warns the agent
WARN_AT = 0.8


class RecordOutcome:
    """What `record` did, and what the agent must be told about it. (A plain class: building a
    dataclass costs milliseconds at import, and this module is on every hook's start-up path.)"""

    __slots__ = ("bytes_read", "interrupts", "messages", "warnings")

    def __init__(self, messages: list[str] | None = None, interrupts: list[dict] | None = None,
                 bytes_read: int = 0, warnings: list[str] | None = None) -> None:
        self.messages = messages or []  # interrupts first, then budget warnings
        self.interrupts = interrupts or []  # [{file, interrupt, state, return_to}]
        self.bytes_read = bytes_read  # the state's byte total after this result
        self.warnings = warnings or []

    def __repr__(self) -> str:
        return (f"RecordOutcome(messages={self.messages!r}, interrupts={self.interrupts!r}, "
                f"bytes_read={self.bytes_read!r}, warnings={self.warnings!r})")


# -- authorize ---------------------------------------------------------------------------------

def authorize(rt, session: str, call: ToolCall) -> Decision:
    """Decide `call` for `session` and account it. Never raises: a failure is a refusal with its
    cause (fail closed), or an allow when the project config sets `fail_open`."""
    try:
        return _decide(rt, session, call, account=True)
    except BaseException as exc:
        return failure_decision(rt, exc)


def explain(rt, session: str, call: ToolCall) -> tuple[Decision, object | None, object | None]:
    """Dry run for `statewright check`: the decision, the effective run and its workflow, with
    no accounting. Errors propagate (the CLI reports them)."""
    eff = effective(rt, session)
    if eff is None:
        return (Decision.allow(rule="no_active_run", reason="no running workflow for this session",
                               counts_iteration=False), None, None)
    run, wf = eff
    return _decide(rt, session, call, account=False, eff=eff), run, wf


def effective(rt, session: str):
    """The session's effective (run, workflow), or None. A project without a store file has no
    runs: nothing is created on disk for it (a user-scope install touches every project)."""
    if not os.path.exists(rt.config.store_file):
        return None
    return rt.effective_run(session)


def failure_decision(rt, exc: BaseException) -> Decision:
    cause = describe_exception(exc)
    fail_open = False
    try:
        fail_open = bool(rt is not None and rt.config.fail_open)
    except BaseException:
        fail_open = False
    if fail_open:
        return Decision.allow(rule="fail_open", counts_iteration=False,
                              reason=f"statewright could not decide ({cause}); allowed because fail_open is set")
    return Decision.deny(
        f"statewright could not decide this call ({cause}), so it is refused: statewright fails "
        "closed. A human can inspect the project with `statewright status`.",
        rule="fail_closed")


def describe_exception(exc: BaseException) -> str:
    if isinstance(exc, StatewrightError):
        return f"{exc.code}: {exc.message}"
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def counters_of(run) -> Counters:
    return Counters(iterations=run.iterations, files_edited=frozenset(run.files_edited),
                    bytes_read=run.bytes_read, denied=run.denied)


def gate_context(rt, session: str, state, protected=None) -> GateContext:
    """The gate's facts. `protected`: the workflow files in use, when the caller already read
    them (inside its transaction); else they are read here."""
    root = rt.root_dir
    if protected is None:
        protected = rt.protected_files(session)
    return GateContext(
        project_root=root,
        store_dir=rt.config.store_dir_str,
        protected_files=frozenset(protected),
        shell_tools=dict(rt.config.shell_tools),
        events=available_events(state),
        read_text=file_reader(root),
    )


def available_events(state) -> tuple[str, ...]:
    return tuple(e for e in state.on if not e.startswith("BRANCH_DONE:"))


def file_reader(root: str):
    """`read_text(path)` for the gate: the current text of a file (absolute, or relative to the
    project root), or None when there is no such file."""

    def read_text(path: str) -> str | None:
        full = path if os.path.isabs(path) else os.path.join(root, path)
        try:
            with open(full, encoding="utf-8", errors="replace", newline="") as fh:
                return fh.read()
        except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
            return None

    return read_text


def _decide(rt, session: str, call: ToolCall, *, account: bool, eff=None) -> Decision:
    from ..policy import gate

    if not account:  # dry run (`statewright check`): read only, nothing recorded
        if eff is None:
            eff = effective(rt, session)
        if eff is None:
            return _no_run()
        run, wf = eff
        state = enforced_state(run, wf)
        if state is None:
            return _not_running(run)
        return gate(state, counters_of(run), call, gate_context(rt, session, state))

    if not os.path.exists(rt.config.store_file):
        return _no_run()  # no store, no runs: nothing is created on disk
    _warm(rt, call)
    with rt.store.transaction() as tx:
        eff = rt.effective_in(tx, session)
        if eff is None:
            return _no_run()
        run, wf = eff
        state = enforced_state(run, wf)
        if state is None:
            return _not_running(run)
        ctx = gate_context(rt, session, state, tx.source_paths_in_use())
        d = gate(state, counters_of(run), call, ctx)  # counters read under the write lock
        if d.allowed and not d.counts_iteration:
            return d  # statewright's own tools: not counted, nothing written
        if not d.allowed:
            new = run.with_(denied=run.denied + 1)
            ev = _event("tool_denied", {"tool": call.tool_name, "rule": d.rule,
                                        "reason": d.reason, "source": call.source})
        else:
            files = run.files_edited
            data = {"tool": call.tool_name, "source": call.source}
            if d.files:
                files = tuple(sorted(set(files).union(d.files)))
                data["files"] = list(d.files)
            new = run.with_(iterations=run.iterations + 1, files_edited=files)
            ev = _event("tool_allowed", data)
        tx.save_with_events(run, new, (ev,), rt.clock())
        return d


def _no_run() -> Decision:
    return Decision.allow(rule="no_active_run", reason="no running workflow for this session",
                          counts_iteration=False)


def _not_running(run) -> Decision:
    return Decision.allow(rule="not_running", counts_iteration=False,
                          reason=f"run {run.run_id} is {run.status}; nothing is enforced")


def _warm(rt, call: ToolCall) -> None:
    """Parse a shell line before taking the store's write lock: the first parse in a process
    imports tree-sitter (milliseconds), which should not hold up other processes. The result
    is cached by `policy.shell.analyze`; any problem is left to the real decision."""
    try:
        inp = call.tool_input
        if not isinstance(inp, dict):
            return
        key = "command" if call.tool_name == "Bash" else rt.config.shell_tools.get(call.tool_name)
        command = inp.get(key) if key else None
        if isinstance(command, str) and command.strip():
            from ..policy.shell import analyze

            analyze(command)
    except Exception:
        pass


def enforced_state(run, wf):
    """The compiled state whose rules apply to `run`, or None when nothing is enforced."""
    if run.status != RUNNING:
        return None
    state = wf.states.get(run.state)
    if state is None:
        raise StatewrightError("UNKNOWN_STATE",
                               f"run {run.run_id} is in state {run.state!r}, which workflow "
                               f"{wf.id!r} does not define")
    return None if state.final else state


def _event(kind: str, data: dict) -> dict:
    return {"kind": kind, "actor": "agent", "data": data}


# -- record ------------------------------------------------------------------------------------

def record(rt, session: str, result: ToolResult) -> RecordOutcome:
    """Account an allowed call's result: bytes read, files changed (interrupts), warnings.
    One write transaction; nothing is written when there is nothing to account."""
    if not os.path.exists(rt.config.store_file):
        return RecordOutcome()
    nbytes = max(0, int(result.output_bytes or 0))
    files = [] if result.is_error else changed_files(rt, result)  # pure: before the lock
    now = rt.clock()
    messages: list[str] = []
    interrupts: list[dict] = []
    warnings: list[str] = []
    with rt.store.transaction() as tx:
        eff = rt.effective_in(tx, session)
        if eff is None:
            return RecordOutcome()
        run, wf = eff
        if enforced_state(run, wf) is None:
            return RecordOutcome()
        current = run
        if nbytes:
            current = tx.save_with_events(run, run.with_(bytes_read=run.bytes_read + nbytes), ())
        if files and wf.interrupts:
            from ..policy.paths import glob_match

            for rel in files:
                if not any(glob_match(i.file_pattern, rel) for i in wf.interrupts):
                    continue
                answer = rt.fire_interrupt_in(tx, session, rel, now)
                if answer:
                    info = {"file": rel, "interrupt": _interrupt_name(answer),
                            "state": answer.get("state"), "return_to": _return_to(answer)}
                    interrupts.append(info)
                    messages.append(interrupt_message(info, answer))
                    break  # a second match while the handler is active does not fire again
        if not interrupts:
            st = enforced_state(current, wf)
            if st is not None:
                warnings = budget_warnings(st, current)
    messages.extend(warnings)
    return RecordOutcome(messages=messages, interrupts=interrupts,
                         bytes_read=current.bytes_read, warnings=warnings)


def changed_files(rt, result: ToolResult) -> list[str]:
    """Project-relative files the call changed, as far as its input tells (the edit tools'
    path arguments, per `policy.edits`)."""
    from ..policy.edits import edited_paths
    from ..policy.paths import project_relative

    inp = result.tool_input if isinstance(result.tool_input, dict) else {}
    out: list[str] = []
    for raw in edited_paths(result.tool_name, inp):
        if raw:
            rel = project_relative(raw, rt.root_dir, result.cwd)
            if rel and rel != "." and rel not in out:
                out.append(rel)
    return out


def budget_warnings(state, run) -> list[str]:
    out = []
    name = state.name
    if state.max_iterations:
        left = state.max_iterations - run.iterations
        if left <= 0:
            out.append(f"[statewright] The tool-call limit of state {name!r} is reached "
                       f"({run.iterations}/{state.max_iterations}). Further tool calls are refused "
                       f"until the run transitions; events available: {_events_text(state)}.")
        elif run.iterations >= state.max_iterations * WARN_AT:
            out.append(f"[statewright] {run.iterations} of {state.max_iterations} tool calls of state "
                       f"{name!r} are used ({left} left). Events available: {_events_text(state)}.")
    if state.context_budget_bytes:
        budget = state.context_budget_bytes
        if run.bytes_read >= budget:
            out.append(f"[statewright] The context budget of state {name!r} is used up "
                       f"({run.bytes_read}/{budget} bytes). Further tool calls are refused until "
                       f"the run transitions; events available: {_events_text(state)}.")
        elif run.bytes_read >= budget * WARN_AT:
            out.append(f"[statewright] {run.bytes_read} of {budget} bytes of the context budget of "
                       f"state {name!r} are used.")
    if state.max_files_per_state and len(run.files_edited) >= state.max_files_per_state:
        out.append(f"[statewright] State {name!r} allows {state.max_files_per_state} distinct "
                   f"file(s); all are used ({', '.join(run.files_edited)}). Only those files may "
                   "be edited in this state.")
    return out


def _events_text(state) -> str:
    ev = available_events(state)
    return ", ".join(ev) if ev else "none (a human must move the run on)"


def _interrupt_name(answer: dict):
    it = answer.get("interrupt")
    if isinstance(it, dict):
        return it.get("name")
    return it


def _return_to(answer: dict):
    it = answer.get("interrupt")
    if isinstance(it, dict):
        return it.get("return_to") or it.get("interrupt_return")
    return answer.get("interrupt_return")


def interrupt_message(info: dict, answer: dict) -> str:
    head = f"[STATEWRIGHT INTERRUPT] {info['file']} changed"
    if info.get("interrupt"):
        head += f" (interrupt {info['interrupt']!r})"
    head += f"; the run is now in state {answer.get('state')!r}"
    if info.get("return_to"):
        head += f" and `$return` brings it back to {info['return_to']!r}"
    return head + ".\n" + briefing(answer)


# -- what the agent is told --------------------------------------------------------------------

def briefing(answer: dict) -> str:
    """Factual lines describing a state answer (DESIGN section 5 shape) for the agent."""
    lines = [f"statewright: workflow {answer.get('workflow')!r} (run {answer.get('run_id')}) is in "
             f"state {answer.get('state')!r}, status {answer.get('status')}."]
    if answer.get("is_final"):
        lines.append("This is a final state: the workflow is finished and nothing is enforced.")
        return "\n".join(lines)
    if answer.get("instructions"):
        lines.append(f"Instructions for this state: {answer['instructions']}")
    tools = answer.get("allowed_tools")
    if tools is None:
        lines.append("Allowed tools: any tool.")
    elif not tools:
        lines.append("Allowed tools: only statewright's own tools.")
    else:
        lines.append("Allowed tools: " + ", ".join(tools) + " (plus statewright's own tools).")
    cmds = answer.get("allowed_commands")
    if cmds is not None:
        lines.append("Allowed shell commands: " + (", ".join(cmds) if cmds else "none") + ".")
    if answer.get("blocked_env"):
        lines.append("Environment variables that may not be read: " + ", ".join(answer["blocked_env"]) + ".")
    lines.extend(_budget_lines(answer.get("counters") or {}))
    trans = answer.get("transitions") or []
    if trans:
        parts = []
        for t in trans:
            s = f"{t.get('event')} -> {t.get('target')}"
            if t.get("guards"):
                s += f" (guards: {', '.join(map(str, t['guards']))}; currently {'passing' if t.get('passes') else 'not passing'})"
            if t.get("requires_approval"):
                s += " (needs human approval)"
            parts.append(s)
        lines.append("Events that move the run on (fire them with the statewright_transition tool "
                     "or `statewright transition EVENT`): " + "; ".join(parts) + ".")
    else:
        lines.append("No event leaves this state; a human must move the run on.")
    if answer.get("pending_approval"):
        lines.append("A transition is waiting for human approval; further transitions are refused until then.")
    return "\n".join(lines)


def _budget_lines(c: dict) -> list[str]:
    out = []
    if c.get("max_iterations"):
        out.append(f"Tool calls used in this state: {c.get('iterations', 0)} of {c['max_iterations']}.")
    if c.get("max_files_per_state"):
        files = c.get("files_edited") or []
        n = files if isinstance(files, int) else len(files)
        out.append(f"Files edited in this state: {n} of {c['max_files_per_state']}.")
    if c.get("context_budget_bytes"):
        out.append(f"Tool-result bytes read in this state: {c.get('bytes', 0)} of {c['context_budget_bytes']}.")
    return out


def stop_reminder(rt, session: str) -> str | None:
    """Stop hook: in a running, non-final state, the reminder to give (counted, at most
    STOP_REMINDERS_PER_STATE per state); None when the agent may stop."""
    if not os.path.exists(rt.config.store_file):
        return None
    with rt.store.transaction() as tx:
        eff = rt.effective_in(tx, session)
        if eff is None:
            return None
        run, wf = eff
        state = enforced_state(run, wf)
        if state is None or run.stop_reminders >= STOP_REMINDERS_PER_STATE:
            return None
        tx.save_with_events(run, run.with_(stop_reminders=run.stop_reminders + 1), ())
    events = available_events(state)
    text = (f"statewright: workflow {wf.id!r} is still in state {run.state!r}, which is not a final "
            "state, so the work is not finished.")
    if events:
        text += (" Events that move it on: " + ", ".join(events) +
                 " (fire one with the statewright_transition tool once its condition holds).")
    else:
        text += " No event leaves this state; a human must move the run on."
    if state.instructions:
        text += f" Instructions for this state: {state.instructions}"
    return text
