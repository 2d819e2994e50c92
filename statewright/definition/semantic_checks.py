"""Semantic checks (DESIGN.md section 2) of checks, state timeouts and interrupt handlers:
the checks a transition names exist and stay in the project, guards that read `_checks` read a
check the transition runs, a timeout always moves, and a handler wider than a state it can
interrupt is named field by field. Called by `semantic.check`; every rule reports with its JSON
Pointer."""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Iterator
from typing import Any

from ..wildcards import name_matches
from .diagnostics import Diagnostic, error, pointer, warning
from .model import ForkTransition, GuardedTransition, InvokeTransition, StateModel, WorkflowModel


def _guard_refs(t: Any, base: str) -> Iterator[tuple[str, str]]:
    if t.guard is not None:
        yield t.guard, base + pointer("guard")
    for i, g in enumerate(t.guards or ()):
        yield g, base + pointer("guards", i)


def has_guards(t: Any) -> bool:
    return t.guard is not None or bool(t.guards)


def _reach(roots: Iterable[str], succ: dict[str, list[str]]) -> set[str]:
    seen = {r for r in roots if r in succ}
    todo = deque(seen)
    while todo:
        for n in succ.get(todo.popleft(), ()):
            if n not in seen and n in succ:
                seen.add(n)
                todo.append(n)
    return seen
_CHECKS_FIELD = "_checks"


def _project_relative_problem(value: str) -> str | None:
    """Why `value` is not a project-relative path (or glob), else None."""
    v = value.replace("\\", "/")
    if v.startswith(("/", "~")) or (len(v) > 1 and v[1] == ":"):
        return "must be relative to the project root, not absolute"
    if ".." in v.split("/"):
        return "must stay inside the project ('..' is refused)"
    return None


def _transition_entries(t: Any) -> list[tuple[Any, str]]:
    """(entry, pointer suffix) of a guarded or branched transition's entries."""
    if isinstance(t, GuardedTransition):
        return [(t, "")]
    if isinstance(t, list):
        return [(b, pointer(i)) for i, b in enumerate(t)]
    return []


def check_checks(m: WorkflowModel) -> list[Diagnostic]:
    """Checks named by transitions exist; their paths stay in the project; guards that read
    `_checks.<name>` name a check, and one that the transition runs (else it reads the outcome
    of an earlier run)."""
    out: list[Diagnostic] = []
    checks = m.checks or {}
    guards = m.guards or {}
    for cname, c in checks.items():
        cp = pointer("checks", cname)
        for key in ("cwd", "report"):
            v = getattr(c, key)
            why = _project_relative_problem(v) if v is not None else None
            if why:
                out.append(error(cp + pointer(key), "bad-path", f"{key} {v!r} {why}"))
        for i, g in enumerate(c.read_only or ()):
            why = _project_relative_problem(g)
            if why:
                out.append(error(cp + pointer("read_only", i), "bad-path", f"{g!r} {why}"))
    used: set[str] = set()
    for sname, st in m.states.items():
        for event, t in (st.on or {}).items():
            tp = pointer("states", sname, "on", event)
            entries = _transition_entries(t)
            runs = {c for e, _ in entries for c in (e.checks or ())}
            for e, ep in entries:
                for i, c in enumerate(e.checks or ()):
                    used.add(c)
                    if c not in checks:
                        hint = (f" (defined checks: {', '.join(sorted(checks))})" if checks
                                else " (no checks are defined)")
                        out.append(error(tp + ep + pointer("checks", i), "unknown-check",
                                         f"check {c!r} is not defined in top-level 'checks'"
                                         f"{hint}"))
                for g, gp in _guard_refs(e, tp + ep):
                    guard = guards.get(g)
                    if guard is None or not guard.field.startswith(_CHECKS_FIELD + "."):
                        continue
                    cname = guard.field.split(".")[1]
                    if cname not in checks:
                        out.append(error(pointer("guards", g, "field"), "unknown-check",
                                         f"guard {g!r} reads the outcome of check {cname!r}, "
                                         "which is not defined in top-level 'checks'"))
                    elif cname not in runs:
                        out.append(warning(gp, "check-not-run",
                                           f"guard {g!r} reads _checks.{cname}, but this "
                                           f"transition does not run check {cname!r}: it "
                                           "sees the outcome of an earlier run (add "
                                           f"\"checks\": [\"{cname}\"])"))
    for cname in checks:
        if cname not in used:
            out.append(warning(pointer("checks", cname), "unused-check",
                               f"check {cname!r} is not run by any transition"))
    return out


