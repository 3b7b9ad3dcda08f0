-- Quorum: a request may need approvals from more than one person. Each
-- approval adds its approver to `approved_by` (a JSON array of user ids) in
-- the same conditional update that, on the last one, approves the request,
-- so votes are durable and counted exactly once. `exclude_requester`: the
-- user on whose behalf the call was made may reject it but not approve it.
ALTER TABLE confirmation_requests ADD COLUMN approvals_required INTEGER NOT NULL DEFAULT 1
    CHECK (approvals_required BETWEEN 1 AND 10);
ALTER TABLE confirmation_requests ADD COLUMN exclude_requester BOOLEAN NOT NULL DEFAULT FALSE;
ALTER TABLE confirmation_requests ADD COLUMN approved_by JSONB NOT NULL DEFAULT '[]';
