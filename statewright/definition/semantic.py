"""Stage 3: semantic checks (DESIGN.md section 2) on the typed model.

Every rule reports with the JSON Pointer of the offending value, and all problems are reported
at once. Errors make the document invalid; warnings do not.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from ..wildcards import name_matches
from .compiled import RETURN_TARGET
from .diagnostics import Diagnostic, error, pointer, warning
from .model import (
    BranchEntry,
    ForkTransition,
    GuardedTransition,
    InvokeTransition,
    StateModel,
    WorkflowModel,
)
from .semantic_checks import check_checks, timeout_checks, widening_checks

Resolver = Callable[[str], "bool | None"]

AGENT_FIELDS = ("model", "thinking_level", "model_ladder", "direct_execution")
_AGENT_ATTRS = {"model": "agent_model", "thinking_level": "thinking_level",
                "model_ladder": "model_ladder", "direct_execution": "direct_execution"}
_VALUE_OPS = ("eq", "neq", "gt", "gte", "lt", "lte", "in", "contains")
_ORDER_OPS = ("gt", "gte", "lt", "lte")


@dataclass
class Ref:
    """A state name used somewhere, with where."""

    name: str
    ptr: str
    # "target" | "safe_next" | "on_complete" | "on_fail" | "fork_initial" | "fork_terminal"
    kind: str


@dataclass
class StateEdges:
    targets: list[Ref] = field(default_factory=list)  # every direct successor reference
    fork_initials: list[Ref] = field(default_factory=list)
    guard_refs: list[tuple[str, str]] = field(default_factory=list)  # (guard name, pointer)
    invokes: list[tuple[str, str]] = field(default_factory=list)  # (workflow id, pointer)
    uses_return: list[str] = field(default_factory=list)  # pointers of "$return" targets


def _guard_refs(t: GuardedTransition | BranchEntry, base: str) -> Iterator[tuple[str, str]]:
    if t.guard is not None:
        yield t.guard, base + pointer("guard")
    for i, g in enumerate(t.guards or ()):
        yield g, base + pointer("guards", i)


def has_guards(t: GuardedTransition | BranchEntry) -> bool:
    return t.guard is not None or bool(t.guards)


def collect_edges(name: str, st: StateModel) -> StateEdges:
    e = StateEdges()
    base = pointer("states", name)
    if st.safe_next is not None:
        e.targets.append(Ref(st.safe_next, base + pointer("safe_next"), "safe_next"))
    for event, t in (st.on or {}).items():
        tp = base + pointer("on", event)
        if isinstance(t, str):
            e.targets.append(Ref(t, tp, "target"))
        elif isinstance(t, GuardedTransition):
            e.targets.append(Ref(t.target, tp + pointer("target"), "target"))
            e.guard_refs.extend(_guard_refs(t, tp))
        elif isinstance(t, list):
            for i, b in enumerate(t):
                bp = tp + pointer(i)
                e.targets.append(Ref(b.target, bp + pointer("target"), "target"))
                e.guard_refs.extend(_guard_refs(b, bp))
        elif isinstance(t, InvokeTransition):
            e.targets.append(Ref(t.on_complete, tp + pointer("on_complete"), "on_complete"))
            if t.on_fail is not None:
                e.targets.append(Ref(t.on_fail, tp + pointer("on_fail"), "on_fail"))
            e.invokes.append((t.invoke, tp + pointer("invoke")))
        elif isinstance(t, ForkTransition):
            f = t.fork
            fp = tp + pointer("fork")
            e.targets.append(Ref(f.on_complete, fp + pointer("on_complete"), "on_complete"))
            if f.on_fail is not None:
                e.targets.append(Ref(f.on_fail, fp + pointer("on_fail"), "on_fail"))
            for bname, br in f.branches.items():
                bp = fp + pointer("branches", bname)
                e.fork_initials.append(Ref(br.initial, bp + pointer("initial"), "fork_initial"))
                e.fork_initials.append(Ref(br.terminal, bp + pointer("terminal"), "fork_terminal"))
    for r in e.targets:
        if r.name == RETURN_TARGET:
            e.uses_return.append(r.ptr)
    return e


def _reach(roots: Iterable[str], succ: dict[str, list[str]]) -> set[str]:
    seen: set[str] = set()
    todo = deque(r for r in roots if r in succ)
    seen.update(todo)
    while todo:
        s = todo.popleft()
        for n in succ.get(s, ()):
            if n not in seen and n in succ:
                seen.add(n)
                todo.append(n)
    return seen


def _tool_allows_bash(entries: Iterable[str]) -> bool:
    return any(name_matches(e, "Bash") for e in entries)


def check(m: WorkflowModel, raw: dict[str, Any],
          resolver: Resolver | None = None) -> list[Diagnostic]:
    """Every semantic diagnostic of the document, in DESIGN's order of the rules."""
    out: list[Diagnostic] = []
    states = m.states
    edges = {name: collect_edges(name, st) for name, st in states.items()}
    out.extend(_field_checks(m, raw))
    out.extend(_meta_checks(m))
    finals = {n for n, s in states.items() if s.type == "final"}
    out.extend(_initial_and_final_checks(m, finals))
    for name, st in states.items():
        out.extend(_state_reference_checks(m, name, st, edges[name]))
    out.extend(_interrupt_checks(m))
    out.extend(_guard_checks(m, edges))
    out.extend(_sandbox_checks(m))
    out.extend(check_checks(m))
    out.extend(timeout_checks(m))
    out.extend(widening_checks(m, {n: [r.name for r in e.targets if r.name in states]
                                   for n, e in edges.items()}))

    # -- allowed_commands without Bash ---------------------------------------------------------
    for name, st in states.items():
        if st.allowed_commands is not None and st.allowed_tools is not None and \
                not _tool_allows_bash(st.allowed_tools):
            out.append(warning(pointer("states", name, "allowed_commands"),
                               "commands-without-bash",
                               "allowed_commands has no effect on Bash here: allowed_tools does "
                               "not include 'Bash'"))

    # -- graph: reachability, $return, dead ends, forks ---------------------------------------
    out.extend(_graph_checks(m, edges, finals, m.initial in states))

    # -- invoke ------------------------------------------------------------------------------------
    out.extend(_invoke_checks(m, edges, resolver))
    return out


