//! Group commit: concurrent calls share one INSERT and one transaction.

use std::sync::OnceLock;

use tokio::sync::{mpsc, oneshot};

use super::row::AuditRow;
use crate::storage::Database;

/// A row waiting for its batch, and where to report the batch's fate.
pub(crate) struct Pending {
    row: AuditRow,
    done: oneshot::Sender<Result<(), String>>,
}

/// How rows reach the database.
pub(crate) enum AuditWriter {
    /// Every caller inserts its own row in its own transaction.
    PerRow(Database),
    /// Callers queue rows for one writer task, which inserts whatever has
    /// queued while the previous batch committed, up to `max_batch` rows.
    Grouped {
        database: Database,
        max_batch: usize,
        queue: OnceLock<mpsc::Sender<Pending>>,
    },
}

impl AuditWriter {
    pub(crate) fn grouped(database: Database, max_batch: usize) -> Self {
        AuditWriter::Grouped {
            database,
            max_batch: max_batch.max(1),
            queue: OnceLock::new(),
        }
    }

    /// Writes `row`; returns once it is committed, or with the reason it is not.
    pub(crate) async fn write(&self, row: AuditRow) -> Result<(), String> {
        match self {
            AuditWriter::PerRow(database) => database
                .insert_audit_rows(&[&row])
                .await
                .map_err(|error| error.to_string()),
            AuditWriter::Grouped {
                database,
                max_batch,
                queue,
            } => {
                let queue = queue.get_or_init(|| {
                    let (sender, receiver) = mpsc::channel(max_batch * 16);
                    tokio::spawn(write_batches(database.clone(), receiver, *max_batch));
                    sender
                });
                let (done, committed) = oneshot::channel();
                queue
                    .send(Pending { row, done })
                    .await
                    .map_err(|_| "the audit writer task has stopped (its runtime shut down)")?;
                committed
                    .await
                    .map_err(|_| "the audit writer task stopped before committing the row")?
            }
        }
    }
}

/// The writer task: one INSERT per batch. If a batch fails, its rows are
/// retried one by one so a single bad row cannot fail its neighbours.
async fn write_batches(database: Database, mut queue: mpsc::Receiver<Pending>, max_batch: usize) {
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
                    let result = database
                        .insert_audit_rows(&[&pending.row])
                        .await
                        .map_err(|error| error.to_string());
                    let _ = pending.done.send(result);
                }
            }
        }
    }
}
