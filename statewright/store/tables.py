"""How a run is kept in its row, and the store's reads and smaller tables as operations of a
transaction (`store.db.Tx` has them), and what both stores share (`store.db` and `store.pg`
import it; it imports neither): runs listed and history read, approval requests,
fork-branch bindings, the file marks of the hook's watched files (`runtime.watch`), and the
notes of sub-agents' calls of statewright's own tools.

A run's row (schema 4) keeps its counters and its context in columns of their own, apart from
`snapshot` (the rest of `Run.to_dict()`): a call that only counts writes a few integers, and a
result that records evidence writes the context, never the whole run as JSON again."""

from __future__ import annotations

from ..engine.run import PAUSED, RUNNING, PendingApproval, Run
from ..lean import TYPE_CHECKING, allocate_lock
from ..lean import loads as _loads
from .chain import GENESIS, canonical, link, to_json

if TYPE_CHECKING:  # pragma: no cover
    from typing import Any

    from ..definition.compiled import CompiledWorkflow
    from ..lean import sqlite3


_dumps = to_json


# -- a run's row ---------------------------------------------------------------------------------

#: the counters of the current state (DESIGN section 3), each a column of the run's row
COUNTERS = ("iterations", "files_edited", "bytes_read", "denied", "stop_reminders")
#: what a plain transition changes besides counters and context, each a column too (the first
#: four were already, as copies for lookups; they now are the run's own values)
MOVES = ("version", "status", "session", "updated_at", "state", "transition_count")
#: the fields kept outside `snapshot`
SPLIT = frozenset((*COUNTERS, "context", *MOVES))
#: the fields `snapshot` holds (forks, approvals, interrupts, ...): written only when one of
#: them changed
STRUCTURE = tuple(f for f in Run._fields if f not in SPLIT)
#: what a run is read from, in this order (`run_from_row`); `r.` for queries that join
RUN_COLUMNS = ("snapshot, iterations, files_edited, bytes_read, denied, stop_reminders, "
               "context, version, status, session, updated_at, state, transition_count")
R_RUN_COLUMNS = ", ".join(f"r.{c.strip()}" for c in RUN_COLUMNS.split(","))
DIGEST_AT = 13  # a query's row: RUN_COLUMNS, then def_digest


def run_from_row(row: Any) -> Run:
    """The run of a row that starts with `RUN_COLUMNS`."""
    d = _loads(row[0])
    d["iterations"] = row[1]
    files = row[2]
    d["files_edited"] = _loads(files) if files != "[]" else ()
    d["bytes_read"] = row[3]
    d["denied"] = row[4]
    d["stop_reminders"] = row[5]
    d["context"] = _loads(row[6])
    d["version"] = row[7]
    d["status"] = row[8]
    d["session"] = row[9]
    d["updated_at"] = row[10]
    d["state"] = row[11]
    d["transition_count"] = row[12]
    return Run.from_dict(d)


def snapshot_of(run: Run) -> str:
    """`snapshot`: the run's JSON without the fields that have columns of their own."""
    d = run.to_dict()
    for f in SPLIT:
        del d[f]
    return _dumps(d)


def files_json(files: tuple[str, ...]) -> str:
    return _dumps(list(files)) if files else "[]"


def split_run_rows(conn: sqlite3.Connection) -> None:
    """Schema 4's migration of the runs already stored (inside its transaction): the fields
    with columns of their own move there from `snapshot`."""
    rows = conn.execute("SELECT run_id, snapshot FROM runs").fetchall()
    for run_id, snapshot in rows:
        run = Run.from_dict(_loads(snapshot))
        conn.execute(
            "UPDATE runs SET snapshot=?, iterations=?, files_edited=?, bytes_read=?, denied=?,"
            " stop_reminders=?, context=?, state=?, transition_count=? WHERE run_id=?",
            (snapshot_of(run), run.iterations, files_json(run.files_edited), run.bytes_read,
             run.denied, run.stop_reminders, _dumps(run.context), run.state,
             run.transition_count, run_id))


