"""The PostgreSQL store's statements (`store.pg`): reading and locking runs, the versioned
updates, history rows with their links in the run's hash chain, and a decision on a kept run in
one statement (schema 3)."""

from __future__ import annotations

from .pg_listen import CHANNEL
from .tables import RUN_COLUMNS

COLS = f"{RUN_COLUMNS}, def_digest"
SELECT_RUN = f"SELECT {COLS} FROM runs WHERE run_id=%s"
LOCK_RUN = f"SELECT {COLS} FROM runs WHERE run_id=%s FOR UPDATE"
LOCK_SESSION = "SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))"
RESOLVE_SESSION = (
    f"SELECT {COLS} FROM runs WHERE run_id = (SELECT run_id FROM ("
    " SELECT r.run_id, 0 AS prio, 0::float8 AS t, 0::bigint AS o FROM bindings b"
    "  JOIN runs r ON r.run_id = b.run_id WHERE b.project = %(p)s AND b.session = %(s)s"
    "  AND r.status IN (%(a)s, %(b)s)"
    " UNION ALL"
    " SELECT run_id, 1, created_at, ord FROM runs WHERE project = %(p)s AND session = %(s)s"
    "  AND parent_run IS NULL AND status IN (%(a)s, %(b)s)"
    " UNION ALL"
    " SELECT run_id, 2, created_at, ord FROM runs WHERE project = %(p)s AND session = %(f)s"
    "  AND parent_run IS NULL AND status IN (%(a)s, %(b)s)"
    ") x ORDER BY prio, t DESC, o DESC LIMIT 1)")
# writing: the session's lock, the workflow files in use (when asked for) and the session's
# run, locked and read afresh, in one statement (`pg_schema`, version 2)
OPEN = "SELECT * FROM statewright_open(%s, %s, %s, %s, %s, %s, %s)"
# a history row and its link in the run's chain, computed by the server from the run's last
# row (under the run's lock): one round trip
INSERT_EVENT = (
    "WITH b AS (UPDATE runs SET rev=rev+1 WHERE run_id=%(r)s)"
    " INSERT INTO events(run_id, at, actor, kind, version, state, machine, data, prev_hash, hash)"
    " SELECT %(r)s, %(at)s, %(actor)s, %(kind)s, %(v)s, %(st)s, %(m)s, %(data)s, h.prev,"
    " encode(sha256(decode(h.prev, 'hex') || convert_to(%(canon)s, 'UTF8')), 'hex')"
    " FROM (SELECT coalesce((SELECT hash FROM events WHERE run_id = %(r)s"
    " ORDER BY seq DESC LIMIT 1), repeat('0', 64)) AS prev) h")
# the same with its arguments in order (one statement with a run's update: `WITH_EVENT`)
EVENT_VALUES = (
    "INSERT INTO events(run_id, at, actor, kind, version, state, machine, data, prev_hash, hash)"
    " SELECT %s, %s, %s, %s, %s, %s, %s, %s, h.prev,"
    " encode(sha256(decode(h.prev, 'hex') || convert_to(%s, 'UTF8')), 'hex')"
    " FROM (SELECT coalesce((SELECT hash FROM events WHERE run_id = %s"
    " ORDER BY seq DESC LIMIT 1), repeat('0', 64)) AS prev) h")
SET_COUNTERS = "iterations=%s, files_edited=%s, bytes_read=%s, denied=%s, stop_reminders=%s"
# (every change of a run's row adds one to its `rev`, as does a history row added to it: what a
# kept run is checked by, `KEPT`)
UPDATE_COUNTERS = f"UPDATE runs SET {SET_COUNTERS}, rev=rev+1 WHERE run_id=%s"
UPDATE_LIVE = f"UPDATE runs SET {SET_COUNTERS}, context=%s, rev=rev+1 WHERE run_id=%s"
UPDATE_MOVED = ("UPDATE runs SET version=%s, status=%s, session=%s, updated_at=%s, state=%s, "
                 f"transition_count=%s, context=%s, {SET_COUNTERS}, rev=rev+1 WHERE run_id=%s")
UPDATE_ALL = ("UPDATE runs SET version=%s, status=%s, session=%s, updated_at=%s, state=%s, "
               f"transition_count=%s, context=%s, {SET_COUNTERS}, snapshot=%s, rev=rev+1"
               " WHERE run_id=%s")
# each update must change exactly the one row (the version read): checked by the server, so
# that a queued update that missed aborts the transaction before its COMMIT (`PgTx._later`)
VERSIONED = {sql: ("WITH u AS (" + sql + " AND version=%s RETURNING 1)"
                    " SELECT statewright_one_row(count(*), %s) FROM u")
              for sql in (UPDATE_COUNTERS, UPDATE_LIVE, UPDATE_MOVED, UPDATE_ALL)}
CHECKED = {sql: ("WITH u AS (" + sql + " RETURNING 1)"
                  " SELECT statewright_one_row(count(*), %s) FROM u")
            for sql in (UPDATE_COUNTERS, UPDATE_LIVE, UPDATE_MOVED, UPDATE_ALL)}
NOTIFY = f"SELECT pg_notify('{CHANNEL}', %s)"
# a run's versioned update and its one history row: one statement (a decision's writes); it
# answers the run's `rev` and its chain's head after it (what the run is kept with)
WITH_EVENT = {sql: ("WITH u AS (" + sql + " AND version=%s RETURNING rev), e AS ("
                     + EVENT_VALUES + " RETURNING hash) SELECT statewright_one_row(count(*), %s),"
                     " max(u.rev), (SELECT max(hash) FROM e) FROM u")
               for sql in (UPDATE_COUNTERS, UPDATE_LIVE, UPDATE_MOVED, UPDATE_ALL)}
# a decision on a kept run (`_Kept`), the whole transaction in one statement: the update
# happens only when the run's `rev` is still the one this connection wrote (the row lock taken,
# the newest row version compared) and the project's session lookups have not changed since
# the run was looked up (the project's mark, `MARK_OF`, schema 3); its history row is written
# only with the update, linked to the head this connection wrote. 0 rows: nothing written.
MARK_OF = ("concat_ws(':', (SELECT max(lookup_seq) FROM runs WHERE project = %s),"
            " (SELECT max(lookup_seq) FROM bindings WHERE project = %s),"
            " (SELECT max(n) FROM statewright_removals))")
KEPT = {sql: ("WITH u AS (" + sql + " AND rev=%s AND " + MARK_OF + " = %s RETURNING 1),"
               " e AS (INSERT INTO events(run_id, at, actor, kind, version, state, machine,"
               " data, prev_hash, hash) SELECT %s, %s, %s, %s, %s, %s, %s, %s, %s, %s FROM u)"
               " SELECT count(*) FROM u")
         for sql in (UPDATE_COUNTERS, UPDATE_LIVE)}
MARK = "SELECT " + MARK_OF
#: how many sessions' runs a connection keeps (`_Kept`)
KEPT_SESSIONS = 64
#: after a kept run was found changed, the session's next decisions read it afresh, this many
#: (a run that several processes decide on at once is read under its lock, not guessed at)
COLD_AFTER_STALE = 16
SOURCES = ("SELECT DISTINCT d.source_path FROM runs r JOIN definitions d ON d.digest ="
            " r.def_digest WHERE r.project=%s AND r.status IN (%s, %s)"
            " AND d.source_path IS NOT NULL")
