-- An approval lets its call run once: the gate stamps the request when it
-- allows the call, and a re-run of an already-consumed approval is blocked.
ALTER TABLE confirmation_requests ADD COLUMN consumed_at_ms BIGINT;

-- Store arguments as their exact JSON text: JSONB refuses \u0000 in strings,
-- which would block such calls on PostgreSQL but not on SQLite. (The audit
-- log already replaces NUL characters when it redacts.)
ALTER TABLE confirmation_requests ALTER COLUMN args TYPE JSON USING args::text::json;