def chain_history(conn: sqlite3.Connection) -> None:
    """Schema 5's migration of the history already stored (inside its transaction): each run's
    rows, in order, get their links in the run's hash chain (`store.chain`)."""
    heads: dict[str, str] = {}
    rows = conn.execute("SELECT seq, run_id, at, actor, kind, version, state, data FROM events"
                        " ORDER BY seq").fetchall()
    for seq, run_id, at, actor, kind, version, state, data in rows:
        prev = heads.get(run_id, GENESIS)
        # (the data re-encoded as the store writes it now: the same text for every row it wrote)
        h = heads[run_id] = link(prev, canonical(run_id, at, actor, kind, version, state, None,
                                                 _dumps(_loads(data))))
        conn.execute("UPDATE events SET prev_hash=?, hash=?, data=? WHERE seq=?",
                     (prev, h, _dumps(_loads(data)), seq))


class TxTables:
    conn: sqlite3.Connection
    cache: Any

    def _run_row(self, row: Any) -> Run | None:  # pragma: no cover - defined by Tx
        raise NotImplementedError

    # -- runs listed, history --------------------------------------------------------------
    def latest_session_run(self, session: str) -> Run | None:
        row = self.conn.execute(
            f"SELECT {RUN_COLUMNS} FROM runs WHERE session=? AND parent_run IS NULL"
            " ORDER BY created_at DESC, rowid DESC LIMIT 1", (session,)).fetchone()
        return run_from_row(row) if row else None

    def newest_paused(self, workflow: str) -> Run | None:
        row = self.conn.execute(
            f"SELECT {RUN_COLUMNS} FROM runs WHERE workflow=? AND status=? AND parent_run IS NULL"
            " ORDER BY updated_at DESC, rowid DESC LIMIT 1", (workflow, PAUSED)).fetchone()
        return run_from_row(row) if row else None

    def list_runs(self, session: str | None = None, limit: int = 200,
                  all_projects: bool = False) -> list[Run]:
        """Runs newest first (`all_projects`: the same here, where one file is one project)."""
        if session is None:
            rows = self.conn.execute(f"SELECT {RUN_COLUMNS} FROM runs ORDER BY created_at DESC,"
                                     " rowid DESC LIMIT ?", (limit,)).fetchall()
        else:
            rows = self.conn.execute(
                f"SELECT {RUN_COLUMNS} FROM runs WHERE session=? OR session LIKE ? "
                "ORDER BY created_at DESC, rowid DESC LIMIT ?",
                (session, session.replace("%", r"\%") + "/%", limit)).fetchall()
        return [run_from_row(r) for r in rows]

    def runs_page(self, limit: int, offset: int = 0, all_projects: bool = False) -> list[Run]:
        """Runs newest first, `limit` of them after skipping `offset` (the web page's list)."""
        rows = self.conn.execute(f"SELECT {RUN_COLUMNS} FROM runs ORDER BY created_at DESC,"
                                 " rowid DESC LIMIT ? OFFSET ?", (limit, offset)).fetchall()
        return [run_from_row(r) for r in rows]

    def count_runs(self, all_projects: bool = False) -> int:
        return int(self.conn.execute("SELECT count(*) FROM runs").fetchone()[0])

    def running_runs(self) -> list[Run]:
        rows = self.conn.execute(f"SELECT {RUN_COLUMNS} FROM runs WHERE status=?",
                                 (RUNNING,)).fetchall()
        return [run_from_row(r) for r in rows]

    def run_and_descendants(self, run_id: str, limit: int = 1000) -> list[str]:
        """`run_id` and the runs it started (fork branches, invoked runs), theirs, and so on,
        breadth first (at most about `limit` ids)."""
        ids, frontier = [run_id], [run_id]
        while frontier and len(ids) < limit:
            marks = ",".join("?" * len(frontier))
            rows = self.conn.execute(f"SELECT run_id FROM runs WHERE parent_run IN ({marks})",
                                     frontier).fetchall()
            frontier = [r[0] for r in rows if r[0] not in ids]
            ids += frontier
        return ids

    def last_event_seq(self) -> int:
        """The newest history row's number: every change to a run appends one, so a reader
        that sees it unchanged has seen everything (the web page's live updates). (Rows are
        never deleted, so `seq` only grows without AUTOINCREMENT: schema 4.)"""
        return int(self.conn.execute("SELECT coalesce(max(seq), 0) FROM events").fetchone()[0])

    def recent_history(self, run_ids: list[str], limit: int) -> list[dict[str, Any]]:
        """The newest `limit` history rows of `run_ids`, newest first: each run's own newest
        rows through `events_by_run`, merged, so a long history is never read whole."""
        rows: list[Any] = []
        for rid in run_ids:
            rows += self.conn.execute(
                "SELECT seq, run_id, at, actor, kind, version, state, data FROM events"
                " WHERE run_id=? ORDER BY seq DESC LIMIT ?", (rid, limit)).fetchall()
        rows.sort(key=lambda r: r[0], reverse=True)
        return [_event_row(r) for r in rows[:limit]]

    def history(self, run_ids: list[str] | None = None,
                limit: int = 10_000, chain: bool = False) -> list[dict[str, Any]]:
        """History rows in order; `chain`: with each row's links in its run's hash chain (and
        `machine`, which the SQLite store leaves empty: it is one machine's)."""
        cols = "seq, run_id, at, actor, kind, version, state, data, NULL, prev_hash, hash"
        if run_ids is None:
            rows = self.conn.execute(f"SELECT {cols} FROM events ORDER BY seq LIMIT ?",
                                     (limit,)).fetchall()
        else:
            marks = ",".join("?" * len(run_ids))
            rows = self.conn.execute(
                f"SELECT {cols} FROM events WHERE run_id IN ({marks}) ORDER BY seq LIMIT ?",
                (*run_ids, limit)).fetchall()
        return [_event_row(r, chain) for r in rows]

    def run_origins(self, run_ids: list[str]) -> dict[str, tuple[str | None, str | None]]:
        """run_id -> (project, machine): one project's file on one machine knows neither."""
        return {}

    # -- tokens (`statewright token`) --------------------------------------------------------
    def put_token(self, token_hash: str, subject: str, role: str, at: float,
                  by: str | None) -> None:
        self.conn.execute("INSERT INTO tokens(token_hash, subject, role, created_at, created_by)"
                          " VALUES (?,?,?,?,?)", (token_hash, subject, role, at, by))

    def token(self, token_hash: str) -> tuple[str, str] | None:
        """(subject, role) of a token that is not revoked."""
        row = self.conn.execute("SELECT subject, role FROM tokens WHERE token_hash=? AND"
                                " revoked_at IS NULL", (token_hash,)).fetchone()
        return (row[0], row[1]) if row else None

    def tokens(self) -> list[dict[str, Any]]:
        rows = self.conn.execute("SELECT token_hash, subject, role, created_at, created_by,"
                                 " revoked_at FROM tokens ORDER BY created_at").fetchall()
        return [_token_row(r) for r in rows]

    def revoke_token(self, prefix: str, at: float) -> int:
        return int(self.conn.execute(
            "UPDATE tokens SET revoked_at=? WHERE revoked_at IS NULL AND substr(token_hash, 1, ?)"
            " = ?", (at, len(prefix), prefix)).rowcount)

    def set_approver(self, approval_id: str, approver: str) -> None:
        self.conn.execute("UPDATE approvals SET decided_by=? WHERE approval_id=?",
                          (approver, approval_id))

    # -- approvals --------------------------------------------------------------------------
    def requester(self, run_id: str) -> str | None:
        """Who asks when run `run_id` parks a transition: the agent of its session."""
        hit = self.cache.runs.get(run_id)
        return f"agent:{hit[0].session}" if hit is not None else None

    def put_approval(self, run_id: str, pa: PendingApproval) -> None:
        self.conn.execute(
            "INSERT OR REPLACE INTO approvals(approval_id, run_id, event, message, target, data,"
            " status, requested_at, requested_by) VALUES (?,?,?,?,?,?,'pending',?,?)",
            (pa.approval_id, run_id, pa.event, pa.message, pa.target, _dumps(pa.data or {}),
             pa.requested_at or 0.0, self.requester(run_id)))

    def decide_approval(self, approval_id: str, status: str, at: float, by: str,
                        reason: str | None = None) -> None:
        self.conn.execute(
            "UPDATE approvals SET status=?, decided_at=?, decided_by=?, reason=? "
            "WHERE approval_id=? AND status='pending'", (status, at, by, reason, approval_id))

    def pending_approvals(self, all_projects: bool = False) -> list[dict[str, Any]]:
        rows = self.conn.execute(
            "SELECT approval_id, run_id, event, message, target, requested_at FROM approvals "
            "WHERE status='pending' ORDER BY requested_at").fetchall()
        return [{"approval_id": r[0], "run_id": r[1], "event": r[2], "message": r[3],
                 "target": r[4], "requested_at": r[5]} for r in rows]

    def approval(self, approval_id: str) -> dict[str, Any] | None:
        r = self.conn.execute(
            "SELECT approval_id, run_id, event, message, target, status, reason, requested_by,"
            " decided_by FROM approvals WHERE approval_id=?", (approval_id,)).fetchone()
        if r is None:
            return None
        return {"approval_id": r[0], "run_id": r[1], "event": r[2], "message": r[3],
                "target": r[4], "status": r[5], "reason": r[6], "requested_by": r[7],
                "decided_by": r[8]}

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
            f"SELECT {R_RUN_COLUMNS}, r.def_digest FROM bindings b JOIN runs r"
            " ON r.run_id = b.run_id WHERE b.session = ? AND r.status IN (?, ?)",
            (session, RUNNING, PAUSED)).fetchone())

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


