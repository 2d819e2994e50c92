"""The state answer (DESIGN.md section 5) put into words, for its two readers.

- `briefing(answer)`: the factual lines the agent is told (hook `additionalContext`, interrupt
  messages);
- `panel(answer)`: what people see in `statewright status` and after every state-changing
  command, as `(text, style)` segments the CLI styles with rich (style names are rich's).

Both read the answer through the helpers below, so each field (the tool list, the counters and
their limits, the transitions) is interpreted in one place.

Stdlib only (with `statewright.lean`): the process hook imports this module.
"""

from __future__ import annotations

from ..lean import TYPE_CHECKING, dumps

if TYPE_CHECKING:
    from typing import Any

    Segment = tuple[str, str]

# (counter in `counters`, its limit in `counters`, people's label, the agent's sentence)
BUDGETS = (
    ("iterations", "max_iterations", "iterations", "Tool calls used in this state"),
    ("files_edited", "max_files_per_state", "files", "Files edited in this state"),
    ("bytes", "context_budget_bytes", "bytes", "Tool-result bytes read in this state"),
)


def _used(counters: dict[str, Any], name: str) -> Any:
    """A counter's value; `files_edited` is the list of files (or already their number)."""
    if name == "files_edited":
        files = counters.get("files_edited") or []
        return files if isinstance(files, int) else len(files)
    return counters.get(name, 0)


def _joined(values: Any) -> str:
    return ", ".join(str(v) for v in values)


def names_text(values: Any, unrestricted: str, empty: str) -> str:
    """A tool or command list: None means no restriction, an empty list means none allowed."""
    if values is None:
        return unrestricted
    if not values:
        return empty
    return _joined(values)


def commands_text(answer: dict[str, Any], unrestricted: str) -> str:
    """`allowed_commands` for people: no list means any command only where a shell tool is
    allowed at all (a state whose tools leave out Bash runs no command, whatever the list)."""
    cmds = answer.get("allowed_commands")
    if cmds is None:
        tools = answer.get("allowed_tools")
        if tools is not None:
            from ..wildcards import name_matches

            if not any(name_matches(t, "Bash") for t in tools):
                return "(none: Bash is not an allowed tool here)"
    return names_text(cmds, unrestricted, "(none)")


# -- for the agent -------------------------------------------------------------------------------

def briefing(answer: dict[str, Any]) -> str:
    """Factual lines describing a state answer for the agent."""
    lines = [f"statewright: workflow {answer.get('workflow')!r} (run {answer.get('run_id')}) is in "
             f"state {answer.get('state')!r}, status {answer.get('status')}."]
    if answer.get("is_final"):
        lines.append("This is a final state: the workflow is finished and nothing is enforced.")
        return "\n".join(lines)
    if answer.get("instructions"):
        lines.append(f"Instructions for this state: {answer['instructions']}")
    tools = answer.get("allowed_tools")
    tools_text = names_text(tools, "any tool", "only statewright's own tools")
    if tools:
        tools_text += " (plus statewright's own tools)"
    lines.append(f"Allowed tools: {tools_text}.")
    cmds = answer.get("allowed_commands")
    if cmds is not None:
        lines.append(f"Allowed shell commands: {_joined(cmds) or 'none'}.")
    if answer.get("blocked_env"):
        lines.append("Environment variables that may not be read: "
                     f"{_joined(answer['blocked_env'])}.")
    counters = answer.get("counters") or {}
    for used, limit, _label, sentence in BUDGETS:
        if counters.get(limit):
            lines.append(f"{sentence}: {_used(counters, used)} of {counters[limit]}.")
    if counters.get("max_edit_lines"):
        lines.append(f"Each edit may change at most {counters['max_edit_lines']} lines.")
    lines.append(_agent_transitions(answer.get("transitions") or []))
    if answer.get("pending_approval"):
        lines.append("A transition is waiting for human approval; further transitions are "
                     "refused until then.")
    if answer.get("timeout"):
        lines.append(timeout_text(answer["timeout"]) + ".")
    return "\n".join(lines)


def timeout_text(timeout: dict[str, Any], now: float | None = None) -> str:
    """When statewright fires the state's timeout event, in words."""
    import time

    left = timeout.get("deadline", 0) - (time.time() if now is None else now)
    when = f"in {left:.0f} s" if left > 0 else "now"
    return (f"This state times out {when} (after {timeout.get('timeout_s'):g} s): statewright "
            f"then fires {timeout.get('on_timeout')}")


def _agent_transitions(transitions: list[dict[str, Any]]) -> str:
    if not transitions:
        return "No event leaves this state; a human must move the run on."
    parts = []
    for t in transitions:
        s = f"{t.get('event')} -> {t.get('target')}"
        if t.get("guards"):
            passing = "passing" if t.get("passes") else "not passing"
            s += f" (guards: {', '.join(map(str, t['guards']))}; currently {passing})"
        if t.get("requires_approval"):
            s += " (needs human approval)"
        if t.get("checks"):
            s += f" (statewright runs the checks {', '.join(t['checks'])} first)"
        parts.append(s)
    return ("Events that move the run on (fire them with the statewright_transition tool "
            "or `statewright transition EVENT`): " + "; ".join(parts) + ".")


