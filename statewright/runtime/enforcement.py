"""Tool-call enforcement and accounting (DESIGN.md section 4), behind the `Runtime` methods of
the same names (`Runtime.authorize`, `.record`, `.explain`, ...): front ends call those.

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

`failure_decision` is THE place `fail_open` is honoured: whatever raised while deciding (the
gate, the store, the runtime, the hook around them), the answer is a refusal with the cause,
or an allow when the project config sets `"fail_open": true` -- except for a call whose input
could not be read (`input_failure`: the caller can make that happen at will).

Stdlib + our pure layers only: this module is on the hook's start-up path.
"""

from __future__ import annotations

import os

from ..engine.run import AGENT, RUNNING
from ..errors import UNKNOWN_STATE, StatewrightError
from ..lean import TYPE_CHECKING
from ..names import EFFECTS_DIR, OBSERVED, OVERRUN, PENDING_DIR
from ..policy.types import Counters, Decision, GateContext
from ..store.cache import StaleRead
from . import marker
from .chain import effective_in
from .interrupted import handler_narrows
from .messages import agent_events, budget_warnings, has_budget, interrupt_message
from .messages import timed_out as _timed_out
from .observe import _ROWS, _keep, observed

if TYPE_CHECKING:  # pragma: no cover
    from collections.abc import Callable, Set
    from typing import Any

    from ..definition.compiled import CompiledWorkflow, State
    from ..engine.run import Run
    from ..policy.types import ToolCall, ToolResult
    from .surface import Runtime

STOP_REMINDERS_PER_STATE = 3
#: the MCP servers' directories are resolved again at most this often, and at once when
#: `.mcp.json` changes (`config.mcp_server_roots`): serve judges every forwarded call with them
SERVER_ROOTS_MAX_AGE = 1.0


class RecordOutcome:
    """What `record` did, and what the agent must be told about it. (A plain class: building a
    dataclass costs milliseconds at import, and this module is on every hook's start-up path.)"""

    __slots__ = ("budget", "bytes_read", "interrupts", "messages", "warnings")

    def __init__(self, messages: list[str] | None = None,
                 interrupts: list[dict[str, Any]] | None = None,
                 bytes_read: int = 0, warnings: list[str] | None = None,
                 budget: int | None = None) -> None:
        self.messages = messages or []  # interrupts first, then budget warnings
        self.interrupts = interrupts or []  # [{file, interrupt, state, return_to}]
        self.bytes_read = bytes_read  # the state's byte total after this result
        self.warnings = warnings or []
        # the state's context_budget_bytes when this result was accounted: a front end that
        # returns the output itself cuts what crosses it (DESIGN section 4, check 4)
        self.budget = budget

    def __repr__(self) -> str:
        return (f"RecordOutcome(messages={self.messages!r}, interrupts={self.interrupts!r}, "
                f"bytes_read={self.bytes_read!r}, warnings={self.warnings!r})")


# -- failing -----------------------------------------------------------------------------------

def failure_decision(rt: Runtime | None, exc: BaseException) -> Decision:
    """The decision when deciding failed with `exc`. `rt`: the project's runtime, None when it
    could not even be opened (then the config is in doubt, and doubt means closed)."""
    cause = describe_exception(exc)
    try:
        fail_open = rt is not None and rt.config.fail_open is True
    except BaseException:
        fail_open = False
    if fail_open and input_failure(exc):
        return Decision.deny(
            f"statewright could not read this call ({cause}), so it is refused: a call whose "
            "input cannot be read is refused even with fail_open (the caller chose it).",
            rule="fail_closed")
    if fail_open:
        return Decision.allow(rule="fail_open", counts_iteration=False,
                              reason=f"statewright could not decide ({cause}); allowed because "
                                     "fail_open is set")
    return Decision.deny(
        f"statewright could not decide this call ({cause}), so it is refused: statewright fails "
        "closed. A human can inspect the project with `statewright status`.",
        rule="fail_closed")


def input_failure(exc: BaseException) -> bool:
    """A failure the call's own input can cause at will: nesting deeper than a parser or a
    walk can follow (RecursionError), text that is not JSON or not UTF-8. `fail_open` is for
    statewright failing, never for an input an agent shaped to fail: those are refused."""
    import json

    return isinstance(exc, (RecursionError, json.JSONDecodeError, UnicodeError))


