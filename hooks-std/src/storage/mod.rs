//! Storage shared by the standard hooks: SQLite by default, PostgreSQL for
//! several replicas, migrations embedded and applied on connect.
//!
//! The databases do the storage work: every write is a plain transaction,
//! durable when its commit returns (SQLite in WAL mode with
//! `synchronous = FULL`), and concurrent writers are ordered by the
//! database. On SQLite a [`Database`] keeps one connection for writes (sqlx's
//! pool hands it to waiting writers in turn, so they queue inside the
//! process instead of spinning on the file lock) and a pool of connections
//! for reads, which WAL lets run beside the writer.
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

#[cfg(feature = "postgres")]
use sqlx::PgPool;
#[cfg(feature = "sqlite")]
use sqlx::SqlitePool;

pub use connect::DatabaseOptions;
pub use error::StorageError;

/// The hooks' database, migrated: the pools its reads and writes use.
///
/// Cloning is cheap (pools are reference-counted). Every standard hook that
/// stores state takes one, so one database serves the audit log, org modes,
/// shared rate limits and the approval gate.
#[derive(Debug, Clone)]
pub struct Database {
    pools: Pools,
}

#[derive(Debug, Clone)]
enum Pools {
    /// SQLite: `write` has one connection; `read` has the rest. An
    /// in-memory database is one connection, shared by both.
    #[cfg(feature = "sqlite")]
    Sqlite { read: SqlitePool, write: SqlitePool },
    /// PostgreSQL: one pool; the server orders concurrent writers.
    #[cfg(feature = "postgres")]
    Postgres(PgPool),
}

/// One of the database's pools, whatever the backend (see [`on_pool!`]).
#[derive(Debug, Clone, Copy)]
pub(crate) enum Pool<'a> {
    #[cfg(feature = "sqlite")]
    Sqlite(&'a SqlitePool),
    #[cfg(feature = "postgres")]
    Postgres(&'a PgPool),
}

/// Runs `$body` with `$pool` bound to the pool `$which` names (a
/// [`Pool`]), whatever the backend: one binding chain for both.
macro_rules! on_pool {
    ($which:expr, $pool:ident => $body:expr) => {
        match $which {
            #[cfg(feature = "sqlite")]
            $crate::storage::Pool::Sqlite($pool) => $body,
            #[cfg(feature = "postgres")]
            $crate::storage::Pool::Postgres($pool) => $body,
        }
    };
}
pub(crate) use on_pool;

impl Database {
    #[cfg(feature = "sqlite")]
    fn from_sqlite(read: SqlitePool, write: SqlitePool) -> Database {
        Database {
            pools: Pools::Sqlite { read, write },
        }
    }

    #[cfg(feature = "postgres")]
    fn from_postgres(pool: PgPool) -> Database {
        Database {
            pools: Pools::Postgres(pool),
        }
    }

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

    /// `"sqlite"` or `"postgres"`.
    pub fn backend(&self) -> &'static str {
        match &self.pools {
            #[cfg(feature = "sqlite")]
            Pools::Sqlite { .. } => "sqlite",
            #[cfg(feature = "postgres")]
            Pools::Postgres(_) => "postgres",
        }
    }

    /// The SQLite pool that writes (one connection), for statements of your
    /// own against the hooks' tables; `None` on PostgreSQL (feature `sqlite`).
    #[cfg(feature = "sqlite")]
    pub fn sqlite(&self) -> Option<&SqlitePool> {
        match &self.pools {
            #[cfg(feature = "sqlite")]
            Pools::Sqlite { write, .. } => Some(write),
            #[cfg(feature = "postgres")]
            Pools::Postgres(_) => None,
        }
    }

    /// The PostgreSQL pool; `None` on SQLite (feature `postgres`).
    #[cfg(feature = "postgres")]
    pub fn postgres(&self) -> Option<&PgPool> {
        match &self.pools {
            #[cfg(feature = "sqlite")]
            Pools::Sqlite { .. } => None,
            Pools::Postgres(pool) => Some(pool),
        }
    }

    /// The pool for reads.
    pub(crate) fn reader(&self) -> Pool<'_> {
        match &self.pools {
            #[cfg(feature = "sqlite")]
            Pools::Sqlite { read, .. } => Pool::Sqlite(read),
            #[cfg(feature = "postgres")]
            Pools::Postgres(pool) => Pool::Postgres(pool),
        }
    }

    /// The pool for writes. On SQLite, begin its transactions with
    /// `BEGIN IMMEDIATE` when they read before they write, so another
    /// process's commit cannot invalidate what they read.
    pub(crate) fn writer(&self) -> Pool<'_> {
        match &self.pools {
            #[cfg(feature = "sqlite")]
            Pools::Sqlite { write, .. } => Pool::Sqlite(write),
            #[cfg(feature = "postgres")]
            Pools::Postgres(pool) => Pool::Postgres(pool),
        }
    }

    /// Closes the pools: later operations fail (and fail-closed hooks block).
    pub async fn close(&self) {
        match &self.pools {
            #[cfg(feature = "sqlite")]
            Pools::Sqlite { read, write } => {
                write.close().await;
                read.close().await;
            }
            #[cfg(feature = "postgres")]
            Pools::Postgres(pool) => pool.close().await,
        }
    }
}

/// Beginning a transaction that writes, on either backend.
#[cfg_attr(not(feature = "approval-gate"), allow(dead_code))]
pub(crate) trait BeginWrite {
    /// The backend.
    type Backend: sqlx::Database;

    /// Begins a transaction on a connection of this pool. On SQLite it takes
    /// the write lock at once (`BEGIN IMMEDIATE`): a transaction that reads
    /// and then writes can then never find, at its first write, that
    /// another process changed what it read.
    fn begin_write(
        &self,
    ) -> impl Future<Output = Result<sqlx::Transaction<'static, Self::Backend>, sqlx::Error>> + Send;
}

#[cfg(feature = "sqlite")]
impl BeginWrite for SqlitePool {
    type Backend = sqlx::Sqlite;

    fn begin_write(
        &self,
    ) -> impl Future<Output = Result<sqlx::Transaction<'static, sqlx::Sqlite>, sqlx::Error>> + Send
    {
        self.begin_with("BEGIN IMMEDIATE")
    }
}

#[cfg(feature = "postgres")]
impl BeginWrite for PgPool {
    type Backend = sqlx::Postgres;

    fn begin_write(
        &self,
    ) -> impl Future<Output = Result<sqlx::Transaction<'static, sqlx::Postgres>, sqlx::Error>> + Send
    {
        self.begin()
    }
}