def timeout_checks(m: WorkflowModel) -> list[Diagnostic]:
    out: list[Diagnostic] = []
    for name, st in m.states.items():
        sp = pointer("states", name)
        if st.timeout_s is None and st.on_timeout is None:
            continue
        if st.type == "final":
            out.append(error(sp + pointer("timeout_s" if st.timeout_s is not None
                                          else "on_timeout"), "final-has-transitions",
                             f"final state {name!r} cannot time out: reaching it ends the run"))
            continue
        if st.timeout_s is None:
            out.append(error(sp + pointer("on_timeout"), "timeout-incomplete",
                             "on_timeout needs timeout_s (the seconds after which statewright "
                             "fires it)"))
        elif st.on_timeout is None:
            out.append(error(sp + pointer("timeout_s"), "timeout-incomplete",
                             "timeout_s needs on_timeout (the event statewright fires then)"))
        elif st.on_timeout not in (st.on or {}):
            evs = ", ".join(st.on or {}) or "none"
            out.append(error(sp + pointer("on_timeout"), "unknown-event",
                             f"on_timeout {st.on_timeout!r} is not an event of this state's "
                             f"'on' (events: {evs})"))
        else:
            t = (st.on or {})[st.on_timeout]
            entries = _transition_entries(t)
            if isinstance(t, (InvokeTransition, ForkTransition)) or any(
                    e.checks for e, _ in entries) or (entries and has_guards(entries[-1][0])) \
                    or (isinstance(t, GuardedTransition) and t.requires_approval):
                out.append(error(sp + pointer("on", st.on_timeout), "timeout-may-not-move",
                                 f"the transition of on_timeout {st.on_timeout!r} must always "
                                 "move: a target, or branches ending in a default; no checks, "
                                 "no approval, no invoke or fork"))
    return out


def _tools_wider(handler: list[str] | None, base: list[str] | None) -> bool:
    if handler is None:
        return base is not None
    if base is None:
        return False
    return any(not any(name_matches(b, h) or b == h for b in base) for h in handler)


def _limit_wider(handler: int | None, base: int | None) -> bool:
    return base is not None and (handler is None or handler > base)


def wider_fields(handler: StateModel, base: StateModel) -> list[str]:
    """The fields in which `handler` allows more than `base` refuses (by the rules as written:
    names and limits; an allowed command prefix counts as wider unless `base` has it too)."""
    out: list[str] = []
    if _tools_wider(handler.allowed_tools, base.allowed_tools):
        out.append("allowed_tools")
    if set(base.disallowed_tools or ()) - set(handler.disallowed_tools or ()):
        out.append("disallowed_tools")
    hc, bc = handler.allowed_commands, base.allowed_commands
    if bc is not None and (hc is None or set(hc) - set(bc)):
        out.append("allowed_commands")
    hb = handler.blocked_env if handler.blocked_env is not None else handler.deny_env
    bb = base.blocked_env if base.blocked_env is not None else base.deny_env
    if set(bb or ()) - set(hb or ()):
        out.append("blocked_env")
    for f in ("max_edit_lines", "max_files_per_state", "max_iterations",
              "context_budget_bytes"):
        if _limit_wider(getattr(handler, f), getattr(base, f)):
            out.append(f)
    return out


def widening_checks(m: WorkflowModel, succ: dict[str, list[str]]) -> list[Diagnostic]:
    """An interrupt handler whose rules are wider than a state it can interrupt: named, field by
    field. Without `widen: true` the interrupted state's rules still apply while the handler is
    active (the handler grants nothing); with it, the handler grants them on purpose."""
    out: list[Diagnostic] = []
    states = m.states
    for iname, it in (m.interrupts or {}).items():
        if it.target not in states:
            continue
        handlers = _reach([it.target], succ)
        wider: dict[str, list[str]] = {}
        for h in sorted(handlers):
            hs = states[h]
            if hs.type == "final":
                continue
            for sname, st in states.items():
                if sname in handlers or st.type == "final":
                    continue
                for f in wider_fields(hs, st):
                    wider.setdefault(f, [])
                    if sname not in wider[f]:
                        wider[f].append(sname)
        if not wider:
            continue
        named = "; ".join(f"{f} (wider than {', '.join(ss[:4])}"
                          f"{', ...' if len(ss) > 4 else ''})" for f, ss in wider.items())
        if it.widen:
            msg = (f"interrupt {iname!r} sets widen: the handler grants what the interrupted "
                   f"state refused: {named}")
        else:
            msg = (f"interrupt {iname!r}: the handler's rules are wider in {named}; while it "
                   "handles an interrupt the interrupted state's rules apply too (set "
                   "\"widen\": true to let the handler grant them)")
        out.append(warning(pointer("interrupts", iname, "target"), "handler-wider", msg))
    return out