def describe_exception(exc: BaseException) -> str:
    """The cause as one line a front end can always encode (a lone surrogate quoted from the
    input would make printing a refusal fail, and a refusal never printed is an allow)."""
    if isinstance(exc, StatewrightError):
        text = f"{exc.code}: {exc.message}"
    else:
        detail = str(exc).strip()
        text = f"{type(exc).__name__}: {detail}" if detail else type(exc).__name__
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


# -- authorize ---------------------------------------------------------------------------------

def authorize(rt: Runtime, session: str, call: ToolCall,
              sandboxed: bool | None = None) -> Decision:
    """Decide `call` for `session` and account it. Never raises: a failure is
    `failure_decision`. An allowed sandboxed call (`sandboxed`, None: `Decision.sandboxed`) is
    scanned before it runs, to count what it changes (`effects`; no scan kept: refused)."""
    try:
        d, scanned = _decide_and_account(rt, session, call, sandboxed)
        if scanned:
            _effects().begin(rt, session, call, shell_line(rt, call.tool_name, call.tool_input))
        return d
    except BaseException as exc:
        return failure_decision(rt, exc)


def explain(rt: Runtime, session: str, call: ToolCall) -> tuple[Decision, Run | None,
                                                                CompiledWorkflow | None]:
    """Dry run for `statewright check`: the decision, the effective run and its workflow, with
    no accounting. A failure is `failure_decision` (run and workflow then None)."""
    try:
        eff = rt.effective_run(session)
        if eff is None:
            return _no_run(), None, None
        run, wf = eff
        state = enforced_state(run, wf)
        if state is None:
            return _not_running(run), run, wf
        d = _gate()(state, counters_of(run), call,
                    gate_context(rt, state, tool_name=call.tool_name))
        if d.allowed and run.interrupt is not None:
            d = handler_narrows(rt, run, wf, call, d, None, gate_context)
        return d, run, wf
    except BaseException as exc:
        return failure_decision(rt, exc), None, None


def enforced_state(run: Run, wf: CompiledWorkflow) -> State | None:
    """The compiled state whose rules apply to `run`, or None when nothing is enforced."""
    if run.status != RUNNING:
        return None
    state = wf.states.get(run.state)
    if state is None:
        raise StatewrightError(UNKNOWN_STATE,
                               f"run {run.run_id} is in state {run.state!r}, which workflow "
                               f"{wf.id!r} does not define")
    return None if state.final else state


def record_is_quiet(run: Run, wf: CompiledWorkflow) -> bool:
    """`record` has nothing to tell the agent about a call on `run` that changes no file:
    nothing is enforced, or the state has no budget to warn about. (A front end may then
    answer before recording.)"""
    state = enforced_state(run, wf)
    return state is None or not has_budget(state)


def counters_of(run: Run) -> Counters:
    over = (run.context.get(OBSERVED) or {}).get(OVERRUN)  # (`effects.account` writes it)
    return Counters(iterations=run.iterations, files_edited=frozenset(run.files_edited),
                    bytes_read=run.bytes_read, denied=run.denied,
                    overrun=(over["rule"], over["reason"]) if over else None)


def gate_context(rt: Runtime, state: State, protected: Set[str] | None = None,
                 tool_name: object = None) -> GateContext:
    """The gate's facts. `protected`: the workflow files in use, when the caller already read
    them (inside its transaction); else they are read here. `tool_name`: the call's; an MCP
    tool's server roots are gathered only for MCP calls."""
    root = rt.root_dir
    if protected is None:
        protected = rt.protected_files()
    roots = None
    if isinstance(tool_name, str) and tool_name.startswith("mcp__"):
        from ..config import mcp_server_roots

        roots = mcp_server_roots(rt.config, SERVER_ROOTS_MAX_AGE)
    else:
        # the same state with the same files in use: the facts of the last call (a resident
        # process decides call after call in one state; GateContext is immutable)
        last = rt.gate_facts
        if last is not None and last[0] is state and last[1] == protected:
            return last[2]
    ctx = GateContext(
        project_root=root,
        store_dir=rt.store_dir,
        protected_files=frozenset(protected),
        shell_tools=dict(rt.config.shell_tools),
        events=agent_events(state),
        read_text=file_reader(root),
        server_roots=roots,
    )
    if roots is None:
        rt.gate_facts = (state, ctx.protected_files, ctx)
    return ctx


def file_reader(root: str) -> Callable[[str], str | None]:
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


