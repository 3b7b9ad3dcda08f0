//! Waking waiting gates the moment their request is decided.
//!
//! Each waiting gate subscribes to its request id. A decision taken in this
//! process wakes it directly; PostgreSQL `NOTIFY` (sent by a trigger on every
//! status change) wakes gates in other replicas; a slow poll — one query per
//! interval for all waiters together, none when nobody waits — catches
//! notifications lost while a listener reconnected.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use tokio::sync::watch;

use super::store::ConfirmationStore;
use crate::storage::Database;

/// The PostgreSQL channel the status trigger notifies.
#[cfg(feature = "postgres")]
pub(crate) const NOTIFY_CHANNEL: &str = "hooks_confirmation";

/// How long the poll trusts the local clock before re-reading the database's.
const CLOCK_REFRESH: Duration = Duration::from_secs(60);

/// How far back each poll looks, so a decision whose transaction committed
/// after a later one is not missed.
const POLL_OVERLAP_MS: i64 = 5_000;

/// Request ids with gates waiting on them.
#[derive(Default)]
pub(crate) struct Waiters {
    senders: Mutex<HashMap<String, watch::Sender<u64>>>,
}

/// A gate's subscription to its request; unsubscribes when dropped.
pub(crate) struct Subscription {
    waiters: Arc<Waiters>,
    id: String,
    receiver: watch::Receiver<u64>,
}

impl Subscription {
    /// Resolves at the next wake-up after the subscription was made or last woken.
    pub(crate) async fn woken(&mut self) {
        if self.receiver.changed().await.is_err() {
            // The sender cannot go while we are subscribed; never spin if it did.
            std::future::pending::<()>().await;
        }
    }
}

impl Drop for Subscription {
    fn drop(&mut self) {
        let mut senders = self.waiters.lock();
        if let Some(sender) = senders.get(&self.id) {
            // Our receiver is still alive here, so "1" means only us.
            if sender.receiver_count() <= 1 {
                senders.remove(&self.id);
            }
        }
    }
}

impl Waiters {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, watch::Sender<u64>>> {
        self.senders
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Subscribes to wake-ups of request `id`.
    pub(crate) fn subscribe(self: &Arc<Self>, id: &str) -> Subscription {
        let receiver = self
            .lock()
            .entry(id.to_owned())
            .or_insert_with(|| watch::channel(0).0)
            .subscribe();
        Subscription {
            waiters: self.clone(),
            id: id.to_owned(),
            receiver,
        }
    }

    /// Wakes the gates waiting on request `id`, if any.
    pub(crate) fn wake(&self, id: &str) {
        if let Some(sender) = self.lock().get(id) {
            sender.send_modify(|version| *version = version.wrapping_add(1));
        }
    }

    /// How many requests have a gate waiting.
    pub(crate) fn len(&self) -> usize {
        self.lock().len()
    }
}

/// The fallback poll: while any gate waits, one query per `interval` finds
/// requests decided in the last `interval` (plus an overlap, so a decision
/// whose transaction committed late is not missed) and wakes their gates.
/// The database clock is read once when waiting starts and advanced with the
/// local monotonic clock after that.
pub(crate) async fn poll_decisions(
    store: ConfirmationStore,
    waiters: Weak<Waiters>,
    interval: Duration,
) {
    let mut clock: Option<(i64, tokio::time::Instant)> = None;
    loop {
        tokio::time::sleep(interval).await;
        let Some(waiters) = waiters.upgrade() else {
            return;
        };
        if waiters.len() == 0 {
            clock = None;
            continue;
        }
        let (base, at) = match clock.filter(|(_, at)| at.elapsed() < CLOCK_REFRESH) {
            Some(clock) => clock,
            None => match store.clock_ms().await {
                Ok(now) => *clock.insert((now - millis(interval), tokio::time::Instant::now())),
                Err(error) => {
                    tracing::warn!(%error, "approval gate poll could not read the database clock");
                    continue;
                }
            },
        };
        let now = base + millis(at.elapsed());
        let from = now - millis(interval) - POLL_OVERLAP_MS;
        match store.decided_since(from).await {
            Ok(decided) => {
                for (id, _) in decided {
                    waiters.wake(&id);
                }
            }
            Err(error) => tracing::warn!(%error, "approval gate poll failed"),
        }
    }
}

/// Without PostgreSQL there is nothing to listen to: the poll wakes gates.
#[cfg(not(feature = "postgres"))]
pub(crate) async fn listen_for_decisions(_database: Database, _waiters: Weak<Waiters>) {}

/// PostgreSQL only: wakes local gates when any replica changes a request's
/// status. Reconnects after a failure; the poll covers the gap.
#[cfg(feature = "postgres")]
pub(crate) async fn listen_for_decisions(database: Database, waiters: Weak<Waiters>) {
    let Some(pool) = database.postgres().cloned() else {
        return;
    };
    // The listener holds its connection for good: give it its own, outside
    // the shared pool, so gates and audit writes never starve for one.
    let options = (*pool.connect_options()).clone();
    drop(pool);
    loop {
        let own = sqlx::postgres::PgPoolOptions::new()
            .max_connections(1)
            .connect_lazy_with(options.clone());
        let mut listener = match sqlx::postgres::PgListener::connect_with(&own).await {
            Ok(listener) => listener,
            Err(error) => {
                tracing::warn!(%error, "approval gate could not LISTEN; retrying in 1 s");
                tokio::time::sleep(Duration::from_secs(1)).await;
                if waiters.strong_count() == 0 {
                    return;
                }
                continue;
            }
        };
        if let Err(error) = listener.listen(NOTIFY_CHANNEL).await {
            tracing::warn!(%error, "approval gate LISTEN failed; retrying in 1 s");
            tokio::time::sleep(Duration::from_secs(1)).await;
            continue;
        }
        loop {
            match listener.try_recv().await {
                Ok(Some(notification)) => match waiters.upgrade() {
                    Some(waiters) => waiters.wake(notification.payload()),
                    None => return,
                },
                // The connection dropped (notifications may be lost; the poll covers them).
                Ok(None) => continue,
                Err(error) => {
                    tracing::warn!(%error, "approval gate listener failed; reconnecting");
                    break;
                }
            }
        }
        if waiters.strong_count() == 0 {
            return;
        }
    }
}

fn millis(duration: Duration) -> i64 {
    i64::try_from(duration.as_millis()).unwrap_or(i64::MAX / 4)
}
