"""Stage 4: typed model -> `CompiledWorkflow` (the normalisation described in compiled.py)."""

from __future__ import annotations

import copy
import hashlib
import json
from typing import Any

from .compiled import (
    DEFAULT_CHECK_TIMEOUT_S,
    Branch,
    Check,
    CompiledWorkflow,
    Fork,
    ForkBranch,
    Guard,
    Interrupt,
    State,
    Transition,
)
from .model import ForkTransition, GuardedTransition, InvokeTransition, StateModel, WorkflowModel


def canonical_json(doc: Any) -> str:
    return json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      allow_nan=False)


def digest_of(doc: Any) -> str:
    return hashlib.sha256(canonical_json(doc).encode("utf-8")).hexdigest()


def _merged_guards(t: Any) -> tuple[str, ...]:
    out: list[str] = []
    if t.guard is not None:
        out.append(t.guard)
    out.extend(t.guards or ())
    return tuple(out)


def _checks_of(entries: Any) -> tuple[str, ...]:
    """The checks a transition runs: every entry's, in order, each once."""
    return tuple(dict.fromkeys(c for e in entries for c in (e.checks or ())))


def _transition(event: str, t: Any) -> Transition:
    if isinstance(t, str):
        return Transition(event=event, kind="simple", branches=(Branch(t),))
    if isinstance(t, GuardedTransition):
        return Transition(event=event, kind="guarded",
                          branches=(Branch(t.target, _merged_guards(t)),),
                          requires_approval=bool(t.requires_approval),
                          approval_message=t.approval_message, checks=_checks_of([t]))
    if isinstance(t, list):
        return Transition(event=event, kind="branched",
                          branches=tuple(Branch(b.target, _merged_guards(b)) for b in t),
                          checks=_checks_of(t))
    if isinstance(t, InvokeTransition):
        return Transition(event=event, kind="invoke", invoke=t.invoke, on_complete=t.on_complete,
                          on_fail=t.on_fail, input=copy.deepcopy(t.input or {}))
    if isinstance(t, ForkTransition):
        f = t.fork
        return Transition(event=event, kind="fork", fork=Fork(
            branches={n: ForkBranch(b.initial, b.terminal) for n, b in f.branches.items()},
            join=f.join or "all", on_complete=f.on_complete, on_fail=f.on_fail))
    raise TypeError(f"unexpected transition form: {type(t).__name__}")  # pragma: no cover


def _state(name: str, s: StateModel) -> State:
    blocked = s.blocked_env if s.blocked_env is not None else s.deny_env
    overrides = s.env_overrides if s.env_overrides is not None else s.env
    return State(
        name=name,
        final=s.type == "final",
        instructions=s.instructions,
        allowed_tools=None if s.allowed_tools is None else tuple(s.allowed_tools),
        disallowed_tools=tuple(s.disallowed_tools or ()),
        allowed_commands=None if s.allowed_commands is None else tuple(s.allowed_commands),
        blocked_env=tuple(blocked or ()),
        env_overrides=dict(overrides or {}),
        max_iterations=s.max_iterations,
        max_edit_lines=s.max_edit_lines,
        max_files_per_state=s.max_files_per_state,
        context_budget_bytes=s.context_budget_bytes,
        safe_next=s.safe_next,
        read_only=tuple(s.read_only or ()),
        sandbox=s.sandbox or "auto",
        network=True if s.network is None else s.network,
        unix_sockets=bool(s.unix_sockets),
        on={e: _transition(e, t) for e, t in (s.on or {}).items()},
        timeout_s=s.timeout_s,
        on_timeout=s.on_timeout,
    )


def _check(name: str, c: Any) -> Check:
    exits = c.expect_exit if c.expect_exit is not None else 0
    return Check(name, c.run, c.cwd.strip("/") if c.cwd else None,
                 c.timeout_s if c.timeout_s is not None else DEFAULT_CHECK_TIMEOUT_S,
                 tuple(c.read_only or ()),
                 tuple(exits) if isinstance(exits, list) else (exits,), c.report)


def build(m: WorkflowModel, raw: dict[str, Any],
          source_path: str | None = None) -> CompiledWorkflow:
    meta: dict[str, Any] = {}
    if isinstance(raw.get("meta"), dict):
        meta = copy.deepcopy(raw["meta"])  # keeps unknown keys verbatim
    return CompiledWorkflow(
        id=m.id,
        initial=m.initial,
        states={n: _state(n, s) for n, s in m.states.items()},
        context=copy.deepcopy(raw.get("context") or {}),
        guards={n: Guard(n, g.field, g.op, copy.deepcopy(g.value), "value" in g.model_fields_set)
                for n, g in (m.guards or {}).items()},
        interrupts=tuple(Interrupt(n, i.trigger.file_pattern, i.target, i.widen is True)
                         for n, i in (m.interrupts or {}).items()),
        checks={n: _check(n, c) for n, c in (m.checks or {}).items()},
        meta=meta,
        source_path=source_path,
        digest=digest_of(raw),
    )
