//! `CardDelivery`: where a request's approval card is, as the store records it.

/// The delivery state of a request's card, written before each platform call
/// so a restarted process knows what may already be in the chat.
///
/// `Unclaimed → Claimed → Delivered → Updated`: a run claims the card (one
/// conditional update; exactly one run wins) before calling the platform,
/// stores the platform's message reference after, and once the request is
/// final the card-update outbox redraws the card until the platform confirms.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CardDelivery {
    /// Nobody claimed the card: no card can exist. Only such a request (or
    /// one whose send definitely failed, cancelled at once by its sender) is
    /// an orphan the sweeper may cancel.
    Unclaimed,
    /// A run claimed the card at this database time and may have sent it:
    /// the card may be live in the chat even though no reference is stored.
    Claimed {
        /// When the claim was taken (database ms since the Unix epoch).
        claimed_at_ms: i64,
    },
    /// The card is in the chat under this reference.
    Delivered {
        /// The platform's message reference.
        message_ref: String,
    },
    /// The request is final and its card was redrawn to say so; the platform
    /// confirmed.
    Updated {
        /// The platform's message reference.
        message_ref: String,
        /// When the platform confirmed (database ms since the Unix epoch).
        updated_at_ms: i64,
    },
}

impl CardDelivery {
    /// The state of a row with these columns.
    pub(super) fn from_columns(
        claimed_at_ms: Option<i64>,
        message_ref: Option<String>,
        updated_at_ms: Option<i64>,
    ) -> Self {
        match (message_ref, updated_at_ms, claimed_at_ms) {
            (Some(message_ref), Some(updated_at_ms), _) => CardDelivery::Updated {
                message_ref,
                updated_at_ms,
            },
            (Some(message_ref), None, _) => CardDelivery::Delivered { message_ref },
            (None, _, Some(claimed_at_ms)) => CardDelivery::Claimed { claimed_at_ms },
            (None, _, None) => CardDelivery::Unclaimed,
        }
    }
}
