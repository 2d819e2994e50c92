"""The run snapshot the engine transforms and the store persists (DESIGN.md section 3).

Plain data, stdlib only. `Run.to_dict()/from_dict()` is the JSON form kept in the store's
`runs.snapshot` column (and answered by `statewright status --json` in part). The three
sub-records a run may carry have a JSON form of their own, nested in the run's:

- `PendingApproval`: a transition parked until a human decides (`requires_approval`);
- `Fork` (with one `ForkBranch` per branch): the branches a `fork` transition started;
- `Invoke`: the invoked workflow a parent run waits on.

They are immutable records (`statewright.lean.Record`), not dataclasses: every hook
process reads a run, and `dataclasses` costs more to import than the whole decision takes.
"""

from __future__ import annotations

from ..lean import TYPE_CHECKING, Record, set_field

if TYPE_CHECKING:  # pragma: no cover
    from typing import Any

RUNNING, PAUSED, COMPLETED, FAILED = "running", "paused", "completed", "failed"
ENDED = "ended"  # closed for good by a human (`statewright end`)
STATUSES = (RUNNING, PAUSED, COMPLETED, FAILED, ENDED)
# the statuses a run cannot leave
FINISHED = (COMPLETED, FAILED, ENDED)
# who acted, in history rows (DESIGN section 3): the actor is who really acted
AGENT, HUMAN, SYSTEM = "agent", "human", "system"


class PendingApproval(Record):
    """A transition waiting for a human (`requires_approval` with `approval_mode: "ui"`)."""

    approval_id: str
    event: str
    data: dict[str, Any]
    message: str | None
    target: str | None
    requested_at: float

    __slots__ = __match_args__ = _fields = (
        "approval_id", "event", "data", "message", "target", "requested_at")

    def __init__(self, approval_id: str, event: str, data: dict[str, Any] | None = None,
                 message: str | None = None, target: str | None = None,
                 requested_at: float = 0.0) -> None:
        set_field(self, "approval_id", approval_id)
        set_field(self, "event", event)
        # the event's data, applied on approval
        set_field(self, "data", {} if data is None else data)
        set_field(self, "message", message)
        set_field(self, "target", target)
        set_field(self, "requested_at", requested_at)

    def to_dict(self) -> dict[str, Any]:
        return self.asdict()

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> PendingApproval:
        return cls(d["approval_id"], d.get("event", ""), d.get("data"), d.get("message"),
                   d.get("target"), d.get("requested_at") or 0.0)


class ForkBranch(Record):
    """One branch of a fork: its child run, who works it, and once it ended, where it ended."""

    run_id: str
    initial: str
    terminal: str
    status: str
    state: str | None
    context: dict[str, Any] | None
    holder: str | None

    __slots__ = __match_args__ = _fields = (
        "run_id", "initial", "terminal", "status", "state", "context", "holder")

    def __init__(self, run_id: str, initial: str, terminal: str, status: str = RUNNING,
                 state: str | None = None, context: dict[str, Any] | None = None,
                 holder: str | None = None) -> None:
        set_field(self, "run_id", run_id)
        set_field(self, "initial", initial)
        set_field(self, "terminal", terminal)
        set_field(self, "status", status)
        # set when the branch's run ended: the state it ended in, its context (joined back)
        set_field(self, "state", state)
        set_field(self, "context", context)
        # the agent (a session, or a sub-agent `<session>#agent=<id>`) bound to this branch
        # with statewright_fork(branch); None while the parent works it (sequential)
        set_field(self, "holder", holder)

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"run_id": self.run_id, "initial": self.initial,
                             "terminal": self.terminal, "status": self.status}
        if self.state is not None:  # (absent until the branch ended, as it always was)
            d["state"] = self.state
        if self.context is not None:
            d["context"] = self.context
        if self.holder is not None:
            d["holder"] = self.holder
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> ForkBranch:
        return cls(d["run_id"], d.get("initial", ""), d.get("terminal", ""),
                   d.get("status", RUNNING), d.get("state"), d.get("context"), d.get("holder"))


