"""The store's smaller tables, as operations of a transaction (`store.db.Tx` has them):
approval requests, fork-branch bindings, the file marks of the hook's watched files
(`runtime.watch`), and the notes of sub-agents' calls of statewright's own tools."""

from __future__ import annotations

from ..engine.run import PAUSED, RUNNING, PendingApproval, Run
from ..lean import TYPE_CHECKING
from ..lean import dumps as _json_dumps
from ..lean import loads as _loads

if TYPE_CHECKING:  # pragma: no cover
    from typing import Any

    from ..lean import sqlite3


def _dumps(v: Any) -> str:
    return _json_dumps(v, separators=(",", ":"), default=str)


class TxTables:
    conn: sqlite3.Connection
    cache: Any

    def _run_row(self, row: Any) -> Run | None:  # pragma: no cover - defined by Tx
        raise NotImplementedError

    # -- approvals --------------------------------------------------------------------------
    def put_approval(self, run_id: str, pa: PendingApproval) -> None:
        self.conn.execute(
            "INSERT OR REPLACE INTO approvals(approval_id, run_id, event, message, target, data,"
            " status, requested_at) VALUES (?,?,?,?,?,?,'pending',?)",
            (pa.approval_id, run_id, pa.event, pa.message, pa.target, _dumps(pa.data or {}),
             pa.requested_at or 0.0))

    def decide_approval(self, approval_id: str, status: str, at: float, by: str,
                        reason: str | None = None) -> None:
        self.conn.execute(
            "UPDATE approvals SET status=?, decided_at=?, decided_by=?, reason=? "
            "WHERE approval_id=? AND status='pending'", (status, at, by, reason, approval_id))

    def pending_approvals(self) -> list[dict[str, Any]]:
        rows = self.conn.execute(
            "SELECT approval_id, run_id, event, message, target, requested_at FROM approvals "
            "WHERE status='pending' ORDER BY requested_at").fetchall()
        return [{"approval_id": r[0], "run_id": r[1], "event": r[2], "message": r[3],
                 "target": r[4], "requested_at": r[5]} for r in rows]

    def approval(self, approval_id: str) -> dict[str, Any] | None:
        r = self.conn.execute(
            "SELECT approval_id, run_id, event, message, target, status, reason FROM approvals "
            "WHERE approval_id=?", (approval_id,)).fetchone()
        if r is None:
            return None
        return {"approval_id": r[0], "run_id": r[1], "event": r[2], "message": r[3],
                "target": r[4], "status": r[5], "reason": r[6]}

    # -- file marks (runtime.watch) ----------------------------------------------------------
    def marks(self, run_id: str) -> tuple[dict[str, list[int]] | None, list[str]]:
        """(the marks last taken for `run_id`, None if never; the notices waiting)."""
        row = self.conn.execute("SELECT marks, notices FROM marks WHERE run_id=?",
                                (run_id,)).fetchone()
        if row is None:
            return None, []
        return _loads(row[0]), _loads(row[1])

    def put_marks(self, run_id: str, marks: dict[str, list[int]],
                  notices: list[str]) -> None:
        self.conn.execute("INSERT OR REPLACE INTO marks(run_id, marks, notices) VALUES (?,?,?)",
                          (run_id, _dumps(marks), _dumps(notices)))

    # -- bindings ---------------------------------------------------------------------------
    def bound_run(self, session: str) -> Run | None:
        """The running or paused run `session` is bound to (a fork branch), if any."""
        return self._run_row(self.conn.execute(
            "SELECT r.snapshot, r.def_digest FROM bindings b JOIN runs r ON r.run_id = b.run_id"
            " WHERE b.session = ? AND r.status IN (?, ?)", (session, RUNNING, PAUSED)).fetchone())

    def put_agent_call(self, session: str, call: str, agent_key: str, at: float) -> None:
        self.conn.execute("INSERT INTO agent_calls(session, call, agent_key, at)"
                          " VALUES (?,?,?,?)", (session, call, agent_key, at))

    def take_agent_call(self, session: str, call: str, since: float) -> str | None:
        """The sub-agent the hook saw make `call` (tool and arguments) for `session`, oldest
        first, at or after `since`; consumed (older notes are dropped)."""
        self.conn.execute("DELETE FROM agent_calls WHERE at < ?", (since,))
        row = self.conn.execute("SELECT seq, agent_key FROM agent_calls WHERE session=? AND"
                                " call=? ORDER BY seq LIMIT 1", (session, call)).fetchone()
        if row is None:
            return None
        self.conn.execute("DELETE FROM agent_calls WHERE seq=?", (row[0],))
        return row[1]

    def bind(self, session: str, run_id: str, at: float) -> None:
        self.cache.lookups_changed()
        self.conn.execute(
            "INSERT OR REPLACE INTO bindings(session, run_id, bound_at) VALUES (?,?,?)",
            (session, run_id, at))