# functions of the policy layer, imported on first use and kept: the policy layer loads on the
# first decision (not on import), the shell analysis with the first shell line; a `from ..
# import` inside a function goes through the import system on every call
_LAZY: dict[str, Any] = {}


def _gate() -> Callable[..., Decision]:
    fn = _LAZY.get("gate")
    if fn is None:
        from ..policy import gate

        fn = _LAZY["gate"] = gate
    return fn


def _effects() -> Any:
    if "effects" not in _LAZY:
        from . import effects

        _LAZY["effects"] = effects
    return _LAZY["effects"]


def _decide_and_account(rt: Runtime, session: str, call: ToolCall,
                        sandboxed: bool | None = None) -> tuple[Decision, bool]:
    try:
        return _decide_once(rt, session, call, sandboxed, True)
    except StaleRead:  # (decided on a run kept from before that had changed: nothing written)
        return _decide_once(rt, session, call, sandboxed, False)


def _decide_once(rt: Runtime, session: str, call: ToolCall, sandboxed: bool | None,
                 optimistic: bool) -> tuple[Decision, bool]:
    """One decision in one write transaction; `optimistic`: on the session's run as this
    process last wrote it, when the store keeps it (`store.pg`), else read afresh."""
    store_file = rt.store_file
    if not rt.has_store():
        gone = marker.missing_store(store_file, session)
        if gone is not None:
            raise gone  # the store was taken away under a running run (`failure_decision`)
        return _no_run(), False  # no store, no runs: nothing is created on disk
    gate = _gate()
    _warm(rt, call)
    with rt.store.transaction(optimistic=optimistic) as tx:
        eff = effective_in(tx, session)
        if eff is not None and eff[1].interrupts and rt.watching != session:
            # files changed since the last look (another process, a background job) fire
            # their interrupts first: this call is then decided under the handler's rules
            if look_at_files(rt, tx, session, eff[0], eff[1], rt.clock()):
                eff = effective_in(tx, session)
        timed = _timed_out(rt, tx, eff[0]) if eff is not None else None
        if timed is not None:
            return timed, False  # the state's rules changed under the agent: refused, saying why
        state = enforced_state(*eff) if eff is not None else None
        if state is None:
            replaced = marker.replaced_store(store_file, session,
                                             lambda rid: tx.get_run(rid) is not None)
            if replaced is not None:
                raise replaced
            return (_no_run() if eff is None else _not_running(eff[0])), False
        run = eff[0]  # type: ignore[index]
        marker.ensure_marker(store_file, session, run.run_id)
        ctx = gate_context(rt, state, tx.source_paths_in_use(), call.tool_name)
        d = gate(state, counters_of(run), call, ctx)  # counters read under the write lock
        if d.allowed and run.interrupt is not None:
            d = handler_narrows(rt, run, eff[1], call, d, ctx.protected_files,  # type: ignore[index]
                                gate_context)
        if d.allowed and not d.counts_iteration:
            return d, False  # statewright's own tools: not counted, nothing written
        if not d.allowed:
            if eff[1].interrupts:  # type: ignore[index]
                d = _with_notices(tx, run.run_id, d)
            new = run.with_(denied=run.denied + 1)
            ev = _event("tool_denied", {"tool": call.tool_name, "rule": d.rule,
                                        "reason": d.reason, "source": call.source})
        elif d.files:
            new = run.with_(iterations=run.iterations + 1,
                            files_edited=tuple(sorted(set(run.files_edited).union(d.files))))
            ev = _event("tool_allowed", {"tool": call.tool_name, "source": call.source,
                                         "files": list(d.files)})
        else:
            new = run.with_(iterations=run.iterations + 1)
            ev = _allowed_row(call.tool_name, call.source)
        tx.save_with_events(run, new, (ev,), rt.clock())
    scan = d.sandboxed if sandboxed is None else sandboxed
    return d, d.allowed and scan and _effects().wanted(state, eff[1])  # type: ignore[index]


def _allowed_row(tool: object, source: object) -> Any:
    """The `tool_allowed` history row of a call that edits no file."""
    if type(tool) is not str or type(source) is not str:
        return _event("tool_allowed", {"tool": tool, "source": source})
    key = ("tool_allowed", tool, source)
    return _ROWS.get(key) or _keep(key, AGENT, "tool_allowed", {"tool": tool, "source": source})


