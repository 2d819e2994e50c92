"""The PostgreSQL store's schema (`store.pg`): the DDL of each version, in order. Append a
version, never edit one. The versions applied are rows of `statewright_schema` (`migrate`); a
store written by a newer statewright is refused.

The tables mirror the SQLite store's (`store.schema`, version 4) plus what a shared store
needs: every run names its project and the machine it was started on, every history row the
machine it was written on and its link in the run's hash chain (`store.chain`), the file marks
of watched files are each machine's own (checkouts differ in inodes and times), approvals name
who asked and who decided (never the same), and `tokens` keeps the approvers' and admins'
tokens, hashed. JSON is kept as text, byte for byte what was written (the hash chain covers
it; `jsonb` would reorder keys). Times are seconds since the epoch as `double precision`, as in
SQLite. History rows cannot be changed or deleted (a trigger refuses both).
"""

from __future__ import annotations

from typing import Any

from ..errors import STORE_ERROR, StatewrightError

PG_SCHEMA_VERSION = 3
#: the advisory lock key that serialises migrations between processes
MIGRATION_LOCK = 0x53775772

_V1 = """
CREATE TABLE definitions (
    digest text PRIMARY KEY,
    workflow text NOT NULL,
    source_path text,
    body text NOT NULL,
    source_sha256 text
);
CREATE TABLE runs (
    run_id text PRIMARY KEY,
    project text NOT NULL,
    machine text NOT NULL,
    workflow text NOT NULL,
    session text NOT NULL,
    status text NOT NULL,
    parent_run text,
    version bigint NOT NULL,
    def_digest text NOT NULL REFERENCES definitions(digest),
    snapshot text NOT NULL,
    created_at double precision NOT NULL,
    updated_at double precision NOT NULL,
    iterations bigint NOT NULL DEFAULT 0,
    files_edited text NOT NULL DEFAULT '[]',
    bytes_read bigint NOT NULL DEFAULT 0,
    denied bigint NOT NULL DEFAULT 0,
    stop_reminders bigint NOT NULL DEFAULT 0,
    context text NOT NULL DEFAULT '{}',
    state text NOT NULL DEFAULT '',
    transition_count bigint NOT NULL DEFAULT 0,
    ord bigint GENERATED ALWAYS AS IDENTITY
);
CREATE INDEX runs_by_session ON runs(project, session, parent_run, created_at);
CREATE INDEX runs_by_project ON runs(project, status, updated_at);
CREATE INDEX runs_by_created ON runs(created_at);
CREATE INDEX runs_by_project_created ON runs(project, created_at);
CREATE INDEX runs_by_parent ON runs(parent_run);
CREATE TABLE events (
    seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    run_id text NOT NULL,
    at double precision NOT NULL,
    actor text NOT NULL,
    kind text NOT NULL,
    version bigint NOT NULL,
    state text,
    machine text,
    data text NOT NULL,
    prev_hash text NOT NULL,
    hash text NOT NULL
);
CREATE INDEX events_by_run ON events(run_id, seq);
CREATE FUNCTION statewright_one_row(n bigint, run text) RETURNS integer LANGUAGE plpgsql AS $$
BEGIN
    IF n <> 1 THEN
        RAISE EXCEPTION 'run % changed underneath this transaction (lost update prevented)', run
            USING ERRCODE = '40001';
    END IF;
    RETURN 1;
END $$;
CREATE FUNCTION statewright_history_is_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'statewright history rows are never changed or deleted';
END $$;
CREATE TRIGGER events_append_only BEFORE UPDATE OR DELETE ON events
    FOR EACH ROW EXECUTE FUNCTION statewright_history_is_append_only();
CREATE TABLE approvals (
    approval_id text PRIMARY KEY,
    run_id text NOT NULL,
    event text NOT NULL,
    message text,
    target text,
    data text NOT NULL,
    status text NOT NULL,
    requested_at double precision NOT NULL,
    requested_by text,
    decided_at double precision,
    decided_by text,
    reason text,
    CONSTRAINT approver_is_not_requester CHECK (decided_by <> requested_by)
);
CREATE INDEX approvals_by_run ON approvals(run_id, status);
CREATE INDEX approvals_by_status ON approvals(status, requested_at);
CREATE TABLE bindings (
    project text NOT NULL,
    session text NOT NULL,
    run_id text NOT NULL,
    bound_at double precision NOT NULL,
    PRIMARY KEY (project, session)
);
CREATE TABLE marks (
    run_id text NOT NULL,
    machine text NOT NULL,
    marks text NOT NULL,
    notices text NOT NULL DEFAULT '[]',
    PRIMARY KEY (run_id, machine)
);
CREATE TABLE agent_calls (
    seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    project text NOT NULL,
    session text NOT NULL,
    call text NOT NULL,
    agent_key text NOT NULL,
    at double precision NOT NULL
);
CREATE INDEX agent_calls_by_call ON agent_calls(project, session, call, seq);
CREATE TABLE tokens (
    token_hash text PRIMARY KEY,
    subject text NOT NULL,
    role text NOT NULL CHECK (role IN ('agent', 'approver', 'admin')),
    created_at double precision NOT NULL,
    created_by text,
    revoked_at double precision
)
"""

