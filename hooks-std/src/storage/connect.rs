//! Opening a pool and applying the embedded migrations.

use std::str::FromStr;
use std::time::Duration;

#[cfg(feature = "sqlite")]
use sqlx::SqlitePool;
use sqlx::migrate::Migrator;
#[cfg(feature = "postgres")]
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
#[cfg(feature = "sqlite")]
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};

use super::Database;
use super::error::{StorageError, redact_url};

#[cfg(feature = "sqlite")]
static SQLITE_MIGRATIONS: Migrator = sqlx::migrate!("./migrations/sqlite");
#[cfg(feature = "postgres")]
static POSTGRES_MIGRATIONS: Migrator = sqlx::migrate!("./migrations/postgres");

/// How [`Database::connect_with`] sets up the pool.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DatabaseOptions {
    /// Connections (default 8). On SQLite this is the read pool; writes
    /// have one connection of their own, and an in-memory database is one
    /// connection in all.
    pub max_connections: u32,
    /// How long to wait for a free connection before failing (default 5 s).
    /// Hooks fail closed, so a database that stops answering blocks calls after this long.
    pub acquire_timeout: Duration,
    /// SQLite: how long a writer waits for another process's lock on the
    /// file (default 5 s).
    pub busy_timeout: Duration,
}

impl Default for DatabaseOptions {
    fn default() -> Self {
        DatabaseOptions {
            max_connections: 8,
            acquire_timeout: Duration::from_secs(5),
            busy_timeout: Duration::from_secs(5),
        }
    }
}

impl Database {
    /// Connects with `options` and applies the migrations.
    pub async fn connect_with(
        url: &str,
        options: &DatabaseOptions,
    ) -> Result<Database, StorageError> {
        let shown = redact_url(url);
        if url.starts_with("sqlite:") {
            #[cfg(feature = "sqlite")]
            return connect_sqlite(url, shown, options).await;
            #[cfg(not(feature = "sqlite"))]
            return Err(StorageError::BackendNotInThisBuild {
                url: shown,
                feature: "sqlite",
            });
        } else if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            #[cfg(feature = "postgres")]
            return connect_postgres(url, shown, options).await;
            #[cfg(not(feature = "postgres"))]
            return Err(StorageError::BackendNotInThisBuild {
                url: shown,
                feature: "postgres",
            });
        } else {
            Err(StorageError::UnsupportedUrl { url: shown })
        }
    }
}

#[cfg(feature = "sqlite")]
async fn connect_sqlite(
    url: &str,
    shown: String,
    options: &DatabaseOptions,
) -> Result<Database, StorageError> {
    let connect_error = |source| StorageError::Connect {
        backend: "sqlite",
        url: shown.clone(),
        source,
    };
    let in_memory = url.contains(":memory:") || url.contains("mode=memory");
    // `synchronous = FULL` in WAL mode: a commit is on disk when it returns,
    // power loss included.
    let mut connect = SqliteConnectOptions::from_str(url)
        .map_err(connect_error)?
        .create_if_missing(true)
        .foreign_keys(true)
        .busy_timeout(options.busy_timeout)
        .synchronous(SqliteSynchronous::Full);
    if in_memory {
        // Each connection to `:memory:` is its own database: keep exactly
        // one, forever, for reads and writes alike.
        let pool = SqlitePoolOptions::new()
            .acquire_timeout(options.acquire_timeout)
            .max_connections(1)
            .min_connections(1)
            .idle_timeout(None)
            .max_lifetime(None)
            .connect_with(connect)
            .await
            .map_err(connect_error)?;
        migrate_sqlite(&pool).await?;
        return Ok(Database::from_sqlite(pool.clone(), pool));
    }
    connect = connect.journal_mode(SqliteJournalMode::Wal);
    let write = SqlitePoolOptions::new()
        .acquire_timeout(options.acquire_timeout)
        .max_connections(1)
        .connect_with(connect.clone())
        .await
        .map_err(connect_error)?;
    migrate_sqlite(&write).await?;
    let read = SqlitePoolOptions::new()
        .acquire_timeout(options.acquire_timeout)
        .max_connections(options.max_connections.max(1))
        .connect_with(connect)
        .await
        .map_err(connect_error)?;
    Ok(Database::from_sqlite(read, write))
}

#[cfg(feature = "sqlite")]
async fn migrate_sqlite(pool: &SqlitePool) -> Result<(), StorageError> {
    SQLITE_MIGRATIONS
        .run(pool)
        .await
        .map_err(|source| StorageError::Migrate {
            backend: "sqlite",
            source,
        })
}

#[cfg(feature = "postgres")]
async fn connect_postgres(
    url: &str,
    shown: String,
    options: &DatabaseOptions,
) -> Result<Database, StorageError> {
    let connect_error = |source| StorageError::Connect {
        backend: "postgres",
        url: shown.clone(),
        source,
    };
    let connect = PgConnectOptions::from_str(url).map_err(connect_error)?;
    let pool = PgPoolOptions::new()
        .max_connections(options.max_connections.max(1))
        .acquire_timeout(options.acquire_timeout)
        .connect_with(connect)
        .await
        .map_err(connect_error)?;
    POSTGRES_MIGRATIONS
        .run(&pool)
        .await
        .map_err(|source| StorageError::Migrate {
            backend: "postgres",
            source,
        })?;
    Ok(Database::from_postgres(pool))
}