def _meta_checks(m: WorkflowModel) -> list[Diagnostic]:
    """`meta` settings that change what is enforced: debug (the agent may jump anywhere and
    pause), and approvals that only park a transition under `approval_mode: "ui"`."""
    out: list[Diagnostic] = []
    meta = m.meta
    if meta is not None and meta.debug is True:
        out.append(warning(pointer("meta", "debug"), "debug-workflow",
                           "meta.debug lets the agent force any state and pause enforcement; "
                           "use it while writing a workflow, never in one agents run"))
    if meta is not None and meta.approval_mode == "ui":
        return out
    for name, st in m.states.items():
        for event, t in (st.on or {}).items():
            if isinstance(t, GuardedTransition) and t.requires_approval:
                out.append(warning(
                    pointer("states", name, "on", event, "requires_approval"),
                    "approval-not-enforced",
                    "requires_approval parks the transition for a human only when "
                    "meta.approval_mode is \"ui\"; here it is advice and the transition "
                    "goes straight through"))
    return out


_IGNORED_FIELD = "{!r} is used by Statewright's agent layer; statewright accepts and ignores it"


def _field_checks(m: WorkflowModel, raw: dict[str, Any]) -> list[Diagnostic]:
    """Fields accepted for compatibility and ignored; aliases given together."""
    out: list[Diagnostic] = []
    for f in AGENT_FIELDS:
        if f in raw:
            out.append(warning(pointer(f), "ignored-field", _IGNORED_FIELD.format(f)))
    for name, st in m.states.items():
        raw_st = raw["states"][name]
        for f in AGENT_FIELDS:
            if f in raw_st:
                out.append(warning(pointer("states", name, f), "ignored-field",
                                   _IGNORED_FIELD.format(f)))
        if st.blocked_env is not None and st.deny_env is not None:
            out.append(error(pointer("states", name, "deny_env"), "alias-conflict",
                             "'deny_env' is an alias of 'blocked_env'; give only one of them"))
        if st.env_overrides is not None and st.env is not None:
            out.append(error(pointer("states", name, "env"), "alias-conflict",
                             "'env' is an alias of 'env_overrides'; give only one of them"))
    return out


