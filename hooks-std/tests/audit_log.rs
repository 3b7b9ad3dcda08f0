//! AuditLogHook: exactly one durable row per attempted call on every path,
//! visible to a fresh connection as soon as the call returns, redacted args,
//! group commit under concurrency, and a failed write withholds the result.
//! Runs on a SQLite file always and on PostgreSQL when configured.

mod support;

use std::sync::Arc;
use std::time::Duration;

use hooks_runtime::{
    Hook, HookContext, HookError, HookFuture, HookRegistry, HookResult, Observation,
    PostToolUseHook, PreToolUseHook,
};
use hooks_std::{
    AuditEntry, AuditLogHook, ConnectorRateLimitHook, Database, ReadOnlyGuard, ResultTruncateHook,
    StaticOrgModes,
};
use serde_json::{Value, json};

/// What a scripted hook does when its tool is called.
#[derive(Clone, Copy)]
enum Act {
    Block,
    Fail,
    Panic,
    Hang,
}

/// A hook that acts only on calls of one tool.
struct Scripted {
    name: &'static str,
    tool: &'static str,
    act: Act,
}

impl Hook for Scripted {
    fn name(&self) -> &str {
        self.name
    }
    fn should_trigger(&self, ctx: &HookContext) -> bool {
        ctx.tool_name == self.tool
    }
    fn execute<'a>(&'a self, _: &'a HookContext) -> HookFuture<'a> {
        let act = self.act;
        Box::pin(async move {
            match act {
                Act::Block => Ok(HookResult::block("scripted block")),
                Act::Fail => Err(HookError::new("scripted failure")),
                Act::Panic => panic!("scripted panic"),
                Act::Hang => {
                    tokio::time::sleep(Duration::from_secs(3600)).await;
                    Ok(HookResult::allow())
                }
            }
        })
    }
    fn timeout(&self) -> Duration {
        Duration::from_millis(50)
    }
}
impl PreToolUseHook for Scripted {}
impl PostToolUseHook for Scripted {}

fn full_stack(database: &Database) -> HookRegistry {
    let scripted = |name, tool, act| Scripted { name, tool, act };
    HookRegistry::builder()
        .pre(scripted("pre_blocker", "t_pre_block", Act::Block))
        .pre(scripted("pre_failer", "t_pre_fail", Act::Fail))
        .pre(scripted("pre_panicker", "t_pre_panic", Act::Panic))
        .pre(scripted("pre_hanger", "t_pre_hang", Act::Hang))
        .post(scripted("post_failer", "t_post_fail", Act::Fail))
        .pre(ReadOnlyGuard::new(Arc::new(
            StaticOrgModes::with_read_only(["frozen"]),
        )))
        .pre(
            ConnectorRateLimitHook::from_config(
                &json!({"default": {"calls": 1, "period": "1h"}}),
                None,
            )
            .expect("rate limit"),
        )
        .post(ResultTruncateHook::from_config(&json!({"max_chars": 10})).expect("truncate"))
        .observer(Arc::new(AuditLogHook::new(database.clone())))
        .build()
        .expect("registry")
}

/// One path a call can take, with what its audit row must say:
/// (tool, org, tool outcome, outcome column, blocked_by column).
type Path = (
    &'static str,
    &'static str,
    Result<&'static str, &'static str>,
    &'static str,
    Option<&'static str>,
);

/// Every path a call can take.
const PATHS: [Path; 12] = [
    ("t_ok", "acme", Ok("fine"), "ok", None),
    (
        "t_tool_error",
        "acme",
        Err("connection reset"),
        "tool_error",
        None,
    ),
    (
        "t_pre_block",
        "acme",
        Ok("never"),
        "blocked",
        Some("pre_blocker"),
    ),
    (
        "t_pre_fail",
        "acme",
        Ok("never"),
        "blocked",
        Some("pre_failer"),
    ),
    (
        "t_pre_panic",
        "acme",
        Ok("never"),
        "blocked",
        Some("pre_panicker"),
    ),
    (
        "t_pre_hang",
        "acme",
        Ok("never"),
        "blocked",
        Some("pre_hanger"),
    ),
    (
        "t_post_fail",
        "acme",
        Ok("secret"),
        "blocked",
        Some("post_failer"),
    ),
    (
        "sql_exec",
        "frozen",
        Ok("never"),
        "blocked",
        Some("readonly_guard"),
    ),
    ("sql_exec", "acme", Ok("1 row"), "ok", None),
    ("crm__lookup", "acme", Ok("found"), "ok", None),
    (
        "crm__lookup",
        "acme",
        Ok("never"),
        "blocked",
        Some("connector_rate_limit"),
    ),
    ("t_long", "acme", Ok("0123456789abcdef"), "ok", None),
];

