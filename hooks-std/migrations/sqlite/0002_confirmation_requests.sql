-- The approval gate's durable state, SQLite. Times are milliseconds since the
-- Unix epoch on the database's clock.

CREATE TABLE confirmation_requests (
    id TEXT PRIMARY KEY,
    idempotency_key TEXT NOT NULL UNIQUE,
    tool_name TEXT NOT NULL,
    args TEXT NOT NULL,
    args_digest TEXT NOT NULL,
    agent_id TEXT NOT NULL,
    initiator_user_id TEXT NOT NULL,
    org_id TEXT NOT NULL,
    approver_scope TEXT NOT NULL,
    approver_allowlist TEXT NOT NULL,
    channel_kind TEXT NOT NULL,
    channel_id TEXT NOT NULL,
    mode TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('pending', 'approved', 'rejected', 'expired', 'cancelled')),
    created_at_ms INTEGER NOT NULL,
    expires_at_ms INTEGER NOT NULL,
    decided_at_ms INTEGER,
    decided_by TEXT,
    reason TEXT,
    message_ref TEXT
);

CREATE INDEX confirmation_requests_pending ON confirmation_requests (status, expires_at_ms);
CREATE INDEX confirmation_requests_decided ON confirmation_requests (decided_at_ms);

-- Callback deliveries already handled, for event-id dedup.
CREATE TABLE callback_events (
    event_id TEXT PRIMARY KEY,
    channel_kind TEXT NOT NULL,
    received_at_ms INTEGER NOT NULL
);
