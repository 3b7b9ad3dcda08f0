//! A limiter shared by every replica: GCRA state in `rate_limit_buckets`,
//! decided by one atomic statement per check on the database's clock.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::gcra::Quota;
use crate::storage::{Database, Pool, StorageError, on_pool};
use crate::text::fold_identifier;

/// The statement for SQLite. `?3` is the emission interval and `?4` the burst
/// tolerance, both in microseconds. A new key is inserted as allowed; an
/// existing one is updated in place, and only an allowed call moves its
/// theoretical arrival time, so a denied call consumes nothing. In an upsert
/// every right-hand side sees the old row, and `excluded.checked_at_us` is
/// this check's clock reading.
#[cfg(feature = "sqlite")]
const SQLITE_CHECK: &str = "\
INSERT INTO rate_limit_buckets (connector, user_id, tat_us, checked_at_us, allowed)
VALUES (?1, ?2, CAST(unixepoch('subsec') * 1000000 AS INTEGER) + ?3,
        CAST(unixepoch('subsec') * 1000000 AS INTEGER), 1)
ON CONFLICT (connector, user_id) DO UPDATE SET
    allowed = (max(tat_us, excluded.checked_at_us) - ?4 <= excluded.checked_at_us),
    tat_us = CASE WHEN max(tat_us, excluded.checked_at_us) - ?4 <= excluded.checked_at_us
                  THEN max(tat_us, excluded.checked_at_us) + ?3 ELSE tat_us END,
    checked_at_us = excluded.checked_at_us
RETURNING allowed, tat_us, checked_at_us";

/// The same statement for PostgreSQL, where the row lock taken by
/// `ON CONFLICT DO UPDATE` serialises concurrent checks of one key.
#[cfg(feature = "postgres")]
const POSTGRES_CHECK: &str = "\
INSERT INTO rate_limit_buckets AS b (connector, user_id, tat_us, checked_at_us, allowed)
SELECT $1, $2, now_us + $3, now_us, TRUE
FROM (SELECT (extract(epoch FROM clock_timestamp()) * 1000000)::BIGINT AS now_us) AS clock
ON CONFLICT (connector, user_id) DO UPDATE SET
    allowed = (GREATEST(b.tat_us, excluded.checked_at_us) - $4 <= excluded.checked_at_us),
    tat_us = CASE WHEN GREATEST(b.tat_us, excluded.checked_at_us) - $4 <= excluded.checked_at_us
                  THEN GREATEST(b.tat_us, excluded.checked_at_us) + $3 ELSE b.tat_us END,
    checked_at_us = excluded.checked_at_us
RETURNING allowed, tat_us, checked_at_us";

/// A key's stored theoretical arrival time (none for a new key) and the
/// database's clock, read without changing anything: what a dry run decides on.
#[cfg(feature = "sqlite")]
const SQLITE_PEEK: &str = "\
SELECT (SELECT tat_us FROM rate_limit_buckets WHERE connector = ?1 AND user_id = ?2),
       CAST(unixepoch('subsec') * 1000000 AS INTEGER)";
#[cfg(feature = "postgres")]
const POSTGRES_PEEK: &str = "\
SELECT (SELECT tat_us FROM rate_limit_buckets WHERE connector = $1 AND user_id = $2),
       (extract(epoch FROM clock_timestamp()) * 1000000)::BIGINT";

/// Deletes the rows whose bucket is full again, on the database's clock. A
/// row that a concurrent check moves forward no longer matches when the
/// delete reaches it (PostgreSQL re-checks the condition on the locked row),
/// and a row deleted first is recreated as new — the same decision.
#[cfg(feature = "sqlite")]
const SQLITE_CLEANUP: &str = "DELETE FROM rate_limit_buckets \
     WHERE tat_us <= CAST(unixepoch('subsec') * 1000000 AS INTEGER)";
#[cfg(feature = "postgres")]
const POSTGRES_CLEANUP: &str = "DELETE FROM rate_limit_buckets \
     WHERE tat_us <= (extract(epoch FROM clock_timestamp()) * 1000000)::BIGINT";

/// GCRA state in the database, so several processes share one limit.
///
/// Rows whose bucket is full again are deleted, at most once per longest
/// quota period per limiter (one statement, after a check), so the table
/// follows the keys active within a period. A failed clean-up is logged and
/// retried a period later; it never decides a call.
#[derive(Debug, Clone)]
pub struct DatabaseLimiter {
    database: Database,
    cleanup: Arc<Mutex<Cleanup>>,
}

/// When the idle rows were last deleted, and the longest period seen.
#[derive(Debug)]
struct Cleanup {
    last: Instant,
    longest_period: Duration,
}

