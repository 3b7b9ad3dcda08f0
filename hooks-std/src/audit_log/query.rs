//! Reading the audit log back: for operators, examples and tests. A
//! conversation's rows are found through the `(conversation_id, id)` index,
//! in the order they were written.

use serde_json::Value;
use sqlx::FromRow;

use super::redact::clean_text;
use crate::storage::{Database, Pool, StorageError, on_pool};

/// A stored row of `connector_call_logs`.
#[derive(Debug, Clone, PartialEq, FromRow)]
pub struct AuditEntry {
    /// Insertion order.
    pub id: i64,
    /// When the row was written (RFC 3339, UTC).
    pub created_at: String,
    /// The conversation the call belongs to.
    pub conversation_id: String,
    /// The tool call's id within the conversation.
    pub tool_call_id: String,
    /// The agent that made the call.
    pub agent_id: String,
    /// The user the agent acted for.
    pub user_id: String,
    /// The user's org.
    pub org_id: String,
    /// Where the call came from.
    pub surface: String,
    /// The tool.
    pub tool_name: String,
    /// The connector, when the call has one.
    pub connector: Option<String>,
    /// The connector action, when the call has one.
    pub action: Option<String>,
    /// `ok`, `tool_error` or `blocked`.
    pub outcome: String,
    /// The hook that blocked the call or withheld its result.
    pub blocked_by: Option<String>,
    /// The block reason or the tool's error text.
    pub reason: Option<String>,
    /// The arguments, redacted.
    #[sqlx(json)]
    pub args: Value,
    /// Characters of the tool's raw result.
    pub result_size: Option<i64>,
    /// Characters of what the LLM saw.
    pub observation_size: i64,
    /// Wall time of the call.
    pub duration_ms: i64,
    /// What the model was sent in place of the tool's outcome: `as_is`,
    /// `rewritten` or `withheld`; `None` when the tool did not run.
    pub sent: Option<String>,
}

/// Every column but `id` and `created_at`.
const COLUMNS: &str = "conversation_id, tool_call_id, agent_id, user_id, org_id, \
    surface, tool_name, connector, action, outcome, blocked_by, reason, args, result_size, \
    observation_size, duration_ms, sent";

impl Database {
    /// The audit rows of `conversation_id` in the order they were written
    /// (the id is looked up as it was stored: NUL characters as U+FFFD).
    pub async fn audit_entries(
        &self,
        conversation_id: &str,
    ) -> Result<Vec<AuditEntry>, StorageError> {
        let what = || format!("reading the audit log of conversation \"{conversation_id}\"");
        let sql = match self.reader() {
            // `created_at` is stored as RFC 3339 text already.
            #[cfg(feature = "sqlite")]
            Pool::Sqlite(_) => format!(
                "SELECT id, created_at, {COLUMNS} FROM connector_call_logs \
                 WHERE conversation_id = ?1 ORDER BY id"
            ),
            #[cfg(feature = "postgres")]
            Pool::Postgres(_) => format!(
                "SELECT id, to_char(created_at AT TIME ZONE 'UTC', \
                 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"') AS created_at, {COLUMNS} \
                 FROM connector_call_logs WHERE conversation_id = $1 ORDER BY id"
            ),
        };
        on_pool!(self.reader(), pool => sqlx::query_as(&sql)
            .bind(clean_text(conversation_id))
            .fetch_all(pool)
            .await)
        .map_err(StorageError::query(what()))
    }

    /// How many audit rows `conversation_id` has (looked up as stored).
    pub async fn audit_count(&self, conversation_id: &str) -> Result<i64, StorageError> {
        let what = || format!("counting the audit rows of conversation \"{conversation_id}\"");
        let sql = match self.reader() {
            #[cfg(feature = "sqlite")]
            Pool::Sqlite(_) => {
                "SELECT COUNT(*) FROM connector_call_logs WHERE conversation_id = ?1"
            }
            #[cfg(feature = "postgres")]
            Pool::Postgres(_) => {
                "SELECT COUNT(*) FROM connector_call_logs WHERE conversation_id = $1"
            }
        };
        on_pool!(self.reader(), pool => sqlx::query_scalar(sql)
            .bind(clean_text(conversation_id))
            .fetch_one(pool)
            .await)
        .map_err(StorageError::query(what()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Both lookups seek the `(conversation_id, id)` index, never a scan
    /// of the whole log, however large it grows.
    #[cfg(feature = "sqlite")]
    #[tokio::test]
    async fn sqlite_lookups_use_the_conversation_index() {
        let database = Database::in_memory().await.expect("database");
        let pool = database.sqlite().expect("in_memory is SQLite");
        for sql in [
            format!(
                "SELECT id, created_at, {COLUMNS} FROM connector_call_logs WHERE conversation_id = ?1 ORDER BY id"
            ),
            "SELECT COUNT(*) FROM connector_call_logs WHERE conversation_id = ?1".to_owned(),
        ] {
            let plan: Vec<(i64, i64, i64, String)> =
                sqlx::query_as(&format!("EXPLAIN QUERY PLAN {sql}"))
                    .bind("conv")
                    .fetch_all(pool)
                    .await
                    .expect("plan");
            let steps: Vec<&str> = plan.iter().map(|(_, _, _, step)| step.as_str()).collect();
            assert!(
                steps
                    .iter()
                    .all(|step| step.contains("INDEX connector_call_logs_by_conversation")),
                "{sql}: {steps:?}"
            );
        }
    }
}
