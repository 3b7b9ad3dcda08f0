//! Calls as models make them: argument text that may not parse, and tools
//! that fail with their own error types.
//!
//! `run_tool_call_raw` / `Agent::call_tool_raw` take the model's JSON text:
//! valid text is exactly `run_tool_call`; text that is not a readable JSON
//! object is a call blocked by the runtime before any hook, that observers
//! and the audit log still see. A tool's error value stays in the report,
//! where retry logic can downcast it, while post hooks see its message.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use hooks::prelude::*;
use hooks::std_hooks::{AuditLog, Database};
use hooks::{
    Agent, HookFuture, ToolCallReport, ToolErrorSource,
    config::{AgentConfig, ConfigFormat},
    observer::{CallObserver, CallRecord},
    trace::{EntryStatus, Refusal},
};
use serde_json::{Value, json};

static RAW_GUARD_RUNS: AtomicUsize = AtomicUsize::new(0);

/// Counts its runs, blocks `rm`, and rewrites `path` to lower case.
#[pre_tool_use(when = tool_name == "raw_probe")]
async fn raw_guard(ctx: &HookContext) -> HookResult {
    RAW_GUARD_RUNS.fetch_add(1, Ordering::SeqCst);
    if ctx.tool_args["command"] == "rm" {
        return HookResult::block("rm is not allowed");
    }
    let mut args = ctx.tool_args.clone();
    if let Some(path) = args["path"].as_str() {
        args["path"] = json!(path.to_lowercase());
    }
    HookResult::allow().with_args(args)
}

/// What the tool saw, and a tool that records it.
type Received = Arc<Mutex<Vec<Value>>>;

fn recording_tool(
    received: &Received,
) -> impl AsyncFnOnce(&Value) -> Result<Value, String> + use<> {
    let received = Arc::clone(received);
    async move |args: &Value| {
        received.lock().expect("lock").push(args.clone());
        Ok(json!("done"))
    }
}

/// Records what each observed call looked like: tool, args, stopped by.
#[derive(Default)]
struct Recorder {
    seen: Mutex<Vec<(String, Value, Option<String>)>>,
}

impl CallObserver for Recorder {
    fn name(&self) -> &str {
        "recorder"
    }
    fn observe<'a>(&'a self, record: CallRecord<'a>) -> HookFuture<'a> {
        Box::pin(async move {
            self.seen.lock().expect("lock").push((
                record.ctx.tool_name.clone(),
                record.report.args.clone(),
                record.report.stopped_by().map(str::to_owned),
            ));
            Ok(HookResult::allow())
        })
    }
}

fn registry_with(recorder: &Arc<Recorder>) -> HookRegistry {
    HookRegistry::builder()
        .registered_named(["raw_guard"])
        .observer(Arc::clone(recorder) as Arc<dyn CallObserver>)
        .build()
        .expect("registry builds")
}

/// A report without timings, to compare two runs.
fn comparable(report: &ToolCallReport) -> Value {
    serde_json::to_value(report).expect("a report serializes")
}

