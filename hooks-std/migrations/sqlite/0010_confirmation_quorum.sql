-- Quorum: a request may need approvals from more than one person. Each
-- approval adds its approver to `approved_by` (a JSON array of user ids) in
-- the same conditional update that, on the last one, approves the request,
-- so votes are durable and counted exactly once. `exclude_requester`: the
-- user on whose behalf the call was made may reject it but not approve it.
ALTER TABLE confirmation_requests ADD COLUMN approvals_required INTEGER NOT NULL DEFAULT 1;
ALTER TABLE confirmation_requests ADD COLUMN exclude_requester INTEGER NOT NULL DEFAULT 0;
ALTER TABLE confirmation_requests ADD COLUMN approved_by TEXT NOT NULL DEFAULT '[]';