def _initial_and_final_checks(m: WorkflowModel, finals: set[str]) -> list[Diagnostic]:
    out: list[Diagnostic] = []
    if m.initial not in m.states:
        out.append(error(pointer("initial"), "unknown-state",
                         f"initial state {m.initial!r} is not defined in 'states'"
                         f"{_known(m.states, m.initial)}"))
    if not finals:
        out.append(error(pointer("states"), "no-final-state",
                         "no final state: mark at least one state with \"type\": \"final\""))
    return out


_REF_WHAT = {"target": "target", "safe_next": "safe_next", "on_complete": "on_complete",
             "on_fail": "on_fail", "fork_initial": "fork branch initial",
             "fork_terminal": "fork branch terminal"}


def _state_reference_checks(m: WorkflowModel, name: str, st: StateModel,
                            e: StateEdges) -> list[Diagnostic]:
    """A state's references to states and guards, and the shape of its transitions."""
    out: list[Diagnostic] = []
    states = m.states
    guards = m.guards or {}
    is_final = st.type == "final"
    if is_final and st.on:
        out.append(error(pointer("states", name, "on"), "final-has-transitions",
                         f"final state {name!r} cannot have transitions: reaching it ends the run"))
    if is_final and st.safe_next is not None:
        out.append(error(pointer("states", name, "safe_next"), "final-has-transitions",
                         f"final state {name!r} cannot have safe_next: reaching it ends the run"))
    for r in e.targets + e.fork_initials:
        if r.name == RETURN_TARGET:
            if r.kind not in ("target", "safe_next"):
                out.append(error(r.ptr, "illegal-return",
                                 "\"$return\" is only a target of simple, guarded or branched "
                                 f"transitions (and safe_next), not of {r.kind.replace('_', ' ')}"))
            continue
        if r.name not in states:
            out.append(error(r.ptr, "unknown-state",
                             f"{_REF_WHAT[r.kind]} {r.name!r} is not a state of this workflow"
                             f"{_known(states, r.name)}"))
    for g, gp in e.guard_refs:
        if g not in guards:
            hint = (f" (defined guards: {', '.join(sorted(guards))})" if guards
                    else " (no guards are defined)")
            out.append(error(gp, "unknown-guard",
                             f"guard {g!r} is not defined in top-level 'guards'"
                             f"{did_you_mean(g, list(guards))}{hint}"))
    for event, t in (st.on or {}).items():
        tp = pointer("states", name, "on", event)
        if isinstance(t, list):
            for i, b in enumerate(t):
                if not has_guards(b) and i != len(t) - 1:
                    out.append(error(tp + pointer(i), "default-branch-not-last",
                                     "a branch without guards is the default and must be the last "
                                     "(and only) unguarded entry; later entries could never be "
                                     "taken"))
        if (isinstance(t, GuardedTransition) and t.approval_message is not None
                and not t.requires_approval):
            out.append(warning(tp + pointer("approval_message"), "approval-message-unused",
                               "approval_message has no effect without "
                               "\"requires_approval\": true"))
    return out


def _interrupt_checks(m: WorkflowModel) -> list[Diagnostic]:
    out: list[Diagnostic] = []
    states = m.states
    for iname, it in (m.interrupts or {}).items():
        ip = pointer("interrupts", iname)
        if it.target == RETURN_TARGET:
            out.append(error(ip + pointer("target"), "illegal-return",
                             "an interrupt target must be a handler state, not \"$return\""))
        elif it.target not in states:
            out.append(error(ip + pointer("target"), "unknown-state",
                             f"interrupt target {it.target!r} is not a state of this workflow"
                             f"{_known(states, it.target)}"))
        elif states[it.target].type == "final":
            out.append(warning(ip + pointer("target"), "interrupt-to-final",
                               f"interrupt target {it.target!r} is a final state: a matching "
                               "change ends the run"))
        pat = it.trigger.file_pattern
        if pat.startswith("/") or "\\" in pat or pat.startswith("../") or "/../" in pat:
            out.append(warning(ip + pointer("trigger", "file_pattern"), "pattern-never-matches",
                               "file_pattern is matched against project-relative paths with '/' "
                               "separators; a leading '/', '..' or '\\' never matches"))
    return out


