"""What every engine operation returns: an `Outcome` (the new run, history rows to append,
child runs to create, child runs to stop), and the small helpers every operation shares.

A rejected outcome carries a code of DESIGN section 5, a message that says what the agent can
do instead, and a `rejected` history event (the run itself is unchanged, its version too).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..definition.compiled import CompiledWorkflow
from ..errors import StatewrightError
from ..names import RESERVED_PREFIX
from .run import AGENT, HUMAN, SYSTEM, Run

__all__ = ["AGENT", "HUMAN", "SYSTEM", "Child", "Event", "Outcome", "clean_data", "derive_id",
           "fresh_id", "reject", "strip_reserved"]
IdFactory = Callable[[str], str]  # prefix ("run" / "apr") -> fresh id
Resolver = Callable[[str], CompiledWorkflow]  # workflow id -> compiled (may raise StatewrightError)


@dataclass(frozen=True, slots=True)
class Event:
    """One history row to append. `run_id=None` means the outcome's own run."""

    kind: str
    actor: str
    data: dict[str, Any] = field(default_factory=dict)
    run_id: str | None = None


@dataclass(frozen=True, slots=True)
class Child:
    """A run to create (fork branch or invoked workflow), with the definition it runs."""

    run: Run
    compiled: CompiledWorkflow


@dataclass(frozen=True, slots=True)
class Outcome:
    accepted: bool
    run: Run  # the new run (accepted) or the unchanged run (rejected)
    events: tuple[Event, ...] = ()
    children: tuple[Child, ...] = ()
    stop: tuple[str, ...] = ()  # child runs that must stop (fork joined/failed, forced away)
    code: str = ""
    message: str = ""
    advice: str | None = None  # e.g. the approval message with approval_mode "none"
    parked: bool = False  # an approval request was parked

    def error(self, state: dict[str, Any] | None = None) -> StatewrightError:
        return StatewrightError(self.code, self.message, state=state)


def derive_id(prefix: str, *parts: Any) -> str:
    """A deterministic id: `<prefix>_` + 12 hex of a hash of the parts (unique per run/version)."""
    h = hashlib.sha256("\x1f".join(str(p) for p in parts).encode()).hexdigest()[:12]
    return f"{prefix}_{h}"


def fresh_id(new_id: IdFactory | None, prefix: str, *parts: Any) -> str:
    """An id from the injected factory, else derived from `parts` (the engine has no randomness)."""
    return new_id(prefix) if new_id else derive_id(prefix, *parts)


def clean_data(data: Any) -> tuple[dict[str, Any] | None, str | None]:
    """Agent data -> (dict without reserved `_` keys, None) or (None, error message)."""
    if data is None:
        return {}, None
    if not isinstance(data, dict):
        return None, f"data must be a JSON object, got {type(data).__name__}"
    return strip_reserved(data), None


def strip_reserved(data: dict[str, Any]) -> dict[str, Any]:
    """`data` without the keys statewright reserves (`_observed`, any `_...`): only statewright's
    own observation writes them (`policy.evidence`), never data, input or a forced context."""
    return {k: v for k, v in data.items()
            if isinstance(k, str) and not k.startswith(RESERVED_PREFIX)}


def reject(run: Run, code: str, message: str, actor: str, **data: Any) -> Outcome:
    """A refusal, with the `refused` history row that records it (a human's decision against
    a parked transition is `rejected_by_human`: the two are never named alike)."""
    ev = Event("refused", actor, {"code": code, "message": message, "state": run.state, **data})
    return Outcome(False, run, (ev,), code=code, message=message)
