"""The compiled form of a workflow: plain, immutable data.

`CompiledWorkflow` is what every layer above `definition/` works with. It is built by
`statewright.definition.compile_dict` (which has already checked the document against the
schema and the semantic rules) and is deliberately free of pydantic/jsonschema so the hook can
load it from the store (`CompiledWorkflow.from_dict(json.loads(...))`) in microseconds.

Normalisation done at compile time, so no later layer has to care about the surface syntax:
- aliases are resolved: `deny_env` -> `blocked_env`, `env` -> `env_overrides`;
- every transition, whatever its form, becomes one `Transition` with a `kind`:
  `simple` / `guarded` / `branched` have `branches` (a simple transition is one branch with no
  guards; `guard` and `guards` are merged into one tuple of guard names, in that order);
  `invoke` has `invoke`/`on_complete`/`on_fail`/`input`; `fork` has `fork`;
- omitted lists stay `None` where "omitted" means something different from "empty"
  (`allowed_tools`, `allowed_commands`).
"""

from __future__ import annotations

from ..lean import TYPE_CHECKING, Record, set_field

if TYPE_CHECKING:
    from typing import Any

RETURN_TARGET = "$return"
BRANCH_DONE_PREFIX = "BRANCH_DONE:"
GUARD_OPS = ("eq", "neq", "gt", "gte", "lt", "lte", "in", "contains", "exists", "not_exists")
TRANSITION_KINDS = ("simple", "guarded", "branched", "invoke", "fork")
#: a state's `sandbox` setting: kernel-bound where the machine allows ("auto", the default),
#: lines that need the kernel refused where it is unavailable ("required"), analysis alone ("off")
SANDBOX_MODES = ("auto", "required", "off")

# The classes below are immutable records (see `statewright._record`): no dataclasses, so the
# hook can import them cheaply. The class-level annotations only tell type checkers the fields.


class Guard(Record):
    __slots__ = __match_args__ = _fields = ("name", "field", "op", "value", "has_value")
    name: str
    field: str
    op: str
    value: Any
    has_value: bool

    def __init__(self, name: str, field: str, op: str, value: Any = None,
                 has_value: bool = False) -> None:
        set_field(self, "name", name)
        set_field(self, "field", field)  # dotted path into context, e.g. "review.score"
        set_field(self, "op", op)  # one of GUARD_OPS
        set_field(self, "value", value)
        set_field(self, "has_value", has_value)  # an explicit `"value": null` vs an absent value


class Branch(Record):
    """One candidate target of a simple/guarded/branched transition."""

    __slots__ = __match_args__ = _fields = ("target", "guards")
    target: str
    guards: tuple[str, ...]

    def __init__(self, target: str, guards: tuple[str, ...] = ()) -> None:
        set_field(self, "target", target)
        set_field(self, "guards", guards)


class ForkBranch(Record):
    __slots__ = __match_args__ = _fields = ("initial", "terminal")
    initial: str
    terminal: str

    def __init__(self, initial: str, terminal: str) -> None:
        set_field(self, "initial", initial)
        set_field(self, "terminal", terminal)


class Fork(Record):
    __slots__ = __match_args__ = _fields = ("branches", "join", "on_complete", "on_fail")
    branches: dict[str, ForkBranch]
    join: str
    on_complete: str
    on_fail: str | None

    def __init__(self, branches: dict[str, ForkBranch], join: str, on_complete: str,
                 on_fail: str | None = None) -> None:
        set_field(self, "branches", branches)  # insertion order = sequential order
        set_field(self, "join", join)  # "all" | "any"
        set_field(self, "on_complete", on_complete)
        set_field(self, "on_fail", on_fail)