async fn every_path_leaves_one_row(database: Database, fresh: Database) {
    let registry = full_stack(&database);
    let conversation = support::unique("paths");
    for (i, (tool, org, outcome, expected, blocked_by)) in PATHS.into_iter().enumerate() {
        let ctx = HookContext::tool_call(tool, json!({"q": "DELETE FROM t", "n": i}))
            .with_conversation(&conversation)
            .with_tool_call_id(format!("call-{i}"))
            .with_user("alice")
            .with_org(org);
        let report = registry
            .run_tool_call(ctx, async |_: &Value| {
                outcome.map(|text| json!(text)).map_err(str::to_owned)
            })
            .await;
        assert_eq!(
            report.stopped_by(),
            blocked_by,
            "call {i} ({tool}): {}",
            report.observation
        );
        // Committed before the observation came back: a fresh connection sees it.
        let rows = fresh.audit_entries(&conversation).await.expect("read");
        assert_eq!(
            rows.len(),
            i + 1,
            "call {i} ({tool}) must add exactly one row"
        );
        let row: &AuditEntry = rows.last().expect("row");
        assert_eq!(row.tool_call_id, format!("call-{i}"));
        assert_eq!(row.tool_name, tool);
        assert_eq!(row.outcome, expected, "call {i} ({tool})");
        assert_eq!(row.blocked_by.as_deref(), blocked_by, "call {i} ({tool})");
        assert_eq!((row.user_id.as_str(), row.org_id.as_str()), ("alice", org));
        match expected {
            "tool_error" => assert_eq!(row.reason.as_deref(), Some("connection reset")),
            "blocked" => assert!(row.reason.is_some(), "a block keeps its reason"),
            _ => assert_eq!(row.reason, None),
        }
    }
    let rows = fresh.audit_entries(&conversation).await.expect("read");
    let crm = &rows[9];
    assert_eq!(
        (crm.connector.as_deref(), crm.action.as_deref()),
        (Some("crm"), Some("lookup"))
    );
    let truncated = &rows[11];
    assert_eq!(
        truncated.result_size,
        Some(16),
        "the raw size, before truncation"
    );
    assert!(
        truncated.observation_size < 16 + 60,
        "what the LLM saw: {truncated:?}"
    );
    let panicked = &rows[4];
    assert!(
        panicked
            .reason
            .as_deref()
            .unwrap_or_default()
            .contains("panic"),
        "{panicked:?}"
    );
}

#[tokio::test]
async fn every_path_leaves_exactly_one_committed_row_sqlite() {
    let (database, url, _dir) = support::sqlite_file().await;
    let fresh = Database::connect(&url).await.expect("second connection");
    every_path_leaves_one_row(database, fresh).await;
}

#[tokio::test]
async fn every_path_leaves_exactly_one_committed_row_postgres() {
    let Some(url) = support::postgres_url("every_path_leaves_exactly_one_committed_row") else {
        return;
    };
    let database = Database::connect(&url).await.expect("postgres");
    let fresh = Database::connect(&url).await.expect("second pool");
    every_path_leaves_one_row(database, fresh).await;
}

#[tokio::test]
async fn secrets_are_redacted_at_any_depth() {
    let database = Database::in_memory().await.expect("db");
    let registry = HookRegistry::builder()
        .observer(Arc::new(AuditLogHook::new(database.clone())))
        .build()
        .expect("registry");
    let args = json!({
        "query": "status",
        "Authorization": "Bearer abc",
        "client": {"profile": {"PassWord": "hunter2", "name": "ann"},
                   "keys": [{"api_key": "k-1"}, {"Api_Key": "k-2", "region": "eu"}]},
        "cookie": {"session": "nested object, redacted whole"},
    });
    let ctx = HookContext::tool_call("crm__lookup", args).with_conversation("redaction");
    registry
        .run_tool_call(ctx, async |_: &Value| Ok::<_, String>(json!("ok")))
        .await;
    let rows = database.audit_entries("redaction").await.expect("read");
    assert_eq!(
        rows[0].args,
        json!({
            "query": "status",
            "Authorization": "[redacted]",
            "client": {"profile": {"PassWord": "[redacted]", "name": "ann"},
                       "keys": [{"api_key": "[redacted]"}, {"Api_Key": "[redacted]", "region": "eu"}]},
            "cookie": "[redacted]",
        })
    );
}