def read_only_problem(pattern: str) -> str | None:
    """Why a `read_only` glob could never name a project path: it must be project-relative
    with '/' separators (a pattern that never matches would protect nothing, silently)."""
    if pattern.startswith(("/", "~")) or (len(pattern) > 1 and pattern[1] == ":"
                                          and pattern[0].isalpha()):
        return "must be relative to the project root, not absolute"
    if "\\" in pattern:
        return "separates directories with '/', not '\\'"
    if ".." in pattern.split("/"):
        return "may not leave the project ('..')"
    return None


#: the state fields only a sandboxed line obeys (`sandbox: "off"` makes them ineffective)
_SANDBOX_ONLY = (("network", False), ("unix_sockets", True))


def _sandbox_checks(m: WorkflowModel) -> list[Diagnostic]:
    """`read_only` globs that could never match (errors); kernel-tier settings that have no
    effect where they are given (warnings)."""
    out: list[Diagnostic] = []
    for name, st in m.states.items():
        sp = pointer("states", name)
        for i, pat in enumerate(st.read_only or ()):
            why = read_only_problem(pat)
            if why:
                out.append(error(sp + pointer("read_only", i), "bad-read-only",
                                 f"read_only pattern {pat!r} {why}: patterns are globs over "
                                 "project-relative paths such as \"tests/**\""))
        given = [f for f in ("read_only", "sandbox", "network", "unix_sockets")
                 if getattr(st, f) is not None]
        if st.type == "final":
            for f in given:
                out.append(warning(sp + pointer(f), "ignored-in-final",
                                   f"{f} has no effect in a final state: nothing is enforced "
                                   "there"))
            continue
        if st.sandbox != "off":
            continue
        for f, value in _SANDBOX_ONLY:
            if getattr(st, f) is value:
                out.append(warning(sp + pointer(f), "needs-sandbox",
                                   f"{f} applies to sandboxed lines only, and this state sets "
                                   "sandbox to \"off\""))
        if st.read_only:
            out.append(warning(sp + pointer("read_only"), "needs-sandbox",
                               "with sandbox \"off\", read_only is enforced by the analysis "
                               "alone: code an allowed command runs (a test, a build script) "
                               "can still change these paths"))
    return out


def _guard_checks(m: WorkflowModel, edges: dict[str, StateEdges]) -> list[Diagnostic]:
    out: list[Diagnostic] = []
    used = {g for e in edges.values() for g, _ in e.guard_refs}
    for gname, g in (m.guards or {}).items():
        gp = pointer("guards", gname)
        has_value = "value" in g.model_fields_set
        if g.op in _VALUE_OPS and not has_value:
            out.append(error(gp, "guard-missing-value",
                             f"guard op {g.op!r} needs a 'value' to compare with"))
        elif g.op == "in" and not isinstance(g.value, list):
            out.append(error(gp + pointer("value"), "guard-bad-value",
                             "guard op 'in' needs a list 'value' (the field must equal one of its "
                             "items)"))
        elif g.op in _ORDER_OPS and (isinstance(g.value, bool)
                                     or not isinstance(g.value, (int, float, str))):
            out.append(error(gp + pointer("value"), "guard-bad-value",
                             f"guard op {g.op!r} compares numbers or strings; this value could "
                             "never pass"))
        elif g.op in ("exists", "not_exists") and has_value:
            out.append(warning(gp + pointer("value"), "guard-value-ignored",
                               f"guard op {g.op!r} ignores 'value'"))
        if gname not in used:
            out.append(warning(gp, "unused-guard",
                               f"guard {gname!r} is not used by any transition"))
    return out


