"""What the agent is told, worded once for every front end (the hook and the proxy): the
briefing on a state answer, the interrupt notice, budget warnings, the Stop reminder.

Plain text from plain facts: stdlib only (this module is on the hook's start-up path).
"""

from __future__ import annotations

from ..definition.compiled import BRANCH_DONE_PREFIX

TYPE_CHECKING = False  # (not `typing.TYPE_CHECKING`: `typing` costs ~10 ms to import)
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any

    from ..definition.compiled import State
    from ..engine.run import Run

# fraction of a budget after which PostToolUse warns the agent
WARN_AT = 0.8


def agent_events(state: State) -> tuple[str, ...]:
    """The events of `state` the agent fires itself (not the reserved `BRANCH_DONE:<b>`)."""
    return tuple(e for e in state.on if not e.startswith(BRANCH_DONE_PREFIX))


def has_budget(state: State) -> bool:
    """Does `state` have a budget that `budget_warnings` may warn about?"""
    return bool(state.max_iterations or state.context_budget_bytes or state.max_files_per_state)


def _events_text(state: State) -> str:
    ev = agent_events(state)
    return ", ".join(ev) if ev else "none (a human must move the run on)"


def budget_warnings(state: State, run: Run) -> list[str]:
    if not has_budget(state):
        return []
    out = []
    name = state.name
    if state.max_iterations:
        left = state.max_iterations - run.iterations
        if left <= 0:
            out.append(f"[statewright] The tool-call limit of state {name!r} is reached "
                       f"({run.iterations}/{state.max_iterations}). Further tool calls are "
                       f"refused until the run transitions; events available: "
                       f"{_events_text(state)}.")
        elif run.iterations >= state.max_iterations * WARN_AT:
            out.append(f"[statewright] {run.iterations} of {state.max_iterations} tool calls of "
                       f"state {name!r} are used ({left} left). Events available: "
                       f"{_events_text(state)}.")
    if state.context_budget_bytes:
        budget = state.context_budget_bytes
        if run.bytes_read >= budget:
            out.append(f"[statewright] The context budget of state {name!r} is used up "
                       f"({run.bytes_read}/{budget} bytes). Further tool calls are refused until "
                       f"the run transitions; events available: {_events_text(state)}.")
        elif run.bytes_read >= budget * WARN_AT:
            out.append(f"[statewright] {run.bytes_read} of {budget} bytes of the context budget "
                       f"of state {name!r} are used.")
    if state.max_files_per_state and len(run.files_edited) >= state.max_files_per_state:
        out.append(f"[statewright] State {name!r} allows {state.max_files_per_state} distinct "
                   f"file(s); all are used ({', '.join(run.files_edited)}). Only those files may "
                   "be edited in this state.")
    return out


def interrupt_message(info: dict[str, Any], answer: dict[str, Any]) -> str:
    """`[STATEWRIGHT INTERRUPT] ...`: `info` = {file, interrupt, return_to}; then the briefing."""
    head = f"[STATEWRIGHT INTERRUPT] {info['file']} changed"
    if info.get("interrupt"):
        head += f" (interrupt {info['interrupt']!r})"
    head += f"; the run is now in state {answer.get('state')!r}"
    if info.get("return_to"):
        head += f" and `$return` brings it back to {info['return_to']!r}"
    return head + ".\n" + briefing(answer)


def briefing(answer: dict[str, Any]) -> str:
    """Factual lines describing a state answer (DESIGN section 5 shape) for the agent."""
    lines = [f"statewright: workflow {answer.get('workflow')!r} (run {answer.get('run_id')}) is "
             f"in state {answer.get('state')!r}, status {answer.get('status')}."]
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
        lines.append("Environment variables that may not be read: "
                     + ", ".join(answer["blocked_env"]) + ".")
    lines.extend(_budget_lines(answer.get("counters") or {}))
    lines.append(_transitions_line(answer.get("transitions") or []))
    if answer.get("pending_approval"):
        lines.append("A transition is waiting for human approval; further transitions are "
                     "refused until then.")
    return "\n".join(lines)


def _transitions_line(trans: list[dict[str, Any]]) -> str:
    if not trans:
        return "No event leaves this state; a human must move the run on."
    parts = []
    for t in trans:
        s = f"{t.get('event')} -> {t.get('target')}"
        if t.get("guards"):
            passing = "passing" if t.get("passes") else "not passing"
            s += f" (guards: {', '.join(map(str, t['guards']))}; currently {passing})"
        if t.get("requires_approval"):
            s += " (needs human approval)"
        parts.append(s)
    return ("Events that move the run on (fire them with the statewright_transition tool "
            "or `statewright transition EVENT`): " + "; ".join(parts) + ".")


def _budget_lines(c: dict[str, Any]) -> list[str]:
    out = []
    if c.get("max_iterations"):
        out.append(f"Tool calls used in this state: {c.get('iterations', 0)} of "
                   f"{c['max_iterations']}.")
    if c.get("max_files_per_state"):
        files = c.get("files_edited") or []
        n = files if isinstance(files, int) else len(files)
        out.append(f"Files edited in this state: {n} of {c['max_files_per_state']}.")
    if c.get("context_budget_bytes"):
        out.append(f"Tool-result bytes read in this state: {c.get('bytes', 0)} of "
                   f"{c['context_budget_bytes']}.")
    return out


def stop_text(workflow: str, run: Run, state: State) -> str:
    """The Stop reminder: the run is in a non-final state, so the work is not finished."""
    events = agent_events(state)
    text = (f"statewright: workflow {workflow!r} is still in state {run.state!r}, which is not "
            "a final state, so the work is not finished.")
    if events:
        text += (" Events that move it on: " + ", ".join(events) +
                 " (fire one with the statewright_transition tool once its condition holds).")
    else:
        text += " No event leaves this state; a human must move the run on."
    if state.instructions:
        text += f" Instructions for this state: {state.instructions}"
    return text
