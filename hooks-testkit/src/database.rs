//! Databases for storage-backed tests: a SQLite file always, PostgreSQL when
//! `HOOKS_TEST_POSTGRES_URL` is set (a test without it prints `SKIPPED`),
//! and the SQL that puts a database into the state a test needs.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use hooks_std::Database;

/// A SQLite file database in a fresh temporary directory (WAL mode), and the
/// directory guard that deletes it.
pub async fn sqlite_file() -> (Database, String, tempfile::TempDir) {
    let dir = tempfile::tempdir().expect("temporary directory");
    let url = format!("sqlite://{}", dir.path().join("hooks.db").display());
    let db = Database::connect(&url).await.expect("sqlite file database");
    (db, url, dir)
}

/// The PostgreSQL URL for tests, or `None` (and a note on stderr) to skip.
pub fn postgres_url(test: &str) -> Option<String> {
    match std::env::var("HOOKS_TEST_POSTGRES_URL") {
        Ok(url) if !url.is_empty() => Some(url),
        _ => {
            eprintln!("SKIPPED (PostgreSQL part of {test}): HOOKS_TEST_POSTGRES_URL is not set");
            None
        }
    }
}

/// A connected, migrated PostgreSQL database, or `None` when not configured.
pub async fn postgres(test: &str) -> Option<Database> {
    let url = postgres_url(test)?;
    Some(
        Database::connect(&url)
            .await
            .expect("HOOKS_TEST_POSTGRES_URL is set but the database is unreachable"),
    )
}

/// An id no other test run has used, for rows in a shared PostgreSQL database.
pub fn unique(prefix: &str) -> String {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    format!(
        "{prefix}-{}-{nanos}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}

/// Moves the card claim of request `id` in the SQLite database at `url`
/// back past the gate's 60 s lease, as if that long had passed since the
/// process that claimed it died.
pub async fn age_card_claim(url: &str, id: &str) {
    let database = Database::connect(url).await.expect("database");
    let pool = database
        .sqlite()
        .expect("age_card_claim is for SQLite files");
    sqlx::query(
        "UPDATE confirmation_requests SET card_claimed_at_ms = card_claimed_at_ms - 61000 \
         WHERE id = ?1",
    )
    .bind(id)
    .execute(pool)
    .await
    .expect("age the card claim");
    database.close().await;
}

/// Makes the SQLite database refuse every audit row of tool `tool` (a
/// trigger aborts the insert with "poisoned row"), as a disk error or a
/// constraint would refuse one row of a shared batch.
pub async fn refuse_audit_rows_of(database: &Database, tool: &str) {
    let pool = database
        .sqlite()
        .expect("refuse_audit_rows_of is for SQLite");
    // The tool name is the test's own literal, never outside input.
    sqlx::raw_sql(&format!(
        "CREATE TRIGGER refuse_poison BEFORE INSERT ON connector_call_logs \
         WHEN NEW.tool_name = '{tool}' BEGIN SELECT RAISE(ABORT, 'poisoned row'); END"
    ))
    .execute(pool)
    .await
    .expect("trigger");
}