class Transition(Record):
    __slots__ = __match_args__ = _fields = (
        "event", "kind", "branches", "requires_approval", "approval_message", "invoke",
        "on_complete", "on_fail", "input", "fork", "checks")
    event: str
    kind: str
    branches: tuple[Branch, ...]
    requires_approval: bool
    approval_message: str | None
    invoke: str | None
    on_complete: str | None
    on_fail: str | None
    input: dict[str, Any]
    fork: Fork | None
    checks: tuple[str, ...]

    def __init__(self, event: str, kind: str, branches: tuple[Branch, ...] = (),
                 requires_approval: bool = False, approval_message: str | None = None,
                 invoke: str | None = None, on_complete: str | None = None,
                 on_fail: str | None = None, input: dict[str, Any] | None = None,
                 fork: Fork | None = None, checks: tuple[str, ...] = ()) -> None:
        set_field(self, "event", event)
        set_field(self, "kind", kind)  # one of TRANSITION_KINDS
        set_field(self, "branches", branches)  # simple / guarded / branched
        set_field(self, "requires_approval", requires_approval)  # guarded only
        set_field(self, "approval_message", approval_message)
        set_field(self, "invoke", invoke)  # invoke: workflow id
        set_field(self, "on_complete", on_complete)  # invoke
        set_field(self, "on_fail", on_fail)  # invoke
        set_field(self, "input", {} if input is None else input)  # invoke
        set_field(self, "fork", fork)
        # the checks statewright runs itself when the event fires, before guards (every
        # branch's, in order, each once): simple / guarded / branched
        set_field(self, "checks", checks)

    def targets(self) -> tuple[str, ...]:
        """Every state this transition can lead to directly (for graphs and reachability)."""
        if self.kind == "invoke":
            return tuple(t for t in (self.on_complete, self.on_fail) if t)
        if self.kind == "fork" and self.fork is not None:
            out = [self.fork.on_complete]
            if self.fork.on_fail:
                out.append(self.fork.on_fail)
            return tuple(out)
        return tuple(b.target for b in self.branches)


class State(Record):
    __slots__ = __match_args__ = _fields = (
        "name", "final", "instructions", "allowed_tools", "disallowed_tools", "allowed_commands",
        "blocked_env", "env_overrides", "max_iterations", "max_edit_lines", "max_files_per_state",
        "context_budget_bytes", "safe_next", "on", "read_only", "sandbox", "network",
        "unix_sockets", "timeout_s", "on_timeout")
    name: str
    final: bool
    instructions: str | None
    allowed_tools: tuple[str, ...] | None
    disallowed_tools: tuple[str, ...]
    allowed_commands: tuple[str, ...] | None
    blocked_env: tuple[str, ...]
    env_overrides: dict[str, str]
    max_iterations: int | None
    max_edit_lines: int | None
    max_files_per_state: int | None
    context_budget_bytes: int | None
    safe_next: str | None
    on: dict[str, Transition]
    read_only: tuple[str, ...]
    sandbox: str
    network: bool
    unix_sockets: bool
    timeout_s: float | None
    on_timeout: str | None

    def __init__(self, name: str, final: bool = False, instructions: str | None = None,
                 allowed_tools: tuple[str, ...] | None = None,
                 disallowed_tools: tuple[str, ...] = (),
                 allowed_commands: tuple[str, ...] | None = None,
                 blocked_env: tuple[str, ...] = (), env_overrides: dict[str, str] | None = None,
                 max_iterations: int | None = None, max_edit_lines: int | None = None,
                 max_files_per_state: int | None = None, context_budget_bytes: int | None = None,
                 safe_next: str | None = None, on: dict[str, Transition] | None = None,
                 read_only: tuple[str, ...] = (), sandbox: str = "auto", network: bool = True,
                 unix_sockets: bool = False, timeout_s: float | None = None,
                 on_timeout: str | None = None) -> None:
        set_field(self, "name", name)
        set_field(self, "final", final)
        set_field(self, "instructions", instructions)
        # None: no restriction; (): only statewright_*
        set_field(self, "allowed_tools", allowed_tools)
        set_field(self, "disallowed_tools", disallowed_tools)
        set_field(self, "allowed_commands", allowed_commands)  # None: no command restriction
        set_field(self, "blocked_env", blocked_env)
        set_field(self, "env_overrides", {} if env_overrides is None else env_overrides)
        set_field(self, "max_iterations", max_iterations)
        set_field(self, "max_edit_lines", max_edit_lines)
        set_field(self, "max_files_per_state", max_files_per_state)
        set_field(self, "context_budget_bytes", context_budget_bytes)
        set_field(self, "safe_next", safe_next)
        set_field(self, "on", {} if on is None else on)
        # globs of project paths no tool and no code may change in this state
        set_field(self, "read_only", read_only)
        set_field(self, "sandbox", sandbox)  # one of SANDBOX_MODES
        set_field(self, "network", network)  # sandboxed lines may use the network
        set_field(self, "unix_sockets", unix_sockets)  # sandboxed lines may create Unix sockets
        # statewright fires `on_timeout` itself once the run has been `timeout_s` in the state
        set_field(self, "timeout_s", timeout_s)
        set_field(self, "on_timeout", on_timeout)


class Interrupt(Record):
    __slots__ = __match_args__ = _fields = ("name", "file_pattern", "target", "widen")
    name: str
    file_pattern: str
    target: str
    widen: bool

    def __init__(self, name: str, file_pattern: str, target: str, widen: bool = False) -> None:
        set_field(self, "name", name)
        set_field(self, "file_pattern", file_pattern)
        set_field(self, "target", target)
        # the handler may grant what the interrupted state refused (else both states' rules
        # apply while the handler is active)
        set_field(self, "widen", widen)


