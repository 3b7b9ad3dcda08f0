//! `ReplyWindow`: the platform waits a few seconds for the answer to a click,
//! and that answer must be true. A decision is committed inside the window or
//! not at all: the recorder asks the window before committing, the replier
//! closes it when the answer is due, and whichever comes first wins.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tokio::time::Instant;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Nothing committed yet; the recorder may still try.
    Open,
    /// The recorder has started its commit: the replier waits for its outcome.
    Committing,
    /// The replier has answered "not recorded": the recorder must roll back.
    Closed,
}

/// The time a click's decision has to be recorded, shared by the task that
/// records it and the one that answers the platform.
#[derive(Debug, Clone)]
pub(crate) struct ReplyWindow {
    deadline: Instant,
    state: Arc<Mutex<State>>,
}

impl ReplyWindow {
    /// A window closing `length` from now.
    pub(crate) fn new(length: Duration) -> Self {
        ReplyWindow {
            deadline: Instant::now() + length,
            state: Arc::new(Mutex::new(State::Open)),
        }
    }

    /// When the answer is due.
    pub(crate) fn deadline(&self) -> Instant {
        self.deadline
    }

    /// Whether a retry after `pause` would still be inside the window.
    pub(crate) fn open_after(&self, pause: Duration) -> bool {
        *self.lock() == State::Open && Instant::now() + pause < self.deadline
    }

    /// The recorder's last step before committing: `true` if it may commit
    /// (the replier will then wait for the commit's outcome), `false` if the
    /// window has closed (the recorder must roll back).
    pub(crate) fn begin_commit(&self) -> bool {
        let mut state = self.lock();
        if *state == State::Open && Instant::now() < self.deadline {
            *state = State::Committing;
            true
        } else {
            *state = State::Closed;
            false
        }
    }

    /// Whether a commit was started (a failure after it is not retried: the
    /// replier is already waiting on it).
    pub(crate) fn commit_started(&self) -> bool {
        *self.lock() == State::Committing
    }

    /// The replier's step when the answer is due: `true` if nothing can be
    /// committed any more (the answer is "not recorded"), `false` if a
    /// commit is under way (the answer must wait for it).
    pub(crate) fn close(&self) -> bool {
        let mut state = self.lock();
        match *state {
            State::Open | State::Closed => {
                *state = State::Closed;
                true
            }
            State::Committing => false,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        // The state is a plain enum, valid whatever a panicking holder did.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_closed_window_refuses_the_commit() {
        let window = ReplyWindow::new(Duration::from_secs(5));
        assert!(window.close(), "nothing was committing");
        assert!(!window.begin_commit(), "too late to commit");
        assert!(!window.open_after(Duration::ZERO));
    }

    #[test]
    fn a_started_commit_keeps_the_window_for_its_outcome() {
        let window = ReplyWindow::new(Duration::from_secs(5));
        assert!(window.open_after(Duration::from_millis(10)));
        assert!(window.begin_commit());
        assert!(window.commit_started());
        assert!(!window.close(), "the replier must wait for the commit");
    }

    #[test]
    fn past_the_deadline_nothing_commits() {
        let window = ReplyWindow::new(Duration::ZERO);
        assert!(!window.open_after(Duration::ZERO));
        assert!(!window.begin_commit());
        assert!(window.close());
    }
}
