//! Storage shared by the standard hooks: one sqlx pool, SQLite by default,
//! PostgreSQL for several replicas, migrations embedded and applied on connect.
//!
//! ```
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! use hooks::std_hooks::Database;
//!
//! let db = Database::connect("sqlite::memory:").await.unwrap();
//! assert_eq!(db.backend(), "sqlite");
//! # });
//! ```

mod connect;
mod error;
mod group_commit;
mod wal_sync;
mod write_turn;

/// Runs `$body` with `$pool` bound to the database's pool, whatever the
/// backend: one statement text (see [`Database::dialect`]), one binding chain.
macro_rules! on_pool {
    ($database:expr, $pool:ident => $body:expr) => {
        match $database {
            $crate::storage::Database::Sqlite($pool) => $body,
            $crate::storage::Database::Postgres($pool) => $body,
        }
    };
}
pub(crate) use on_pool;

use sqlx::{PgPool, SqlitePool};

pub use connect::DatabaseOptions;
pub use error::StorageError;
pub(crate) use group_commit::{Batch, BoxFuture, Conn, GroupCommit, on_conn};

/// A connection pool to the hooks' database, migrated.
///
/// Cloning is cheap (pools are reference-counted). Every standard hook that
/// stores state takes one, so one pool serves the audit log, org modes and
/// shared rate limits (and, later, the approval gate).
#[derive(Debug, Clone)]
pub enum Database {
    /// The embedded default: a file (WAL, busy timeout) or `:memory:`.
    Sqlite(SqlitePool),
    /// PostgreSQL, for deployments with several replicas.
    Postgres(PgPool),
}

impl Database {
    /// Connects with default options and applies the migrations.
    ///
    /// `url` is `sqlite::memory:`, `sqlite://path/to/file.db` (created if
    /// missing) or `postgres://user@host/db`.
    pub async fn connect(url: &str) -> Result<Database, StorageError> {
        Self::connect_with(url, &DatabaseOptions::default()).await
    }

    /// A private in-memory SQLite database, migrated: for tests and examples.
    pub async fn in_memory() -> Result<Database, StorageError> {
        Self::connect("sqlite::memory:").await
    }

    /// `template` (written for PostgreSQL, `$1` placeholders) for this
    /// backend: `{now_ms}` becomes the database clock in milliseconds since
    /// the Unix epoch (one reading per statement), `{json}` a cast to JSON
    /// where the backend has the type, `{skip_locked}` (after a subquery's
    /// `LIMIT`) skips rows other transactions hold where rows are locked,
    /// and SQLite gets `?1` placeholders.
    pub(crate) fn dialect(&self, template: &str) -> String {
        match self {
            Database::Sqlite(_) => template
                .replace("{now_ms}", "CAST(unixepoch('subsec') * 1000 AS INTEGER)")
                .replace("{json}", "")
                .replace("{skip_locked}", "")
                .replace('$', "?"),
            Database::Postgres(_) => template
                .replace(
                    "{now_ms}",
                    "CAST(extract(epoch FROM statement_timestamp()) * 1000 AS BIGINT)",
                )
                .replace("{json}", "::json")
                .replace("{skip_locked}", " FOR UPDATE SKIP LOCKED"),
        }
    }

    /// `"sqlite"` or `"postgres"`.
    pub fn backend(&self) -> &'static str {
        match self {
            Database::Sqlite(_) => "sqlite",
            Database::Postgres(_) => "postgres",
        }
    }

    /// Closes the pool: later operations fail (and fail-closed hooks block).
    pub async fn close(&self) {
        match self {
            Database::Sqlite(pool) => pool.close().await,
            Database::Postgres(pool) => pool.close().await,
        }
    }
}
