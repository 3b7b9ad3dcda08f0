-- The audit log finds a conversation's rows through an ordinary index again.
--
-- Migration 7 replaced the (conversation_id, tool_call_id) index with a side
-- table filled in bulk by triggers, to reach a write rate no deployment
-- needs. Reading one conversation then took a special query over two
-- tables. The side table, its mark and its triggers go; the index on
-- (conversation_id, id) gives a conversation's rows in the order they were
-- written, and any SQL client finds them with a plain WHERE.
DROP TRIGGER IF EXISTS connector_call_logs_file_tail;
DROP TRIGGER IF EXISTS connector_call_logs_unfile;
DROP TRIGGER IF EXISTS connector_call_logs_refile;
DROP TRIGGER IF EXISTS connector_call_logs_append_only;
DROP TRIGGER IF EXISTS connector_call_logs_ids_stay;
DROP TRIGGER IF EXISTS connector_call_logs_filed_stays;
DROP TABLE IF EXISTS connector_call_logs_by_conversation;
DROP TABLE IF EXISTS connector_call_logs_filed;

CREATE INDEX connector_call_logs_by_conversation ON connector_call_logs (conversation_id, id);
