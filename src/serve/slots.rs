//! The answering slots: how many requests are answered at once, in all and
//! per session.

use std::collections::HashMap;
use std::hash::Hash;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use super::input::{Event, HookInput};

/// The slots. Pre events and session starts (which the approval gate can
/// hold for minutes) share one pool; post events (which no person holds)
/// have their own, so held calls cannot leave a finished call's result
/// unchecked. One session holds at most `per_session` slots of each pool.
/// Bodies being read have a bound of their own (`reading`), waited for.
pub(super) struct Slots {
    held: Arc<Semaphore>,
    posts: Arc<Semaphore>,
    reading: Arc<Semaphore>,
    /// Bodies being read per peer address, and the most one peer may.
    peers: Arc<Mutex<HashMap<IpAddr, usize>>>,
    per_peer: usize,
    sessions: Arc<Mutex<HashMap<SessionPool, usize>>>,
    per_session: usize,
}

/// A session in one pool: whether post events, and the session id.
type SessionPool = (bool, String);

/// A taken slot, given back when dropped.
pub(super) struct Slot {
    _permit: OwnedSemaphorePermit,
    _session: Counted<SessionPool>,
}

/// Leave to read one body, given back when dropped.
pub(super) struct Reading {
    _permit: OwnedSemaphorePermit,
    _peer: Option<Counted<IpAddr>>,
}

/// One count in a map of counts, taken back when dropped (the entry goes
/// at zero, so the map holds only what is in use).
struct Counted<K: Eq + Hash> {
    key: K,
    counts: Arc<Mutex<HashMap<K, usize>>>,
}

impl Slots {
    pub(super) fn new(total: usize, per_session: usize) -> Self {
        Slots {
            held: Arc::new(Semaphore::new(total)),
            posts: Arc::new(Semaphore::new(total)),
            reading: Arc::new(Semaphore::new(total.saturating_mul(2).max(1))),
            peers: Arc::new(Mutex::new(HashMap::new())),
            per_peer: (total / 2).max(1),
            sessions: Arc::new(Mutex::new(HashMap::new())),
            per_session,
        }
    }

    /// Leave to read a request's body: at most twice the slots are read at
    /// once (each up to the body cap), the rest wait their turn, up to
    /// `deadline`; and one peer address reads at most half the slots at
    /// once, so one machine sending slowly cannot hold every turn. Why not,
    /// when refused.
    pub(super) async fn read(
        &self,
        peer: Option<IpAddr>,
        deadline: std::time::Duration,
    ) -> Result<Reading, String> {
        let counted = match peer {
            Some(ip) => {
                let mut peers = lock(&self.peers);
                let count = peers.entry(ip).or_insert(0);
                if *count >= self.per_peer {
                    return Err(format!(
                        "{ip} is sending {} hook inputs at once, as many as one peer may; the \
                         call is blocked",
                        self.per_peer
                    ));
                }
                *count += 1;
                Some(Counted {
                    key: ip,
                    counts: self.peers.clone(),
                })
            }
            None => None,
        };
        let permit = tokio::time::timeout(deadline, self.reading.clone().acquire_owned())
            .await
            .ok()
            .and_then(Result::ok)
            .ok_or_else(|| {
                "the hook server is reading as many inputs as it allows; the call is blocked"
                    .to_owned()
            })?;
        Ok(Reading {
            _permit: permit,
            _peer: counted,
        })
    }

    /// A slot for `input`, or why there is none.
    pub(super) fn take(&self, input: &HookInput) -> Result<Slot, String> {
        let post = matches!(input.event, Event::PostToolUse | Event::PostToolUseFailure);
        let pool = if post { &self.posts } else { &self.held };
        let Ok(permit) = pool.clone().try_acquire_owned() else {
            return Err(format!(
                "the hook server is answering as many requests as it allows ({}); the call is \
                 blocked",
                match input.event {
                    Event::PostToolUse | Event::PostToolUseFailure => "post events",
                    _ => "pre events and session starts",
                }
            ));
        };
        let key = (post, input.session_id.clone());
        let mut sessions = lock(&self.sessions);
        let count = sessions.get(&key).copied().unwrap_or(0);
        if count >= self.per_session {
            return Err(format!(
                "session {:?} has {} requests waiting for an answer, as many as one session \
                 may; the call is blocked",
                input.session_id, self.per_session
            ));
        }
        sessions.insert(key.clone(), count + 1);
        Ok(Slot {
            _permit: permit,
            _session: Counted {
                key,
                counts: self.sessions.clone(),
            },
        })
    }
}

impl<K: Eq + Hash> Drop for Counted<K> {
    fn drop(&mut self) {
        let mut counts = lock(&self.counts);
        if let Some(count) = counts.get_mut(&self.key) {
            *count -= 1;
            if *count == 0 {
                counts.remove(&self.key);
            }
        }
    }
}

fn lock<K>(counts: &Mutex<HashMap<K, usize>>) -> std::sync::MutexGuard<'_, HashMap<K, usize>> {
    // Each change is one counter step: a poisoned map is still whole.
    counts
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}
