//! The INSERT for audit rows: one multi-row statement, committed on its
//! own; a batch too large for one statement is one transaction.

use sqlx::QueryBuilder;
use sqlx::types::Json;

use super::row::{AuditRow, Sent};
use crate::storage::{Database, Pool, StorageError, on_pool};

/// The most rows in one statement: 256 × 17 values stays well inside both
/// backends' limits on bound values (SQLite 32,766, PostgreSQL 65,535).
pub(super) const MAX_ROWS_PER_STATEMENT: usize = 256;

const INSERT: &str = "INSERT INTO connector_call_logs (conversation_id, tool_call_id, agent_id, \
    user_id, org_id, surface, tool_name, connector, action, outcome, blocked_by, reason, args, \
    result_size, observation_size, duration_ms, sent) ";

impl Database {
    /// Inserts `rows` all or none, committed (durable) when this returns.
    pub(crate) async fn insert_audit_rows(&self, rows: &[&AuditRow]) -> Result<(), StorageError> {
        let what = format!("writing {} audit row(s) to connector_call_logs", rows.len());
        let written = on_pool_insert(self.writer(), rows).await;
        written.map_err(StorageError::query(what))
    }
}

async fn on_pool_insert(pool: Pool<'_>, rows: &[&AuditRow]) -> Result<(), sqlx::Error> {
    on_pool!(pool, pool => async {
        // The backend follows from where the statement runs.
        macro_rules! statement { ($chunk:expr) => {{
            let mut query = QueryBuilder::new(INSERT);
            query.push_values($chunk.iter().copied(), |mut values, row| {
                values
                    .push_bind(row.conversation_id.as_str())
                    .push_bind(row.tool_call_id.as_str())
                    .push_bind(row.agent_id.as_str())
                    .push_bind(row.user_id.as_str())
                    .push_bind(row.org_id.as_str())
                    .push_bind(row.surface)
                    .push_bind(row.tool_name.as_str())
                    .push_bind(row.connector.as_deref())
                    .push_bind(row.action.as_deref())
                    .push_bind(row.outcome.as_str())
                    .push_bind(row.blocked_by.as_deref())
                    .push_bind(row.reason.as_deref())
                    .push_bind(Json(&row.args))
                    .push_bind(row.result_size)
                    .push_bind(row.observation_size)
                    .push_bind(row.duration_ms)
                    .push_bind(row.sent.map(Sent::as_str));
            });
            query
        }}}
        if rows.len() <= MAX_ROWS_PER_STATEMENT {
            // One statement is atomic and committed on its own: no
            // transaction around it (which would take the database two
            // more round trips per batch).
            statement!(rows).build().execute(pool).await?;
            return Ok(());
        }
        let mut tx = pool.begin().await?;
        for chunk in rows.chunks(MAX_ROWS_PER_STATEMENT) {
            statement!(chunk).build().execute(&mut *tx).await?;
        }
        tx.commit().await
    }
    .await)
}
