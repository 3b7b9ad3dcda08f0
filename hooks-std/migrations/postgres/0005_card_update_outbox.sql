-- The card-update outbox. A request that left 'pending' and has a card
-- (message_ref) needs that card redrawn (decided, expired, cancelled) until
-- card_updated_at_ms says the platform confirmed it. The outbox entry is the
-- decision's own commit, so no crash can lose it; any replica's sweeper
-- takes a due update by pushing card_update_due_at_ms forward (its lease and
-- the back-off before the next attempt) and counting the attempt.
ALTER TABLE confirmation_requests ADD COLUMN card_updated_at_ms BIGINT;
ALTER TABLE confirmation_requests ADD COLUMN card_update_due_at_ms BIGINT;
ALTER TABLE confirmation_requests ADD COLUMN card_update_attempts INTEGER NOT NULL DEFAULT 0;
ALTER TABLE confirmation_requests ADD COLUMN card_update_error TEXT;

CREATE INDEX confirmation_requests_card_updates
    ON confirmation_requests (card_update_due_at_ms)
    WHERE status <> 'pending' AND message_ref IS NOT NULL AND card_updated_at_ms IS NULL;

-- Requests already final before this migration had their card redrawn (or
-- not) by the process of the time: they are not put in the outbox.
UPDATE confirmation_requests SET card_updated_at_ms = decided_at_ms
    WHERE status <> 'pending' AND message_ref IS NOT NULL;
