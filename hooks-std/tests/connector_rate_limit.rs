//! ConnectorRateLimit (in-memory backend): isolation, recovery, blocked
//! calls free, dry runs free (both backends); every spelling of a connector or user counts against one
//! quota, no call escapes counting, and idle keys are forgotten.

mod support;

use std::fmt::Write as _;
use std::time::Duration;

use hooks_runtime::{
    HookContext, HookRegistry, Observation,
    trace::{ExplainStep, ExplainVerdict},
};
use hooks_std::connector_rate_limit::{Admission, Quota};
use hooks_std::{
    ConnectorRateLimit, ConnectorRateLimitConfig, Database, DatabaseLimiter, MemoryLimiter,
};
use serde_json::{Value, json};

fn registry(config: serde_json::Value) -> HookRegistry {
    HookRegistry::builder()
        .pre(ConnectorRateLimit::from_config(&config, None).expect("config"))
        .build()
        .expect("registry")
}

async fn call(registry: &HookRegistry, tool: &str, user: &str) -> Observation {
    let ctx = HookContext::tool_call(tool, json!({})).with_user(user);
    registry
        .run_tool_call(ctx, async |_: &Value| Ok::<_, String>(json!("ok")))
        .await
        .observation
}

#[tokio::test(start_paused = true)]
async fn quota_is_per_user_and_recovers_over_time() {
    let registry = registry(json!({"default": {"calls": 3, "period": "3s"}}));
    for _ in 0..3 {
        assert!(!call(&registry, "crm__lookup", "alice").await.is_blocked());
    }
    let Observation::Blocked { reason, .. } = call(&registry, "crm__lookup", "alice").await else {
        panic!("the fourth call must be limited");
    };
    assert!(reason.contains("retry in 1.0s"), "{reason}");
    assert!(
        !call(&registry, "crm__lookup", "bob").await.is_blocked(),
        "bob has his own quota"
    );
    assert!(
        !call(&registry, "oa__pay", "alice").await.is_blocked(),
        "each connector has its own quota"
    );

    tokio::time::advance(Duration::from_secs(1)).await;
    assert!(
        !call(&registry, "crm__lookup", "alice").await.is_blocked(),
        "one call recovered after 1 s"
    );
    assert!(call(&registry, "crm__lookup", "alice").await.is_blocked());
}

#[tokio::test(start_paused = true)]
async fn blocked_calls_consume_no_quota() {
    let registry = registry(json!({"default": {"calls": 2, "period": "2s"}}));
    assert!(!call(&registry, "crm__a", "alice").await.is_blocked());
    assert!(!call(&registry, "crm__a", "alice").await.is_blocked());
    for _ in 0..50 {
        assert!(call(&registry, "crm__a", "alice").await.is_blocked());
    }
    tokio::time::advance(Duration::from_secs(1)).await;
    assert!(
        !call(&registry, "crm__a", "alice").await.is_blocked(),
        "hammering while blocked did not push recovery back"
    );
}

/// A dry run (`explain`) reports what the limit would decide and spends
/// nothing: on both backends, however many explains come first, the user's
/// real calls get the whole quota, and an explain after it is spent says so.
async fn a_dry_run_checks_the_quota_without_spending_it(registry: &HookRegistry) {
    let ctx = || HookContext::tool_call("crm__lookup", json!({})).with_user("alice");
    for _ in 0..5 {
        let explanation = registry.explain(ctx(), false).await;
        assert_eq!(explanation.blocked_by, None, "{explanation:?}");
    }
    for n in 0..2 {
        assert!(
            !call(registry, "crm__lookup", "alice").await.is_blocked(),
            "real call {n}: the dry runs spent alice's quota"
        );
    }
    let explanation = registry.explain(ctx(), false).await;
    let Some(ExplainStep {
        verdict: ExplainVerdict::Block { reason },
        ..
    }) = explanation.steps.first()
    else {
        panic!("a spent quota shows in the dry run: {explanation:?}");
    };
    assert!(reason.contains("retry in"), "{reason}");
    assert!(call(registry, "crm__lookup", "alice").await.is_blocked());
}

#[tokio::test(start_paused = true)]
async fn a_dry_run_spends_no_quota_in_memory() {
    let registry = registry(json!({"default": {"calls": 2, "period": "1h"}}));
    a_dry_run_checks_the_quota_without_spending_it(&registry).await;
}

