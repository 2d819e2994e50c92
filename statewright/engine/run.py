"""The run snapshot the engine transforms and the store persists (DESIGN.md section 3).

Plain data, stdlib only. `Run.to_dict()/from_dict()` is the JSON form kept in the store's
`runs.snapshot` column (and answered by `statewright status --json` in part).

`Run` is an immutable record (`statewright._record.Record`), not a dataclass: every hook
process reads one, and `dataclasses` costs more to import than the whole decision takes.
"""

from __future__ import annotations

from .._record import Record, _set

RUNNING, PAUSED, COMPLETED, FAILED = "running", "paused", "completed", "failed"
STATUSES = (RUNNING, PAUSED, COMPLETED, FAILED)

_FIELDS = (
    "run_id", "workflow", "session", "state", "status", "context", "version", "iterations",
    "files_edited", "bytes_read", "denied", "stop_reminders", "transition_count",
    "interrupt_return", "interrupt", "pending_approval", "fork", "child_run", "invoke",
    "parent_run", "branch", "branch_terminal", "created_at", "updated_at")
_FIELD_SET = frozenset(_FIELDS)


class Run(Record):
    __slots__ = __match_args__ = _fields = _FIELDS

    def __init__(self, run_id: str, workflow: str, session: str, state: str,
                 status: str = RUNNING, context: dict[str, Any] | None = None, version: int = 1,
                 iterations: int = 0, files_edited: tuple[str, ...] = (), bytes_read: int = 0,
                 denied: int = 0, stop_reminders: int = 0, transition_count: int = 0,
                 interrupt_return: str | None = None, interrupt: str | None = None,
                 pending_approval: dict[str, Any] | None = None,
                 fork: dict[str, Any] | None = None, child_run: str | None = None,
                 invoke: dict[str, Any] | None = None, parent_run: str | None = None,
                 branch: str | None = None, branch_terminal: str | None = None,
                 created_at: float = 0.0, updated_at: float = 0.0) -> None:
        s = _set
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
        # {approval_id, event, data, message, target, requested_at}
        s(self, "pending_approval", pending_approval)
        # {event, join, on_complete, on_fail, branches: {name: {run_id, initial, terminal,
        # status}}, order: [...]}
        s(self, "fork", fork)
        s(self, "child_run", child_run)  # invoke: the child run the parent waits on
        # {event, workflow, on_complete, on_fail, child_run} while waiting
        s(self, "invoke", invoke)
        s(self, "parent_run", parent_run)  # set on invoke/fork children
        s(self, "branch", branch)  # fork children: their branch name
        s(self, "branch_terminal", branch_terminal)  # fork children: this state completes it
        s(self, "created_at", created_at)
        s(self, "updated_at", updated_at)

    def with_(self, **changes: Any) -> Run:
        """A copy with some fields changed."""
        return self.replace(**changes)

    def to_dict(self) -> dict[str, Any]:
        d = {f: getattr(self, f) for f in _FIELDS}
        d["files_edited"] = list(self.files_edited)
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Run:
        d = {k: v for k, v in d.items() if k in _FIELD_SET}
        d["files_edited"] = tuple(d.get("files_edited") or ())
        return cls(**d)
