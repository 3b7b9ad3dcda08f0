//! Reading the audit log back: for operators, examples and tests.
//!
//! On PostgreSQL a conversation's rows are found through an ordinary index.
//! On SQLite they are found through `connector_call_logs_by_conversation`,
//! which a trigger fills in bulk every 4,096 rows (an index kept row by row
//! halved the writer's throughput; the migration that made the change says
//! why), plus a scan of the rows written since the last filing, at most
//! 4,095 and found by rowid range. One statement reads both parts, so it sees
//! each row once whatever filing happens around it.

use serde_json::Value;
use sqlx::FromRow;

use crate::storage::{Database, StorageError, on_pool};

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

/// SQLite: the last row filed into `connector_call_logs_by_conversation`;
/// the rows above it are the unfiled tail.
const FILED_THROUGH: &str = "(SELECT through_id FROM connector_call_logs_filed)";

/// Every column but `id` and `created_at`.
const COLUMNS: &str = "conversation_id, tool_call_id, agent_id, user_id, org_id, \
    surface, tool_name, connector, action, outcome, blocked_by, reason, args, result_size, \
    observation_size, duration_ms, sent";

impl Database {
    /// The audit rows of `conversation_id` in the order they were written.
    pub async fn audit_entries(
        &self,
        conversation_id: &str,
    ) -> Result<Vec<AuditEntry>, StorageError> {
        let what = || format!("reading the audit log of conversation \"{conversation_id}\"");
        let sql = match self {
            Database::Sqlite(_) => sqlite_entries(),
            Database::Postgres(_) => format!(
                "SELECT id, to_char(created_at AT TIME ZONE 'UTC', \
                 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"') AS created_at, {COLUMNS} \
                 FROM connector_call_logs WHERE conversation_id = $1 ORDER BY id"
            ),
        };
        on_pool!(self, pool => sqlx::query_as(&sql)
            .bind(conversation_id)
            .fetch_all(pool)
            .await)
        .map_err(StorageError::query(what()))
    }

    /// How many audit rows `conversation_id` has.
    pub async fn audit_count(&self, conversation_id: &str) -> Result<i64, StorageError> {
        let what = || format!("counting the audit rows of conversation \"{conversation_id}\"");
        let sql = match self {
            Database::Sqlite(_) => sqlite_count(),
            Database::Postgres(_) => {
                "SELECT COUNT(*) FROM connector_call_logs WHERE conversation_id = $1".to_owned()
            }
        };
        on_pool!(self, pool => sqlx::query_scalar(&sql)
            .bind(conversation_id)
            .fetch_one(pool)
            .await)
        .map_err(StorageError::query(what()))
    }
}

/// SQLite: a conversation's rows, from the filed entries and the unfiled tail
/// (see the module docs); `created_at` is stored as text already. The filed
/// part checks each row's conversation and stays at or below the filing
/// mark, so an entry put there by hand can neither show another
/// conversation's row nor show a row twice.
fn sqlite_entries() -> String {
    format!(
        "SELECT id, created_at, {COLUMNS} FROM connector_call_logs \
         WHERE id IN (SELECT id FROM connector_call_logs_by_conversation \
                      WHERE conversation_id = ?1 AND id <= {FILED_THROUGH}) \
           AND conversation_id = ?1 \
         UNION ALL \
         SELECT id, created_at, {COLUMNS} FROM connector_call_logs \
         WHERE id > {FILED_THROUGH} AND conversation_id = ?1 \
         ORDER BY id"
    )
}

/// SQLite: how many rows a conversation has, filed and in the tail.
fn sqlite_count() -> String {
    format!(
        "SELECT (SELECT COUNT(*) FROM connector_call_logs_by_conversation \
                 WHERE conversation_id = ?1 AND id <= {FILED_THROUGH}) \
              + (SELECT COUNT(*) FROM connector_call_logs \
                 WHERE id > {FILED_THROUGH} AND conversation_id = ?1)"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Both lookups seek: by the filed entries' key and by rowid range,
    /// never a scan of the whole log, however large it grows.
    #[tokio::test]
    async fn sqlite_lookups_never_scan_the_log() {
        let database = Database::in_memory().await.expect("database");
        let Database::Sqlite(pool) = &database else {
            unreachable!("in_memory is SQLite")
        };
        for sql in [sqlite_entries(), sqlite_count()] {
            let plan: Vec<(i64, i64, i64, String)> =
                sqlx::query_as(&format!("EXPLAIN QUERY PLAN {sql}"))
                    .bind("conv")
                    .fetch_all(pool)
                    .await
                    .expect("plan");
            let steps: Vec<&str> = plan.iter().map(|step| step.3.as_str()).collect();
            assert!(
                steps.iter().all(|step| {
                    let mut words = step.split_whitespace();
                    (words.next(), words.next()) != (Some("SCAN"), Some("connector_call_logs"))
                }),
                "{steps:?}"
            );
            assert!(
                steps
                    .iter()
                    .any(|step| step.contains("connector_call_logs_by_conversation")),
                "{steps:?}"
            );
            assert!(
                steps.iter().any(|step| step.contains("(rowid>?)")),
                "{steps:?}"
            );
        }
    }
}
