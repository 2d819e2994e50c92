"""The run snapshot the engine transforms and the store persists (DESIGN.md section 3).

Plain data, stdlib only. `Run.to_dict()/from_dict()` is the JSON form kept in the store's
`runs.snapshot` column (and answered by `statewright status --json` in part).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

RUNNING, PAUSED, COMPLETED, FAILED = "running", "paused", "completed", "failed"
STATUSES = (RUNNING, PAUSED, COMPLETED, FAILED)


@dataclass(frozen=True, slots=True)
class Run:
    run_id: str  # "run_" + 12 hex
    workflow: str  # workflow id
    session: str
    state: str
    status: str = RUNNING
    context: dict[str, Any] = field(default_factory=dict)
    version: int = 1
    # counters of the current state, reset on entering a state
    iterations: int = 0
    files_edited: tuple[str, ...] = ()  # project-relative, sorted, distinct
    bytes_read: int = 0
    denied: int = 0
    stop_reminders: int = 0  # Stop-hook reminders given in this state
    transition_count: int = 0
    interrupt_return: str | None = None  # state to `$return` to while an interrupt is active
    interrupt: str | None = None  # name of the active interrupt
    pending_approval: dict[str, Any] | None = None  # {approval_id, event, data, message, target, requested_at}
    fork: dict[str, Any] | None = None  # {event, join, on_complete, on_fail, branches: {name: {run_id, initial, terminal, status}}, order: [...]}
    child_run: str | None = None  # invoke: the child run the parent waits on
    invoke: dict[str, Any] | None = None  # {event, workflow, on_complete, on_fail, child_run} while waiting
    parent_run: str | None = None  # set on invoke/fork children
    branch: str | None = None  # fork children: their branch name
    branch_terminal: str | None = None  # fork children: reaching this state completes the branch
    created_at: float = 0.0
    updated_at: float = 0.0

    def with_(self, **changes: Any) -> Run:
        return replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        return {f: getattr(self, f) if f != "files_edited" else list(self.files_edited)
                for f in self.__dataclass_fields__}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Run:
        d = {k: v for k, v in d.items() if k in cls.__dataclass_fields__}
        d["files_edited"] = tuple(d.get("files_edited") or ())
        return cls(**d)
