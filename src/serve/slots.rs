//! The answering slots: how many requests are answered at once, in all and
//! per session.

use std::collections::HashMap;
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
    sessions: Arc<Mutex<HashMap<SessionPool, usize>>>,
    per_session: usize,
}

/// A session in one pool: whether post events, and the session id.
type SessionPool = (bool, String);

/// A taken slot, given back when dropped.
pub(super) struct Slot {
    _permit: OwnedSemaphorePermit,
    session: SessionPool,
    sessions: Arc<Mutex<HashMap<SessionPool, usize>>>,
}

impl Slots {
    pub(super) fn new(total: usize, per_session: usize) -> Self {
        Slots {
            held: Arc::new(Semaphore::new(total)),
            posts: Arc::new(Semaphore::new(total)),
            reading: Arc::new(Semaphore::new(total.saturating_mul(2).max(1))),
            sessions: Arc::new(Mutex::new(HashMap::new())),
            per_session,
        }
    }

    /// Leave to read a request's body: at most twice the slots are read at
    /// once (each up to the body cap), the rest wait their turn, up to
    /// `deadline`.
    pub(super) async fn read(&self, deadline: std::time::Duration) -> Option<OwnedSemaphorePermit> {
        tokio::time::timeout(deadline, self.reading.clone().acquire_owned())
            .await
            .ok()?
            .ok()
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
            session: key,
            sessions: self.sessions.clone(),
        })
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut sessions = lock(&self.sessions);
        if let Some(count) = sessions.get_mut(&self.session) {
            *count -= 1;
            if *count == 0 {
                sessions.remove(&self.session);
            }
        }
    }
}

fn lock(
    sessions: &Mutex<HashMap<SessionPool, usize>>,
) -> std::sync::MutexGuard<'_, HashMap<SessionPool, usize>> {
    // Each change is one counter step: a poisoned map is still whole.
    sessions
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}