# -- for people ----------------------------------------------------------------------------------

def panel(answer: dict[str, Any]) -> list[Segment]:
    """The lines of the `statewright status` panel as (text, rich style) segments."""
    out: list[Segment] = []

    def row(label: str, value: str, style: str = "") -> None:
        out.append((f"{label:<18}", "bold"))
        out.append((value + "\n", style))

    row("workflow", f"{answer.get('workflow')}  (run {answer.get('run_id')}, "
        f"version {answer.get('version')})")
    status = answer.get("status")
    final = "  final" if answer.get("is_final") else ""
    row("state", f"{answer.get('state')}  [{status}]{final}",
        "green" if status == "running" else "yellow")
    if answer.get("instructions"):
        row("instructions", str(answer["instructions"]))
    row("allowed tools", names_text(answer.get("allowed_tools"), "any (no restriction)", "(none)"))
    row("allowed commands", commands_text(answer, "any (no restriction)"))
    if answer.get("blocked_env"):
        row("blocked env", _joined(answer["blocked_env"]))
    counters = answer.get("counters") or {}
    row("counters", ", ".join(people_budget(counters, used, limit, label)
                              for used, limit, label, _sentence in BUDGETS))
    if counters.get("max_edit_lines"):
        row("max edit lines", f"{counters['max_edit_lines']} per edit")
    definition = answer.get("definition") or {}
    if definition.get("changed_since_start"):
        row("workflow file", f"{definition.get('source_path')} changed since this run started: "
            "the run obeys the rules above (the definition it started with); new runs use "
            "the file as it is now", "bold yellow")
    for label, value, style in _people_extras(answer):
        row(label, value, style)
    out.extend(_people_transitions(answer.get("transitions") or []))
    return out


def people_budget(counters: dict[str, Any], used: str, limit: str, label: str) -> str:
    cap = counters.get(limit)
    value = _used(counters, used)
    return f"{label} {value} / {cap}" if cap else f"{label} {value}"


def _people_extras(answer: dict[str, Any]) -> list[tuple[str, str, str]]:
    """The panel rows only some answers have: interrupt, fork, approval, advice, context."""
    rows = []
    if answer.get("interrupt"):
        it = answer["interrupt"]
        rows.append(("interrupt", f"{it.get('name')} (returns to {it.get('return_to')})",
                     "magenta"))
    if answer.get("fork"):
        f = answer["fork"]
        branches = ", ".join(f"{n}: {b.get('status')}"
                             for n, b in (f.get("branches") or {}).items())
        rows.append(("fork", f"join {f.get('join')} -> {f.get('on_complete')}; {branches}", ""))
    if answer.get("pending_approval"):
        pa = answer["pending_approval"]
        rows.append(("pending approval",
                     f"{pa.get('approval_id')}: {pa.get('event')} -> {pa.get('target')} — "
                     f"{pa.get('message')}  (statewright approve {pa.get('approval_id')} / "
                     f"reject {pa.get('approval_id')})", "bold yellow"))
        if pa.get("data"):  # what the agent sent with the event, for the human who decides
            data = dumps(pa["data"], default=str, ensure_ascii=False)
            rows.append(("approval data", data[:300], ""))
    if answer.get("timeout"):
        rows.append(("timeout", timeout_text(answer["timeout"]), "yellow"))
    if answer.get("advice"):
        rows.append(("advice", str(answer["advice"]), "cyan"))
    if answer.get("context"):
        rows.append(("context", dumps(answer["context"], default=str)[:300], ""))
    return rows


def _people_transitions(transitions: list[dict[str, Any]]) -> list[Segment]:
    if not transitions:
        return []
    out: list[Segment] = [("transitions\n", "bold")]
    for t in transitions:
        mark, style = ("✓", "green") if t.get("passes") else ("✗", "red")
        extra = []
        if t.get("guards"):
            extra.append("guards: " + ", ".join(t["guards"]))
        if t.get("requires_approval"):
            extra.append("needs approval")
        if t.get("checks"):
            extra.append("runs checks " + ", ".join(t["checks"]))
        if t.get("invoke"):
            extra.append(f"invokes {t['invoke']}")
        if t.get("fork"):
            extra.append("forks " + ", ".join(t["fork"]))
        tail = f"  ({'; '.join(extra)})" if extra else ""
        target = f" -> {t['target']}" if t.get("target") else ""
        out.append((f"  {mark} ", style))
        out.append((f"{t.get('event')}{target}{tail}\n", ""))
    return out
