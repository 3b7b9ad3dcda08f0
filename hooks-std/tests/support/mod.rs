//! Databases for the storage-backed tests: SQLite always, PostgreSQL when
//! `HOOKS_TEST_POSTGRES_URL` is set.

#![allow(dead_code)]

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use hooks_runtime::{
    HookRegistryBuilder,
    factory::{Built, BuiltItem},
};
use hooks_std::Database;
use hooks_std::gate::Approvals;

pub(crate) mod web;

/// Adds what a factory built (a hook or an observer) to `builder`.
pub(crate) fn add(builder: HookRegistryBuilder, built: Built) -> HookRegistryBuilder {
    match built.item {
        BuiltItem::Hook(hook) => builder.hook(hook),
        BuiltItem::Observer(observer) => builder.observer(observer),
    }
}

/// A SQLite file database in a fresh temporary directory (WAL mode), and the
/// directory guard that deletes it.
pub(crate) async fn sqlite_file() -> (Database, String, tempfile::TempDir) {
    let dir = tempfile::tempdir().expect("temporary directory");
    let url = format!("sqlite://{}", dir.path().join("hooks.db").display());
    let db = Database::connect(&url).await.expect("sqlite file database");
    (db, url, dir)
}

/// The PostgreSQL URL for tests, or `None` (and a note on stderr) to skip.
pub(crate) fn postgres_url(test: &str) -> Option<String> {
    match std::env::var("HOOKS_TEST_POSTGRES_URL") {
        Ok(url) if !url.is_empty() => Some(url),
        _ => {
            eprintln!("SKIPPED (PostgreSQL part of {test}): HOOKS_TEST_POSTGRES_URL is not set");
            None
        }
    }
}

/// A connected, migrated PostgreSQL database, or `None` when not configured.
pub(crate) async fn postgres(test: &str) -> Option<Database> {
    let url = postgres_url(test)?;
    Some(
        Database::connect(&url)
            .await
            .expect("HOOKS_TEST_POSTGRES_URL is set but the database is unreachable"),
    )
}

/// An id no other test run has used, for rows in a shared PostgreSQL database.
pub(crate) fn unique(prefix: &str) -> String {
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
pub(crate) async fn age_card_claim(url: &str, id: &str) {
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

/// The last card redrawn on `fake` shows an outcome: no buttons left.
pub(crate) fn assert_last_card_update_has_no_buttons(
    fake: &hooks_std::gate::channel::feishu::FakeFeishu,
) {
    let (_, card) = fake.card_updates().pop().expect("the card was redrawn");
    assert!(!card.to_string().contains("\"button\""), "{card}");
}

/// Serves `approvals`' callback router at `path` on a loopback port, as a
/// platform would reach it: the callback URL and the server's task.
pub(crate) async fn serve_callbacks(
    approvals: &Approvals,
    path: &str,
) -> (String, tokio::task::JoinHandle<()>) {
    serve_router(approvals.router(), path).await
}

/// Serves `router` (a channel's callback router) at `path` on a fresh
/// port; returns its URL and the server task.
#[allow(dead_code)] // Not every test file that includes `support` uses it.
pub(crate) async fn serve_router(
    router: axum::Router,
    path: &str,
) -> (String, tokio::task::JoinHandle<()>) {
    let app = axum::Router::new().nest(path, router);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let url = format!("http://{}{path}", listener.local_addr().expect("addr"));
    let server = tokio::spawn(async move {
        axum::serve(listener, app).await.expect("serve");
    });
    (url, server)
}

/// Makes the SQLite database refuse every audit row of tool `tool` (a
/// trigger aborts the insert with "poisoned row"), as a disk error or a
/// constraint would refuse one row of a shared batch.
pub(crate) async fn refuse_audit_rows_of(database: &Database, tool: &str) {
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