def _event_row(r: Any, chain: bool = False) -> dict[str, Any]:
    """A history row as the runtime hands it out (`chain`: with `machine`, `prev_hash` and
    `hash`, columns 8 to 10)."""
    d = {"seq": r[0], "run_id": r[1], "at": r[2], "actor": r[3], "kind": r[4],
         "version": r[5], "state": r[6], "data": _loads(r[7])}
    if chain:
        d.update(machine=r[8], prev_hash=r[9], hash=r[10])
    return d


def _token_row(r: Any) -> dict[str, Any]:
    return {"id": r[0][:12], "subject": r[1], "role": r[2], "created_at": r[3],
            "created_by": r[4], "revoked_at": r[5]}


# -- shared by both stores: what changed in a run, definitions, history rows ---------------
def moves_of(r: Run) -> tuple[Any, ...]:
    """The `MOVES` fields of `r`, in that order. (Spelled out, not `operator.attrgetter`:
    importing `operator` would cost every hook process half a millisecond.)"""
    return (r.version, r.status, r.session, r.updated_at, r.state, r.transition_count)


def structure_of(r: Run) -> tuple[Any, ...]:
    """The `STRUCTURE` fields of `r`, in that order (tests/store checks both lists)."""
    return (r.run_id, r.workflow, r.interrupt_return, r.interrupt, r.pending_approval, r.fork,
            r.child_run, r.invoke, r.parent_run, r.branch, r.branch_terminal, r.created_at,
            r.interrupt_queue, r.interrupt_counters, r.entered_at)

