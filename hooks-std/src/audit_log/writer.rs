//! How audit rows reach the database: by one writer task that commits
//! whatever has queued as one transaction, or by each caller alone.
//!
//! The writer task takes every row queued while the previous transaction
//! committed (up to `max_batch`), inserts them with one statement and
//! commits; each caller hears back only after that commit, so nothing is
//! acknowledged before it is durable. One commit (one sync of the file on
//! SQLite) then serves every caller that arrived meanwhile. If the
//! transaction fails, each of its rows is written again alone, so one bad
//! row cannot fail its neighbours.

use std::sync::Mutex;

use tokio::sync::{mpsc, oneshot};

use super::row::AuditRow;
use crate::storage::Database;

/// A row waiting for its transaction, and where to report its fate.
struct Pending {
    row: AuditRow,
    done: oneshot::Sender<Result<(), String>>,
}

/// How rows reach the database.
pub(crate) enum AuditWriter {
    /// Every caller inserts its own row in its own transaction.
    PerRow(Database),
    /// Callers queue rows for the writer task.
    Queued(Queue),
}

/// The writer task's queue, started on the first row (inside the caller's
/// runtime) and started again if the task has gone.
pub(crate) struct Queue {
    database: Database,
    max_batch: usize,
    sender: Mutex<Option<mpsc::UnboundedSender<Pending>>>,
}

impl AuditWriter {
    pub(crate) fn queued(database: Database, max_batch: usize) -> Self {
        AuditWriter::Queued(Queue {
            database,
            max_batch,
            sender: Mutex::new(None),
        })
    }

    /// Writes `row`; returns once it is committed, or with the reason it is not.
    pub(crate) async fn write(&self, row: AuditRow) -> Result<(), String> {
        match self {
            AuditWriter::PerRow(database) => database
                .insert_audit_rows(&[&row])
                .await
                .map_err(|error| error.to_string()),
            AuditWriter::Queued(queue) => {
                let (done, committed) = oneshot::channel();
                queue.send(Pending { row, done })?;
                committed
                    .await
                    .map_err(|_| "the audit writer task stopped before committing the row")?
            }
        }
    }
}

impl Queue {
    fn send(&self, pending: Pending) -> Result<(), String> {
        let mut sender = self
            .sender
            .lock()
            .map_err(|_| "the audit writer's queue is poisoned")?;
        let live = sender.as_ref().filter(|sender| !sender.is_closed());
        let live = match live {
            Some(live) => live,
            None => {
                let (tx, rx) = mpsc::unbounded_channel();
                tokio::spawn(write_forever(self.database.clone(), rx, self.max_batch));
                sender.insert(tx)
            }
        };
        live.send(pending)
            .map_err(|_| "the audit writer task stopped before taking the row".to_owned())
    }
}

/// The writer task: ends when every sender is gone and the queue is empty.
async fn write_forever(
    database: Database,
    mut queue: mpsc::UnboundedReceiver<Pending>,
    max_batch: usize,
) {
    let mut batch = Vec::with_capacity(max_batch);
    while queue.recv_many(&mut batch, max_batch).await > 0 {
        let rows: Vec<&AuditRow> = batch.iter().map(|pending| &pending.row).collect();
        match database.insert_audit_rows(&rows).await {
            Ok(()) => {
                for pending in batch.drain(..) {
                    let _ = pending.done.send(Ok(()));
                }
            }
            Err(error) if batch.len() == 1 => {
                for pending in batch.drain(..) {
                    let _ = pending.done.send(Err(error.to_string()));
                }
            }
            Err(_) => {
                for pending in batch.drain(..) {
                    let written = database.insert_audit_rows(&[&pending.row]).await;
                    let _ = pending
                        .done
                        .send(written.map_err(|error| error.to_string()));
                }
            }
        }
    }
}