async fn concurrent_calls_each_leave_one_row(database: Database) {
    let registry = HookRegistry::builder()
        .pre(Scripted {
            name: "every_third",
            tool: "t_blocked",
            act: Act::Block,
        })
        .observer(Arc::new(AuditLogHook::new(database.clone())))
        .build()
        .expect("registry");
    let conversation = support::unique("concurrent");
    let calls = (0..1000).map(|i| {
        let registry = registry.clone();
        let conversation = conversation.clone();
        tokio::spawn(async move {
            let tool = if i % 3 == 0 { "t_blocked" } else { "t_ok" };
            let ctx = HookContext::tool_call(tool, json!({"i": i}))
                .with_conversation(conversation)
                .with_tool_call_id(format!("call-{i}"));
            registry
                .run_tool_call(ctx, async |_: &Value| Ok::<_, String>(json!(i)))
                .await
        })
    });
    for call in calls.collect::<Vec<_>>() {
        let report = call.await.expect("task");
        assert!(!matches!(report.observation, Observation::Withheld { .. }));
    }
    let rows = database.audit_entries(&conversation).await.expect("read");
    assert_eq!(rows.len(), 1000);
    let mut ids: Vec<&str> = rows.iter().map(|row| row.tool_call_id.as_str()).collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), 1000, "one row per call, none twice");
    let blocked = rows.iter().filter(|row| row.outcome == "blocked").count();
    assert_eq!(blocked, 334);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_thousand_concurrent_calls_leave_a_thousand_rows_sqlite() {
    let (database, _url, _dir) = support::sqlite_file().await;
    concurrent_calls_each_leave_one_row(database).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_thousand_concurrent_calls_leave_a_thousand_rows_postgres() {
    let Some(database) = support::postgres("a_thousand_concurrent_calls").await else {
        return;
    };
    concurrent_calls_each_leave_one_row(database).await;
}

#[tokio::test]
async fn a_failed_audit_write_withholds_the_result_unless_fail_open() {
    for (fail_open, expect_output) in [(false, false), (true, true)] {
        let database = Database::in_memory().await.expect("db");
        let audit = AuditLogHook::from_config(
            database.clone(),
            &json!({"fail_open": fail_open, "timeout": "2s"}),
        )
        .expect("config");
        let registry = HookRegistry::builder()
            .observer(Arc::new(audit))
            .build()
            .expect("registry");
        database.close().await;
        let report = registry
            .run_tool_call(
                HookContext::tool_call("hr__payroll", json!({})),
                async |_: &Value| Ok::<_, String>(json!("salaries")),
            )
            .await;
        if expect_output {
            assert_eq!(report.observation, Observation::Output(json!("salaries")));
        } else {
            let Observation::Withheld { hook, reason } = &report.observation else {
                panic!("an unaudited result must not reach the LLM: {report:?}");
            };
            assert_eq!(hook, "audit_log");
            assert!(reason.contains("audit write failed"), "{reason}");
        }
    }
}

#[tokio::test]
async fn per_row_mode_writes_the_same_rows() {
    let database = Database::in_memory().await.expect("db");
    let audit = AuditLogHook::from_config(database.clone(), &json!({"group_commit": false}))
        .expect("config");
    let registry = HookRegistry::builder()
        .observer(Arc::new(audit))
        .build()
        .expect("registry");
    for i in 0..3 {
        let ctx = HookContext::tool_call("t", json!({})).with_conversation("per-row");
        registry
            .run_tool_call(ctx, async |_: &Value| Ok::<_, String>(json!(i)))
            .await;
    }
    assert_eq!(database.audit_count("per-row").await.expect("count"), 3);
}

#[test]
fn audit_config_is_checked() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let database = runtime.block_on(Database::in_memory()).expect("db");
    for bad in [
        json!({"group_comit": true}),
        json!({"max_batch": 0}),
        json!({"timeout": "0s"}),
        json!({"timeout": "soon"}),
        json!({"redact_keys": "password"}),
    ] {
        let error = AuditLogHook::from_config(database.clone(), &bad)
            .err()
            .unwrap_or_else(|| panic!("{bad} must be rejected"));
        assert!(
            error
                .to_string()
                .starts_with("invalid config for hook \"audit_log\"")
        );
    }
}
