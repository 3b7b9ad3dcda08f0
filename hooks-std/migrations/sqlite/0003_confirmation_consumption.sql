-- An approval lets its call run once: the gate stamps the request when it
-- allows the call, and a re-run of an already-consumed approval is blocked.
ALTER TABLE confirmation_requests ADD COLUMN consumed_at_ms INTEGER;
