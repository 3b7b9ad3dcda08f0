//! Org modes kept in the `org_settings` table, behind a short-TTL cache.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use tokio::time::Instant;

use super::org_mode::{ModeFuture, OrgModeError, OrgModeSource};
use crate::storage::{Database, Pool, StorageError, on_pool};

/// Read-only flags from the `org_settings` table, shared by every replica.
///
/// Lookups are cached per org for `ttl` (default 5 s), so a flag changed by
/// another replica or by hand in the database takes effect within `ttl`; one
/// changed through [`set_read_only`](DatabaseOrgModes::set_read_only) takes
/// effect at once in this process. An org without a row is writable. A failed
/// lookup is never cached: it makes the guard block, and the next call asks again.
pub struct DatabaseOrgModes {
    database: Database,
    ttl: Duration,
    cache: Mutex<HashMap<String, (bool, Instant)>>,
}

impl DatabaseOrgModes {
    /// The default cache lifetime.
    pub const DEFAULT_TTL: Duration = Duration::from_secs(5);

    /// Modes from `database`, cached for [`DEFAULT_TTL`](Self::DEFAULT_TTL).
    pub fn new(database: Database) -> Self {
        Self::with_ttl(database, Self::DEFAULT_TTL)
    }

    /// Modes from `database`, cached for `ttl` (zero: no cache).
    pub fn with_ttl(database: Database, ttl: Duration) -> Self {
        DatabaseOrgModes {
            database,
            ttl,
            cache: Mutex::new(HashMap::new()),
        }
    }

    /// Stores the flag of `org_id` and refreshes this process's cache.
    pub async fn set_read_only(&self, org_id: &str, read_only: bool) -> Result<(), StorageError> {
        let what = || format!("setting the read-only flag of org \"{org_id}\"");
        // `updated_at` is text on SQLite and a timestamp on PostgreSQL.
        let now = match self.database.writer() {
            #[cfg(feature = "sqlite")]
            Pool::Sqlite(_) => "strftime('%Y-%m-%dT%H:%M:%fZ', 'now')",
            #[cfg(feature = "postgres")]
            Pool::Postgres(_) => "clock_timestamp()",
        };
        // `$n` placeholders: PostgreSQL's, and SQLite reads them too.
        let sql = format!(
            "INSERT INTO org_settings (org_id, read_only) VALUES ($1, $2) \
             ON CONFLICT (org_id) DO UPDATE SET read_only = excluded.read_only, updated_at = {now}"
        );
        on_pool!(self.database.writer(), pool => sqlx::query(&sql)
            .bind(org_id)
            .bind(read_only)
            .execute(pool)
            .await
            .map(drop))
        .map_err(StorageError::query(what()))?;
        self.remember(org_id, read_only);
        Ok(())
    }

    /// Reads the flag of `org_id` from the database, bypassing the cache.
    pub async fn fetch(&self, org_id: &str) -> Result<bool, StorageError> {
        let what = || format!("reading the mode of org \"{org_id}\"");
        let sql = "SELECT read_only FROM org_settings WHERE org_id = $1";
        let flag: Option<bool> = on_pool!(self.database.reader(), pool => sqlx::query_scalar(sql)
            .bind(org_id)
            .fetch_optional(pool)
            .await)
        .map_err(StorageError::query(what()))?;
        Ok(flag.unwrap_or(false))
    }

    fn cached(&self, org_id: &str) -> Option<bool> {
        let cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
        cache
            .get(org_id)
            .filter(|(_, at)| at.elapsed() < self.ttl)
            .map(|(flag, _)| *flag)
    }

    fn remember(&self, org_id: &str, read_only: bool) {
        if self.ttl.is_zero() {
            return;
        }
        let mut cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
        if cache.len() >= 100_000 {
            let ttl = self.ttl;
            cache.retain(|_, (_, at)| at.elapsed() < ttl);
        }
        cache.insert(org_id.to_owned(), (read_only, Instant::now()));
    }
}

impl OrgModeSource for DatabaseOrgModes {
    fn is_read_only<'a>(&'a self, org_id: &'a str) -> ModeFuture<'a> {
        Box::pin(async move {
            if let Some(flag) = self.cached(org_id) {
                return Ok(flag);
            }
            let flag = self.fetch(org_id).await.map_err(|error| OrgModeError {
                org_id: org_id.to_owned(),
                message: error.to_string(),
            })?;
            self.remember(org_id, flag);
            Ok(flag)
        })
    }
}