#[tokio::test]
async fn a_dry_run_spends_no_quota_in_the_database() {
    let database = Database::in_memory().await.expect("database");
    let config = json!({"backend": "database", "default": {"calls": 2, "period": "1h"}});
    let hook = ConnectorRateLimit::from_config(&config, Some(database)).expect("hook");
    let registry = HookRegistry::builder().pre(hook).build().expect("registry");
    a_dry_run_checks_the_quota_without_spending_it(&registry).await;
}

#[test]
fn peeking_at_the_memory_limiter_changes_nothing() {
    let limiter = MemoryLimiter::new();
    let quota = Quota {
        calls: 1,
        period: Duration::from_secs(60),
    };
    let now = Duration::from_secs(1);
    for _ in 0..3 {
        assert!(matches!(
            limiter.peek("oa", "alice", &quota, now),
            Admission::Allow { .. }
        ));
    }
    assert!(limiter.is_empty(), "a peek stored a key");
    assert!(matches!(
        limiter.check("oa", "alice", &quota, now),
        Admission::Allow { .. }
    ));
    assert!(matches!(
        limiter.peek("oa", "alice", &quota, now),
        Admission::Deny { .. }
    ));
}

#[tokio::test(start_paused = true)]
async fn connectors_can_have_their_own_quota_and_tools_without_one_count_on_their_name() {
    let registry = registry(json!({"connectors": {"oa": {"calls": 1, "period": "60s"}}}));
    assert!(!call(&registry, "oa__pay", "alice").await.is_blocked());
    assert!(call(&registry, "oa__pay", "alice").await.is_blocked());
    for _ in 0..10 {
        assert!(
            !call(&registry, "crm__lookup", "alice").await.is_blocked(),
            "default is 10 per 60 s"
        );
    }
    assert!(call(&registry, "crm__lookup", "alice").await.is_blocked());
    for _ in 0..10 {
        assert!(!call(&registry, "sql_query", "alice").await.is_blocked());
    }
    assert!(
        call(&registry, "sql_query", "alice").await.is_blocked(),
        "a tool without a connector is limited as its own connector"
    );
    assert!(
        !call(&registry, "sql_exec", "alice").await.is_blocked(),
        "another tool without a connector has its own bucket"
    );
}

// ------------------------------------------------ spellings (issue 11, item 6)

async fn call_ctx(registry: &HookRegistry, ctx: HookContext) -> Observation {
    registry
        .run_tool_call(ctx, async |_: &Value| Ok::<_, String>(json!("ok")))
        .await
        .observation
}

#[tokio::test(start_paused = true)]
async fn every_spelling_of_a_connector_counts_against_one_quota() {
    for spelling in [
        "OA__pay",
        "Oa__pay",
        "ｏａ__pay",
        "ＯＡ＿＿pay",
        "__oa__pay",
        "oa___pay",
        "o\u{200B}a__pay",
        "\u{FEFF}oa__pay",
        "oa",
        "OA",
    ] {
        let registry = registry(json!({"connectors": {"oa": {"calls": 1, "period": "60s"}}}));
        assert!(!call(&registry, "oa__pay", "alice").await.is_blocked());
        let Observation::Blocked { reason, .. } = call(&registry, spelling, "alice").await else {
            panic!("{spelling:?} got a fresh quota instead of oa's");
        };
        // Invisible characters may be refused before any hook runs; any
        // other spelling is limited as `oa`.
        assert!(
            reason.contains("connector `oa`") || reason.contains("invisible"),
            "{reason}"
        );
    }
}

#[tokio::test(start_paused = true)]
async fn every_spelling_of_a_user_counts_against_one_quota() {
    for spelling in ["Alice", "ALICE", "ａｌｉｃｅ", " alice ", "al\u{200D}ice"] {
        let registry = registry(json!({"default": {"calls": 1, "period": "60s"}}));
        assert!(!call(&registry, "crm__lookup", "alice").await.is_blocked());
        assert!(
            call(&registry, "crm__lookup", spelling).await.is_blocked(),
            "{spelling:?} got a fresh quota instead of alice's"
        );
    }
}

#[tokio::test(start_paused = true)]
async fn an_empty_or_missing_connector_is_limited_too() {
    for (what, ctx) in [
        (
            "metadata.connector empty",
            HookContext::tool_call("oa__pay", json!({})).with_metadata("connector", ""),
        ),
        (
            "metadata.connector invisible",
            HookContext::tool_call("oa__pay", json!({})).with_metadata("connector", "\u{200B}"),
        ),
        ("empty tool name", HookContext::tool_call("", json!({}))),
        (
            "tool name of underscores",
            HookContext::tool_call("____", json!({})),
        ),
        ("tool `oa`", HookContext::tool_call("oa", json!({}))),
    ] {
        let registry = registry(json!({"default": {"calls": 2, "period": "60s"}}));
        let ctx = ctx.with_user("mallory");
        let mut blocked = 0;
        for _ in 0..5 {
            if call_ctx(&registry, ctx.clone()).await.is_blocked() {
                blocked += 1;
            }
        }
        assert!(
            blocked >= 3,
            "{what}: {blocked} of 5 calls blocked, want at least 3"
        );
    }
}

