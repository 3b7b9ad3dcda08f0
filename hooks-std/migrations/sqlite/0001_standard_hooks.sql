-- Tables of the standard hooks (audit log, org modes, shared rate limits), SQLite.

CREATE TABLE connector_call_logs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    conversation_id TEXT NOT NULL,
    tool_call_id TEXT NOT NULL,
    agent_id TEXT NOT NULL,
    user_id TEXT NOT NULL,
    org_id TEXT NOT NULL,
    surface TEXT NOT NULL,
    tool_name TEXT NOT NULL,
    connector TEXT,
    action TEXT,
    outcome TEXT NOT NULL CHECK (outcome IN ('ok', 'tool_error', 'blocked')),
    blocked_by TEXT,
    reason TEXT,
    args TEXT NOT NULL,
    result_size INTEGER,
    observation_size INTEGER NOT NULL,
    duration_ms INTEGER NOT NULL
);

CREATE INDEX connector_call_logs_by_call ON connector_call_logs (conversation_id, tool_call_id);
CREATE INDEX connector_call_logs_by_org ON connector_call_logs (org_id, created_at);

CREATE TABLE org_settings (
    org_id TEXT PRIMARY KEY,
    read_only INTEGER NOT NULL DEFAULT 0 CHECK (read_only IN (0, 1)),
    updated_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);

-- GCRA state per (connector, user); times are microseconds since the Unix epoch
-- on the database's clock, so every replica uses the same clock.
CREATE TABLE rate_limit_buckets (
    connector TEXT NOT NULL,
    user_id TEXT NOT NULL,
    tat_us INTEGER NOT NULL,
    checked_at_us INTEGER NOT NULL,
    allowed INTEGER NOT NULL,
    PRIMARY KEY (connector, user_id)
);
