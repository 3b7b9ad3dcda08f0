//! The INSERT for audit rows, shared by both backends.

use serde_json::Value;
use sqlx::types::Json;
use sqlx::{Encode, Postgres, QueryBuilder, Sqlite, Type};

use super::row::AuditRow;
use crate::storage::{Database, StorageError};

const INSERT: &str = "INSERT INTO connector_call_logs (conversation_id, tool_call_id, agent_id, \
    user_id, org_id, surface, tool_name, connector, action, outcome, blocked_by, reason, args, \
    result_size, observation_size, duration_ms) ";

/// One multi-row INSERT statement for `rows`: one statement, one transaction.
fn insert_statement<'r, DB>(rows: &[&'r AuditRow]) -> QueryBuilder<'r, DB>
where
    DB: sqlx::Database,
    &'r str: Encode<'r, DB> + Type<DB>,
    Option<&'r str>: Encode<'r, DB> + Type<DB>,
    Json<&'r Value>: Encode<'r, DB> + Type<DB>,
    i64: Encode<'r, DB> + Type<DB>,
    Option<i64>: Encode<'r, DB> + Type<DB>,
{
    let mut statement = QueryBuilder::new(INSERT);
    statement.push_values(rows.iter().copied(), |mut values, row: &'r AuditRow| {
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
            .push_bind(row.duration_ms);
    });
    statement
}

impl Database {
    /// Inserts `rows` in one statement (so one transaction), committed when this returns.
    pub(crate) async fn insert_audit_rows(&self, rows: &[&AuditRow]) -> Result<(), StorageError> {
        if rows.is_empty() {
            return Ok(());
        }
        let what = || format!("writing {} audit row(s) to connector_call_logs", rows.len());
        match self {
            Database::Sqlite(pool) => insert_statement::<Sqlite>(rows)
                .build()
                .execute(pool)
                .await
                .map(drop)
                .map_err(StorageError::query(what())),
            Database::Postgres(pool) => insert_statement::<Postgres>(rows)
                .build()
                .execute(pool)
                .await
                .map(drop)
                .map_err(StorageError::query(what())),
        }
    }
}
