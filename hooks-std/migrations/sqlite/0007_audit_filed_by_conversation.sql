-- The audit log's lookup by conversation, filed in bulk instead of by an
-- index kept row by row.
--
-- An index on (conversation_id, tool_call_id) puts each new row into its
-- conversation's own leaf page. With many conversations writing at once, a
-- commit of 64 rows dirties some 64 index pages, and each of them goes to
-- the WAL whole (4 KiB for a row of about 300 bytes) and again to the file
-- at the checkpoint: measured, that index cost the writer half its rows/s.
--
-- So rows are appended unindexed. Whenever 4,096 rows have arrived since the
-- last filing, the trigger below files them into
-- connector_call_logs_by_conversation in key order, inside the INSERT that
-- brought the 4,096th: each conversation's page is written once for all its
-- new rows. connector_call_logs_filed.through_id is the last row filed; the
-- rows above it (never more than 4,095) are the tail, which a lookup reads by
-- rowid range (a fraction of a millisecond) next to the filed entries. Both
-- parts are read in one statement, and filing moves through_id in the same
-- transaction as the entries, so a reader sees every row exactly once.
--
-- Rows are written only by appending (ids from AUTOINCREMENT only ever grow):
-- a row inserted with an id at or below through_id would never be filed.
DROP INDEX connector_call_logs_by_call;

CREATE TABLE connector_call_logs_by_conversation (
    conversation_id TEXT NOT NULL,
    id INTEGER NOT NULL,
    tool_call_id TEXT NOT NULL,
    PRIMARY KEY (conversation_id, id)
) WITHOUT ROWID;

CREATE TABLE connector_call_logs_filed (
    one INTEGER PRIMARY KEY CHECK (one = 1),
    through_id INTEGER NOT NULL
);

-- Rows written before this migration are filed now.
INSERT INTO connector_call_logs_by_conversation (conversation_id, id, tool_call_id)
    SELECT conversation_id, id, tool_call_id FROM connector_call_logs
    ORDER BY conversation_id, id;
INSERT INTO connector_call_logs_filed (one, through_id)
    SELECT 1, coalesce(max(id), 0) FROM connector_call_logs;

CREATE TRIGGER connector_call_logs_file_tail
    AFTER INSERT ON connector_call_logs
    WHEN NEW.id >= (SELECT through_id FROM connector_call_logs_filed) + 4096
BEGIN
    INSERT INTO connector_call_logs_by_conversation (conversation_id, id, tool_call_id)
        SELECT conversation_id, id, tool_call_id FROM connector_call_logs
        WHERE id > (SELECT through_id FROM connector_call_logs_filed) AND id <= NEW.id
        ORDER BY conversation_id, id;
    UPDATE connector_call_logs_filed SET through_id = NEW.id;
END;

-- Deleting rows (a retention job) takes their entries with them.
CREATE TRIGGER connector_call_logs_unfile
    AFTER DELETE ON connector_call_logs
BEGIN
    DELETE FROM connector_call_logs_by_conversation
        WHERE conversation_id = OLD.conversation_id AND id = OLD.id;
END;

-- The audit log never rewrites a row; if an operator does, its entry follows.
CREATE TRIGGER connector_call_logs_refile
    AFTER UPDATE OF conversation_id, tool_call_id ON connector_call_logs
BEGIN
    UPDATE connector_call_logs_by_conversation
        SET conversation_id = NEW.conversation_id, tool_call_id = NEW.tool_call_id
        WHERE conversation_id = OLD.conversation_id AND id = OLD.id;
END;
