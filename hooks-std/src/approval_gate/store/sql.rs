//! The statements of [`ConfirmationStore`](super::ConfirmationStore), one
//! set per backend ([`SQLITE`], [`POSTGRES`]), written out in full.
//!
//! The two sets differ only where the databases do: the clock (SQLite's
//! `unixepoch('subsec')`, PostgreSQL's `statement_timestamp()`, both as
//! milliseconds since the Unix epoch), a cast to `json` for the arguments,
//! `FOR UPDATE SKIP LOCKED` where PostgreSQL has row locks, and the JSON
//! functions that count and add an approval to `approved_by`. Both read
//! `$n` placeholders.
//!
//! Every state change moves only a `pending` row (or, for the card fields
//! and the outbox, only a row in the state the statement names), so
//! concurrent writers — two clicks, a click racing the deadline, two
//! replicas — cannot both win.

/// The columns of a [`ConfirmationRequest`](super::super::ConfirmationRequest).
macro_rules! columns {
    () => {
        "id, idempotency_key, tool_name, args, args_digest, agent_id, initiator_user_id, org_id, \
         approver_scope, approver_allowlist, channel_kind, channel_id, mode, status, \
         created_at_ms, expires_at_ms, decided_at_ms, decided_by, reason, message_ref, \
         consumed_at_ms, approvals_required, exclude_requester, approved_by"
    };
}

/// The statements of one backend.
#[derive(Debug)]
pub(super) struct Sql {
    /// The database clock, in milliseconds since the Unix epoch.
    pub clock: &'static str,
    /// `$1` id.
    pub get: &'static str,
    /// `$1` idempotency key.
    pub by_key: &'static str,
    /// `$1` id: claim, reference, redrawn.
    pub delivery: &'static str,
    /// `$1` kind, `$2` channel, `$3` limit, `$4`/`$5` after (created, id).
    pub pending_for_channel: &'static str,
    /// `$1` kind, `$2` channel, `$3` limit.
    pub recent_final_for_channel: &'static str,
    /// `$1` since (ms).
    pub decided_since: &'static str,
    /// `$1` event id.
    pub event_seen: &'static str,
    /// `$1` id … `$13` mode, `$14` timeout (ms), `$15` approvals required,
    /// `$16` exclude requester; returns the row if created.
    pub create: &'static str,
    /// `$1` id, `$2` lease (ms), `$3` resend window (ms); returns the claim's time.
    pub claim_card: &'static str,
    /// `$1` reference, `$2` id, `$3` claim time; returns the row and the clock.
    pub record_card: &'static str,
    /// `$1` status, `$2` by, `$3` reason, `$4` id; only pending, before the deadline.
    pub decide: &'static str,
    /// `$1` by, `$2` reason, `$3` id: adds an approval by someone who has not
    /// approved yet, approving the request with the last one it needs; only
    /// pending, before the deadline.
    pub approve: &'static str,
    /// `$1` id; only pending.
    pub expire: &'static str,
    /// `$1` reason, `$2` id; only pending without a card.
    pub cancel: &'static str,
    /// `$1` reason, `$2` idempotency key; only pending.
    pub withdraw: &'static str,
    /// `$1` id; only approved and unused.
    pub stamp_used: &'static str,
    /// `$1` event id, `$2` kind; inserts nothing for a known id.
    pub record_event: &'static str,
    /// `$1` kind, `$2` channel; pending past the deadline.
    pub expire_overdue: &'static str,
    /// `$1` kind, `$2` channel, `$3` ttl (ms); pending, never claimed, older than ttl.
    pub cancel_orphans: &'static str,
    /// `$1` age (ms).
    pub forget_events: &'static str,
    /// `$1` id, `$2` back-off (ms), `$3` most attempts; only a due update.
    pub take_card_update: &'static str,
    /// `$1` kind, `$2` back-off (ms), `$3` channel, `$4` limit, `$5` most attempts.
    pub take_due_card_updates: &'static str,
    /// `$1` id.
    pub card_updated: &'static str,
    /// `$1` error, `$2` id.
    pub card_update_failed: &'static str,
}

