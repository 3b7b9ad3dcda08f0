//! One write transaction at a time per SQLite file, queued inside the
//! process instead of at SQLite's lock.
//!
//! The audit log and the approval gate each have a group-commit writer, and
//! both usually write the same file. SQLite lets one connection write at a
//! time; a writer that finds the lock taken is told "busy" and its busy
//! handler sleeps, 1 ms, then 2, 5, 10 … before it asks again. Under load
//! the two writers kept finding each other's lock: with the gate deciding
//! 1,000 requests a second, audit traffic paced at 10,000 rows a second got
//! 2,600–8,200 through and the gate's click→resume p99 rose to 15–152 ms,
//! with a third of the CPU idle. Each group-commit writer now takes its
//! file's turn before `BEGIN` and gives it back after `COMMIT` (or after
//! the rollback of a failed transaction): the turn is a fair (first come,
//! first served) async lock, so a waiting writer is woken as soon as the
//! other is done instead of sleeping on SQLite's lock.
//!
//! Turns are per file, keyed by its canonical path, shared by every
//! [`Database`](super::Database) handle of the process that opened it.
//! Writers outside the group commit (the shared rate limiter, org modes, the
//! per-row audit writer), other processes, and the same file reached by
//! another path (a hard link) still meet SQLite's lock, as before. A writer
//! that waits longer than [`TURN_WAIT`] for its turn goes ahead without it,
//! so a turn never stalls writes that SQLite's own lock would have let
//! through.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::Duration;

use tokio::sync::{Mutex as AsyncMutex, MutexGuard};

/// The longest a writer waits for its turn: as long as SQLite's own busy
/// timeout by default.
pub(crate) const TURN_WAIT: Duration = Duration::from_secs(5);

/// The turn to write one SQLite file.
#[derive(Debug, Clone)]
pub(crate) struct WriteTurn(Arc<AsyncMutex<()>>);

/// A writer's turn, held until dropped.
pub(crate) type Turn<'a> = MutexGuard<'a, ()>;

impl WriteTurn {
    /// The turn of the file at `path` (as SQLite names it: `PRAGMA
    /// database_list`), the same for every writer of the process.
    pub(crate) fn for_file(path: &Path) -> WriteTurn {
        static TURNS: Mutex<Option<HashMap<PathBuf, Weak<AsyncMutex<()>>>>> = Mutex::new(None);
        let mut turns = TURNS.lock().unwrap_or_else(PoisonError::into_inner);
        let turns = turns.get_or_insert_with(HashMap::new);
        if let Some(turn) = turns.get(path).and_then(Weak::upgrade) {
            return WriteTurn(turn);
        }
        // Files no writer holds any more are forgotten here.
        turns.retain(|_, turn| turn.strong_count() > 0);
        let turn = Arc::new(AsyncMutex::new(()));
        turns.insert(path.to_owned(), Arc::downgrade(&turn));
        WriteTurn(turn)
    }

    /// Waits for the turn; it passes on when the guard is dropped. `None`
    /// after [`TURN_WAIT`]: the writer goes ahead, and SQLite's lock (with
    /// its busy timeout) orders it as before turns.
    pub(crate) async fn take(&self) -> Option<Turn<'_>> {
        tokio::time::timeout(TURN_WAIT, self.0.lock()).await.ok()
    }

    /// Whether `self` and `other` are the same file's turn.
    #[cfg(test)]
    pub(crate) fn same_as(&self, other: &WriteTurn) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_turn_per_file_while_it_is_held() {
        let first = WriteTurn::for_file(Path::new("/tmp/turns-a.db"));
        let again = WriteTurn::for_file(Path::new("/tmp/turns-a.db"));
        let other = WriteTurn::for_file(Path::new("/tmp/turns-b.db"));
        assert!(first.same_as(&again));
        assert!(!first.same_as(&other));
    }

    #[tokio::test(start_paused = true)]
    async fn a_second_writer_waits_for_the_first_and_never_for_ever() {
        let turn = WriteTurn::for_file(Path::new("/tmp/turns-c.db"));
        let held = turn.take().await.expect("a free turn");
        let other = turn.clone();
        let waiting = tokio::spawn(async move { other.take().await.is_some() });
        tokio::time::sleep(TURN_WAIT / 2).await;
        assert!(!waiting.is_finished(), "the second writer waits");
        drop(held);
        assert!(waiting.await.expect("task"), "and gets the turn");

        let _held = turn.take().await.expect("a free turn");
        let other = turn.clone();
        let waiting = tokio::spawn(async move { other.take().await.is_some() });
        tokio::time::sleep(TURN_WAIT * 2).await;
        assert!(
            !waiting.await.expect("task"),
            "after TURN_WAIT it goes ahead without the turn"
        );
    }
}
