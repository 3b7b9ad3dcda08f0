//! AuditLog: exactly one durable row per attempted call on every path,
//! visible to a fresh connection as soon as the call returns, redacted args,
//! group commit under concurrency, and a failed write withholds the result.
//! Runs on a SQLite file always and on PostgreSQL when configured.

mod support;

use std::sync::Arc;
use std::time::Duration;

use hooks_runtime::{
    Hook, HookContext, HookError, HookOutcome, HookRegistry, HookResult, Observation,
    PostToolUseHook, PreToolUse, PreToolUseHook, ToolCallReport, ToolOutcome, trace::CallTrace,
};
use hooks_std::{
    AuditEntry, AuditLog, ConnectorRateLimit, Database, ReadOnlyGuard, ResultTruncate,
    StaticOrgModes,
};
use serde_json::{Value, json};

/// What a scripted hook does when its tool is called.
#[derive(Clone, Copy)]
enum Act {
    Block,
    BlockWith(&'static str),
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
    fn execute<'a>(&'a self, _: &'a HookContext) -> HookOutcome<'a> {
        let act = self.act;
        HookOutcome::pending(async move {
            match act {
                Act::Block => Ok(HookResult::block("scripted block")),
                Act::BlockWith(reason) => Ok(HookResult::block(reason)),
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
            ConnectorRateLimit::from_config(
                &json!({"default": {"calls": 1, "period": "1h"}}),
                None,
            )
            .expect("rate limit"),
        )
        .post(ResultTruncate::from_config(&json!({"max_chars": 10})).expect("truncate"))
        .observer(Arc::new(AuditLog::new(database.clone())))
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

// ------------------------------------------- the two phases run separately

/// What a report shows, without timings: the observation, whether the tool
/// ran, the arguments, the raw result, and each hook that ran with its decision.
fn shown(report: &ToolCallReport) -> (String, bool, Value, Option<Value>, Vec<String>, bool) {
    (
        report.observation.to_string(),
        report.tool_ran,
        report.args.clone(),
        report.raw_result().cloned(),
        decisions(&report.trace),
        report.trace.bypassed(),
    )
}

/// Each hook that ran, its decision and what it reported doing.
fn decisions(trace: &CallTrace) -> Vec<String> {
    trace
        .runs()
        .iter()
        .map(|run| {
            format!(
                "{}: {} {:?}",
                trace.name_of(run),
                run.decision,
                run.side_effects
            )
        })
        .collect()
}

/// An audit row without what differs between two runs (id, time, duration).
fn comparable(mut row: AuditEntry) -> AuditEntry {
    row.id = 0;
    row.created_at = String::new();
    row.duration_ms = 0;
    row.conversation_id = String::new();
    row
}

/// Every path, once through `run_tool_call` and once as a pre phase, the
/// tool run by the caller, then a post phase: the same observation, trace
/// and single audit row, paired by the tool call id.
#[tokio::test]
async fn pre_and_post_run_separately_match_run_tool_call() {
    let whole_db = Database::in_memory().await.expect("db");
    let phased_db = Database::in_memory().await.expect("db");
    let (whole, phased) = (full_stack(&whole_db), full_stack(&phased_db));
    for (i, (tool, org, outcome, _, _)) in PATHS.into_iter().enumerate() {
        let ctx = HookContext::tool_call(tool, json!({"q": "DELETE FROM t", "n": i}))
            .with_conversation("phases")
            .with_tool_call_id(format!("call-{i}"))
            .with_user("alice")
            .with_org(org);
        let tool_result = || outcome.map(|text| json!(text)).map_err(str::to_owned);
        let expected = whole
            .run_tool_call(ctx.clone(), async |_: &Value| tool_result())
            .await;
        let report = match phased.run_pre_tool_use(ctx).await {
            PreToolUse::Blocked(report) => report,
            PreToolUse::Proceed(call) => {
                assert_eq!(call.tool_call_id(), format!("call-{i}"));
                // The pre phase's trace is the start of the whole call's.
                let pre = decisions(call.trace());
                let whole = decisions(&expected.trace);
                assert_eq!(pre, whole[..pre.len()], "call {i} ({tool})");
                let outcome = match tool_result() {
                    Ok(value) => ToolOutcome::Success(value),
                    Err(message) => ToolOutcome::Error(message),
                };
                call.run_post_tool_use(outcome).await
            }
        };
        assert_eq!(shown(&report), shown(&expected), "call {i} ({tool})");
        let whole_rows = whole_db.audit_entries("phases").await.expect("read");
        let phased_rows = phased_db.audit_entries("phases").await.expect("read");
        assert_eq!(phased_rows.len(), i + 1, "call {i} ({tool}) adds one row");
        let row = phased_rows.last().cloned().expect("row");
        assert_eq!(row.tool_call_id, format!("call-{i}"));
        assert_eq!(
            comparable(row),
            comparable(whole_rows.last().cloned().expect("row")),
            "call {i} ({tool})"
        );
    }
}

/// A call whose pre phase passed but whose outcome never came back (the
/// agent crashed, the post request never arrived) is still audited once,
/// as withheld by the runtime.
#[tokio::test]
async fn a_pending_call_dropped_without_its_post_phase_is_audited_once() {
    let database = Database::in_memory().await.expect("db");
    let registry = full_stack(&database);
    let ctx = HookContext::tool_call("t_ok", json!({"n": 1}))
        .with_conversation("abandoned")
        .with_tool_call_id("call-lost");
    let PreToolUse::Proceed(call) = registry.run_pre_tool_use(ctx).await else {
        panic!("t_ok passes its pre hooks");
    };
    drop(call);
    registry.flush_observers().await;
    let rows = database.audit_entries("abandoned").await.expect("read");
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(rows[0].tool_call_id, "call-lost");
    assert_eq!(rows[0].outcome, "blocked");
    assert_eq!(rows[0].blocked_by.as_deref(), Some("runtime"));
    assert!(
        rows[0]
            .reason
            .as_deref()
            .unwrap_or_default()
            .contains("never reached the post hooks"),
        "{rows:?}"
    );
}

#[tokio::test]
async fn secrets_are_redacted_at_any_depth() {
    let database = Database::in_memory().await.expect("db");
    let registry = HookRegistry::builder()
        .observer(Arc::new(AuditLog::new(database.clone())))
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

// ------------------------------------------- redaction gaps (issue 11, item 8)

/// A registry with only the audit log, and the one row a call leaves.
async fn audited_row(
    ctx: HookContext,
    pre: Option<Scripted>,
    tool: Result<Value, String>,
) -> AuditEntry {
    let database = Database::in_memory().await.expect("db");
    let mut builder = HookRegistry::builder().observer(Arc::new(AuditLog::new(database.clone())));
    if let Some(pre) = pre {
        builder = builder.pre(pre);
    }
    let registry = builder.build().expect("registry");
    let conversation = ctx.conversation_id.clone();
    registry
        .run_tool_call(ctx, async move |_: &Value| tool.clone())
        .await;
    let mut rows = database.audit_entries(&conversation).await.expect("read");
    assert_eq!(rows.len(), 1);
    rows.pop().unwrap()
}

#[tokio::test]
async fn secret_keys_in_every_spelling_are_redacted() {
    let args = json!({
        "passwd": "s1", "pwd": "s2", "private_key": "s3", "credentials": {"user": "s4"},
        "auth": "s5", "p\u{430}ssword": "s6", "ＰＡＳＳＷＯＲＤ": "s7", "session": "s8",
        "bearer": "s9", "refresh_token": "s10", "client_secret": "s11", "apiKey": "s12",
        "API-KEY": "s13", "x_auth": "s14", "pass\u{200B}word": "s15", "Secret": "s16",
        "passw0rd": "s17", "pWd": "s18", "sessionId": "s19", "Cookie": "s20",
    });
    let ctx = HookContext::tool_call("crm__login", args.clone()).with_conversation("keys");
    let row = audited_row(ctx, None, Ok(json!("ok"))).await;
    let stored = row.args.to_string();
    for n in 1..=20 {
        assert!(
            !stored.contains(&format!("\"s{n}\"")),
            "secret s{n} reached the audit log: {stored}"
        );
    }
    for key in args.as_object().unwrap().keys() {
        assert_eq!(row.args[key], "[redacted]", "{key}");
    }
}

#[tokio::test]
async fn ordinary_arguments_are_kept() {
    let args = json!({
        "author": "ann", "session_count": 3, "max_tokens": 100, "keyboard": "qwerty",
        "pinned": true, "passage": "p. 3", "compass": "N", "spinner": "dots",
        "passport_country": "FR", "oauth_provider": "github", "token_expires_in": 3600,
        "note": "Basic authentication is disabled; see https://example.com/docs?page=2",
    });
    let ctx = HookContext::tool_call("crm__lookup", args.clone()).with_conversation("plain");
    let row = audited_row(ctx, None, Ok(json!("ok"))).await;
    assert_eq!(row.args, args);
}

/// Review C findings 3, 6, 7: secrets split from their names, a hostile
/// 32 KB key and nesting past the cap all reach the row redacted.
#[tokio::test]
async fn split_pairs_long_keys_and_deep_nesting_are_redacted() {
    let long_key = "a_".repeat(16_000);
    let mut deep = json!({"password": "s5"});
    for _ in 0..100 {
        deep = Value::Array(vec![deep]);
    }
    let args = json!({
        "env": [{"name": "DB_PASSWORD", "value": "s1"}, {"name": "HOME", "value": "/root"}],
        "headers": [{"name": "X-Api-Key", "value": "s2"}],
        "pairs": [["password", "s3"]],
        long_key.clone(): "s4",
        "deep": deep,
        "body": "{\"password\":\"s6\"}",
        "pin": "s7",
    });
    let ctx = HookContext::tool_call("crm__login", args).with_conversation("split");
    let row = audited_row(ctx, None, Ok(json!("ok"))).await;
    let stored = row.args.to_string();
    for n in 1..=7 {
        assert!(
            !stored.contains(&format!("s{n}")),
            "secret s{n} reached the audit log: {stored:.300}"
        );
    }
    assert_eq!(
        row.args["env"][1],
        json!({"name": "HOME", "value": "/root"})
    );
    assert_eq!(row.args[&long_key], "[redacted]");
    assert!(stored.contains("[redacted: nested too deeply]"));
}

#[tokio::test]
async fn credentials_inside_values_are_masked() {
    let pem = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----";
    let args = json!({
        "headers": ["Authorization: Bearer abc.def-123456", "Accept: json"],
        "url": "https://api.example.com/v1/items?access_token=tok123456&page=2",
        "dsn": "postgres://app:hunter2@db.internal:5432/prod",
        "curl": "curl -H 'Authorization: Basic dXNlcjpwYXNz' https://x",
        "deploy_key": pem,
        "body": "{\"password\": \"hunter 2\", \"user\": \"ann\"}",
        "env": "OPENAI=sk-proj-abcdefghijklmnopqrstuvwxyz0123 GH=ghp_0123456789abcdefghijklmnopqrstuvwxyz",
    });
    let ctx = HookContext::tool_call("http__fetch", args).with_conversation("values");
    let row = audited_row(ctx, None, Ok(json!("ok"))).await;
    let stored = row.args.to_string();
    for secret in [
        "abc.def-123456",
        "tok123456",
        "hunter2",
        "dXNlcjpwYXNz",
        "b3BlbnNzaC1rZXktdjEAAAAA",
        "hunter 2",
        "sk-proj-abcdef",
        "ghp_0123456789",
    ] {
        assert!(
            !stored.contains(secret),
            "{secret} reached the audit log: {stored}"
        );
    }
    assert_eq!(
        row.args["url"],
        "https://api.example.com/v1/items?access_token=[redacted]&page=2"
    );
    assert_eq!(row.args["headers"][1], "Accept: json");
}

#[tokio::test]
async fn tool_error_text_is_redacted_in_the_reason() {
    let error = "401 from https://api.example.com/v1?access_token=tok123456: \
                 sent Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.sig";
    let ctx = HookContext::tool_call("http__fetch", json!({})).with_conversation("tool-error");
    let row = audited_row(ctx, None, Err(error.to_owned())).await;
    assert_eq!(row.outcome, "tool_error");
    let reason = row.reason.expect("the error is stored");
    assert!(!reason.contains("tok123456"), "{reason}");
    assert!(!reason.contains("eyJhbGciOiJIUzI1NiJ9"), "{reason}");
    assert!(
        reason.contains("401 from https://api.example.com/v1?access_token=[redacted]"),
        "{reason}"
    );
}

#[tokio::test]
async fn block_reasons_are_redacted_too() {
    let ctx = HookContext::tool_call("shell_exec", json!({})).with_conversation("block-reason");
    let blocker = Scripted {
        name: "leaky_guard",
        tool: "shell_exec",
        act: Act::BlockWith("refused: password=hunter2 in command"),
    };
    let row = audited_row(ctx, Some(blocker), Ok(json!("ok"))).await;
    assert_eq!(row.outcome, "blocked");
    assert_eq!(
        row.reason.as_deref(),
        Some("refused: password=[redacted] in command")
    );
}

async fn concurrent_calls_each_leave_one_row(database: Database) {
    let registry = HookRegistry::builder()
        .pre(Scripted {
            name: "every_third",
            tool: "t_blocked",
            act: Act::Block,
        })
        .observer(Arc::new(AuditLog::new(database.clone())))
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

/// A row the database refuses (here a trigger aborts it) fails the shared
/// batch; the batch is rolled back and every row retried alone, so only the
/// refused calls lose their result, and the writer's connection is left
/// clean for the next batch.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_refused_row_fails_only_its_own_call_and_the_writer_recovers() {
    let (database, _url, _dir) = support::sqlite_file().await;
    support::refuse_audit_rows_of(&database, "t_poison").await;
    let registry = HookRegistry::builder()
        .observer(Arc::new(AuditLog::new(database.clone())))
        .build()
        .expect("registry");
    let conversation = support::unique("poison");
    let calls = (0..200).map(|i| {
        let registry = registry.clone();
        let conversation = conversation.clone();
        tokio::spawn(async move {
            let tool = if i % 10 == 0 { "t_poison" } else { "t_ok" };
            let ctx = HookContext::tool_call(tool, json!({"i": i}))
                .with_conversation(conversation)
                .with_tool_call_id(format!("call-{i}"));
            let report = registry
                .run_tool_call(ctx, async |_: &Value| Ok::<_, String>(json!(i)))
                .await;
            (tool, report.observation)
        })
    });
    for call in calls.collect::<Vec<_>>() {
        match call.await.expect("task") {
            ("t_poison", Observation::Withheld { hook, reason }) => {
                assert_eq!(hook, "audit_log");
                assert!(reason.contains("poisoned row"), "{reason}");
            }
            ("t_ok", Observation::Output(_)) => {}
            other => panic!("unexpected outcome: {other:?}"),
        }
    }
    assert_eq!(
        database.audit_count(&conversation).await.expect("count"),
        180
    );
    // Nothing was left open: the next call is written and read back.
    let ctx = HookContext::tool_call("t_ok", json!({})).with_conversation(conversation.clone());
    let report = registry
        .run_tool_call(ctx, async |_: &Value| Ok::<_, String>(json!("after")))
        .await;
    assert_eq!(report.observation, Observation::Output(json!("after")));
    assert_eq!(
        database.audit_count(&conversation).await.expect("count"),
        181
    );
}

#[tokio::test]
async fn a_failed_audit_write_withholds_the_result_unless_fail_open() {
    for (fail_open, expect_output) in [(false, false), (true, true)] {
        let database = Database::in_memory().await.expect("db");
        let audit = AuditLog::from_config(
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
    let audit =
        AuditLog::from_config(database.clone(), &json!({"group_commit": false})).expect("config");
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
        let error = AuditLog::from_config(database.clone(), &bad)
            .err()
            .unwrap_or_else(|| panic!("{bad} must be rejected"));
        assert!(
            error
                .to_string()
                .starts_with("invalid config for hook \"audit_log\"")
        );
    }
}
