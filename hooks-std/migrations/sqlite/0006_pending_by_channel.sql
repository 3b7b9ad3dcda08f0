-- An approvals page lists a channel's pending requests oldest first, a page
-- at a time (keyset: after the last request's created_at_ms and id). This
-- index serves each page as a seek and a short walk, however many requests
-- wait in the channel, instead of a scan and a sort of all of them.
CREATE INDEX confirmation_requests_pending_by_channel
    ON confirmation_requests (channel_kind, channel_id, status, created_at_ms, id);