def _known(states: dict[str, Any], wrong: str | None = None) -> str:
    names = list(states)
    shown = ", ".join(names[:12]) + (", ..." if len(names) > 12 else "")
    return f"{did_you_mean(wrong, names)} (states: {shown})"


def did_you_mean(wrong: str | None, names: list[str]) -> str:
    """` (did you mean 'x'?)` for the closest of `names` to a misspelt name, else ''."""
    import difflib

    if not isinstance(wrong, str):
        return ""
    hint = difflib.get_close_matches(wrong, names, n=1, cutoff=0.7)
    if not hint:  # a different case is a near miss too (`Done` for `done`)
        hint = [n for n in names if n.lower() == wrong.lower()][:1]
    return f" (did you mean {hint[0]!r}?)" if hint else ""


def _graph_checks(m: WorkflowModel, edges: dict[str, StateEdges], finals: set[str],
                  has_initial: bool) -> list[Diagnostic]:
    """Reachability, where `$return` is legal, dead ends, fork branches."""
    states = m.states
    interrupts = m.interrupts or {}
    # Successors on the "main" graph (no fork branch entry) and with fork branch entry.
    outside: dict[str, list[str]] = {}
    full: dict[str, list[str]] = {}
    for n, e in edges.items():
        direct = [r.name for r in e.targets if r.name in states]
        inits = [r.name for r in e.fork_initials if r.kind == "fork_initial" and r.name in states]
        outside[n] = direct
        full[n] = direct + inits
    handler_roots = [it.target for it in interrupts.values() if it.target in states]
    fork_roots = [r.name for e in edges.values() for r in e.fork_initials
                  if r.kind == "fork_initial" and r.name in states]

    normal = _reach([m.initial], full)
    handlers = _reach(handler_roots, full)
    reachable = normal | handlers | _reach(fork_roots, full)
    out: list[Diagnostic] = []
    for n in states:
        if has_initial and n not in reachable:
            out.append(error(pointer("states", n), "unreachable-state",
                             f"state {n!r} is not reachable from the initial state {m.initial!r}, "
                             "an interrupt target or a fork branch"))
    out.extend(_return_checks(edges, bool(interrupts), has_initial, normal, handlers))
    if not has_initial or not finals:
        return out  # already errors; dead-end and fork warnings would only add noise
    out.extend(_dead_end_checks(m, edges, full, finals, normal, reachable))
    out.extend(_fork_branch_checks(m, edges, _reach([m.initial, *handler_roots], outside),
                                   outside))
    return out


def _return_checks(edges: dict[str, StateEdges], has_interrupts: bool, has_initial: bool,
                   normal: set[str], handlers: set[str]) -> list[Diagnostic]:
    out: list[Diagnostic] = []
    for n, e in edges.items():
        for ptr in e.uses_return:
            if not has_interrupts:
                out.append(error(ptr, "illegal-return",
                                 "\"$return\" is only legal in interrupt handler states, and this "
                                 "workflow has no interrupts"))
            elif has_initial and (n in normal or n not in handlers):
                out.append(error(ptr, "illegal-return",
                                 "\"$return\" is only legal in states reachable only as "
                                 f"interrupt handlers; state {n!r} is also reachable from the "
                                 "initial state"
                                 if n in normal else
                                 "\"$return\" is only legal in interrupt handler states; "
                                 f"{n!r} is not reachable from an interrupt target"))
    return out


def _dead_end_checks(m: WorkflowModel, edges: dict[str, StateEdges],
                     full: dict[str, list[str]], finals: set[str], normal: set[str],
                     reachable: set[str]) -> list[Diagnostic]:
    """Can each state reach a final state? `$return` leads back to some non-final normal state."""
    rev: dict[str, set[str]] = {n: set() for n in m.states}
    for n, succ in full.items():
        for s in succ:
            rev[s].add(n)
    returns_to = [s for s in normal if s not in finals]
    for n, e in edges.items():
        if e.uses_return:
            for s in returns_to:
                rev[s].add(n)
    can_finish = _reach(finals, {k: list(v) for k, v in rev.items()})
    return [warning(pointer("states", n), "no-path-to-final",
                    f"no final state is reachable from {n!r}: a run that gets here can never "
                    "complete")
            for n in m.states if n not in finals and n in reachable and n not in can_finish]


