-- One card per conversation + tool call id, however many runs of that call
-- race: a run must claim the card (a conditional update of this column)
-- before sending it. A claim older than the delivery lease can be taken over,
-- so a run that died mid-send does not leave the request without a card.
ALTER TABLE confirmation_requests ADD COLUMN card_claimed_at_ms INTEGER;
