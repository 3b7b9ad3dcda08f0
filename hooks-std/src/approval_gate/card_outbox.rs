//! The card-update outbox: every card a final request needs redrawn
//! (decided, expired, cancelled) is sent, and retried with back-off, until
//! the platform confirms.
//!
//! The outbox entry is not a second write: a request that left `pending`
//! and has a card, and whose `card_updated_at_ms` is unset, *is* the entry,
//! so the commit that decided the request also enqueued its card update and
//! no crash can lose one. Whichever process gets to it first — the one that
//! decided, at once, or any replica's sweeper later — takes it with one
//! conditional update that also holds it for the back-off, calls the
//! platform, and records the platform's confirmation.

use std::sync::Arc;
use std::time::Duration;

use super::crash_points::{self, crash_point};
use super::request::ConfirmationRequest;
use super::store::{CardUpdates, ConfirmationStore};
use crate::approval_gate::channel::Channel;
use crate::storage::StorageError;

/// How long one card update may take (rate-limit back-off included).
const CARD_UPDATE_DEADLINE: Duration = Duration::from_secs(120);

/// How many due card updates one sweep takes.
const UPDATES_PER_SWEEP: u32 = 100;

/// Redraws the card of final request `id` now, in the background, if its
/// outbox entry is due. If this process dies first, or the platform fails,
/// a sweeper sends it after the back-off.
pub(super) fn push_card_update(
    store: &ConfirmationStore,
    channel: &Arc<dyn Channel>,
    id: &str,
    backoff: Duration,
) {
    let (store, channel, id) = (store.clone(), channel.clone(), id.to_owned());
    tokio::spawn(async move {
        match store.take_card_updates(CardUpdates::Of(&id), backoff).await {
            Ok(taken) => {
                for request in &taken {
                    send_card_update(&store, &channel, request).await;
                }
            }
            Err(error) => {
                tracing::warn!(%error, request = %id, "could not take an approval card update; the sweeper retries it");
            }
        }
    });
}

/// Sends every due card update of `channel` (up to a batch); returns how
/// many the platform confirmed.
pub(super) async fn send_due_card_updates(
    store: &ConfirmationStore,
    channel: &Arc<dyn Channel>,
    backoff: Duration,
) -> Result<usize, StorageError> {
    let due = store
        .take_card_updates(
            CardUpdates::Due {
                channel_kind: channel.kind(),
                channel_id: channel.channel_id(),
                limit: UPDATES_PER_SWEEP,
            },
            backoff,
        )
        .await?;
    let mut confirmed = 0;
    for request in &due {
        if send_card_update(store, channel, request).await {
            confirmed += 1;
        }
    }
    Ok(confirmed)
}

/// Redraws the card of `request` (taken from the outbox) and records the
/// outcome; `true` once the platform confirmed and that is recorded.
async fn send_card_update(
    store: &ConfirmationStore,
    channel: &Arc<dyn Channel>,
    request: &ConfirmationRequest,
) -> bool {
    crash_point!(crash_points::BEFORE_CARD_UPDATE, |_| false);
    let failure = match tokio::time::timeout(CARD_UPDATE_DEADLINE, channel.update_card(request))
        .await
    {
        Ok(Ok(())) => match store.record_card_update(&request.id, Ok(())).await {
            Ok(()) => return true,
            Err(error) => {
                tracing::warn!(%error, request = %request.id, "the approval card was redrawn but that was not recorded; it will be redrawn again");
                return false;
            }
        },
        Ok(Err(error)) => error.to_string(),
        Err(_) => format!(
            "updating the approval card took longer than {}s",
            CARD_UPDATE_DEADLINE.as_secs()
        ),
    };
    tracing::warn!(error = %failure, request = %request.id, "could not update the approval card; retrying after a back-off");
    if let Err(error) = store.record_card_update(&request.id, Err(&failure)).await {
        tracing::warn!(%error, request = %request.id, "could not record a failed card update");
    }
    false
}