/// Writes the statement set for a backend whose clock in milliseconds is
/// `$now`, whose JSON cast is `$json` and whose subquery row-lock skip is
/// `$skip_locked`.
macro_rules! statements {
    (
        now: $now:literal,
        json: $json:literal,
        skip_locked: $skip_locked:literal,
        votes: $votes:literal,
        add_vote: $add_vote:literal,
        voted: $voted:literal
    ) => {
        Sql {
            clock: concat!("SELECT ", $now),
            get: concat!("SELECT ", columns!(), " FROM confirmation_requests WHERE id = $1"),
            by_key: concat!(
                "SELECT ", columns!(), " FROM confirmation_requests WHERE idempotency_key = $1"
            ),
            delivery: "SELECT card_claimed_at_ms, message_ref, card_updated_at_ms \
                FROM confirmation_requests WHERE id = $1",
            pending_for_channel: concat!(
                "SELECT ", columns!(), " FROM confirmation_requests WHERE status = 'pending' \
                 AND expires_at_ms > ", $now, " AND channel_kind = $1 AND channel_id = $2 \
                 AND (created_at_ms, id) > ($4, $5) ORDER BY created_at_ms, id LIMIT $3"
            ),
            recent_final_for_channel: concat!(
                "SELECT ", columns!(), " FROM confirmation_requests WHERE status <> 'pending' \
                 AND channel_kind = $1 AND channel_id = $2 \
                 ORDER BY decided_at_ms DESC, id LIMIT $3"
            ),
            decided_since: "SELECT id, decided_at_ms FROM confirmation_requests \
                WHERE decided_at_ms >= $1",
            event_seen: "SELECT COUNT(*) FROM callback_events WHERE event_id = $1",
            create: concat!(
                "INSERT INTO confirmation_requests (id, idempotency_key, tool_name, args, \
                 args_digest, agent_id, initiator_user_id, org_id, approver_scope, \
                 approver_allowlist, channel_kind, channel_id, mode, status, created_at_ms, \
                 expires_at_ms, approvals_required, exclude_requester) \
                 VALUES ($1, $2, $3, $4", $json, ", $5, $6, $7, $8, $9, $10, \
                 $11, $12, $13, 'pending', ", $now, ", ", $now, " + $14, $15, $16) \
                 ON CONFLICT (idempotency_key) DO NOTHING RETURNING ", columns!()
            ),
            claim_card: concat!(
                "UPDATE confirmation_requests SET card_claimed_at_ms = ", $now, " \
                 WHERE id = $1 AND status = 'pending' AND message_ref IS NULL \
                 AND expires_at_ms > ", $now, " AND (card_claimed_at_ms IS NULL \
                 OR (card_claimed_at_ms <= ", $now, " - $2 AND created_at_ms > ", $now, " - $3)) \
                 RETURNING card_claimed_at_ms"
            ),
            record_card: concat!(
                "UPDATE confirmation_requests SET message_ref = $1 \
                 WHERE id = $2 AND card_claimed_at_ms = $3 AND message_ref IS NULL \
                 RETURNING ", columns!(), ", ", $now, " AS clock_ms"
            ),
            decide: concat!(
                "UPDATE confirmation_requests SET status = $1, decided_at_ms = ", $now, ", \
                 decided_by = $2, reason = $3 WHERE id = $4 AND status = 'pending' \
                 AND expires_at_ms > ", $now, " RETURNING ", columns!()
            ),
            approve: concat!(
                "UPDATE confirmation_requests SET approved_by = ", $add_vote, ", \
                 status = CASE WHEN ", $votes, " + 1 >= approvals_required \
                   THEN 'approved' ELSE status END, \
                 decided_at_ms = CASE WHEN ", $votes, " + 1 >= approvals_required \
                   THEN ", $now, " ELSE decided_at_ms END, \
                 decided_by = CASE WHEN ", $votes, " + 1 >= approvals_required \
                   THEN $1 ELSE decided_by END, \
                 reason = CASE WHEN ", $votes, " + 1 >= approvals_required \
                   THEN $2 ELSE reason END \
                 WHERE id = $3 AND status = 'pending' AND expires_at_ms > ", $now, " \
                 AND NOT ", $voted, " RETURNING ", columns!()
            ),
            expire: concat!(
                "UPDATE confirmation_requests SET status = 'expired', decided_at_ms = ", $now, ", \
                 decided_by = 'system' WHERE id = $1 AND status = 'pending' \
                 RETURNING ", columns!()
            ),
            cancel: concat!(
                "UPDATE confirmation_requests SET status = 'cancelled', decided_at_ms = ", $now, ", \
                 decided_by = 'system', reason = $1 WHERE id = $2 AND status = 'pending' \
                 AND message_ref IS NULL RETURNING ", columns!()
            ),
            withdraw: concat!(
                "UPDATE confirmation_requests SET status = 'cancelled', decided_at_ms = ", $now, ", \
                 decided_by = 'system', reason = $1 WHERE idempotency_key = $2 \
                 AND status = 'pending' RETURNING ", columns!()
            ),
            stamp_used: concat!(
                "UPDATE confirmation_requests SET consumed_at_ms = ", $now, " \
                 WHERE id = $1 AND status = 'approved' AND consumed_at_ms IS NULL \
                 RETURNING ", columns!()
            ),
            record_event: concat!(
                "INSERT INTO callback_events (event_id, channel_kind, received_at_ms) \
                 VALUES ($1, $2, ", $now, ") ON CONFLICT (event_id) DO NOTHING"
            ),
            expire_overdue: concat!(
                "UPDATE confirmation_requests SET status = 'expired', decided_at_ms = ", $now, ", \
                 decided_by = 'system' WHERE status = 'pending' AND expires_at_ms <= ", $now, " \
                 AND channel_kind = $1 AND channel_id = $2 RETURNING ", columns!()
            ),
            cancel_orphans: concat!(
                "UPDATE confirmation_requests SET status = 'cancelled', decided_at_ms = ", $now, ", \
                 decided_by = 'system', reason = 'the approval card was never delivered' \
                 WHERE status = 'pending' AND message_ref IS NULL AND card_claimed_at_ms IS NULL \
                 AND channel_kind = $1 AND channel_id = $2 AND created_at_ms <= ", $now, " - $3 \
                 RETURNING ", columns!()
            ),
            forget_events: concat!(
                "DELETE FROM callback_events WHERE received_at_ms <= ", $now, " - $1"
            ),
            // Due: final, with a card not confirmed redrawn, fewer attempts
            // than the most, and no attempt holding it. Taking it counts
            // the attempt and holds it for the back-off, doubled per
            // earlier attempt (at most 64 times).
            take_card_update: concat!(
                "UPDATE confirmation_requests SET card_update_attempts = card_update_attempts + 1, \
                 card_update_due_at_ms = ", $now, " + $2 * (1 << (CASE WHEN card_update_attempts > 6 \
                 THEN 6 ELSE card_update_attempts END)) \
                 WHERE id = $1 AND status <> 'pending' AND message_ref IS NOT NULL \
                 AND card_updated_at_ms IS NULL AND card_update_attempts < $3 \
                 AND (card_update_due_at_ms IS NULL OR card_update_due_at_ms <= ", $now, ") \
                 RETURNING ", columns!()
            ),
            take_due_card_updates: concat!(
                "UPDATE confirmation_requests SET card_update_attempts = card_update_attempts + 1, \
                 card_update_due_at_ms = ", $now, " + $2 * (1 << (CASE WHEN card_update_attempts > 6 \
                 THEN 6 ELSE card_update_attempts END)) \
                 WHERE id IN (SELECT id FROM confirmation_requests WHERE status <> 'pending' \
                   AND message_ref IS NOT NULL AND card_updated_at_ms IS NULL \
                   AND card_update_attempts < $5 \
                   AND (card_update_due_at_ms IS NULL OR card_update_due_at_ms <= ", $now, ") \
                   AND channel_kind = $1 AND channel_id = $3 ORDER BY decided_at_ms LIMIT $4",
                 $skip_locked, ") \
                 AND status <> 'pending' AND message_ref IS NOT NULL \
                 AND card_updated_at_ms IS NULL AND card_update_attempts < $5 \
                 AND (card_update_due_at_ms IS NULL OR card_update_due_at_ms <= ", $now, ") \
                 RETURNING ", columns!()
            ),
            card_updated: concat!(
                "UPDATE confirmation_requests SET card_updated_at_ms = ", $now, ", \
                 card_update_error = NULL WHERE id = $1"
            ),
            card_update_failed: "UPDATE confirmation_requests SET card_update_error = $1 \
                WHERE id = $2",
        }
    };
}

/// SQLite's statements.
#[cfg(feature = "sqlite")]
pub(super) const SQLITE: Sql = statements!(
    now: "CAST(unixepoch('subsec') * 1000 AS INTEGER)",
    json: "",
    skip_locked: "",
    votes: "json_array_length(approved_by)",
    add_vote: "json_insert(approved_by, '$[#]', $1)",
    voted: "EXISTS (SELECT 1 FROM json_each(approved_by) WHERE value = $1)"
);

/// PostgreSQL's statements.
#[cfg(feature = "postgres")]
pub(super) const POSTGRES: Sql = statements!(
    now: "CAST(extract(epoch FROM statement_timestamp()) * 1000 AS BIGINT)",
    json: "::json",
    skip_locked: " FOR UPDATE SKIP LOCKED",
    votes: "jsonb_array_length(approved_by)",
    add_vote: "approved_by || jsonb_build_array($1::text)",
    voted: "jsonb_exists(approved_by, $1::text)"
);
