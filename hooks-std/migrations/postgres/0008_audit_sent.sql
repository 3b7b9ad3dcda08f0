-- What the model was sent in place of the tool's outcome: 'as_is' (the
-- tool's own result or error), 'rewritten' (as post hooks changed it) or
-- 'withheld' (a notice instead). NULL when the tool did not run (a pre
-- hook blocked the call) and on rows written before this column existed.
ALTER TABLE connector_call_logs ADD COLUMN sent TEXT;
