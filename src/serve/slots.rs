//! The answering slots: how many requests are answered at once, in all and
//! per session.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use super::input::{Event, HookInput};

/// The slots. Pre events and session starts (which the approval gate can
/// hold for minutes) share one pool; post events (which no person holds)
/// have their own, so held calls cannot leave a finished call's result
/// unchecked. One session holds at most `per_session` slots of either.
pub(super) struct Slots {
    held: Arc<Semaphore>,
    posts: Arc<Semaphore>,
    sessions: Arc<Mutex<HashMap<String, usize>>>,
    per_session: usize,
}

/// A taken slot, given back when dropped.
pub(super) struct Slot {
    _permit: OwnedSemaphorePermit,
    session: String,
    sessions: Arc<Mutex<HashMap<String, usize>>>,
}

impl Slots {
    pub(super) fn new(total: usize, per_session: usize) -> Self {
        Slots {
            held: Arc::new(Semaphore::new(total)),
            posts: Arc::new(Semaphore::new(total)),
            sessions: Arc::new(Mutex::new(HashMap::new())),
            per_session,
        }
    }

    /// A slot for `input`, or why there is none.
    pub(super) fn take(&self, input: &HookInput) -> Result<Slot, String> {
        let pool = match input.event {
            Event::PostToolUse | Event::PostToolUseFailure => &self.posts,
            Event::PreToolUse | Event::SessionStart => &self.held,
        };
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
        let mut sessions = lock(&self.sessions);
        let count = sessions.entry(input.session_id.clone()).or_insert(0);
        if *count >= self.per_session {
            return Err(format!(
                "session {:?} has {} requests waiting for an answer, as many as one session \
                 may; the call is blocked",
                input.session_id, self.per_session
            ));
        }
        *count += 1;
        Ok(Slot {
            _permit: permit,
            session: input.session_id.clone(),
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
    sessions: &Mutex<HashMap<String, usize>>,
) -> std::sync::MutexGuard<'_, HashMap<String, usize>> {
    // Each change is one counter step: a poisoned map is still whole.
    sessions
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}