def _fork_branch_checks(m: WorkflowModel, edges: dict[str, StateEdges], outside_reach: set[str],
                        outside: dict[str, list[str]]) -> list[Diagnostic]:
    """Fork branches: terminal final & reachable; branch states private to their branch."""
    out: list[Diagnostic] = []
    states = m.states
    owner: dict[str, str] = {}
    for e in edges.values():
        for r in e.fork_initials:
            if r.kind != "fork_initial" or r.name not in states:
                continue
            bptr = r.ptr.rsplit("/", 1)[0]
            term_ref = next((t for t in e.fork_initials if t.kind == "fork_terminal"
                             and t.ptr.rsplit("/", 1)[0] == bptr), None)
            branch_states = _reach([r.name], outside)
            if term_ref is not None and term_ref.name in states:
                out.extend(_fork_terminal_checks(m, term_ref, r.name, branch_states))
            for s in branch_states:
                if states[s].type == "final":
                    continue  # shared failure states are the normal way for a branch to fail
                if s in outside_reach:
                    out.append(warning(pointer("states", s), "fork-branch-shared",
                                       f"state {s!r} belongs to fork branch "
                                       f"{bptr.rsplit('/', 1)[-1]!r} but is also reachable from "
                                       "outside it"))
                elif s in owner and owner[s] != bptr:
                    out.append(warning(pointer("states", s), "fork-branch-shared",
                                       f"state {s!r} is part of more than one fork branch"))
                owner.setdefault(s, bptr)
    return out


def _fork_terminal_checks(m: WorkflowModel, term_ref: Ref, initial: str,
                          branch_states: set[str]) -> list[Diagnostic]:
    out: list[Diagnostic] = []
    if m.states[term_ref.name].type != "final":
        out.append(warning(term_ref.ptr, "fork-terminal-not-final",
                           f"branch terminal {term_ref.name!r} is not a final state; the branch "
                           "completes only when BRANCH_DONE is sent in it"))
    if term_ref.name not in branch_states:
        out.append(warning(term_ref.ptr, "fork-terminal-unreachable",
                           f"branch terminal {term_ref.name!r} is not reachable from the branch "
                           f"initial {initial!r}: the branch can never complete"))
    return out


def _invoke_checks(m: WorkflowModel, edges: dict[str, StateEdges],
                   resolver: Resolver | None) -> list[Diagnostic]:
    out: list[Diagnostic] = []
    invokes_of = getattr(resolver, "invokes", None)
    for e in edges.values():
        for wid, ptr in e.invokes:
            if wid == m.id:
                out.append(error(ptr, "invoke-cycle", f"workflow {m.id!r} invokes itself"))
                continue
            found: bool | None
            if resolver is None:
                found = None
            else:
                try:
                    found = resolver(wid)
                except Exception:  # a resolver problem must not break validation
                    found = None
            if found is False:
                out.append(error(ptr, "unknown-workflow",
                                 f"invoked workflow {wid!r} is not on the workflow search path"))
            elif found is None:
                out.append(warning(ptr, "invoke-unresolved",
                                   f"cannot tell whether workflow {wid!r} exists (no search "
                                   "path to look in)"))
            elif callable(invokes_of):
                chain = _find_cycle(m.id, wid, invokes_of)
                if chain:
                    out.append(error(ptr, "invoke-cycle",
                                     "invoke cycle: " + " -> ".join([m.id, *chain])))
    return out


def _find_cycle(root: str, start: str, invokes_of: Callable[[str], Any]) -> list[str] | None:
    """Path start -> ... -> root through invoke edges, if any (bounded DFS)."""
    stack: list[tuple[str, list[str]]] = [(start, [start])]
    seen: set[str] = set()
    while stack:
        node, path = stack.pop()
        if node in seen:
            continue
        seen.add(node)
        try:
            nxt = invokes_of(node) or ()
        except Exception:
            nxt = ()
        for n in nxt:
            if n == root:
                return [*path, root]
            if n not in seen and len(path) < 256:
                stack.append((n, [*path, n]))
    return None

