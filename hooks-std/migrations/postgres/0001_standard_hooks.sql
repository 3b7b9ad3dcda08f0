-- Tables of the standard hooks (audit log, org modes, shared rate limits), PostgreSQL.

CREATE TABLE connector_call_logs (
    id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    created_at TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp(),
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
    args JSONB NOT NULL,
    result_size BIGINT,
    observation_size BIGINT NOT NULL,
    duration_ms BIGINT NOT NULL
);

CREATE INDEX connector_call_logs_by_call ON connector_call_logs (conversation_id, tool_call_id);
CREATE INDEX connector_call_logs_by_org ON connector_call_logs (org_id, created_at);

CREATE TABLE org_settings (
    org_id TEXT PRIMARY KEY,
    read_only BOOLEAN NOT NULL DEFAULT FALSE,
    updated_at TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp()
);

-- GCRA state per (connector, user); times are microseconds since the Unix epoch
-- on the database's clock, so every replica uses the same clock.
CREATE TABLE rate_limit_buckets (
    connector TEXT NOT NULL,
    user_id TEXT NOT NULL,
    tat_us BIGINT NOT NULL,
    checked_at_us BIGINT NOT NULL,
    allowed BOOLEAN NOT NULL,
    PRIMARY KEY (connector, user_id)
);
