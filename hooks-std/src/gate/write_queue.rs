//! The approval gate's writes as a group-commit batch: decisions, approval
//! stamps, expiries, card references and the rest share transactions, and
//! each caller still learns its own outcome once its transaction committed.
//!
//! Each queued write is a closure over the transaction's connection that
//! returns its own result. The writes of a batch run one after another;
//! every statement is conditional (only a pending request moves, an approval
//! is stamped once), so a write sees the effect of those before it in the
//! same batch exactly as it would after their commits.

use std::sync::{Arc, Mutex, PoisonError};

use tokio::sync::oneshot;

use crate::storage::{Batch, BoxFuture, Conn, StorageError};

/// A queued write, with its result until the batch commits.
pub(crate) trait QueuedWrite: Send {
    /// Runs the write in the open transaction, keeping its result.
    fn run<'t>(&'t mut self, conn: Conn<'t>) -> BoxFuture<'t, Result<(), sqlx::Error>>;

    /// Hands the caller its result once committed, or the reason it failed.
    fn settle(self: Box<Self>, outcome: Result<(), &StorageError>);
}

/// A write returning `T`, and its caller's end of the line.
pub(crate) struct Job<T, F> {
    write: F,
    what: String,
    output: Option<T>,
    done: oneshot::Sender<Result<T, StorageError>>,
}

impl<T, F> Job<T, F> {
    /// A job for `write`, described as `what` in errors; its result goes to `done`.
    pub(crate) fn new(
        write: F,
        what: String,
        done: oneshot::Sender<Result<T, StorageError>>,
    ) -> Self {
        Job {
            write,
            what,
            output: None,
            done,
        }
    }
}

impl<T, F> QueuedWrite for Job<T, F>
where
    T: Send + 'static,
    F: for<'t> Fn(Conn<'t>) -> BoxFuture<'t, Result<T, sqlx::Error>> + Send + 'static,
{
    fn run<'t>(&'t mut self, conn: Conn<'t>) -> BoxFuture<'t, Result<(), sqlx::Error>> {
        Box::pin(async move {
            self.output = None;
            self.output = Some((self.write)(conn).await?);
            Ok(())
        })
    }

    fn settle(self: Box<Self>, outcome: Result<(), &StorageError>) {
        let Job {
            what, output, done, ..
        } = *self;
        let result = match (outcome, output) {
            (Ok(()), Some(output)) => Ok(output),
            (Ok(()), None) => Err(StorageError::Unavailable {
                what,
                why: "the write did not run".into(),
            }),
            (Err(error), _) => Err(StorageError::Unavailable {
                what,
                why: error.to_string(),
            }),
        };
        let _ = done.send(result);
    }
}

/// The gate's writes as a [`Batch`].
pub(crate) struct GateWrites;

impl Batch for GateWrites {
    type Item = Box<dyn QueuedWrite>;

    fn write<'t>(
        &'t self,
        mut conn: Conn<'t>,
        items: &'t mut [Self::Item],
    ) -> BoxFuture<'t, Result<(), sqlx::Error>> {
        Box::pin(async move {
            for item in items.iter_mut() {
                item.run(conn.reborrow()).await?;
            }
            Ok(())
        })
    }

    /// Safe for the gate because nothing it does rests on a read alone:
    /// every step with an effect outside the database (running the tool,
    /// sending or redrawing a card, telling an approver their decision
    /// counted) waits for a write of its own (the approval stamp, the card
    /// claim, the outbox take, the decision), and a write is acknowledged
    /// only after a sync of the WAL that began after it committed, which
    /// makes everything committed before it durable too, the decision it
    /// read included. What a power loss can take back is only what a pure
    /// read showed: a page listing a decision, or a call blocked on a
    /// rejection (the safe side).
    fn visible_before_durable(&self) -> bool {
        true
    }

    fn settle(&self, item: Self::Item, outcome: Result<(), &StorageError>) {
        item.settle(outcome);
    }

    fn describe(&self, items: usize) -> String {
        format!("{items} write(s) of the approval gate to confirmation_requests")
    }
}

/// A yes/no question asked at most once: a write that runs again (its batch
/// failed) gets the first answer, so a reply window that said "commit" is
/// not asked a second time (which would close it).
pub(crate) struct AskedOnce<F> {
    state: Arc<Mutex<(Option<F>, Option<bool>)>>,
}

impl<F> Clone for AskedOnce<F> {
    fn clone(&self) -> Self {
        AskedOnce {
            state: self.state.clone(),
        }
    }
}

impl<F: FnOnce() -> bool> AskedOnce<F> {
    pub(crate) fn new(question: F) -> Self {
        AskedOnce {
            state: Arc::new(Mutex::new((Some(question), None))),
        }
    }

    /// The answer, asking the question the first time.
    pub(crate) fn ask(&self) -> bool {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(answer) = state.1 {
            return answer;
        }
        let answer = state.0.take().is_some_and(|question| question());
        state.1 = Some(answer);
        answer
    }
}
