//! Org modes from the `org_settings` table: toggled at run time in this
//! process (at once) and by another replica (within the cache TTL); a failed
//! lookup blocks writes. SQLite file always, PostgreSQL when configured.

mod support;

use std::sync::Arc;
use std::time::Duration;

use hooks_runtime::{HookContext, HookRegistry, Observation};
use hooks_std::{Database, DatabaseOrgModes, ReadOnlyGuard};
use serde_json::{Value, json};

fn guard(modes: Arc<DatabaseOrgModes>) -> HookRegistry {
    HookRegistry::builder()
        .pre(ReadOnlyGuard::new(modes))
        .build()
        .expect("registry")
}

async fn run(registry: &HookRegistry, org: &str, sql: &str) -> Observation {
    let ctx = HookContext::tool_call("sql_exec", json!({"sql": sql})).with_org(org);
    registry
        .run_tool_call(ctx, async |_: &Value| Ok::<_, String>(json!("ran")))
        .await
        .observation
}

async fn toggled_at_run_time(url: &str) {
    let org = support::unique("org");
    let here = Arc::new(DatabaseOrgModes::with_ttl(
        Database::connect(url).await.expect("db"),
        Duration::from_millis(200),
    ));
    let elsewhere = DatabaseOrgModes::new(Database::connect(url).await.expect("db"));
    let registry = guard(here.clone());

    assert!(
        !run(&registry, &org, "DELETE FROM t").await.is_blocked(),
        "no row: writable"
    );
    here.set_read_only(&org, true).await.expect("set");
    let Observation::Blocked { reason, .. } = run(&registry, &org, "DELETE FROM t").await else {
        panic!("a flag set in this process applies at once");
    };
    assert!(
        reason.starts_with("Org is in read-only mode — write blocked."),
        "{reason}"
    );
    assert!(
        !run(&registry, &org, "SELECT 1").await.is_blocked(),
        "reads pass"
    );

    elsewhere.set_read_only(&org, false).await.expect("set");
    tokio::time::sleep(Duration::from_millis(400)).await;
    assert!(
        !run(&registry, &org, "DELETE FROM t").await.is_blocked(),
        "another replica's change applies once the cache entry expires"
    );
}

#[tokio::test]
async fn org_toggled_at_run_time_sqlite() {
    let (_db, url, _dir) = support::sqlite_file().await;
    toggled_at_run_time(&url).await;
}

#[tokio::test]
async fn org_toggled_at_run_time_postgres() {
    let Some(url) = support::postgres_url("org_toggled_at_run_time") else {
        return;
    };
    toggled_at_run_time(&url).await;
}

#[tokio::test]
async fn an_unreachable_database_blocks_writes() {
    let database = Database::in_memory().await.expect("db");
    let registry = guard(Arc::new(DatabaseOrgModes::new(database.clone())));
    database.close().await;
    let Observation::Blocked { reason, .. } = run(&registry, "acme", "UPDATE t SET a = 1").await
    else {
        panic!("an unknown mode must not let a write through");
    };
    assert!(reason.contains("acme"), "{reason}");
}
