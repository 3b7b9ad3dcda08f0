//! ConnectorRateLimit with the `database` backend: replicas (separate
//! pools, separate runtimes) share one limit; a blocked call consumes nothing;
//! a database failure blocks. SQLite file always, PostgreSQL when configured.

mod support;

use std::time::Duration;

use hooks_runtime::{HookContext, HookRegistry, Observation};
use hooks_std::{ConnectorRateLimit, Database};
use serde_json::{Value, json};

/// One "replica": its own pool and its own hook instance.
async fn replica(url: &str, quota: Value) -> (HookRegistry, Database) {
    let database = Database::connect(url).await.expect("database");
    let config = json!({"backend": "database", "default": quota});
    let hook = ConnectorRateLimit::from_config(&config, Some(database.clone())).expect("hook");
    let registry = HookRegistry::builder().pre(hook).build().expect("registry");
    (registry, database)
}

async fn call(registry: &HookRegistry, connector: &str, user: &str) -> Observation {
    let ctx = HookContext::tool_call(format!("{connector}__lookup"), json!({})).with_user(user);
    registry
        .run_tool_call(ctx, async |_: &Value| Ok::<_, String>(json!("ok")))
        .await
        .observation
}

async fn replicas_share_one_limit(url: &str) {
    let connector = support::unique("crm").replace('-', "_");
    let (a, _) = replica(url, json!({"calls": 4, "period": "1h"})).await;
    let (b, _) = replica(url, json!({"calls": 4, "period": "1h"})).await;
    for registry in [&a, &b, &a, &b] {
        assert!(!call(registry, &connector, "alice").await.is_blocked());
    }
    for registry in [&a, &b] {
        let Observation::Blocked { reason, .. } = call(registry, &connector, "alice").await else {
            panic!("the fifth call, on either replica, is over the shared quota");
        };
        assert!(reason.contains("retry in"), "{reason}");
    }
    assert!(
        !call(&b, &connector, "bob").await.is_blocked(),
        "bob has his own quota"
    );
}

async fn blocked_calls_are_free_and_quota_recovers(url: &str) {
    let connector = support::unique("oa").replace('-', "_");
    // 2 calls per 4 s: one call's worth returns every 2 s, so a loaded
    // machine has 1.6 s of slack between the sleep and the last check.
    let (registry, _) = replica(url, json!({"calls": 2, "period": "4s"})).await;
    assert!(!call(&registry, &connector, "alice").await.is_blocked());
    assert!(!call(&registry, &connector, "alice").await.is_blocked());
    for _ in 0..20 {
        assert!(call(&registry, &connector, "alice").await.is_blocked());
    }
    // One call's worth of quota comes back after 2 s; hammering while blocked
    // did not push that back. (Generous margin: this uses the database's clock.)
    tokio::time::sleep(Duration::from_millis(2400)).await;
    assert!(
        !call(&registry, &connector, "alice").await.is_blocked(),
        "blocked calls consumed quota"
    );
    assert!(call(&registry, &connector, "alice").await.is_blocked());
}

#[tokio::test]
async fn replicas_share_one_limit_sqlite() {
    let (_db, url, _dir) = support::sqlite_file().await;
    replicas_share_one_limit(&url).await;
    blocked_calls_are_free_and_quota_recovers(&url).await;
}

#[tokio::test]
async fn replicas_share_one_limit_postgres() {
    let Some(url) = support::postgres_url("replicas_share_one_limit") else {
        return;
    };
    replicas_share_one_limit(&url).await;
    blocked_calls_are_free_and_quota_recovers(&url).await;
}

/// Two tokio runtimes on two threads, each with its own pool, hammer one
/// PostgreSQL-backed limit concurrently: exactly the quota gets through.
#[test]
fn two_runtimes_on_one_postgres_admit_exactly_the_quota() {
    let Some(url) = support::postgres_url("two_runtimes_on_one_postgres") else {
        return;
    };
    let connector = support::unique("pay").replace('-', "_");
    let replicas: Vec<_> = (0..2)
        .map(|_| {
            let (url, connector) = (url.clone(), connector.clone());
            std::thread::spawn(move || {
                let runtime = tokio::runtime::Builder::new_multi_thread()
                    .worker_threads(2)
                    .enable_all()
                    .build()
                    .expect("runtime");
                runtime.block_on(async move {
                    let (registry, _) = replica(&url, json!({"calls": 25, "period": "1h"})).await;
                    let calls: Vec<_> = (0..40)
                        .map(|_| {
                            let (registry, connector) = (registry.clone(), connector.clone());
                            tokio::spawn(async move {
                                !call(&registry, &connector, "alice").await.is_blocked()
                            })
                        })
                        .collect();
                    let mut admitted = 0;
                    for call in calls {
                        admitted += usize::from(call.await.expect("task"));
                    }
                    admitted
                })
            })
        })
        .collect();
    let admitted: usize = replicas
        .into_iter()
        .map(|replica| replica.join().expect("replica thread"))
        .sum();
    assert_eq!(
        admitted, 25,
        "80 concurrent calls on two replicas, quota 25"
    );
}

#[tokio::test]
async fn a_database_failure_blocks_the_call() {
    let (_db, url, _dir) = support::sqlite_file().await;
    let (registry, database) = replica(&url, json!({"calls": 5, "period": "1m"})).await;
    database.close().await;
    let Observation::Blocked { hook, reason } = call(&registry, "crm", "alice").await else {
        panic!("a limiter that cannot decide must block");
    };
    assert_eq!(hook, "connector_rate_limit");
    assert!(reason.contains("rate limit of connector"), "{reason}");
}
