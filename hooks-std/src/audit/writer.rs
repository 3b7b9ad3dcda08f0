//! How audit rows reach the database: each in its own transaction, or in
//! groups through the shared group-commit writer.

use tokio::sync::oneshot;

use sqlx::SqliteConnection;

use super::insert::{insert_rows, insert_rows_in_own_transaction};
use super::row::AuditRow;
use crate::storage::{Batch, BoxFuture, Conn, Database, GroupCommit, StorageError};

/// A row waiting for its batch, and where to report the batch's fate.
pub(crate) struct Pending {
    row: AuditRow,
    done: oneshot::Sender<Result<(), String>>,
}

/// Audit rows as a group-commit batch: multi-row INSERTs.
pub(crate) struct AuditRows;

impl Batch for AuditRows {
    type Item = Pending;

    fn write<'t>(
        &'t self,
        conn: Conn<'t>,
        items: &'t mut [Pending],
    ) -> BoxFuture<'t, Result<(), sqlx::Error>> {
        Box::pin(async move {
            let rows: Vec<&AuditRow> = items.iter().map(|pending| &pending.row).collect();
            insert_rows(conn, &rows).await
        })
    }

    fn sqlite_transaction<'t>(
        &'t self,
        connection: &'t mut SqliteConnection,
        items: &'t mut [Pending],
    ) -> Option<BoxFuture<'t, Result<(), sqlx::Error>>> {
        let rows = items.iter().map(|pending| &pending.row).collect();
        let insert = insert_rows_in_own_transaction(connection, rows)?;
        Some(Box::pin(insert))
    }

    /// Audit rows are only read after the fact: a row may be readable a
    /// moment before its sync returns, never acknowledged before it.
    fn visible_before_durable(&self) -> bool {
        true
    }

    fn settle(&self, item: Pending, outcome: Result<(), &StorageError>) {
        let _ = item.done.send(outcome.map_err(|error| error.to_string()));
    }

    fn describe(&self, items: usize) -> String {
        format!("writing {items} audit row(s) to connector_call_logs")
    }
}

/// How rows reach the database.
pub(crate) enum AuditWriter {
    /// Every caller inserts its own row in its own transaction.
    PerRow(Database),
    /// Callers queue rows for the group-commit writer, which inserts whatever
    /// has queued while the previous batch committed, up to `max_batch` rows.
    Grouped(GroupCommit<AuditRows>),
}

impl AuditWriter {
    pub(crate) fn grouped(database: Database, max_batch: usize) -> Self {
        AuditWriter::Grouped(GroupCommit::new(database, AuditRows, max_batch))
    }

    /// Writes `row`; returns once it is committed, or with the reason it is not.
    pub(crate) async fn write(&self, row: AuditRow) -> Result<(), String> {
        match self {
            AuditWriter::PerRow(database) => database
                .insert_audit_rows(&[&row])
                .await
                .map_err(|error| error.to_string()),
            AuditWriter::Grouped(group) => {
                let (done, committed) = oneshot::channel();
                group.submit(Pending { row, done }).await;
                committed
                    .await
                    .map_err(|_| "the audit writer task stopped before committing the row")?
            }
        }
    }
}
