"""The PostgreSQL store's reads and smaller tables, as operations of a transaction
(`store.pg.PgTx` has them; `store.tables` is the SQLite store's): runs listed (within the
project, or every project's), history, approvals, tokens, file marks, fork bindings and
sub-agents' calls. Writes wait in the transaction's queue (`PgTx._later`); reads send it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..engine.run import PAUSED, RUNNING, PendingApproval, Run
from ..lean import loads as _loads
from .tables import RUN_COLUMNS, _event_row, _token_row, run_from_row
from .tables import to_json as _dumps

if TYPE_CHECKING:  # pragma: no cover
    from .cache import RowCache

_EVENT_COLS = "seq, run_id, at, actor, kind, version, state, data, machine, prev_hash, hash"


class PgTables:
    project: str
    machine: str
    cache: RowCache

    def _one(self, sql: str, args: Any = ()) -> Any:  # pragma: no cover - defined by PgTx
        raise NotImplementedError

    def _all(self, sql: str, args: Any = ()) -> list[Any]:  # pragma: no cover
        raise NotImplementedError

    def _later(self, sql: str, args: Any = None) -> None:  # pragma: no cover
        raise NotImplementedError

    def flush(self, sql: str | None = None, args: Any = None) -> Any:  # pragma: no cover
        raise NotImplementedError

    def _lock_session(self, session: str) -> None:  # pragma: no cover
        raise NotImplementedError

    def get_run(self, run_id: str) -> Run | None:  # pragma: no cover
        raise NotImplementedError

    def announce(self, run_id: str | None) -> None:  # pragma: no cover
        raise NotImplementedError

    # -- runs listed, history --------------------------------------------------------------
    def latest_session_run(self, session: str) -> Run | None:
        self._lock_session(session)
        row = self._one(
            f"SELECT {RUN_COLUMNS} FROM runs WHERE project=%s AND session=%s AND"
            " parent_run IS NULL ORDER BY created_at DESC, ord DESC LIMIT 1",
            (self.project, session))
        return run_from_row(row) if row else None

    def newest_paused(self, workflow: str) -> Run | None:
        row = self._one(
            f"SELECT {RUN_COLUMNS} FROM runs WHERE project=%s AND workflow=%s AND status=%s"
            " AND parent_run IS NULL ORDER BY updated_at DESC, ord DESC LIMIT 1",
            (self.project, workflow, PAUSED))
        return run_from_row(row) if row else None

    def _where_project(self, all_projects: bool) -> tuple[str, tuple[Any, ...]]:
        return ("TRUE", ()) if all_projects else ("project=%s", (self.project,))

    def list_runs(self, session: str | None = None, limit: int = 200,
                  all_projects: bool = False) -> list[Run]:
        where, args = self._where_project(all_projects)
        if session is None:
            rows = self._all(f"SELECT {RUN_COLUMNS} FROM runs WHERE {where}"
                             " ORDER BY created_at DESC, ord DESC LIMIT %s", (*args, limit))
        else:
            like = session.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "/%"
            rows = self._all(
                f"SELECT {RUN_COLUMNS} FROM runs WHERE {where} AND (session=%s OR session LIKE %s)"
                " ORDER BY created_at DESC, ord DESC LIMIT %s", (*args, session, like, limit))
        return [run_from_row(r) for r in rows]

    def runs_page(self, limit: int, offset: int = 0, all_projects: bool = False) -> list[Run]:
        where, args = self._where_project(all_projects)
        rows = self._all(f"SELECT {RUN_COLUMNS} FROM runs WHERE {where}"
                         " ORDER BY created_at DESC, ord DESC LIMIT %s OFFSET %s",
                         (*args, limit, offset))
        return [run_from_row(r) for r in rows]

    def count_runs(self, all_projects: bool = False) -> int:
        where, args = self._where_project(all_projects)
        return int(self._one(f"SELECT count(*) FROM runs WHERE {where}", args)[0])

    def run_origins(self, run_ids: list[str]) -> dict[str, tuple[str, str | None]]:
        """run_id -> (project, machine it was started on)."""
        if not run_ids:
            return {}
        rows = self._all("SELECT run_id, project, machine FROM runs WHERE run_id = ANY(%s)",
                         (list(run_ids),))
        return {r[0]: (r[1], r[2]) for r in rows}

    def projects(self) -> list[str]:
        return [r[0] for r in self._all("SELECT DISTINCT project FROM runs ORDER BY project")]

    def running_runs(self) -> list[Run]:
        rows = self._all(f"SELECT {RUN_COLUMNS} FROM runs WHERE project=%s AND status=%s",
                         (self.project, RUNNING))
        return [run_from_row(r) for r in rows]

    def run_and_descendants(self, run_id: str, limit: int = 1000) -> list[str]:
        ids, frontier = [run_id], [run_id]
        while frontier and len(ids) < limit:
            rows = self._all("SELECT run_id FROM runs WHERE parent_run = ANY(%s)", (frontier,))
            frontier = [r[0] for r in rows if r[0] not in ids]
            ids += frontier
        return ids

    def last_event_seq(self) -> int:
        return int(self._one("SELECT coalesce(max(seq), 0) FROM events")[0])

    def recent_history(self, run_ids: list[str], limit: int) -> list[dict[str, Any]]:
        rows: list[Any] = []
        for rid in run_ids:
            rows += self._all(f"SELECT {_EVENT_COLS} FROM events WHERE run_id=%s"
                              " ORDER BY seq DESC LIMIT %s", (rid, limit))
        rows.sort(key=lambda r: r[0], reverse=True)
        return [_event_row(r) for r in rows[:limit]]

    def history(self, run_ids: list[str] | None = None,
                limit: int = 10_000, chain: bool = False) -> list[dict[str, Any]]:
        if run_ids is None:
            rows = self._all(
                f"SELECT {_EVENT_COLS} FROM events e WHERE EXISTS (SELECT 1 FROM runs r WHERE"
                " r.run_id = e.run_id AND r.project = %s) ORDER BY seq LIMIT %s",
                (self.project, limit))
        else:
            rows = self._all(f"SELECT {_EVENT_COLS} FROM events WHERE run_id = ANY(%s)"
                             " ORDER BY seq LIMIT %s", (list(run_ids), limit))
        return [_event_row(r, chain) for r in rows]

    # -- approvals --------------------------------------------------------------------------
    def requester(self, run_id: str) -> str | None:
        hit = self.cache.runs.get(run_id)
        return f"agent:{hit[0].session}" if hit is not None else None

    def put_approval(self, run_id: str, pa: PendingApproval,
                     requested_by: str | None = None) -> None:
        if requested_by is None:
            requested_by = self.requester(run_id)
        self._later(
            "INSERT INTO approvals(approval_id, run_id, event, message, target, data, status,"
            " requested_at, requested_by) VALUES (%s,%s,%s,%s,%s,%s,'pending',%s,%s)"
            " ON CONFLICT (approval_id) DO UPDATE SET run_id=EXCLUDED.run_id,"
            " event=EXCLUDED.event, message=EXCLUDED.message, target=EXCLUDED.target,"
            " data=EXCLUDED.data, status='pending', requested_at=EXCLUDED.requested_at,"
            " requested_by=EXCLUDED.requested_by, decided_at=NULL, decided_by=NULL, reason=NULL",
            (pa.approval_id, run_id, pa.event, pa.message, pa.target, _dumps(pa.data or {}),
             pa.requested_at or 0.0, requested_by))
        self.announce(run_id)

    def decide_approval(self, approval_id: str, status: str, at: float, by: str,
                        reason: str | None = None) -> None:
        self._later(
            "UPDATE approvals SET status=%s, decided_at=%s, decided_by=%s, reason=%s "
            "WHERE approval_id=%s AND status='pending'", (status, at, by, reason, approval_id))
        self.announce(None)

    def pending_approvals(self, all_projects: bool = False) -> list[dict[str, Any]]:
        where, args = ("TRUE", ()) if all_projects else ("r.project=%s", (self.project,))
        rows = self._all(
            "SELECT a.approval_id, a.run_id, a.event, a.message, a.target, a.requested_at,"
            " a.requested_by FROM approvals a JOIN runs r ON r.run_id = a.run_id"
            f" WHERE a.status='pending' AND {where} ORDER BY a.requested_at", args)
        return [{"approval_id": r[0], "run_id": r[1], "event": r[2], "message": r[3],
                 "target": r[4], "requested_at": r[5], "requested_by": r[6]} for r in rows]

    def approval(self, approval_id: str) -> dict[str, Any] | None:
        r = self._one(
            "SELECT approval_id, run_id, event, message, target, status, reason, requested_by,"
            " decided_by FROM approvals WHERE approval_id=%s", (approval_id,))
        if r is None:
            return None
        return {"approval_id": r[0], "run_id": r[1], "event": r[2], "message": r[3],
                "target": r[4], "status": r[5], "reason": r[6], "requested_by": r[7],
                "decided_by": r[8]}

    # -- tokens (`statewright token`) --------------------------------------------------------
    def put_token(self, token_hash: str, subject: str, role: str, at: float,
                  by: str | None) -> None:
        self._later("INSERT INTO tokens(token_hash, subject, role, created_at, created_by)"
                          " VALUES (%s,%s,%s,%s,%s)", (token_hash, subject, role, at, by))

    def token(self, token_hash: str) -> tuple[str, str] | None:
        row = self._one("SELECT subject, role FROM tokens WHERE token_hash=%s AND"
                        " revoked_at IS NULL", (token_hash,))
        return (row[0], row[1]) if row else None

    def tokens(self) -> list[dict[str, Any]]:
        return [_token_row(r) for r in self._all(
            "SELECT token_hash, subject, role, created_at, created_by, revoked_at FROM tokens"
            " ORDER BY created_at")]

    def revoke_token(self, prefix: str, at: float) -> int:
        return int(self.flush(
            "UPDATE tokens SET revoked_at=%s WHERE revoked_at IS NULL AND"
            " left(token_hash, %s) = %s", (at, len(prefix), prefix)).rowcount)

    def set_approver(self, approval_id: str, approver: str) -> None:
        self._later("UPDATE approvals SET decided_by=%s WHERE approval_id=%s",
                          (approver, approval_id))

    # -- file marks, bindings, sub-agents' calls ---------------------------------------------
    def marks(self, run_id: str) -> tuple[dict[str, list[int]] | None, list[str]]:
        # (this machine's: its checkout's files, its interrupts' notices)
        row = self._one("SELECT marks, notices FROM marks WHERE run_id=%s AND machine=%s",
                        (run_id, self.machine))
        if row is None:
            return None, []
        return _loads(row[0]), _loads(row[1])

    def put_marks(self, run_id: str, marks: dict[str, list[int]], notices: list[str]) -> None:
        self._later(
            "INSERT INTO marks(run_id, machine, marks, notices) VALUES (%s,%s,%s,%s)"
            " ON CONFLICT (run_id, machine) DO UPDATE SET marks=EXCLUDED.marks,"
            " notices=EXCLUDED.notices", (run_id, self.machine, _dumps(marks), _dumps(notices)))

    def bound_run(self, session: str) -> Run | None:
        self._lock_session(session)
        row = self._one("SELECT run_id FROM bindings WHERE project=%s AND session=%s",
                        (self.project, session))
        if row is None:
            return None
        run = self.get_run(row[0])
        return run if run is not None and run.status in (RUNNING, PAUSED) else None

    def put_agent_call(self, session: str, call: str, agent_key: str, at: float) -> None:
        self._later("INSERT INTO agent_calls(project, session, call, agent_key, at)"
                          " VALUES (%s,%s,%s,%s,%s)", (self.project, session, call, agent_key, at))

    def take_agent_call(self, session: str, call: str, since: float) -> str | None:
        self._later("DELETE FROM agent_calls WHERE at < %s", (since,))
        row = self._one(
            "DELETE FROM agent_calls WHERE seq = (SELECT seq FROM agent_calls WHERE project=%s"
            " AND session=%s AND call=%s ORDER BY seq LIMIT 1 FOR UPDATE SKIP LOCKED)"
            " RETURNING agent_key", (self.project, session, call))
        return row[0] if row else None

    def bind(self, session: str, run_id: str, at: float) -> None:
        self.cache.lookups_changed()
        self._later(
            "INSERT INTO bindings(project, session, run_id, bound_at) VALUES (%s,%s,%s,%s)"
            " ON CONFLICT (project, session) DO UPDATE SET run_id=EXCLUDED.run_id,"
            " bound_at=EXCLUDED.bound_at", (self.project, session, run_id, at))
        self.announce(run_id)
