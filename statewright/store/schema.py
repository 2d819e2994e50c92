"""The store's schema (DESIGN.md sections 1 and 3): the DDL of each version and the migrations
that bring an older file up to date (`store.db` runs them). Append a version, never edit one."""

SCHEMA_VERSION = 5
APPLICATION_ID = 0x53775772  # "SwWr": marks a state.db as statewright's
BUSY_TIMEOUT_MS = 30_000
#: the page size of a new store (an existing file keeps its own: SQLite fixes it at creation).
#: Every commit writes each page it touched whole to the WAL, checksummed: a durable
#: authorize+record pair touches six (per transaction the run's row, the history row and its
#: `events_by_run` entry), 24 KiB with 4096-byte pages, 6 KiB with these (the rows are far
#: smaller). See docs/design-decisions.md, "Store speed, part 3".
PAGE_SIZE = 1024

_SCHEMA_V1 = """
CREATE TABLE definitions (
    digest TEXT PRIMARY KEY,
    workflow TEXT NOT NULL,
    source_path TEXT,
    body TEXT NOT NULL
);
CREATE TABLE runs (
    run_id TEXT PRIMARY KEY,
    workflow TEXT NOT NULL,
    session TEXT NOT NULL,
    status TEXT NOT NULL,
    parent_run TEXT,
    version INTEGER NOT NULL,
    def_digest TEXT NOT NULL REFERENCES definitions(digest),
    snapshot TEXT NOT NULL,
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL
);
CREATE INDEX runs_by_session ON runs(session, parent_run, created_at);
CREATE INDEX runs_by_workflow ON runs(workflow, status, updated_at);
CREATE INDEX runs_by_parent ON runs(parent_run);
CREATE TABLE events (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id TEXT NOT NULL,
    at REAL NOT NULL,
    actor TEXT NOT NULL,
    kind TEXT NOT NULL,
    version INTEGER NOT NULL,
    state TEXT,
    data TEXT NOT NULL
);
CREATE INDEX events_by_run ON events(run_id, seq);
CREATE TABLE approvals (
    approval_id TEXT PRIMARY KEY,
    run_id TEXT NOT NULL,
    event TEXT NOT NULL,
    message TEXT,
    target TEXT,
    data TEXT NOT NULL,
    status TEXT NOT NULL,
    requested_at REAL NOT NULL,
    decided_at REAL,
    decided_by TEXT,
    reason TEXT
);
CREATE INDEX approvals_by_run ON approvals(run_id, status);
CREATE TABLE bindings (
    session TEXT PRIMARY KEY,
    run_id TEXT NOT NULL,
    bound_at REAL NOT NULL
);
"""

# the web page lists runs newest first and the approvals waiting for a human
_SCHEMA_V2 = """
CREATE INDEX IF NOT EXISTS runs_by_created ON runs(created_at);
CREATE INDEX IF NOT EXISTS approvals_by_status ON approvals(status, requested_at)
"""

# what the hook's processes last saw of the files a run's interrupts watch (runtime.watch), and
# the bytes of the workflow file a definition was compiled from (has the file changed since?)
_SCHEMA_V3 = """
ALTER TABLE definitions ADD COLUMN source_sha256 TEXT;
CREATE TABLE marks (
    run_id TEXT PRIMARY KEY,
    marks TEXT NOT NULL,
    notices TEXT NOT NULL DEFAULT '[]'
);
CREATE TABLE agent_calls (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    session TEXT NOT NULL,
    call TEXT NOT NULL,
    agent_key TEXT NOT NULL,
    at REAL NOT NULL
);
CREATE INDEX agent_calls_by_call ON agent_calls(session, call, seq)
"""

# a run's counters, context, state and number of transitions in columns of their own
# (`store.tables`: a call that only counts writes a few integers, a plain transition no JSON
# but the context; `store.tables.split_run_rows` moves them out of the
# snapshots of the runs already there), and the history without AUTOINCREMENT (its
# `sqlite_sequence` row was one more page in every commit; rows are never deleted, so the
# rowid `seq` still only grows). The history is copied with its numbers.
_SCHEMA_V4 = """
ALTER TABLE runs ADD COLUMN iterations INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN files_edited TEXT NOT NULL DEFAULT '[]';
ALTER TABLE runs ADD COLUMN bytes_read INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN denied INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN stop_reminders INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN context TEXT NOT NULL DEFAULT '{}';
ALTER TABLE runs ADD COLUMN state TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN transition_count INTEGER NOT NULL DEFAULT 0;
CREATE TABLE events_v4 (
    seq INTEGER PRIMARY KEY,
    run_id TEXT NOT NULL,
    at REAL NOT NULL,
    actor TEXT NOT NULL,
    kind TEXT NOT NULL,
    version INTEGER NOT NULL,
    state TEXT,
    data TEXT NOT NULL
);
INSERT INTO events_v4(seq, run_id, at, actor, kind, version, state, data)
    SELECT seq, run_id, at, actor, kind, version, state, data FROM events ORDER BY seq;
DROP TABLE events;
ALTER TABLE events_v4 RENAME TO events;
CREATE INDEX events_by_run ON events(run_id, seq)
"""

# the history as a hash chain per run (`store.chain`: the rows already there are chained by
# `store.tables.chain_history`), who asked for an approval, and the tokens of the people who
# decide (stored hashed; `statewright token create`)
_SCHEMA_V5 = """
ALTER TABLE events ADD COLUMN prev_hash TEXT;
ALTER TABLE events ADD COLUMN hash TEXT;
ALTER TABLE approvals ADD COLUMN requested_by TEXT;
CREATE TABLE tokens (
    token_hash TEXT PRIMARY KEY,
    subject TEXT NOT NULL,
    role TEXT NOT NULL,
    created_at REAL NOT NULL,
    created_by TEXT,
    revoked_at REAL
)
"""

# version -> DDL that upgrades from version-1. Append, never edit.
MIGRATIONS: dict[int, str] = {1: _SCHEMA_V1, 2: _SCHEMA_V2, 3: _SCHEMA_V3, 4: _SCHEMA_V4,
                              5: _SCHEMA_V5}