def _with_notices(tx: Any, run_id: str, d: Decision) -> Decision:
    """A refusal that also tells the interrupts not told yet (fired by this call's look at the
    files, or by serve's watcher): the call after a file changed is refused under the handler's
    rules, and its answer is where the agent learns why (DESIGN section 3: "with the tool result
    or at its next call"). They are told once: taken from the run's notices."""
    marks, notices = tx.marks(run_id)
    if not notices:
        return d
    tx.put_marks(run_id, marks or {}, [])
    return d.replace(reason="\n".join([*notices, d.reason]))


def _no_run() -> Decision:
    return Decision.allow(rule="no_active_run", reason="no running workflow for this session",
                          counts_iteration=False)


def _not_running(run: Run) -> Decision:
    return Decision.allow(rule="not_running", counts_iteration=False,
                          reason=f"run {run.run_id} is {run.status}; nothing is enforced")


def _warm(rt: Runtime, call: ToolCall) -> None:
    """Parse a shell line before taking the store's write lock: the first parse in a process
    imports tree-sitter (milliseconds), which should not hold up other processes. The result
    is cached by `policy.shell.analyze`; any problem is left to the real decision."""
    try:
        line = shell_line(rt, call.tool_name, call.tool_input)
        if line is not None:
            _warm_line(line)
    except Exception:
        pass


def _warm_line(line: str) -> None:
    try:
        fn = _LAZY.get("analyze")
        if fn is None:
            from ..policy.shell import analyze

            fn = _LAZY["analyze"] = analyze
        fn(line)
    except Exception:
        pass


def _event(kind: str, data: dict[str, Any]) -> dict[str, Any]:
    return {"kind": kind, "actor": AGENT, "data": data}


# -- record ------------------------------------------------------------------------------------

def record(rt: Runtime, session: str, result: ToolResult) -> RecordOutcome:
    """Account an allowed call's result: bytes read, the evidence of what it did
    (`policy.evidence`: `_observed` in the context), files changed (interrupts), warnings.
    One write transaction, on the run whose rules apply now."""
    if not rt.has_store():
        return RecordOutcome()
    nbytes = max(0, int(result.output_bytes or 0))
    files = [] if result.is_error else changed_files(rt, result)  # pure: before the lock
    # what a sandboxed call changed, failed or not, found before the lock (no scan kept: one
    # `access`, which fails without an exception; whatever is there is looked into)
    effect = _effects().collect(rt, session, result, failure_decision, describe_exception) \
        if os.access(os.path.join(rt.store_dir, EFFECTS_DIR, PENDING_DIR), os.F_OK) else None
    line = shell_line(rt, result.tool_name, result.tool_input)
    if line is not None:
        _warm_line(line)
    now = rt.clock()
    try:
        return _record_once(rt, session, result, nbytes, files, effect, line, now, True)
    except StaleRead:  # (on a run kept from before that had changed: nothing written)
        return _record_once(rt, session, result, nbytes, files, effect, line, now, False)


def _record_once(rt: Runtime, session: str, result: ToolResult, nbytes: int, files: list[str],
                 effect: Any, line: str | None, now: float,
                 optimistic: bool) -> RecordOutcome:
    """`record`'s write transaction; `optimistic` as in `_decide_once`."""
    messages: list[str] = []
    interrupts: list[dict[str, Any]] = []
    warnings: list[str] = []
    with rt.store.transaction(optimistic=optimistic) as tx:
        eff = effective_in(tx, session)
        if eff is None:
            return RecordOutcome()
        run, wf = eff
        state = enforced_state(run, wf)
        if state is None:
            return RecordOutcome()
        budget = state.context_budget_bytes
        if effect:
            files = sorted(set(files).union(effect.files))
        if wf.interrupts:
            # what changed during the call (a redirect, a script), and what was found when it
            # was decided (or by serve's watcher) but not told yet
            seen, told = look_at_files(rt, tx, session, run, wf, now, record=True,
                                       watched=rt.watching == session)
            messages.extend(told)
            files = sorted(set(files).union(seen))
            eff = effective_in(tx, session)
            if eff is None or enforced_state(*eff) is None:
                return RecordOutcome(messages=messages)
            run, wf = eff
            state = enforced_state(run, wf) or state
        new_run, rows = observed(run, state, result, line, nbytes, files, now,
                                 rt.root_dir)
        overrun: list[str] = []
        if effect:  # (checks 7 and 8 by effect)
            new_run, rows, overrun = _effects().account(new_run, rows, state, effect, line,
                                                        result.tool_name)
            messages.extend(overrun)
        current = tx.save_with_events(run, new_run, rows, now)
        if files and wf.interrupts:
            fire_for_files(rt, tx, session, wf, files, now, interrupts, messages)
        if not interrupts and not overrun:  # (an overrun says more than any warning)
            st = enforced_state(current, wf)
            if st is not None:
                warnings = budget_warnings(st, current)
    if line is not None and result.output:
        from .confinement import sandbox_note

        note = sandbox_note(state, line, result.output)
        if note is not None:
            messages.append(note)
    messages.extend(warnings)
    return RecordOutcome(messages=messages, interrupts=interrupts,
                         bytes_read=current.bytes_read, warnings=warnings, budget=budget)


