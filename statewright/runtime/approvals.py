"""Which parked transition a human's `approve` / `reject` means (the runtime's approvals side;
the engine decides what approving or rejecting does, `engine.approvals`)."""

from __future__ import annotations

from ..errors import NO_PENDING_APPROVAL, StatewrightError
from ..lean import TYPE_CHECKING
from .chain import chain_of, session_top

if TYPE_CHECKING:  # pragma: no cover
    from ..engine.run import Run
    from ..store import Tx


def approval_target(tx: Tx, session: str, approval_id: str | None) -> Run:
    """The run whose parked transition is meant: the one `approval_id` names; else the
    session's own (the deepest of its chain); else the only one pending in the project."""
    if approval_id:
        a = tx.approval(approval_id)
        if a is None:
            raise StatewrightError(NO_PENDING_APPROVAL, f"no approval request {approval_id}; "
                                   "`statewright status` shows the pending one")
        if a["status"] != "pending":
            raise StatewrightError(NO_PENDING_APPROVAL,
                                   f"approval {approval_id} is already {a['status']}")
        return tx.require_run(a["run_id"])
    top = session_top(tx, session)
    if top is not None:
        for r, _ in reversed(chain_of(tx, top)):
            if r.pending_approval is not None:
                return r
    pending = tx.pending_approvals()
    if len(pending) == 1:
        return tx.require_run(pending[0]["run_id"])
    if not pending:
        raise StatewrightError(NO_PENDING_APPROVAL, "no transition is waiting for approval")
    ids = ", ".join(p["approval_id"] for p in pending)
    raise StatewrightError(NO_PENDING_APPROVAL, f"several approvals are pending ({ids}); "
                           "name the one you mean")