# version 2: a write transaction's first step in one statement (`store.pg`: the session's lock,
# the workflow files in use when asked for, and the session's run, locked and read afresh), so
# a decision costs fewer statements; its plans are kept by the server for the connection
_V2 = """
CREATE FUNCTION statewright_open(lock_key text, p text, s text, f text, a text, b text,
                                 want_sources boolean)
RETURNS TABLE (snapshot text, iterations bigint, files_edited text, bytes_read bigint,
               denied bigint, stop_reminders bigint, context text, version bigint,
               status text, session text, updated_at double precision, state text,
               transition_count bigint, def_digest text, sources text[])
LANGUAGE plpgsql AS $$
DECLARE
    src text[];
    found_id text;
BEGIN
    IF lock_key IS NOT NULL THEN
        PERFORM pg_advisory_xact_lock(hashtextextended(lock_key, 0));
    END IF;
    IF want_sources THEN
        src := ARRAY(SELECT DISTINCT d.source_path FROM runs r JOIN definitions d
                     ON d.digest = r.def_digest WHERE r.project = p AND r.status IN (a, b)
                     AND d.source_path IS NOT NULL);
    END IF;
    SELECT x.run_id INTO found_id FROM (
        SELECT r.run_id, 0 AS prio, 0::float8 AS t, 0::bigint AS o FROM bindings bd
         JOIN runs r ON r.run_id = bd.run_id WHERE bd.project = p AND bd.session = s
         AND r.status IN (a, b)
        UNION ALL
        SELECT r.run_id, 1, r.created_at, r.ord FROM runs r WHERE r.project = p
         AND r.session = s AND r.parent_run IS NULL AND r.status IN (a, b)
        UNION ALL
        SELECT r.run_id, 2, r.created_at, r.ord FROM runs r WHERE r.project = p
         AND r.session = f AND r.parent_run IS NULL AND r.status IN (a, b)
    ) x ORDER BY x.prio, x.t DESC, x.o DESC LIMIT 1;
    IF found_id IS NOT NULL THEN
        RETURN QUERY SELECT r.snapshot, r.iterations, r.files_edited, r.bytes_read, r.denied,
            r.stop_reminders, r.context, r.version, r.status, r.session, r.updated_at,
            r.state, r.transition_count, r.def_digest, src
            FROM runs r WHERE r.run_id = found_id FOR UPDATE;
        IF FOUND THEN
            RETURN;
        END IF;
    END IF;
    RETURN QUERY SELECT NULL::text, NULL::bigint, NULL::text, NULL::bigint, NULL::bigint,
        NULL::bigint, NULL::text, NULL::bigint, NULL::text, NULL::text,
        NULL::double precision, NULL::text, NULL::bigint, NULL::text, src;
END $$
"""