#[tokio::test(start_paused = true)]
async fn metadata_connector_is_folded_like_tool_names() {
    let registry = registry(json!({"connectors": {"OA": {"calls": 1, "period": "60s"}}}));
    assert!(!call(&registry, "oa__pay", "alice").await.is_blocked());
    let ctx = HookContext::tool_call("payments", json!({}))
        .with_metadata("connector", "ｏａ")
        .with_user("alice");
    assert!(
        call_ctx(&registry, ctx).await.is_blocked(),
        "the quota of `OA` in config applies to `oa__pay` and to metadata `ｏａ`"
    );
}

#[tokio::test]
async fn the_database_backend_folds_names_the_same_way() {
    let database = Database::in_memory().await.expect("database");
    let config = json!({"backend": "database", "default": {"calls": 1, "period": "1h"}});
    let hook = ConnectorRateLimit::from_config(&config, Some(database)).expect("hook");
    let registry = HookRegistry::builder().pre(hook).build().expect("registry");
    assert!(!call(&registry, "oa__pay", "alice").await.is_blocked());
    for spelling in ["OA__pay", "ｏａ__pay", "__oa__pay", "oa"] {
        assert!(
            call(&registry, spelling, "ALICE").await.is_blocked(),
            "{spelling:?} escaped the shared quota"
        );
    }
    let ctx = HookContext::tool_call("oa__pay", json!({}))
        .with_metadata("connector", "")
        .with_user("alice");
    assert!(call_ctx(&registry, ctx).await.is_blocked());
}

// ------------------------------------------------------- memory is bounded

#[test]
fn a_million_idle_keys_are_forgotten() {
    let limiter = MemoryLimiter::new();
    let quota = Quota {
        calls: 10,
        period: Duration::from_secs(60),
    };
    let start = Duration::from_secs(1);
    let mut user = String::new();
    for n in 0..1_000_000u32 {
        user.clear();
        write!(user, "user-{n}").unwrap();
        // All within one second: every key is active when the next arrives.
        let now = start + Duration::from_micros(u64::from(n));
        assert!(matches!(
            limiter.check("oa", &user, &quota, now),
            Admission::Allow { .. }
        ));
    }
    assert_eq!(limiter.len(), 1_000_000, "active keys are all kept");
    // A whole period of silence later, every bucket is full again; the next
    // calls (a few, enough to touch every shard) drop the forgotten keys.
    let later = start + Duration::from_secs(62);
    for n in 0..200u32 {
        limiter.check("crm", &format!("late-{n}"), &quota, later);
    }
    assert!(
        limiter.len() <= 200,
        "{} keys held after the idle period; only the 200 new ones are active",
        limiter.len()
    );
}

#[test]
fn keys_are_bounded_by_the_active_ones_while_traffic_flows() {
    let limiter = MemoryLimiter::new();
    // One call per second allowed; each key is full again 1 s after its call.
    let quota = Quota {
        calls: 1,
        period: Duration::from_secs(1),
    };
    let mut most = 0;
    for n in 0..200_000u64 {
        // 1,000 new keys per second: about 1,000 are active at any time.
        let now = Duration::from_millis(n);
        limiter.check("oa", &format!("u{n}"), &quota, now);
        if n % 1000 == 0 {
            most = most.max(limiter.len());
        }
    }
    // A shard is swept once it doubled (at least 1,024 keys) or a period
    // passed: far below the 200,000 keys seen.
    assert!(most <= 20_000, "{most} keys held at once");
}
#[test]
fn config_is_checked() {
    assert!(ConnectorRateLimit::from_config(&json!({"defualt": {}}), None).is_err());
    let needs_db = ConnectorRateLimit::from_config(&json!({"backend": "database"}), None);
    assert!(needs_db.is_err_and(|e| e.to_string().contains("needs a database")));
    assert!(
        ConnectorRateLimit::from_config(&json!({"default": {"calls": 0, "period": "1s"}}), None)
            .is_err()
    );
    assert!(
        ConnectorRateLimit::from_config(&json!({"default": {"calls": 5, "period": "soon"}}), None)
            .is_err()
    );
    assert!(ConnectorRateLimit::new(ConnectorRateLimitConfig::default()).is_ok());
    let twice = ConnectorRateLimit::from_config(
        &json!({"connectors": {"OA": {"calls": 1, "period": "1s"}, "ｏａ": {"calls": 9, "period": "1s"}}}),
        None,
    );
    assert!(
        twice.is_err_and(|e| e.to_string().contains("two quotas for connector `oa`")),
        "two spellings of one connector cannot get two quotas"
    );
}