#[tokio::test]
async fn valid_text_runs_exactly_as_run_tool_call() {
    let recorder = Arc::new(Recorder::default());
    let registry = registry_with(&recorder);
    for (raw, parsed) in [
        (r#"{"path": "NOTES.txt"}"#, json!({"path": "NOTES.txt"})),
        (r#"{"command": "rm"}"#, json!({"command": "rm"})),
        (" \n\t ", json!({})),
        ("", json!({})),
    ] {
        let (raw_received, typed_received) = (Received::default(), Received::default());
        let ctx = HookContext::tool_call("raw_probe", Value::Null).with_tool_call_id("c");
        let from_text = registry
            .run_tool_call_raw(ctx, raw, recording_tool(&raw_received))
            .await;
        let ctx = HookContext::tool_call("raw_probe", parsed).with_tool_call_id("c");
        let from_value = registry
            .run_tool_call(ctx, recording_tool(&typed_received))
            .await;
        assert_eq!(comparable(&from_text), comparable(&from_value), "{raw:?}");
        assert_eq!(from_text.trace.refused(), None);
        assert_eq!(
            *raw_received.lock().unwrap(),
            *typed_received.lock().unwrap()
        );
    }
    let seen = recorder.seen.lock().unwrap();
    assert_eq!(seen.len(), 8, "every call observed once");
    assert_eq!(
        seen[0].1,
        json!({"path": "notes.txt"}),
        "rewritten by the hook"
    );
    assert_eq!(seen[2].2.as_deref(), Some("raw_guard"));
}

#[tokio::test]
async fn unparsable_text_is_a_blocked_observed_call_that_no_hook_sees() {
    let recorder = Arc::new(Recorder::default());
    let registry = registry_with(&recorder);
    let received = Received::default();
    let runs_before = RAW_GUARD_RUNS.load(Ordering::SeqCst);
    let raw = r#"{"path": "notes.txt", "#;
    let ctx = HookContext::tool_call("raw_probe", json!({"ignored": true}));
    let report = registry
        .run_tool_call_raw(ctx, raw, recording_tool(&received))
        .await;

    let Observation::Blocked { hook, reason } = &report.observation else {
        panic!("must be blocked: {}", report.observation);
    };
    assert_eq!(hook, "runtime");
    assert!(
        reason.starts_with("the arguments are not valid JSON: EOF while parsing"),
        "{reason}"
    );
    assert!(
        reason.contains("line 1 column"),
        "the model is told where: {reason}"
    );
    assert!(!report.tool_ran);
    assert!(received.lock().unwrap().is_empty(), "the tool never ran");
    assert_eq!(
        RAW_GUARD_RUNS.load(Ordering::SeqCst),
        runs_before,
        "no pre hook ran"
    );
    // The report, the observers and the trace all say what happened.
    assert_eq!(report.args, json!(raw), "the raw text, as a JSON string");
    assert_eq!(report.trace.refused(), Some(Refusal::Arguments));
    assert!(
        report
            .trace
            .entries()
            .all(|entry| entry.status == EntryStatus::NotReached)
    );
    assert!(
        report
            .trace
            .to_string()
            .contains("refused by the runtime before any hook: the arguments"),
        "{}",
        report.trace
    );
    assert_eq!(comparable(&report)["trace"]["refused"], json!("arguments"));
    assert_eq!(
        *recorder.seen.lock().unwrap(),
        vec![(
            "raw_probe".to_owned(),
            json!(raw),
            Some("runtime".to_owned())
        )]
    );
}

#[tokio::test]
async fn other_unreadable_text_is_refused_with_its_own_reason() {
    let registry = HookRegistry::builder().build().expect("registry");
    for (raw, expected) in [
        (
            "[1, 2]",
            "the arguments are not a JSON object (they are an array)",
        ),
        (
            "\"rm -rf /\"",
            "the arguments are not a JSON object (they are a string)",
        ),
        (
            "null",
            "the arguments are not a JSON object (they are null)",
        ),
        (
            r#"{"a": 1} {"a": 2}"#,
            "the arguments are not valid JSON: trailing characters",
        ),
        (
            r#"{"a": 1, "a": 2}"#,
            "the arguments are not valid JSON: the key `a` appears twice in one object",
        ),
        (
            "{'a': 1}",
            "the arguments are not valid JSON: key must be a string",
        ),
    ] {
        let ctx = HookContext::tool_call("t", Value::Null);
        let report = registry
            .run_tool_call_raw(ctx, raw, async |_: &Value| Ok::<_, String>(json!("ran")))
            .await;
        assert!(!report.tool_ran, "{raw}");
        let shown = report.observation.to_string();
        assert!(
            shown.starts_with(&format!("Blocked by hook `runtime`: {expected}")),
            "{raw}: {shown}"
        );
    }
}

#[tokio::test]
async fn a_refused_call_is_in_the_audit_log_with_its_text_escaped() {
    let database = Database::in_memory().await.expect("database");
    let registry = HookRegistry::builder()
        .observer(Arc::new(AuditLog::new(database.clone())))
        .build()
        .expect("registry");
    // A NUL and a bidi override in the text, and a cut-off object.
    let raw = "{\"path\": \"a\u{0}b\u{202E}txt.exe\"";
    let ctx = HookContext::tool_call("fs__write", Value::Null)
        .with_conversation("raw-audit")
        .with_tool_call_id("call-1");
    let report = registry
        .run_tool_call_raw(ctx, raw, async |_: &Value| Ok::<_, String>(json!("ran")))
        .await;
    assert!(report.observation.is_blocked());
    let rows = database.audit_entries("raw-audit").await.expect("read");
    assert_eq!(rows.len(), 1, "{rows:?}");
    let row = &rows[0];
    assert_eq!(row.outcome, "blocked");
    assert_eq!(row.blocked_by.as_deref(), Some("runtime"));
    assert!(
        row.reason
            .as_deref()
            .is_some_and(|reason| reason.starts_with("the arguments are not valid JSON")),
        "{row:?}"
    );
    assert_eq!(
        row.args,
        json!("{\"path\": \"a\\u{0}b\\u{202E}txt.exe\""),
        "the text, hidden characters escaped"
    );
}

#[tokio::test]
async fn a_long_refused_text_is_kept_cut() {
    let registry = HookRegistry::builder().build().expect("registry");
    let raw = format!("{{\"text\": \"{}", "x".repeat(100_000));
    let ctx = HookContext::tool_call("t", Value::Null);
    let report = registry
        .run_tool_call_raw(ctx, &raw, async |_: &Value| Ok::<_, String>(json!("ran")))
        .await;
    let kept = report.args.as_str().expect("a string");
    assert_eq!(
        kept.chars().count(),
        hooks::registry::RAW_ARGS_PREVIEW_CHARS + 1
    );
    assert!(kept.ends_with('…'));
    assert!(raw.starts_with(kept.trim_end_matches('…')));
}

#[tokio::test]
async fn an_agent_stamps_raw_calls_and_refuses_the_same_text() {
    let config = AgentConfig::parse("agent: raw-bot\n", ConfigFormat::Yaml, "raw.yaml", None)
        .expect("config");
    let resources = hooks::std_hooks::offline_resources(["frozen"])
        .await
        .expect("resources");
    let agent = Agent::build(config, &resources).expect("agent");
    let ok = agent
        .call_tool_raw(
            agent.context("t", Value::Null),
            r#"{"n": 1}"#,
            async |args: &Value| Ok::<_, String>(args["n"].clone()),
        )
        .await;
    assert_eq!(ok.observation, Observation::Output(json!(1)));
    let refused = agent
        .call_tool_raw(agent.context("t", Value::Null), "{", async |_: &Value| {
            Ok::<_, String>(json!("ran"))
        })
        .await;
    assert_eq!(refused.stopped_by(), Some("runtime"));
    assert_eq!(refused.trace.refused(), Some(Refusal::Arguments));
}

// ---- the tool's own error ------------------------------------------------

/// A tool's typed error, as retry logic wants to match it.
#[derive(Debug, PartialEq)]
enum FetchError {
    RateLimited { retry_after_s: u64 },
    NotFound,
}

impl std::fmt::Display for FetchError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FetchError::RateLimited { retry_after_s } => {
                write!(f, "rate limited; retry in {retry_after_s} s")
            }
            FetchError::NotFound => f.write_str("not found"),
        }
    }
}