# version 3: a decision in one statement when nothing changed (`store.pg`, kept runs). Every
# change of a run's row, and every history row added to it, adds one to its `rev`. Every change
# of which run a session resolves to or which workflow files are in use (a run added; its
# status, session, parent or definition changed; a binding added or changed) gives the row a
# new `lookup_seq`, and every removal of runs or bindings counts in `statewright_removals`: a
# project's mark (the greatest `lookup_seq` of its runs and of its bindings, and the removals)
# changes whenever a session lookup in it may. A process that wrote a run last knows its `rev`,
# its row, its chain's head and the project's mark from before it looked the session up, and
# writes its next decision on the run in one statement that checks, under the run's row lock,
# that both are unchanged; else the statement writes nothing and the decision is made again
# from a fresh read. Rows of schema 2 start at `rev` 0.
_V3 = """
ALTER TABLE runs ADD COLUMN rev bigint NOT NULL DEFAULT 0;
CREATE SEQUENCE statewright_lookup_seq;
ALTER TABLE runs ADD COLUMN lookup_seq bigint NOT NULL
    DEFAULT nextval('statewright_lookup_seq');
ALTER TABLE bindings ADD COLUMN lookup_seq bigint NOT NULL
    DEFAULT nextval('statewright_lookup_seq');
CREATE INDEX runs_by_lookup ON runs(project, lookup_seq);
CREATE INDEX bindings_by_lookup ON bindings(project, lookup_seq);
CREATE TABLE statewright_removals (n bigint NOT NULL);
INSERT INTO statewright_removals VALUES (0);
CREATE FUNCTION statewright_run_moved() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.status IS DISTINCT FROM OLD.status OR NEW.session IS DISTINCT FROM OLD.session
       OR NEW.parent_run IS DISTINCT FROM OLD.parent_run
       OR NEW.def_digest IS DISTINCT FROM OLD.def_digest
       OR NEW.project IS DISTINCT FROM OLD.project THEN
        NEW.lookup_seq := nextval('statewright_lookup_seq');
    END IF;
    RETURN NEW;
END $$;
CREATE TRIGGER runs_lookup_moved BEFORE UPDATE OF status, session, parent_run, def_digest,
    project ON runs FOR EACH ROW EXECUTE FUNCTION statewright_run_moved();
CREATE FUNCTION statewright_binding_moved() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    NEW.lookup_seq := nextval('statewright_lookup_seq');
    RETURN NEW;
END $$;
CREATE TRIGGER bindings_lookup_moved BEFORE UPDATE ON bindings
    FOR EACH ROW EXECUTE FUNCTION statewright_binding_moved();
CREATE FUNCTION statewright_lookup_removed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE statewright_removals SET n = n + 1;
    RETURN NULL;
END $$;
CREATE TRIGGER runs_lookup_removed AFTER DELETE OR TRUNCATE ON runs
    FOR EACH STATEMENT EXECUTE FUNCTION statewright_lookup_removed();
CREATE TRIGGER bindings_lookup_removed AFTER DELETE OR TRUNCATE ON bindings
    FOR EACH STATEMENT EXECUTE FUNCTION statewright_lookup_removed()
"""

#: version -> DDL that upgrades from version-1 (run as one script in the migration's
#: transaction). Append, never edit.
PG_MIGRATIONS: dict[int, str] = {1: _V1, 2: _V2, 3: _V3}


def migrate(conn: Any, file: str) -> None:
    """Bring the schema of connection `conn` (autocommit) up to `PG_SCHEMA_VERSION`: one
    transaction, under an advisory lock, so concurrent first connections do it once. `file`:
    the store as messages name it (never its password)."""
    if _current_version(conn) == PG_SCHEMA_VERSION:
        return
    conn.execute("BEGIN")
    try:
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK,))
        conn.execute("CREATE TABLE IF NOT EXISTS statewright_schema ("
                     "version integer PRIMARY KEY, applied_at timestamptz NOT NULL"
                     " DEFAULT now())")
        version = _current_version(conn)
        if version > PG_SCHEMA_VERSION:
            raise StatewrightError(
                STORE_ERROR, f"PostgreSQL store {file} was written by a newer "
                f"statewright (schema {version} > {PG_SCHEMA_VERSION}); upgrade statewright")
        if version == 0:
            taken = conn.execute(
                "SELECT count(*) FROM information_schema.tables WHERE table_schema ="
                " current_schema() AND table_name IN ('runs', 'events', 'approvals')"
                ).fetchone()[0]
            if taken:
                raise StatewrightError(
                    STORE_ERROR, f"PostgreSQL store {file}: the schema already holds "
                    "tables named runs/events/approvals that are not statewright's; use "
                    "another database or schema")
        for v in range(version + 1, PG_SCHEMA_VERSION + 1):
            conn.execute(PG_MIGRATIONS[v])
            conn.execute("INSERT INTO statewright_schema(version) VALUES (%s)", (v,))
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise


def _current_version(conn: Any) -> int:
    row = conn.execute("SELECT to_regclass('statewright_schema') IS NOT NULL").fetchone()
    if not row[0]:
        return 0
    return int(conn.execute("SELECT coalesce(max(version), 0) FROM statewright_schema"
                            ).fetchone()[0])
