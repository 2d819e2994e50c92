"""Calls a front end decides in other shapes than one `ToolCall` (DESIGN section 4, section 5
"Hosts"): a host call made of several edits (`authorize_all`: a patch), and a tool its front end
cannot name as workflows do (`authorize_unnamed`). Host-blind, as `enforcement` is; the same
store transaction, failure and accounting rules.

Stdlib + our pure layers only: the process hook imports this for another host's patch or
unknown tool.
"""

from __future__ import annotations

from ..lean import TYPE_CHECKING
from ..policy.types import Counters, Decision
from . import marker
from .chain import effective_in
from .enforcement import (
    _decide_and_account,
    _event,
    _gate,
    _no_run,
    _not_running,
    _with_notices,
    authorize,
    enforced_state,
    failure_decision,
    gate_context,
    look_at_files,
)

if TYPE_CHECKING:  # pragma: no cover
    from ..definition.compiled import State
    from ..policy.types import ToolCall
    from .service import Runtime


def authorize_all(rt: Runtime, session: str, calls: list[ToolCall]) -> Decision:
    """Decide one host call made of several edits (a patch that adds, changes, moves and
    deletes files) as the edits `calls` it is made of, all or nothing, and account it once:
    each edit is judged as that edit would be alone, with the files of the edits before it
    counted as edited (`max_files_per_state` sees them all); the first refusal refuses the
    whole call. One store transaction, one iteration. Never raises."""
    try:
        return _decide_all(rt, session, calls)
    except BaseException as exc:
        return failure_decision(rt, exc)


def _decide_all(rt: Runtime, session: str, calls: list[ToolCall]) -> Decision:
    if not calls:
        return Decision.deny("statewright refused an edit it could not read: it names no file",
                             rule="invalid")
    if len(calls) == 1:
        return _decide_and_account(rt, session, calls[0])[0]  # (an edit: nothing to scan)
    if not rt.has_store():
        gone = marker.missing_store(rt.store_file, session)
        if gone is not None:
            raise gone
        return _no_run()
    gate = _gate()
    with rt.store.transaction() as tx:
        eff = effective_in(tx, session)
        if eff is not None and eff[1].interrupts and rt.watching != session:
            if look_at_files(rt, tx, session, eff[0], eff[1], rt.clock()):
                eff = effective_in(tx, session)
        state = enforced_state(*eff) if eff is not None else None
        if state is None:
            return _no_run() if eff is None else _not_running(eff[0])
        run, wf = eff  # type: ignore[misc]
        marker.ensure_marker(rt.store_file, session, run.run_id)
        protected = tx.source_paths_in_use()
        files = set(run.files_edited)
        explanation: list[str] = []
        for call in calls:
            ctx = gate_context(rt, state, protected, call.tool_name)
            counters = Counters(run.iterations, frozenset(files), run.bytes_read, run.denied)
            d = gate(state, counters, call, ctx)
            explanation += d.explanation
            if not d.allowed:
                if wf.interrupts:
                    d = _with_notices(tx, run.run_id, d)
                new = run.with_(denied=run.denied + 1)
                ev = _event("tool_denied", {"tool": call.tool_name, "rule": d.rule,
                                            "reason": d.reason, "source": call.source})
                tx.save_with_events(run, new, (ev,), rt.clock())
                return d
            files.update(d.files)
        edited = tuple(sorted(files))
        new = run.with_(iterations=run.iterations + 1, files_edited=edited)
        ev = _event("tool_allowed", {"tool": calls[0].tool_name, "source": calls[0].source,
                                     "files": sorted(files - set(run.files_edited))})
        tx.save_with_events(run, new, (ev,), rt.clock())
        return Decision.allow(explanation=tuple(explanation),
                              files=tuple(sorted(files - set(run.files_edited))))


def authorize_unnamed(rt: Runtime, session: str, call: ToolCall, why: str) -> Decision:
    """A tool its front end cannot name as workflows name tools (a host's tool that the map of
    tool names does not know): refused with `why` in a state with any rule it could get
    around (tools, commands, environment, edit budgets), decided as any call elsewhere.
    Never raises."""
    try:
        eff = rt.effective_run(session)
        state = enforced_state(*eff) if eff is not None else None
        if state is not None and restricts(state):
            d = Decision.deny(f"statewright refused the tool `{call.tool_name}` in state "
                              f"'{state.name}': {why}", rule="allowed_tools")
            return _account_denial(rt, session, call, d)
        return authorize(rt, session, call)
    except BaseException as exc:
        return failure_decision(rt, exc)


def restricts(state: State) -> bool:
    """Whether a state has a rule a tool statewright cannot read could get around."""
    return bool(state.allowed_tools is not None or state.disallowed_tools
                or state.allowed_commands is not None or state.blocked_env
                or state.env_overrides or state.max_edit_lines or state.max_files_per_state
                or state.read_only)


def _account_denial(rt: Runtime, session: str, call: ToolCall, d: Decision) -> Decision:
    with rt.store.transaction() as tx:
        eff = effective_in(tx, session)
        if eff is not None and enforced_state(*eff) is not None:
            run = eff[0]
            tx.save_with_events(run, run.with_(denied=run.denied + 1), (_event(
                "tool_denied", {"tool": call.tool_name, "rule": d.rule, "reason": d.reason,
                                "source": call.source}),), rt.clock())
    return d