class Fork(Record):
    """The fork a parent run waits on (until `joined`), its branches in definition order."""

    event: str
    join: str
    on_complete: str
    on_fail: str | None
    order: tuple[str, ...]
    branches: dict[str, ForkBranch]
    joined: bool
    parallel: bool

    __slots__ = __match_args__ = _fields = (
        "event", "join", "on_complete", "on_fail", "order", "branches", "joined", "parallel")

    def __init__(self, event: str, join: str, on_complete: str, on_fail: str | None,
                 order: tuple[str, ...], branches: dict[str, ForkBranch],
                 joined: bool = False, parallel: bool = False) -> None:
        set_field(self, "event", event)  # the event that forked
        set_field(self, "join", join)  # "all" | "any"
        set_field(self, "on_complete", on_complete)
        set_field(self, "on_fail", on_fail)
        set_field(self, "order", order)
        set_field(self, "branches", branches)
        set_field(self, "joined", joined)
        # worked by agents that bind to its branches from the start (`meta.parallel_forks`);
        # else sequential until an agent binds to a branch
        set_field(self, "parallel", parallel)

    def with_branch(self, name: str, branch: ForkBranch) -> Fork:
        """A copy with branch `name` replaced."""
        return self.replace(branches={**self.branches, name: branch})

    def branch_names(self) -> tuple[str, ...]:
        """The branch names in definition order."""
        return self.order or tuple(self.branches)

    def working_branch(self) -> str | None:
        """While the fork waits: the child run of the first branch (in definition order) still
        running, the one the parent works (sequential). Once an agent bound itself to a branch
        the fork is worked in parallel: None, the parent's own state's rules apply to it."""
        if self.joined or self.parallel or any(b.holder is not None
                                               for b in self.branches.values()):
            return None
        for name in self.branch_names():
            b = self.branches[name]
            if b.status == RUNNING:
                return b.run_id
        return None

    def held_by(self, holder: str) -> str | None:
        """The name of the running branch `holder` is bound to, if any."""
        for name, b in self.branches.items():
            if b.holder == holder and b.status == RUNNING:
                return name
        return None

    def running_branches(self) -> list[str]:
        """While the fork waits: the child runs of the branches still running."""
        if self.joined:
            return []
        return [b.run_id for b in self.branches.values() if b.status == RUNNING]

    def to_dict(self) -> dict[str, Any]:
        return {"event": self.event, "join": self.join, "on_complete": self.on_complete,
                "on_fail": self.on_fail, "order": list(self.order),
                "branches": {n: b.to_dict() for n, b in self.branches.items()},
                "joined": self.joined, "parallel": self.parallel}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Fork:
        branches = {n: ForkBranch.from_dict(b) for n, b in (d.get("branches") or {}).items()}
        return cls(d.get("event", ""), d.get("join", "all"), d.get("on_complete", ""),
                   d.get("on_fail"), tuple(d.get("order") or branches), branches,
                   bool(d.get("joined")), d.get("parallel") is True)


class Invoke(Record):
    """The invoked workflow a parent run waits on."""

    event: str
    workflow: str
    on_complete: str | None
    on_fail: str | None
    child_run: str

    __slots__ = __match_args__ = _fields = (
        "event", "workflow", "on_complete", "on_fail", "child_run")

    def __init__(self, event: str, workflow: str, on_complete: str | None,
                 on_fail: str | None, child_run: str) -> None:
        set_field(self, "event", event)
        set_field(self, "workflow", workflow)
        set_field(self, "on_complete", on_complete)
        set_field(self, "on_fail", on_fail)
        set_field(self, "child_run", child_run)

    def to_dict(self) -> dict[str, Any]:
        return self.asdict()

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Invoke:
        return cls(d.get("event", ""), d.get("workflow", ""), d.get("on_complete"),
                   d.get("on_fail"), d.get("child_run", ""))


_FIELDS = (
    "run_id", "workflow", "session", "state", "status", "context", "version", "iterations",
    "files_edited", "bytes_read", "denied", "stop_reminders", "transition_count",
    "interrupt_return", "interrupt", "pending_approval", "fork", "child_run", "invoke",
    "parent_run", "branch", "branch_terminal", "created_at", "updated_at", "interrupt_queue",
    "interrupt_counters", "entered_at")
_FIELD_SET = frozenset(_FIELDS)


