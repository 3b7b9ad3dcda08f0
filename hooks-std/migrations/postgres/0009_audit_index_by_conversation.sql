-- The audit log's lookup by conversation: (conversation_id, id) gives a
-- conversation's rows in the order they were written; a lookup of one call
-- reads only its conversation's rows. It replaces the
-- (conversation_id, tool_call_id) index, so both backends have the same
-- indexes (SQLite gets this one in its migration 9).
DROP INDEX IF EXISTS connector_call_logs_by_call;
CREATE INDEX connector_call_logs_by_conversation ON connector_call_logs (conversation_id, id);
