//! ConnectorRateLimitHook (in-memory backend): isolation, recovery, blocked calls free.

use std::time::Duration;

use hooks_runtime::{HookContext, HookRegistry, Observation};
use hooks_std::{ConnectorRateLimitHook, RateLimitConfig};
use serde_json::{Value, json};

fn registry(config: serde_json::Value) -> HookRegistry {
    HookRegistry::builder()
        .pre(ConnectorRateLimitHook::from_config(&config, None).expect("config"))
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

#[tokio::test(start_paused = true)]
async fn connectors_can_have_their_own_quota_and_tools_without_one_are_untouched() {
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
    for _ in 0..20 {
        assert!(
            !call(&registry, "sql_query", "alice").await.is_blocked(),
            "no connector, no limit"
        );
    }
}

#[test]
fn config_is_checked() {
    assert!(ConnectorRateLimitHook::from_config(&json!({"defualt": {}}), None).is_err());
    let needs_db = ConnectorRateLimitHook::from_config(&json!({"backend": "database"}), None);
    assert!(needs_db.is_err_and(|e| e.to_string().contains("needs a database")));
    assert!(
        ConnectorRateLimitHook::from_config(
            &json!({"default": {"calls": 0, "period": "1s"}}),
            None
        )
        .is_err()
    );
    assert!(
        ConnectorRateLimitHook::from_config(
            &json!({"default": {"calls": 5, "period": "soon"}}),
            None
        )
        .is_err()
    );
    assert!(ConnectorRateLimitHook::new(RateLimitConfig::default()).is_ok());
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
            ConnectorRateLimitHook::from_config(&bad, None).is_err(),
            "{bad}"
        );
    }
}
