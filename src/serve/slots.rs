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
    /// Each peer address's turns to read, while it has a body being read
    /// or waiting, and how many turns one peer has.
    peers: Arc<Mutex<HashMap<IpAddr, Arc<Semaphore>>>>,
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
    _own: Option<OwnedSemaphorePermit>,
    // Declared last: dropped after the permit is given back.
    _peer: Option<PeerTurn>,
}

/// A peer's use of its turns: its entry goes when no body of it is read
/// or waits, so the map holds only peers being read.
struct PeerTurn {
    ip: IpAddr,
    turns: Arc<Semaphore>,
    peers: Arc<Mutex<HashMap<IpAddr, Arc<Semaphore>>>>,
}

impl Drop for PeerTurn {
    fn drop(&mut self) {
        let mut peers = lock(&self.peers);
        // The map's handle and this one: nobody else reads or waits.
        if Arc::strong_count(&self.turns) == 2 {
            peers.remove(&self.ip);
        }
    }
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
    /// once (each up to the body cap), and one peer address reads at most
    /// half the slots at once, so one machine sending slowly cannot hold
    /// every turn; the rest wait their turn, up to `deadline`. Why not,
    /// when the wait is over.
    pub(super) async fn read(
        &self,
        peer: Option<IpAddr>,
        deadline: std::time::Duration,
    ) -> Result<Reading, String> {
        let turns = peer.map(|ip| {
            let mut peers = lock(&self.peers);
            let turns = peers
                .entry(ip)
                .or_insert_with(|| Arc::new(Semaphore::new(self.per_peer)));
            (ip, turns.clone())
        });
        let waited = tokio::time::timeout(deadline, async {
            let own = match &turns {
                Some((_, turns)) => Some(turns.clone().acquire_owned().await.ok()?),
                None => None,
            };
            let permit = self.reading.clone().acquire_owned().await.ok()?;
            Some((own, permit))
        })
        .await;
        let peer_turn = turns.map(|(ip, turns)| PeerTurn {
            ip,
            turns,
            peers: self.peers.clone(),
        });
        match waited {
            Ok(Some((own, permit))) => Ok(Reading {
                _permit: permit,
                _own: own,
                _peer: peer_turn,
            }),
            _ => Err(
                "the hook server is reading as many inputs as it allows (from this peer, or in \
                 all) and none finished in time; the call is blocked"
                    .to_owned(),
            ),
        }
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

fn lock<K, V>(counts: &Mutex<HashMap<K, V>>) -> std::sync::MutexGuard<'_, HashMap<K, V>> {
    // Each change is one insert, step or removal: a poisoned map is whole.
    counts
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}