impl std::error::Error for FetchError {}

static POST_SAW: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// Records the error message it sees and turns "not found" into an empty result.
#[post_tool_use(when = tool_name == "typed_fetch")]
async fn typed_error_reader(ctx: &HookContext) -> HookResult {
    let message = ctx.tool_error().unwrap_or("(no error)").to_owned();
    POST_SAW.lock().expect("lock").push(message.clone());
    if message == "not found" {
        return HookResult::allow().with_result(json!([]));
    }
    HookResult::allow()
}

#[tokio::test]
async fn the_tools_error_value_is_kept_for_retry_logic() {
    let registry = HookRegistry::builder()
        .registered_named(["typed_error_reader"])
        .build()
        .expect("registry");
    let fetch = |error: FetchError| async move |_: &Value| Err::<Value, _>(error);

    let mut report = registry
        .run_tool_call(
            HookContext::tool_call("typed_fetch", json!({})),
            fetch(FetchError::RateLimited { retry_after_s: 7 }),
        )
        .await;
    // The LLM and the post hooks see the message, as before.
    assert_eq!(
        report.observation,
        Observation::ToolError("rate limited; retry in 7 s".to_owned())
    );
    assert_eq!(report.tool_error(), Some("rate limited; retry in 7 s"));
    assert!(
        POST_SAW
            .lock()
            .unwrap()
            .contains(&"rate limited; retry in 7 s".to_owned())
    );
    // Retry logic matches on the value.
    let source = report.tool_error_source().expect("an error value");
    assert_eq!(
        source.downcast_ref::<FetchError>(),
        Some(&FetchError::RateLimited { retry_after_s: 7 })
    );
    // A clone shares it: it cannot be taken while the clone lives.
    let clone = report.clone();
    assert!(report.take_tool_error_source().is_none());
    assert!(report.tool_error_source().is_some(), "left in place");
    drop(clone);
    let owned: ToolErrorSource = report.take_tool_error_source().expect("now unique");
    assert_eq!(
        *owned.downcast::<FetchError>().expect("the tool's type"),
        FetchError::RateLimited { retry_after_s: 7 }
    );
    assert!(report.tool_error_source().is_none(), "taken");

    // A post hook that replaces the error keeps the value in the report.
    let report = registry
        .run_tool_call(
            HookContext::tool_call("typed_fetch", json!({})),
            fetch(FetchError::NotFound),
        )
        .await;
    assert_eq!(report.observation, Observation::Output(json!([])));
    assert_eq!(report.tool_error(), Some("not found"));
    assert_eq!(
        report
            .tool_error_source()
            .and_then(|e| e.downcast_ref::<FetchError>()),
        Some(&FetchError::NotFound)
    );
}

#[tokio::test]
async fn string_errors_still_work_and_success_keeps_no_error() {
    let registry = HookRegistry::builder().build().expect("registry");
    let failed = registry
        .run_tool_call(HookContext::tool_call("t", json!({})), async |_: &Value| {
            Err::<Value, _>("connection reset")
        })
        .await;
    assert_eq!(failed.tool_error(), Some("connection reset"));
    assert_eq!(
        failed
            .tool_error_source()
            .map(ToString::to_string)
            .as_deref(),
        Some("connection reset")
    );
    let ok = registry
        .run_tool_call(HookContext::tool_call("t", json!({})), async |_: &Value| {
            Ok::<_, String>(json!(1))
        })
        .await;
    assert!(ok.tool_error_source().is_none());
    let panicked = registry
        .run_tool_call(HookContext::tool_call("t", json!({})), async |_: &Value| {
            if true {
                panic!("tool bug");
            }
            Ok::<_, String>(json!(1))
        })
        .await;
    assert!(
        panicked
            .tool_error()
            .is_some_and(|m| m.contains("the tool panicked"))
    );
    assert!(
        panicked.tool_error_source().is_none(),
        "a panic has no error value"
    );
}