def look_at_files(rt: Runtime, tx: Any, session: str, run: Run, wf: CompiledWorkflow,
                  now: float, *, record: bool = False, watched: bool = False) -> Any:
    """Compare the marks of the files the workflow's interrupts watch with those last taken
    (`runtime.watch`) and fire the interrupts of the files that changed (`watched`: a watcher
    of this process fires them; only the notices it left are taken). Deciding a call
    (`record` False): the messages are kept as notices, told with the call's result; returns
    them. Recording a result: returns (the files that changed, the messages to tell now,
    notices included); the files are then matched (and fired) with the result's own."""
    from .watch import changed, patterns_of, take_marks

    old, notices = tx.marks(run.run_id)
    if watched:  # serve's watcher fires them: only its notices are to be told
        if notices:
            tx.put_marks(run.run_id, old or {}, [])
        return [], notices
    new = take_marks(rt.root_dir, patterns_of(wf))
    files = changed(old, new)
    msgs: list[str] = []
    if files and not record:
        fire_for_files(rt, tx, session, wf, files, now, [], msgs)
    if record:
        if old != new or notices:
            tx.put_marks(run.run_id, new, [])
        return files, notices
    if old != new or msgs:
        tx.put_marks(run.run_id, new, notices + msgs)
    return msgs


def fire_for_files(rt: Runtime, tx: Any, session: str, wf: CompiledWorkflow, files: list[str],
                   now: float, interrupts: list[dict[str, Any]], messages: list[str]) -> None:
    """Fire (or queue, while another handler is active) the interrupts `files` match; what the
    agent must be told goes to `messages`, what fired to `interrupts`."""
    from ..policy.paths import glob_match

    for rel in files:
        if not any(glob_match(i.file_pattern, rel) for i in wf.interrupts):
            continue
        answer = rt.fire_interrupt_in(tx, session, rel, now)
        if not answer:
            continue
        queued = answer.get("queued")
        if queued:
            messages.append(f"[STATEWRIGHT INTERRUPT] {rel} changed (interrupt "
                            f"{queued['interrupt']!r}); it is queued and takes effect when the "
                            f"current handler returns (`$return`).")
            continue
        it = answer.get("interrupt") or {}
        info = {"file": rel, "interrupt": it.get("name"), "state": answer.get("state"),
                "return_to": it.get("return_to")}
        interrupts.append(info)
        messages.append(interrupt_message(info, answer))


def shell_line(rt: Runtime, tool_name: str, tool_input: Any) -> str | None:
    """The shell line a call runs (Bash's `command`, or the argument `statewright.json`'s
    `shell_tools` names), else None."""
    if not isinstance(tool_input, dict):
        return None
    key = "command" if tool_name == "Bash" else rt.config.shell_tools.get(tool_name)
    line = tool_input.get(key) if key else None
    return line if isinstance(line, str) and line.strip() else None


def changed_files(rt: Runtime, result: ToolResult) -> list[str]:
    """Project-relative files the call changed, as far as its input tells (the edit tools'
    path arguments, per `policy.edits`)."""
    fns = _LAZY.get("edits")
    if fns is None:
        from ..policy.edits import edited_paths
        from ..policy.paths import project_relative

        fns = _LAZY["edits"] = (edited_paths, project_relative)
    edited_paths, project_relative = fns
    inp = result.tool_input if isinstance(result.tool_input, dict) else {}
    out: list[str] = []
    for raw in edited_paths(result.tool_name, inp):
        if raw:
            rel = project_relative(raw, rt.root_dir, result.cwd)
            if rel and rel != "." and rel not in out:
                out.append(rel)
    return out


# -- what the agent is told outside a tool call --------------------------------------------------
