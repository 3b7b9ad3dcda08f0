//! `CardClaim`: a run's right to send one request's approval card.

/// Proof that a run claimed the card of a confirmation request, returned by
/// [`ConfirmationStore::claim_card`](super::ConfirmationStore::claim_card)
/// and required by
/// [`ConfirmationStore::record_card`](super::ConfirmationStore::record_card).
///
/// It holds the database time the claim was taken. A claim can only be
/// taken over once it is older than its lease, so with any lease of at least
/// a millisecond two claims on one request never share a time: the store
/// compares it to tell whether the claim is still the current one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CardClaim {
    claimed_at_ms: i64,
}

impl CardClaim {
    pub(super) fn new(claimed_at_ms: i64) -> Self {
        CardClaim { claimed_at_ms }
    }

    /// When the claim was taken, in database milliseconds since the Unix epoch.
    pub fn claimed_at_ms(&self) -> i64 {
        self.claimed_at_ms
    }
}
