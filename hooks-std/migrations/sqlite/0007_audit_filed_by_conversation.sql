-- The audit log's lookup by conversation, filed in bulk instead of by an
-- index kept row by row.
--
-- An index on (conversation_id, tool_call_id) puts each new row into its
-- conversation's own leaf page. With many conversations writing at once, a
-- commit of 64 rows dirties some 64 index pages, and each of them goes to
-- the WAL whole (4 KiB for a row of about 300 bytes) and again to the file
-- at the checkpoint: measured, that index cost the writer half its rows/s.
--
-- So rows are appended without that index. Whenever 4,096 rows have arrived
-- since the last filing, the trigger below files them into
-- connector_call_logs_by_conversation in key order, inside the INSERT that
-- brought the 4,096th: each conversation's page is written once for all its
-- new rows. That INSERT carries the filing (a few milliseconds, once per
-- 4,096 rows), and other writers of the file wait behind it, as they do
-- behind a checkpoint. connector_call_logs_filed.through_id is the last row
-- filed; the rows above it (never more than 4,095) are the tail, which a
-- lookup reads by rowid range next to the filed entries. Both parts are read
-- in one statement, and filing moves through_id in the same transaction as
-- the entries, so a reader sees every row exactly once.
--
-- Rows are only appended (ids from AUTOINCREMENT only ever grow). The
-- triggers at the end refuse what would hide a row from lookups: a row given
-- an id at or below through_id (it would never be filed, or would replace a
-- filed row of another conversation), changing a row's id, and deleting the
-- filing mark. The (org_id, created_at) index stays: each org's rows arrive
-- in created_at order at its right edge, and orgs are far fewer than
-- conversations (the benchmark, with one org, measured no cost from it).
DROP INDEX IF EXISTS connector_call_logs_by_call;

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
    -- OR IGNORE: an entry already there (put by hand) must not stop every
    -- audit write from here on.
    INSERT OR IGNORE INTO connector_call_logs_by_conversation (conversation_id, id, tool_call_id)
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

-- A row at or below the filing mark that is not filed under its own
-- conversation would be hidden from lookups. Whichever of this trigger and
-- the filing one runs first, a row the filing has just filed has its entry.
CREATE TRIGGER connector_call_logs_append_only
    AFTER INSERT ON connector_call_logs
    WHEN NEW.id <= (SELECT through_id FROM connector_call_logs_filed)
     AND NOT EXISTS (SELECT 1 FROM connector_call_logs_by_conversation
                     WHERE conversation_id = NEW.conversation_id AND id = NEW.id)
BEGIN
    SELECT RAISE(ABORT, 'connector_call_logs is append-only: a row must not be inserted with an id at or below connector_call_logs_filed.through_id (leave id to AUTOINCREMENT)');
END;

CREATE TRIGGER connector_call_logs_ids_stay
    BEFORE UPDATE OF id ON connector_call_logs
    WHEN NEW.id IS NOT OLD.id
BEGIN
    SELECT RAISE(ABORT, 'connector_call_logs ids never change: lookups by conversation find rows by id');
END;

CREATE TRIGGER connector_call_logs_filed_stays
    BEFORE DELETE ON connector_call_logs_filed
BEGIN
    SELECT RAISE(ABORT, 'connector_call_logs_filed holds the audit log''s filing mark and must keep its row');
END;