class Run(Record):
    run_id: str
    workflow: str
    session: str
    state: str
    status: str
    context: dict[str, Any]
    version: int
    iterations: int
    files_edited: tuple[str, ...]
    bytes_read: int
    denied: int
    stop_reminders: int
    transition_count: int
    interrupt_return: str | None
    interrupt: str | None
    pending_approval: PendingApproval | None
    fork: Fork | None
    child_run: str | None
    invoke: Invoke | None
    parent_run: str | None
    branch: str | None
    branch_terminal: str | None
    created_at: float
    updated_at: float
    interrupt_queue: tuple[tuple[str, str], ...]
    interrupt_counters: dict[str, Any] | None
    entered_at: float | None

    __slots__ = _fields = _FIELDS

    def __init__(self, run_id: str, workflow: str, session: str, state: str,
                 status: str = RUNNING, context: dict[str, Any] | None = None, version: int = 1,
                 iterations: int = 0, files_edited: tuple[str, ...] = (), bytes_read: int = 0,
                 denied: int = 0, stop_reminders: int = 0, transition_count: int = 0,
                 interrupt_return: str | None = None, interrupt: str | None = None,
                 pending_approval: PendingApproval | None = None,
                 fork: Fork | None = None, child_run: str | None = None,
                 invoke: Invoke | None = None, parent_run: str | None = None,
                 branch: str | None = None, branch_terminal: str | None = None,
                 created_at: float = 0.0, updated_at: float = 0.0,
                 interrupt_queue: tuple[tuple[str, str], ...] = (),
                 interrupt_counters: dict[str, Any] | None = None,
                 entered_at: float | None = None) -> None:
        s = set_field
        s(self, "run_id", run_id)  # "run_" + 12 hex
        s(self, "workflow", workflow)  # workflow id
        s(self, "session", session)
        s(self, "state", state)
        s(self, "status", status)
        s(self, "context", {} if context is None else context)
        s(self, "version", version)
        # counters of the current state, reset on entering a state
        s(self, "iterations", iterations)
        s(self, "files_edited", files_edited)  # project-relative, sorted, distinct
        s(self, "bytes_read", bytes_read)
        s(self, "denied", denied)
        s(self, "stop_reminders", stop_reminders)  # Stop-hook reminders given in this state
        s(self, "transition_count", transition_count)
        s(self, "interrupt_return", interrupt_return)  # state `$return` goes to during an interrupt
        s(self, "interrupt", interrupt)  # name of the active interrupt
        s(self, "pending_approval", pending_approval)
        s(self, "fork", fork)
        s(self, "child_run", child_run)  # invoke: the child run the parent waits on
        s(self, "invoke", invoke)
        s(self, "parent_run", parent_run)  # set on invoke/fork children
        s(self, "branch", branch)  # fork children: their branch name
        s(self, "branch_terminal", branch_terminal)  # fork children: this state completes it
        s(self, "created_at", created_at)
        s(self, "updated_at", updated_at)
        # interrupts that matched while a handler was active: (name, file), fired at `$return`
        s(self, "interrupt_queue", interrupt_queue)
        # while a handler is active: the interrupted state's counters when it was interrupted
        # (`$return` carries them on: a round trip never refills a budget)
        s(self, "interrupt_counters", interrupt_counters)
        # when the run entered a state that times out (`timeout_s`), else None: statewright
        # fires `on_timeout` once `timeout_s` has passed (paused time does not count)
        s(self, "entered_at", entered_at)

    # long: one line per field, spelled out (a loop over them costs three times as much)
    def with_(self, **changes: Any) -> Run:
        """A copy with some fields changed (`Record.replace`, a third of its cost: the runtime
        copies a run twice per tool call, to count it and to record its result). The copy is
        filled as a `_RunCopy`, whose fields can be assigned, then made a `Run`."""
        c = changes
        if not _FIELD_SET.issuperset(c):
            raise TypeError(f"Run has no field(s) {sorted(set(c) - _FIELD_SET)}")
        n: Any = _new(_RunCopy)
        n.run_id = c["run_id"] if "run_id" in c else self.run_id
        n.workflow = c["workflow"] if "workflow" in c else self.workflow
        n.session = c["session"] if "session" in c else self.session
        n.state = c["state"] if "state" in c else self.state
        n.status = c["status"] if "status" in c else self.status
        n.context = c["context"] if "context" in c else self.context
        n.version = c["version"] if "version" in c else self.version
        n.iterations = c["iterations"] if "iterations" in c else self.iterations
        n.files_edited = c["files_edited"] if "files_edited" in c else self.files_edited
        n.bytes_read = c["bytes_read"] if "bytes_read" in c else self.bytes_read
        n.denied = c["denied"] if "denied" in c else self.denied
        n.stop_reminders = c["stop_reminders"] if "stop_reminders" in c else self.stop_reminders
        n.transition_count = (c["transition_count"] if "transition_count" in c
                              else self.transition_count)
        n.interrupt_return = (c["interrupt_return"] if "interrupt_return" in c
                              else self.interrupt_return)
        n.interrupt = c["interrupt"] if "interrupt" in c else self.interrupt
        n.pending_approval = (c["pending_approval"] if "pending_approval" in c
                              else self.pending_approval)
        n.fork = c["fork"] if "fork" in c else self.fork
        n.child_run = c["child_run"] if "child_run" in c else self.child_run
        n.invoke = c["invoke"] if "invoke" in c else self.invoke
        n.parent_run = c["parent_run"] if "parent_run" in c else self.parent_run
        n.branch = c["branch"] if "branch" in c else self.branch
        n.branch_terminal = c["branch_terminal"] if "branch_terminal" in c else self.branch_terminal
        n.created_at = c["created_at"] if "created_at" in c else self.created_at
        n.updated_at = c["updated_at"] if "updated_at" in c else self.updated_at
        n.interrupt_queue = c["interrupt_queue"] if "interrupt_queue" in c else self.interrupt_queue
        n.interrupt_counters = (c["interrupt_counters"] if "interrupt_counters" in c
                                else self.interrupt_counters)
        n.entered_at = c["entered_at"] if "entered_at" in c else self.entered_at
        if n.context is None:
            n.context = {}
        n.__class__ = Run
        return n

    def is_waiting(self) -> bool:
        """The run waits on children (an invoked workflow or an unjoined fork)."""
        return self.child_run is not None or (self.fork is not None and not self.fork.joined)

    def followed_child(self) -> str | None:
        """The child run whose rules apply while this run waits: the invoked run, else the
        fork's working branch. None when it waits on nothing."""
        if self.child_run:
            return self.child_run
        return self.fork.working_branch() if self.fork is not None else None

    def waited_children(self) -> list[str]:
        """The child runs this run waits on, which stop with it or when it moves away: the
        invoked run and the running branches of its fork."""
        kids = [self.child_run] if self.child_run else []
        return kids + (self.fork.running_branches() if self.fork is not None else [])

    def to_dict(self) -> dict[str, Any]:
        d = {f: getattr(self, f) for f in _FIELDS}
        d["files_edited"] = list(self.files_edited)
        d["interrupt_queue"] = [list(q) for q in self.interrupt_queue]
        for key in ("pending_approval", "fork", "invoke"):
            if d[key] is not None:
                d[key] = d[key].to_dict()
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Run:
        d = {k: v for k, v in d.items() if k in _FIELD_SET}
        d["files_edited"] = tuple(d.get("files_edited") or ())
        d["interrupt_queue"] = tuple((str(q[0]), str(q[1])) for q in d.get("interrupt_queue") or ())
        for key, record in (("pending_approval", PendingApproval), ("fork", Fork),
                            ("invoke", Invoke)):
            value = d.get(key)
            if value is not None:
                d[key] = record.from_dict(value) if value else None
        return cls(**d)


class _RunCopy(Record):
    """`Run.with_`'s copy while it is filled: the same slots in the same order (so the same
    layout, and `__class__` may become `Run`), each assigned as plainly as an attribute of a
    mutable object (`object`'s own `__setattr__` and `__delattr__`: both, or Python would
    still route assignments through a method)."""

    __slots__ = _FIELDS
    __setattr__ = object.__setattr__  # type: ignore[assignment]
    __delattr__ = object.__delattr__


_new = object.__new__
