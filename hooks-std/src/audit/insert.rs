//! The INSERT for audit rows, shared by both backends.
//!
//! A batch is written as a few multi-row statements whose sizes are powers of
//! two (37 rows: 32 + 4 + 1), so the handful of statement texts stay in each
//! connection's prepared-statement cache instead of being parsed anew for
//! every batch size.

use std::sync::OnceLock;

use serde_json::Value;
use sqlx::types::Json;
use sqlx::{Encode, Executor, IntoArguments, Postgres, Sqlite, SqliteConnection, Type};

use super::row::{AuditRow, Sent};
use crate::storage::{Conn, Database, StorageError};

const COLUMNS: &str = "conversation_id, tool_call_id, agent_id, user_id, org_id, surface, \
    tool_name, connector, action, outcome, blocked_by, reason, args, result_size, \
    observation_size, duration_ms, sent";

/// Values per row.
const ARITY: usize = 17;

/// The largest statement: 256 rows (4,096 values, within both backends' limits).
const LARGEST: u32 = 8;

/// The statement inserting `2^exponent` rows; built once per size and backend.
///
/// PostgreSQL numbers its placeholders (`$n`); SQLite gets anonymous `?`
/// ones: the driver asks SQLite for each placeholder's name, and SQLite finds
/// a numbered name by walking the list of them, which made binding a large
/// batch quadratic (the largest share of the audit writer's time).
fn statement(exponent: u32, numbered: bool) -> &'static str {
    static NUMBERED: [OnceLock<String>; LARGEST as usize + 1] = [const { OnceLock::new() }; 9];
    static ANONYMOUS: [OnceLock<String>; LARGEST as usize + 1] = [const { OnceLock::new() }; 9];
    let cache = if numbered { &NUMBERED } else { &ANONYMOUS };
    cache[exponent as usize].get_or_init(|| {
        let rows = 1usize << exponent;
        let mut sql = format!("INSERT INTO connector_call_logs ({COLUMNS}) VALUES ");
        for row in 0..rows {
            sql.push_str(if row == 0 { "(" } else { ", (" });
            for column in 0..ARITY {
                if column > 0 {
                    sql.push_str(", ");
                }
                if numbered {
                    sql.push('$');
                    sql.push_str(&(row * ARITY + column + 1).to_string());
                } else {
                    sql.push('?');
                }
            }
            sql.push(')');
        }
        sql
    })
}

/// The most rows [`sqlite_transaction_script`] writes at once.
const SCRIPT_ROWS: usize = 256;

/// `BEGIN IMMEDIATE; INSERT … (n rows); COMMIT` as one script, so a batch
/// of audit rows is one round trip to SQLite's worker thread; built once per
/// number of rows, `None` above [`SCRIPT_ROWS`]. The placeholders are
/// anonymous, filled in order across the script's statements.
fn sqlite_transaction_script(rows: usize) -> Option<&'static str> {
    static SCRIPTS: [OnceLock<String>; SCRIPT_ROWS] = [const { OnceLock::new() }; SCRIPT_ROWS];
    let slot = SCRIPTS.get(rows.checked_sub(1)?)?;
    Some(slot.get_or_init(|| {
        let mut sql = String::from("BEGIN IMMEDIATE; INSERT INTO connector_call_logs (");
        sql.push_str(COLUMNS);
        sql.push_str(") VALUES ");
        let row = format!("({})", vec!["?"; ARITY].join(", "));
        sql.push_str(&vec![row; rows].join(", "));
        sql.push_str("; COMMIT");
        sql
    }))
}

/// Writes `rows` as one whole transaction in one round trip (see
/// [`sqlite_transaction_script`]); `None` when there are too many rows for
/// one script.
pub(super) fn insert_rows_in_own_transaction<'c>(
    connection: &'c mut SqliteConnection,
    rows: Vec<&'c AuditRow>,
) -> Option<impl Future<Output = Result<(), sqlx::Error>> + Send + 'c> {
    let script = sqlite_transaction_script(rows.len())?;
    Some(async move { insert_chunk::<Sqlite, _>(connection, script, &rows).await })
}

/// Inserts `rows` with one statement of exactly their number (a power of two).
async fn insert_chunk<'c, DB, E>(
    executor: E,
    sql: &'static str,
    rows: &[&AuditRow],
) -> Result<(), sqlx::Error>
where
    DB: sqlx::Database,
    E: Executor<'c, Database = DB>,
    for<'a> <DB as sqlx::Database>::Arguments<'a>: IntoArguments<'a, DB>,
    for<'a> &'a str: Encode<'a, DB> + Type<DB>,
    for<'a> Option<&'a str>: Encode<'a, DB> + Type<DB>,
    for<'a> Json<&'a Value>: Encode<'a, DB> + Type<DB>,
    i64: for<'a> Encode<'a, DB> + Type<DB>,
    Option<i64>: for<'a> Encode<'a, DB> + Type<DB>,
{
    let mut query = sqlx::query::<DB>(sql);
    for row in rows {
        query = query
            .bind(row.conversation_id.as_str())
            .bind(row.tool_call_id.as_str())
            .bind(row.agent_id.as_str())
            .bind(row.user_id.as_str())
            .bind(row.org_id.as_str())
            .bind(row.surface)
            .bind(row.tool_name.as_str())
            .bind(row.connector.as_deref())
            .bind(row.action.as_deref())
            .bind(row.outcome.as_str())
            .bind(row.blocked_by.as_deref())
            .bind(row.reason.as_deref())
            .bind(Json(&row.args))
            .bind(row.result_size)
            .bind(row.observation_size)
            .bind(row.duration_ms)
            .bind(row.sent.map(Sent::as_str));
    }
    query.execute(executor).await.map(drop)
}

/// Inserts `rows` inside the transaction of `conn`.
pub(super) async fn insert_rows(mut conn: Conn<'_>, rows: &[&AuditRow]) -> Result<(), sqlx::Error> {
    let mut rest = rows;
    while !rest.is_empty() {
        let exponent = rest.len().ilog2().min(LARGEST);
        let (chunk, after) = rest.split_at(1 << exponent);
        match conn.reborrow() {
            Conn::Sqlite(connection) => {
                insert_chunk::<Sqlite, _>(connection, statement(exponent, false), chunk).await?
            }
            Conn::Postgres(connection) => {
                insert_chunk::<Postgres, _>(connection, statement(exponent, true), chunk).await?
            }
        }
        rest = after;
    }
    Ok(())
}

impl Database {
    /// Inserts `rows` in one transaction of their own, committed when this returns.
    pub(crate) async fn insert_audit_rows(&self, rows: &[&AuditRow]) -> Result<(), StorageError> {
        let what = format!("writing {} audit row(s) to connector_call_logs", rows.len());
        let written = match self {
            Database::Sqlite(pool) => {
                async {
                    let mut tx = pool.begin().await?;
                    insert_rows(Conn::Sqlite(&mut tx), rows).await?;
                    tx.commit().await
                }
                .await
            }
            Database::Postgres(pool) => {
                async {
                    let mut tx = pool.begin().await?;
                    insert_rows(Conn::Postgres(&mut tx), rows).await?;
                    tx.commit().await
                }
                .await
            }
        };
        written.map_err(StorageError::query(what))
    }
}