DEFAULT_CHECK_TIMEOUT_S = 600.0


class Check(Record):
    """A command statewright runs itself (DESIGN section 2), never the agent."""

    __slots__ = __match_args__ = _fields = ("name", "run", "cwd", "timeout_s", "read_only",
                                            "expect_exit", "report")
    name: str
    run: str
    cwd: str | None
    timeout_s: float
    read_only: tuple[str, ...]
    expect_exit: tuple[int, ...]
    report: str | None

    def __init__(self, name: str, run: str, cwd: str | None = None,
                 timeout_s: float = DEFAULT_CHECK_TIMEOUT_S, read_only: tuple[str, ...] = (),
                 expect_exit: tuple[int, ...] = (0,), report: str | None = None) -> None:
        set_field(self, "name", name)
        set_field(self, "run", run)  # a shell line (/bin/sh -c)
        set_field(self, "cwd", cwd)  # project-relative; None: the project root
        set_field(self, "timeout_s", timeout_s)
        set_field(self, "read_only", read_only)  # project-relative globs, frozen
        set_field(self, "expect_exit", expect_exit)  # the statuses that pass
        set_field(self, "report", report)  # project-relative JUnit XML path

    def to_dict(self) -> dict[str, Any]:
        return {"run": self.run, "cwd": self.cwd, "timeout_s": self.timeout_s,
                "read_only": list(self.read_only), "expect_exit": list(self.expect_exit),
                "report": self.report}

    @classmethod
    def from_dict(cls, name: str, d: dict[str, Any]) -> Check:
        return cls(name, d["run"], d.get("cwd"), float(d.get("timeout_s")
                                                       or DEFAULT_CHECK_TIMEOUT_S),
                   tuple(d.get("read_only") or ()), tuple(d.get("expect_exit") or (0,)),
                   d.get("report"))


class CompiledWorkflow(Record):
    __slots__ = __match_args__ = _fields = (
        "id", "initial", "states", "context", "guards", "interrupts", "meta", "source_path",
        "digest", "checks")
    id: str
    initial: str
    states: dict[str, State]
    context: dict[str, Any]
    guards: dict[str, Guard]
    interrupts: tuple[Interrupt, ...]
    meta: dict[str, Any]
    source_path: str | None
    digest: str
    checks: dict[str, Check]

    def __init__(self, id: str, initial: str, states: dict[str, State],
                 context: dict[str, Any] | None = None, guards: dict[str, Guard] | None = None,
                 interrupts: tuple[Interrupt, ...] = (), meta: dict[str, Any] | None = None,
                 source_path: str | None = None, digest: str = "",
                 checks: dict[str, Check] | None = None) -> None:
        set_field(self, "id", id)
        set_field(self, "initial", initial)
        set_field(self, "states", states)
        set_field(self, "context", {} if context is None else context)
        set_field(self, "guards", {} if guards is None else guards)
        set_field(self, "interrupts", interrupts)
        set_field(self, "meta", {} if meta is None else meta)
        # absolute path of the file it came from, if any
        set_field(self, "source_path", source_path)
        set_field(self, "digest", digest)  # sha256 of the canonical JSON of the source document
        set_field(self, "checks", {} if checks is None else checks)

    # -- convenience -------------------------------------------------------------------------
    @property
    def debug(self) -> bool:
        return self.meta.get("debug") is True

    @property
    def approval_mode(self) -> str:
        mode = self.meta.get("approval_mode", "none")
        return mode if mode in ("ui", "none") else "none"

    def state(self, name: str) -> State:
        return self.states[name]

    # -- serialisation (for the store; stdlib json only) -------------------------------------
    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "initial": self.initial,
            "context": self.context,
            "meta": self.meta,
            "source_path": self.source_path,
            "digest": self.digest,
            "guards": {
                n: {"field": g.field, "op": g.op, "value": g.value, "has_value": g.has_value}
                for n, g in self.guards.items()
            },
            "interrupts": [
                {"name": i.name, "file_pattern": i.file_pattern, "target": i.target,
                 **({"widen": True} if i.widen else {})}
                for i in self.interrupts
            ],
            "states": {n: _state_to_dict(s) for n, s in self.states.items()},
            **({"checks": {n: c.to_dict() for n, c in self.checks.items()}}
               if self.checks else {}),
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> CompiledWorkflow:
        return cls(
            id=d["id"],
            initial=d["initial"],
            context=d.get("context") or {},
            meta=d.get("meta") or {},
            source_path=d.get("source_path"),
            digest=d.get("digest", ""),
            guards={
                n: Guard(n, g["field"], g["op"], g.get("value"), g.get("has_value", False))
                for n, g in (d.get("guards") or {}).items()
            },
            interrupts=tuple(
                Interrupt(i["name"], i["file_pattern"], i["target"], i.get("widen") is True)
                for i in d.get("interrupts") or ()
            ),
            states={n: _state_from_dict(n, s) for n, s in d["states"].items()},
            checks={n: Check.from_dict(n, c) for n, c in (d.get("checks") or {}).items()},
        )