#[tokio::test(start_paused = true)]
async fn per_user_per_minute_is_a_shorthand_for_the_default_quota() {
    let registry = registry(json!({"per_user_per_minute": 2}));
    assert!(!call(&registry, "crm__a", "alice").await.is_blocked());
    assert!(!call(&registry, "crm__a", "alice").await.is_blocked());
    let Observation::Blocked { reason, .. } = call(&registry, "crm__a", "alice").await else {
        panic!("two per minute");
    };
    assert!(reason.contains("2 calls per 60s"), "{reason}");
    for bad in [
        json!({"per_user_per_minute": 0}),
        json!({"per_user_per_minute": "5"}),
        json!({"per_user_per_minute": 5, "default": {"calls": 1, "period": "1s"}}),
    ] {
        assert!(
            ConnectorRateLimit::from_config(&bad, None).is_err(),
            "{bad}"
        );
    }
    let both = json!({"per_user_per_minute": 5, "default": {"calls": 1, "period": "1s"}});
    let Err(error) = ConnectorRateLimit::from_config(&both, None) else {
        panic!("both forms at once");
    };
    assert!(
        error
            .to_string()
            .contains("give either `per_user_per_minute` or `default`, not both"),
        "{error}"
    );
}

/// Rows of `rate_limit_buckets` for `connector`.
async fn bucket_rows(database: &Database, connector: &str) -> i64 {
    let counted = match (database.sqlite(), database.postgres()) {
        (Some(pool), _) => {
            sqlx::query_scalar("SELECT count(*) FROM rate_limit_buckets WHERE connector = ?1")
                .bind(connector)
                .fetch_one(pool)
                .await
        }
        (None, Some(pool)) => {
            sqlx::query_scalar("SELECT count(*) FROM rate_limit_buckets WHERE connector = $1")
                .bind(connector)
                .fetch_one(pool)
                .await
        }
        (None, None) => unreachable!("a database is SQLite or PostgreSQL"),
    };
    counted.expect("count")
}

async fn rows_whose_bucket_is_full_again_are_deleted(database: Database) {
    // Connector names are stored folded, so the unique ids are lower case.
    let busy = support::unique("busy").to_lowercase();
    let idle = support::unique("idle").to_lowercase();
    let limiter = DatabaseLimiter::new(database.clone());
    let long = Quota {
        calls: 10,
        period: Duration::from_secs(3600),
    };
    for n in 0..50 {
        assert_eq!(
            limiter.check(&busy, &format!("u{n}"), &long).await.unwrap(),
            None
        );
    }
    limiter.delete_idle().await.unwrap();
    assert_eq!(
        bucket_rows(&database, &busy).await,
        50,
        "every bucket is in use"
    );

    // A second limiter with a short period: its keys go idle, and its next
    // check after a period deletes them without being asked.
    let short_limiter = DatabaseLimiter::new(database.clone());
    let short = Quota {
        calls: 10,
        period: Duration::from_secs(1),
    };
    for n in 0..50 {
        short_limiter
            .check(&idle, &format!("u{n}"), &short)
            .await
            .unwrap();
    }
    assert_eq!(bucket_rows(&database, &idle).await, 50);
    tokio::time::sleep(Duration::from_millis(1_200)).await;
    short_limiter.check(&idle, "late", &short).await.unwrap();
    // The late key's own bucket is full again 100 ms after its call, so a
    // slow delete may take it too; the 50 idle ones must be gone.
    assert!(
        bucket_rows(&database, &idle).await <= 1,
        "the idle keys are deleted"
    );
    assert_eq!(
        bucket_rows(&database, &busy).await,
        50,
        "busy keys are kept"
    );
}

#[tokio::test]
async fn the_database_backend_deletes_rows_whose_bucket_is_full_again_sqlite() {
    let database = Database::in_memory().await.expect("database");
    rows_whose_bucket_is_full_again_are_deleted(database).await;
}

#[tokio::test]
async fn the_database_backend_deletes_rows_whose_bucket_is_full_again_postgres() {
    let Some(database) = support::postgres("idle rate-limit rows").await else {
        return;
    };
    rows_whose_bucket_is_full_again_are_deleted(database).await;
}