impl DatabaseLimiter {
    /// A limiter keeping its state in `database`.
    pub fn new(database: Database) -> Self {
        DatabaseLimiter {
            database,
            cleanup: Arc::new(Mutex::new(Cleanup {
                last: Instant::now(),
                longest_period: Duration::ZERO,
            })),
        }
    }

    /// Deletes every row whose bucket is full again; returns how many.
    pub async fn delete_idle(&self) -> Result<u64, StorageError> {
        let statement = match self.database.writer() {
            #[cfg(feature = "sqlite")]
            Pool::Sqlite(_) => SQLITE_CLEANUP,
            #[cfg(feature = "postgres")]
            Pool::Postgres(_) => POSTGRES_CLEANUP,
        };
        let deleted = on_pool!(self.database.writer(), pool =>
            sqlx::query(statement).execute(pool).await.map(|done| done.rows_affected()))
        .map_err(StorageError::query("deleting idle rate-limit rows"))?;
        Ok(deleted)
    }

    /// Whether a clean-up is due (a longest period since the last), claiming
    /// it if so.
    fn cleanup_due(&self, period: Duration) -> bool {
        let mut cleanup = self
            .cleanup
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        cleanup.longest_period = cleanup.longest_period.max(period);
        if cleanup.last.elapsed() < cleanup.longest_period {
            return false;
        }
        cleanup.last = Instant::now();
        true
    }

    /// Decides one call of `user` on `connector`: `None` when allowed, or how
    /// long to wait. One statement, atomic on both backends. Both names are
    /// stored [folded](fold_identifier), as the in-memory backend compares
    /// them.
    pub async fn check(
        &self,
        connector: &str,
        user: &str,
        quota: &Quota,
    ) -> Result<Option<Duration>, StorageError> {
        let (connector, user) = (fold_identifier(connector), fold_identifier(user));
        let interval = micros(quota.emission_interval());
        let tolerance = micros(quota.period).saturating_sub(interval);
        let what = || format!("checking the rate limit of connector `{connector}` for `{user}`");
        let statement = match self.database.writer() {
            #[cfg(feature = "sqlite")]
            Pool::Sqlite(_) => SQLITE_CHECK,
            #[cfg(feature = "postgres")]
            Pool::Postgres(_) => POSTGRES_CHECK,
        };
        let (allowed, tat, now): (bool, i64, i64) = on_pool!(self.database.writer(), pool =>
            sqlx::query_as(statement)
                .bind(connector.as_ref())
                .bind(user.as_ref())
                .bind(interval)
                .bind(tolerance)
                .fetch_one(pool)
                .await)
        .map_err(StorageError::query(what()))?;
        if self.cleanup_due(quota.period)
            && let Err(error) = self.delete_idle().await
        {
            tracing::warn!(%error, "rate limit: idle rows not deleted; retrying a period later");
        }
        Ok((!allowed).then(|| {
            let wait = tat.saturating_sub(tolerance).saturating_sub(now);
            Duration::from_micros(u64::try_from(wait).unwrap_or(0))
        }))
    }
}

impl DatabaseLimiter {
    /// What [`check`](Self::check) would decide, without counting the call:
    /// one read, nothing written (for dry runs).
    pub async fn peek(
        &self,
        connector: &str,
        user: &str,
        quota: &Quota,
    ) -> Result<Option<Duration>, StorageError> {
        let (connector, user) = (fold_identifier(connector), fold_identifier(user));
        let tolerance = micros(quota.period).saturating_sub(micros(quota.emission_interval()));
        let what = || format!("reading the rate limit of connector `{connector}` for `{user}`");
        let statement = match self.database.writer() {
            #[cfg(feature = "sqlite")]
            Pool::Sqlite(_) => SQLITE_PEEK,
            #[cfg(feature = "postgres")]
            Pool::Postgres(_) => POSTGRES_PEEK,
        };
        let (tat, now): (Option<i64>, i64) = on_pool!(self.database.reader(), pool =>
            sqlx::query_as(statement)
                .bind(connector.as_ref())
                .bind(user.as_ref())
                .fetch_one(pool)
                .await)
        .map_err(StorageError::query(what()))?;
        // The check's rule: allowed when max(tat, now) - tolerance <= now.
        let allow_at = tat.unwrap_or(now).max(now).saturating_sub(tolerance);
        Ok((allow_at > now).then(|| {
            Duration::from_micros(u64::try_from(allow_at.saturating_sub(now)).unwrap_or(0))
        }))
    }
}

fn micros(duration: Duration) -> i64 {
    i64::try_from(duration.as_micros()).unwrap_or(i64::MAX)
}