def _tuple_or_none(v: Any) -> tuple[str, ...] | None:
    return None if v is None else tuple(v)


def _state_to_dict(s: State) -> dict[str, Any]:
    return {
        "final": s.final,
        "instructions": s.instructions,
        "allowed_tools": None if s.allowed_tools is None else list(s.allowed_tools),
        "disallowed_tools": list(s.disallowed_tools),
        "allowed_commands": None if s.allowed_commands is None else list(s.allowed_commands),
        "blocked_env": list(s.blocked_env),
        "env_overrides": dict(s.env_overrides),
        "max_iterations": s.max_iterations,
        "max_edit_lines": s.max_edit_lines,
        "max_files_per_state": s.max_files_per_state,
        "context_budget_bytes": s.context_budget_bytes,
        "safe_next": s.safe_next,
        "on": {e: _transition_to_dict(t) for e, t in s.on.items()},
        "read_only": list(s.read_only),
        "sandbox": s.sandbox,
        "network": s.network,
        "unix_sockets": s.unix_sockets,
        **({"timeout_s": s.timeout_s, "on_timeout": s.on_timeout}
           if s.timeout_s is not None else {}),
    }


def _state_from_dict(name: str, d: dict[str, Any]) -> State:
    return State(
        name=name,
        final=d.get("final", False),
        instructions=d.get("instructions"),
        allowed_tools=_tuple_or_none(d.get("allowed_tools")),
        disallowed_tools=tuple(d.get("disallowed_tools") or ()),
        allowed_commands=_tuple_or_none(d.get("allowed_commands")),
        blocked_env=tuple(d.get("blocked_env") or ()),
        env_overrides=dict(d.get("env_overrides") or {}),
        max_iterations=d.get("max_iterations"),
        max_edit_lines=d.get("max_edit_lines"),
        max_files_per_state=d.get("max_files_per_state"),
        context_budget_bytes=d.get("context_budget_bytes"),
        safe_next=d.get("safe_next"),
        on={e: _transition_from_dict(e, t) for e, t in (d.get("on") or {}).items()},
        # (a definition compiled before these fields existed gets their defaults)
        read_only=tuple(d.get("read_only") or ()),
        sandbox=d.get("sandbox") or "auto",
        network=d.get("network", True) is not False,
        unix_sockets=d.get("unix_sockets") is True,
        timeout_s=d.get("timeout_s"),
        on_timeout=d.get("on_timeout"),
    )


def _transition_to_dict(t: Transition) -> dict[str, Any]:
    out: dict[str, Any] = {"kind": t.kind}
    if t.branches:
        out["branches"] = [{"target": b.target, "guards": list(b.guards)} for b in t.branches]
    if t.requires_approval:
        out["requires_approval"] = True
    if t.approval_message is not None:
        out["approval_message"] = t.approval_message
    if t.checks:
        out["checks"] = list(t.checks)
    if t.kind == "invoke":
        out.update(invoke=t.invoke, on_complete=t.on_complete, on_fail=t.on_fail, input=t.input)
    if t.fork is not None:
        f = t.fork
        out["fork"] = {
            "branches": {
                n: {"initial": b.initial, "terminal": b.terminal} for n, b in f.branches.items()
            },
            "join": f.join,
            "on_complete": f.on_complete,
            "on_fail": f.on_fail,
        }
    return out


def _transition_from_dict(event: str, d: dict[str, Any]) -> Transition:
    fork = None
    if d.get("fork"):
        f = d["fork"]
        fork = Fork(
            branches={n: ForkBranch(b["initial"], b["terminal"]) for n, b in f["branches"].items()},
            join=f.get("join", "all"),
            on_complete=f["on_complete"],
            on_fail=f.get("on_fail"),
        )
    return Transition(
        event=event,
        kind=d["kind"],
        branches=tuple(Branch(b["target"], tuple(b.get("guards") or ()))
                       for b in d.get("branches") or ()),
        requires_approval=d.get("requires_approval", False),
        approval_message=d.get("approval_message"),
        invoke=d.get("invoke"),
        on_complete=d.get("on_complete"),
        on_fail=d.get("on_fail"),
        input=d.get("input") or {},
        fork=fork,
        checks=tuple(d.get("checks") or ()),
    )