DEF_CACHE: dict[str, CompiledWorkflow] = {}  # digest -> compiled (immutable, safe to share)
DEF_LOCK = allocate_lock()


def definition_digest(compiled: CompiledWorkflow) -> tuple[str, str]:
    """(digest, body): the JSON of the compiled workflow and its sha256. Key order is kept:
    it carries meaning (the order of events, of fork branches)."""
    import hashlib

    body = to_json(compiled.to_dict())
    return hashlib.sha256(body.encode()).hexdigest(), body


def file_sha256(path: str | None) -> str | None:
    """The sha256 of a file's bytes; None when there is no such file."""
    if not path:
        return None
    import hashlib

    try:
        with open(path, "rb") as fh:
            return hashlib.sha256(fh.read()).hexdigest()
    except OSError:
        return None


class EventRow(tuple[str, str, str]):
    """(actor, kind, data as JSON): a history row whose data is already JSON (the runtime
    keeps the few that a call writes over and over, `runtime.enforcement`)."""

    __slots__ = ()


def event_fields(ev: Any) -> tuple[str, str, str]:
    """(actor, kind, data as JSON) of an `engine.Event`, a `{kind, actor, data}` dict, or an
    `EventRow`."""
    if type(ev) is EventRow:
        return ev
    if isinstance(ev, dict):
        return ev.get("actor", "system"), ev["kind"], to_json(ev.get("data") or {})
    return ev.actor, ev.kind, to_json(ev.data)
