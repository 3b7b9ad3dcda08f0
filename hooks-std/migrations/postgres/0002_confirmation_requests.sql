-- The approval gate's durable state, PostgreSQL. Times are milliseconds since
-- the Unix epoch on the database's clock.

CREATE TABLE confirmation_requests (
    id TEXT PRIMARY KEY,
    idempotency_key TEXT NOT NULL UNIQUE,
    tool_name TEXT NOT NULL,
    args JSONB NOT NULL,
    args_digest TEXT NOT NULL,
    agent_id TEXT NOT NULL,
    initiator_user_id TEXT NOT NULL,
    org_id TEXT NOT NULL,
    approver_scope TEXT NOT NULL,
    approver_allowlist JSONB NOT NULL,
    channel_kind TEXT NOT NULL,
    channel_id TEXT NOT NULL,
    mode TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('pending', 'approved', 'rejected', 'expired', 'cancelled')),
    created_at_ms BIGINT NOT NULL,
    expires_at_ms BIGINT NOT NULL,
    decided_at_ms BIGINT,
    decided_by TEXT,
    reason TEXT,
    message_ref TEXT
);

CREATE INDEX confirmation_requests_pending ON confirmation_requests (status, expires_at_ms);
CREATE INDEX confirmation_requests_decided ON confirmation_requests (decided_at_ms);

-- Every status change is announced, so a gate waiting in any replica wakes at
-- once, whoever made the change (a callback, the sweeper, or an operator by hand).
CREATE FUNCTION hooks_confirmation_changed() RETURNS trigger AS $$
BEGIN
    PERFORM pg_notify('hooks_confirmation', NEW.id);
    RETURN NEW;
END;
$$ LANGUAGE plpgsql;

CREATE TRIGGER confirmation_requests_status_changed
    AFTER UPDATE OF status ON confirmation_requests
    FOR EACH ROW WHEN (OLD.status IS DISTINCT FROM NEW.status)
    EXECUTE FUNCTION hooks_confirmation_changed();

-- Callback deliveries already handled, for event-id dedup.
CREATE TABLE callback_events (
    event_id TEXT PRIMARY KEY,
    channel_kind TEXT NOT NULL,
    received_at_ms BIGINT NOT NULL
);
