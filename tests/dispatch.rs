//! Dispatch semantics (the chain rules: order, blocks, rewrites, sealing, fail closed), through hooks declared with the attributes.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use hooks::prelude::*;
use hooks::{
    HookError,
    registry::RegistryError,
    trace::{Decision, EntryStatus, HookFailure},
};
use serde_json::{Value, json};

fn registry(names: &[&str]) -> HookRegistry {
    HookRegistry::builder()
        .registered_named(names)
        .build()
        .expect("registry builds")
}

async fn echo_args(args: &Value) -> Result<Value, String> {
    Ok(args.clone())
}

// ---- order -------------------------------------------------------------

#[pre_tool_use(priority = 20, when = tool_name == "order_probe")]
async fn order_c(ctx: &HookContext) -> HookResult {
    append(ctx, "c")
}

#[pre_tool_use(priority = 10, when = tool_name == "order_probe")]
async fn order_b(ctx: &HookContext) -> HookResult {
    append(ctx, "b")
}

#[pre_tool_use(priority = 10, when = tool_name == "order_probe")]
async fn order_a(ctx: &HookContext) -> HookResult {
    append(ctx, "a")
}

#[pre_tool_use(priority = -3, when = tool_name == "order_probe")]
async fn order_first(ctx: &HookContext) -> HookResult {
    append(ctx, "first")
}

/// Appends `mark` to `args.seen`, so the tool receives the order the hooks ran in.
fn append(ctx: &HookContext, mark: &str) -> HookResult {
    let mut args = ctx.tool_args.clone();
    let seen = args["seen"].as_array().cloned().unwrap_or_default();
    let mut seen = seen;
    seen.push(json!(mark));
    args["seen"] = Value::Array(seen);
    HookResult::allow()
        .with_args(args)
        .with_side_effect(format!("saw {mark}"))
}

#[tokio::test]
async fn hooks_run_by_priority_then_name_whatever_the_registration_order() {
    let registry = registry(&["order_c", "order_a", "order_first", "order_b"]);
    let names: Vec<&str> = registry
        .pre_tool_use()
        .iter()
        .map(|hook| hook.name())
        .collect();
    assert_eq!(names, ["order_first", "order_a", "order_b", "order_c"]);

    let report = registry
        .run_tool_call(HookContext::tool_call("order_probe", json!({})), echo_args)
        .await;
    assert_eq!(
        report.observation.output(),
        Some(&json!({"seen": ["first", "a", "b", "c"]}))
    );
    let effects: Vec<&str> = report.trace.side_effects().collect();
    assert_eq!(effects, ["saw first", "saw a", "saw b", "saw c"]);
}

// ---- rewrites and blocks --------------------------------------------------

const CAP_LIMIT_LINE: u32 = line!() + 1;
#[pre_tool_use(priority = 1, when = tool_name == "limit_probe")]
async fn cap_limit(ctx: &HookContext) -> HookResult {
    let limit = ctx.tool_args["limit"].as_i64().unwrap_or(0);
    if limit > 100 {
        HookResult::allow().with_args(json!({"limit": 100}))
    } else {
        HookResult::allow()
    }
}

#[pre_tool_use(priority = 2, when = tool_name == "limit_probe")]
async fn refuse_big_limits(ctx: &HookContext) -> HookResult {
    // Sees cap_limit's rewrite: 1000 arrives here as 100.
    if ctx.tool_args["limit"].as_i64() == Some(100) {
        HookResult::allow().with_side_effect("limit already capped")
    } else if ctx.tool_args["limit"].as_i64() == Some(7) {
        HookResult::block("seven is unlucky")
    } else {
        HookResult::allow()
    }
}

static AFTER_BLOCK_RUNS: AtomicUsize = AtomicUsize::new(0);

#[pre_tool_use(priority = 3, when = tool_name == "limit_probe")]
async fn after_block(_: &HookContext) -> HookResult {
    AFTER_BLOCK_RUNS.fetch_add(1, Ordering::SeqCst);
    HookResult::allow()
}

#[tokio::test]
async fn later_hooks_see_rewritten_args_and_the_tool_gets_the_final_ones() {
    let registry = registry(&["cap_limit", "refuse_big_limits", "after_block"]);
    let report = registry
        .run_tool_call(
            HookContext::tool_call("limit_probe", json!({"limit": 1000})),
            echo_args,
        )
        .await;
    assert!(report.tool_ran);
    assert_eq!(report.args, json!({"limit": 100}));
    assert_eq!(
        report.observation,
        Observation::Output(json!({"limit": 100}))
    );
    let refuse = report.trace.entry("refuse_big_limits").expect("in trace");
    assert_eq!(
        refuse.decision(),
        Some(&Decision::Allowed { rewrote: false })
    );
    let cap = report.trace.entry("cap_limit").expect("in trace");
    assert_eq!(cap.decision(), Some(&Decision::Allowed { rewrote: true }));
}

#[tokio::test]
async fn a_block_stops_the_chain_and_the_tool_never_runs() {
    let registry = registry(&["cap_limit", "refuse_big_limits", "after_block"]);
    let before = AFTER_BLOCK_RUNS.load(Ordering::SeqCst);
    let tool_runs = AtomicUsize::new(0);
    let report = registry
        .run_tool_call(
            HookContext::tool_call("limit_probe", json!({"limit": 7})),
            async |_: &Value| {
                tool_runs.fetch_add(1, Ordering::SeqCst);
                Ok::<_, String>(json!("ran"))
            },
        )
        .await;
    assert_eq!(tool_runs.load(Ordering::SeqCst), 0);
    assert!(!report.tool_ran);
    assert_eq!(
        report.observation,
        Observation::Blocked {
            hook: "refuse_big_limits".into(),
            reason: "seven is unlucky".into()
        }
    );
    assert_eq!(
        report.observation.to_string(),
        "Blocked by hook `refuse_big_limits`: seven is unlucky"
    );
    assert_eq!(
        AFTER_BLOCK_RUNS.load(Ordering::SeqCst),
        before,
        "the hook after the block must not run"
    );
    assert_eq!(
        report.trace.entry("after_block").map(|e| e.status),
        Some(EntryStatus::NotReached)
    );
}

#[tokio::test]
async fn non_matching_hooks_are_traced_as_not_matched() {
    let registry = registry(&["cap_limit", "order_a"]);
    let report = registry
        .run_tool_call(
            HookContext::tool_call("limit_probe", json!({"limit": 1})),
            echo_args,
        )
        .await;
    let order_a = report.trace.entry("order_a").expect("in trace");
    assert_eq!(order_a.status, EntryStatus::NotMatched);
    assert!(!order_a.matched());
    assert!(report.trace.entry("cap_limit").expect("in trace").matched());
}

// ---- post hooks ------------------------------------------------------------

#[post_tool_use(priority = 1, when = tool_name == "post_probe")]
async fn wrap_result(ctx: &HookContext) -> HookResult {
    match ctx.result() {
        Some(value) => HookResult::allow().with_result(json!({"wrapped": value})),
        None => HookResult::allow()
            .with_side_effect(format!("saw error: {}", ctx.tool_error().unwrap_or("?"))),
    }
}

#[post_tool_use(priority = 2, when = tool_name == "post_probe")]
async fn tag_result(ctx: &HookContext) -> HookResult {
    match ctx.result() {
        Some(value) => HookResult::allow().with_result(json!({"tagged": value})),
        None => HookResult::allow(),
    }
}

#[tokio::test]
async fn post_rewrites_chain_in_order() {
    let registry = registry(&["tag_result", "wrap_result"]);
    let report = registry
        .run_tool_call(
            HookContext::tool_call("post_probe", json!({})),
            async |_: &Value| Ok::<_, String>(json!(42)),
        )
        .await;
    assert_eq!(
        report.observation,
        Observation::Output(json!({"tagged": {"wrapped": 42}}))
    );
}

#[tokio::test]
async fn post_hooks_see_tool_errors() {
    let registry = registry(&["tag_result", "wrap_result"]);
    let report = registry
        .run_tool_call(
            HookContext::tool_call("post_probe", json!({})),
            async |_: &Value| Err::<Value, _>("connection refused"),
        )
        .await;
    assert_eq!(
        report.observation,
        Observation::ToolError("connection refused".into())
    );
    let effects: Vec<&str> = report.trace.side_effects().collect();
    assert_eq!(effects, ["saw error: connection refused"]);
}

#[tokio::test]
async fn a_panicking_tool_is_a_tool_error_that_post_hooks_see() {
    let registry = registry(&["wrap_result"]);
    let report = registry
        .run_tool_call(
            HookContext::tool_call("post_probe", json!({})),
            async |_: &Value| -> Result<Value, String> { panic!("tool exploded") },
        )
        .await;
    assert_eq!(
        report.observation,
        Observation::ToolError("the tool panicked: tool exploded".into())
    );
    assert_eq!(report.trace.side_effects().count(), 1);
}

// ---- fail closed -----------------------------------------------------------

#[pre_tool_use(when = tool_name == "failing_err")]
async fn returns_err(_: &HookContext) -> Result<HookResult, String> {
    Err("policy database unreachable".to_owned())
}

#[pre_tool_use(when = tool_name == "failing_panic")]
async fn panics(_: &HookContext) -> HookResult {
    panic!("index out of bounds")
}

#[pre_tool_use(timeout = "50ms", when = tool_name == "failing_slow")]
async fn too_slow(_: &HookContext) -> HookResult {
    tokio::time::sleep(Duration::from_secs(3600)).await;
    HookResult::allow()
}

#[pre_tool_use(on_error = fail_open, when = tool_name == "failing_open")]
async fn optional_enrichment(_: &HookContext) -> Result<HookResult, HookError> {
    Err(HookError::new("enrichment service down"))
}

#[pre_tool_use(on_error = fail_open, timeout = "10ms", when = tool_name == "failing_open")]
async fn optional_slow(_: &HookContext) -> HookResult {
    tokio::time::sleep(Duration::from_secs(3600)).await;
    HookResult::allow()
}

#[pre_tool_use(on_error = fail_open, when = tool_name == "failing_open")]
async fn optional_panics(_: &HookContext) -> HookResult {
    panic!("optional hook bug")
}

async fn run_counting(registry: &HookRegistry, tool: &str) -> (hooks::ToolCallReport, usize) {
    let runs = AtomicUsize::new(0);
    let report = registry
        .run_tool_call(
            HookContext::tool_call(tool, json!({})),
            async |_: &Value| {
                runs.fetch_add(1, Ordering::SeqCst);
                Ok::<_, String>(json!("ran"))
            },
        )
        .await;
    (report, runs.load(Ordering::SeqCst))
}

/// Asserts that the tool never ran and that `hook` blocked the call with a
/// reason containing `cause`.
fn assert_blocked(report: &hooks::ToolCallReport, runs: usize, hook: &str, cause: &str) {
    assert_eq!(runs, 0, "the tool must not run");
    let Observation::Blocked { hook: by, reason } = &report.observation else {
        panic!("expected a block, got {:?}", report.observation);
    };
    assert_eq!(by, hook);
    assert!(reason.contains(cause), "{reason}");
}

#[tokio::test]
async fn a_hook_returning_err_blocks_and_is_named() {
    let (report, runs) = run_counting(&registry(&["returns_err"]), "failing_err").await;
    assert_eq!(runs, 0);
    assert_eq!(
        report.observation.to_string(),
        "Blocked by hook `returns_err`: hook `returns_err` returned an error: policy database unreachable; blocked because the hook fails closed"
    );
}

#[tokio::test]
async fn a_panicking_hook_blocks_and_is_named() {
    let (report, runs) = run_counting(&registry(&["panics"]), "failing_panic").await;
    assert_blocked(&report, runs, "panics", "panicked: index out of bounds");
}

#[tokio::test(start_paused = true)]
async fn a_hook_past_its_timeout_blocks_and_is_named() {
    let (report, runs) = run_counting(&registry(&["too_slow"]), "failing_slow").await;
    assert_eq!(runs, 0);
    assert_eq!(
        report.observation.to_string(),
        "Blocked by hook `too_slow`: hook `too_slow` timed out after 50ms; blocked because the hook fails closed"
    );
    let entry = report.trace.entry("too_slow").expect("in trace");
    assert_eq!(
        entry.decision(),
        Some(&Decision::Failed {
            failure: HookFailure::TimedOut(Duration::from_millis(50)),
            policy: ErrorPolicy::FailClosed
        })
    );
}

#[tokio::test(start_paused = true)]
async fn fail_open_hooks_let_the_call_through_and_the_failure_shows_in_the_trace() {
    let (report, runs) = run_counting(
        &registry(&["optional_enrichment", "optional_slow", "optional_panics"]),
        "failing_open",
    )
    .await;
    assert_eq!(runs, 1);
    assert_eq!(report.observation, Observation::Output(json!("ran")));
    let failures: Vec<String> = report
        .trace
        .runs()
        .iter()
        .map(|run| match &run.decision {
            Decision::Failed {
                failure,
                policy: ErrorPolicy::FailOpen,
            } => failure.to_string(),
            other => panic!("expected a fail-open failure, got {other:?}"),
        })
        .collect();
    assert_eq!(
        failures,
        [
            "returned an error: enrichment service down",
            "panicked: optional hook bug",
            "timed out after 10ms"
        ]
    );
}

#[post_tool_use(when = tool_name == "post_failing")]
async fn broken_redactor(_: &HookContext) -> Result<HookResult, std::io::Error> {
    Err(std::io::Error::other("redaction rules missing"))
}

#[post_tool_use(when = tool_name == "post_blocking")]
async fn result_censor(_: &HookContext) -> HookResult {
    HookResult::block("result contains a secret")
}

#[tokio::test]
async fn a_failing_post_hook_withholds_the_result() {
    let (report, runs) = run_counting(&registry(&["broken_redactor"]), "post_failing").await;
    assert_eq!(runs, 1, "the tool ran");
    assert!(report.tool_ran);
    assert_eq!(
        report.observation.output(),
        None,
        "the unredacted result must not reach the LLM"
    );
    assert_eq!(
        report.observation.to_string(),
        "Result withheld by hook `broken_redactor`: hook `broken_redactor` returned an error: redaction rules missing; blocked because the hook fails closed"
    );

    let (report, _) = run_counting(&registry(&["result_censor"]), "post_blocking").await;
    assert_eq!(
        report.observation,
        Observation::Withheld {
            hook: "result_censor".into(),
            reason: "result contains a secret".into()
        }
    );
}

// ---- session start -----------------------------------------------------------

#[session_start(priority = 2)]
async fn org_policy(ctx: &HookContext) -> HookResult {
    HookResult::allow().with_context(format!("Org {} is in read-only mode.", ctx.org_id))
}

#[session_start(priority = 1)]
async fn house_rules(_: &HookContext) -> HookResult {
    HookResult::allow().with_context("Never share customer emails.")
}

#[session_start(priority = 3, when = user_id == "mallory")]
async fn banned_users(_: &HookContext) -> HookResult {
    HookResult::block("user is suspended")
}

#[session_start(priority = 4, when = user_id == "crash")]
async fn flaky_session_hook(_: &HookContext) -> Result<HookResult, String> {
    Err("profile service down".into())
}

#[tokio::test]
async fn session_contexts_are_concatenated_in_order() {
    let registry = registry(&[
        "org_policy",
        "house_rules",
        "banned_users",
        "flaky_session_hook",
    ]);
    let started = registry
        .start_session(HookContext::session().with_org("acme").with_user("alice"))
        .await
        .expect("session starts");
    assert_eq!(
        started.context,
        "Never share customer emails.\n\nOrg acme is in read-only mode."
    );
    assert_eq!(
        started.trace.entry("banned_users").map(|e| e.status),
        Some(EntryStatus::NotMatched)
    );
}

#[tokio::test]
async fn a_blocking_or_failing_session_hook_stops_the_session() {
    let registry = registry(&[
        "org_policy",
        "house_rules",
        "banned_users",
        "flaky_session_hook",
    ]);
    let stopped = registry
        .start_session(HookContext::session().with_user("mallory"))
        .await
        .expect_err("the session must not start");
    assert_eq!(stopped.hook, "banned_users");
    assert_eq!(
        stopped.to_string(),
        "session stopped by hook `banned_users`: user is suspended"
    );

    let stopped = registry
        .start_session(HookContext::session().with_user("crash"))
        .await
        .expect_err("a failing hook fails closed");
    assert_eq!(stopped.hook, "flaky_session_hook");
    assert!(
        stopped.reason.contains("profile service down"),
        "{}",
        stopped.reason
    );
}

// ---- surfaces ------------------------------------------------------------------

#[tokio::test]
async fn evaluation_runs_bypass_hooks_and_the_trace_says_so() {
    let registry = registry(&["refuse_big_limits"]);
    let ctx = HookContext::tool_call("limit_probe", json!({"limit": 7}))
        .with_surface(Surface::Evaluation);
    let report = registry.run_tool_call(ctx, echo_args).await;
    assert!(report.tool_ran);
    assert!(report.trace.bypassed());
    assert!(report.trace.to_string().contains("bypassed"));

    let ctx = HookContext::tool_call("limit_probe", json!({"limit": 7}))
        .with_surface(Surface::WorkflowNode);
    assert!(
        registry
            .run_tool_call(ctx, echo_args)
            .await
            .observation
            .is_blocked()
    );
}

// ---- registry --------------------------------------------------------------------

#[test]
fn an_unknown_name_is_an_error_with_a_suggestion() {
    let error = HookRegistry::builder()
        .registered_named(["cap_limt"])
        .build()
        .expect_err("unknown name");
    assert_eq!(
        error,
        RegistryError::UnknownHook {
            name: "cap_limt".into(),
            suggestion: Some("cap_limit".into())
        }
    );
    assert_eq!(
        error.to_string(),
        "unknown hook \"cap_limt\"; did you mean \"cap_limit\"?"
    );
}

#[test]
fn duplicate_names_are_an_error() {
    let error = HookRegistry::builder()
        .registered_named(["cap_limit", "cap_limit"])
        .build()
        .expect_err("duplicate");
    // One attribute named twice: both places are the attribute's.
    let at = format!("tests/dispatch.rs:{CAP_LIMIT_LINE}");
    assert_eq!(
        error.to_string(),
        format!(
            "duplicate hook name \"cap_limit\": declared at {at} (pre_tool_use) and {at} \
             (pre_tool_use), the same declaration added twice; hook names must be unique within \
             a registry, so rename one (or add it once)"
        )
    );
}

#[test]
fn every_registration_mistake_is_reported_at_once() {
    let error = HookRegistry::builder()
        .registered_named(["nope_nope", "cap_limit", "cap_limit"])
        .build()
        .expect_err("two mistakes");
    assert_eq!(error.errors().len(), 2);
}

#[test]
fn describe_renders_the_run_order() {
    let registry = registry(&[
        "house_rules",
        "too_slow",
        "cap_limit",
        "wrap_result",
        "optional_enrichment",
    ]);
    let table = registry.describe();
    let expected = "\
#  point          name                 priority  when                         timeout  on_error
1  session_start  house_rules          1         (always)                     30s      fail_closed
2  pre_tool_use   cap_limit            1         tool_name == \"limit_probe\"   30s      fail_closed
3  pre_tool_use   optional_enrichment  50        tool_name == \"failing_open\"  30s      fail_open
4  pre_tool_use   too_slow             50        tool_name == \"failing_slow\"  50ms     fail_closed
5  post_tool_use  wrap_result          1         tool_name == \"post_probe\"    30s      fail_closed
";
    assert_eq!(table, expected);
}

#[test]
fn everything_registered_includes_every_attribute_hook() {
    let registry = HookRegistry::from_registered().expect("no duplicates in this test binary");
    assert!(
        registry
            .pre_tool_use()
            .iter()
            .any(|hook| hook.name() == "cap_limit")
    );
    assert!(
        registry
            .post_tool_use()
            .iter()
            .any(|hook| hook.name() == "wrap_result")
    );
    assert!(
        registry
            .session_start_hooks()
            .iter()
            .any(|hook| hook.name() == "house_rules")
    );
}

// ---- concurrency -------------------------------------------------------------------

#[pre_tool_use(when = tool_name == "concurrent_probe")]
async fn stamp_args(ctx: &HookContext) -> HookResult {
    // Yield so that calls interleave.
    tokio::task::yield_now().await;
    let n = ctx.tool_args["n"].as_i64().unwrap_or(-1);
    HookResult::allow()
        .with_args(json!({"n": n, "stamped": true}))
        .with_side_effect(format!("stamped {n}"))
}

#[post_tool_use(when = tool_name == "concurrent_probe")]
async fn double_result(ctx: &HookContext) -> HookResult {
    tokio::task::yield_now().await;
    let n = ctx.result().and_then(Value::as_i64).unwrap_or(-1);
    HookResult::allow().with_result(json!(n * 2))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_registry_serves_100_concurrent_calls_each_with_its_own_state() {
    let registry = registry(&["stamp_args", "double_result"]);
    let mut tasks = Vec::new();
    for n in 0..100i64 {
        let registry = registry.clone();
        tasks.push(tokio::spawn(async move {
            let ctx = HookContext::tool_call("concurrent_probe", json!({"n": n}));
            let report = registry
                .run_tool_call(ctx, async |args: &Value| {
                    tokio::task::yield_now().await;
                    assert_eq!(args["stamped"], json!(true));
                    Ok::<_, String>(args["n"].clone())
                })
                .await;
            (n, report)
        }));
    }
    for task in tasks {
        let (n, report) = task.await.expect("task");
        assert_eq!(report.args, json!({"n": n, "stamped": true}));
        assert_eq!(report.observation, Observation::Output(json!(n * 2)));
        let effects: Vec<&str> = report.trace.side_effects().collect();
        assert_eq!(effects, [format!("stamped {n}")]);
    }
}

#[pre_tool_use(priority = 1, when = tool_name starts_with "sealed_")]
async fn seal_approved_args(_: &HookContext) -> HookResult {
    HookResult::allow().sealing_args()
}

#[pre_tool_use(priority = 2, when = tool_name == "sealed_then_changed")]
async fn change_after_seal(ctx: &HookContext) -> HookResult {
    let mut args = ctx.tool_args.clone();
    args["amount"] = json!(999_999);
    HookResult::allow().with_args(args)
}

#[pre_tool_use(priority = 3, when = tool_name == "sealed_then_same")]
async fn same_after_seal(ctx: &HookContext) -> HookResult {
    HookResult::allow().with_args(ctx.tool_args.clone())
}

#[tokio::test]
async fn sealed_arguments_cannot_be_changed_by_later_hooks() {
    let registry = HookRegistry::builder()
        .registered_named(["seal_approved_args", "change_after_seal", "same_after_seal"])
        .build()
        .expect("registry");
    let run = async |tool: &str| {
        registry
            .run_tool_call(
                HookContext::tool_call(tool, json!({"amount": 10})),
                async |args: &Value| Ok::<_, String>(args.clone()),
            )
            .await
    };
    let changed = run("sealed_then_changed").await;
    assert!(!changed.tool_ran);
    assert_eq!(changed.stopped_by(), Some("change_after_seal"));
    assert!(
        changed
            .observation
            .to_string()
            .contains("after hook `seal_approved_args` sealed them"),
        "{}",
        changed.observation
    );
    let same = run("sealed_then_same").await;
    assert_eq!(same.observation, Observation::Output(json!({"amount": 10})));
}

/// A hand-written hook whose trigger check panics on tools named `trips_*`.
struct TrippingTrigger {
    name: &'static str,
    policy: ErrorPolicy,
    priority: i32,
}

impl Hook for TrippingTrigger {
    fn name(&self) -> &str {
        self.name
    }
    fn priority(&self) -> i32 {
        self.priority
    }
    fn should_trigger(&self, ctx: &HookContext) -> bool {
        if ctx.tool_name.starts_with("trips_") {
            panic!("trigger bug in {}", self.name);
        }
        false
    }
    fn execute<'a>(&'a self, _ctx: &'a HookContext) -> hooks::HookOutcome<'a> {
        HookResult::allow().into()
    }
    fn on_error(&self) -> ErrorPolicy {
        self.policy
    }
}

impl PreToolUseHook for TrippingTrigger {}

/// Marks the arguments (at priority 60) so a test can see that it ran.
struct MarkArgs(&'static str);

impl Hook for MarkArgs {
    fn name(&self) -> &str {
        self.0
    }
    fn priority(&self) -> i32 {
        60
    }
    fn execute<'a>(&'a self, ctx: &'a HookContext) -> hooks::HookOutcome<'a> {
        let mut args = ctx.tool_args.clone();
        args[self.0] = json!(true);
        HookResult::allow().with_args(args).into()
    }
}

impl PreToolUseHook for MarkArgs {}

#[tokio::test]
async fn a_panicking_trigger_check_blocks_and_later_hooks_do_not_run() {
    let registry = HookRegistry::builder()
        .pre(TrippingTrigger {
            name: "tripping",
            policy: ErrorPolicy::FailClosed,
            priority: 10,
        })
        .pre(MarkArgs("after"))
        .build()
        .expect("registry builds");
    let (report, runs) = run_counting(&registry, "trips_closed").await;
    assert_blocked(
        &report,
        runs,
        "tripping",
        "panicked: trigger bug in tripping",
    );
    assert_eq!(
        report.trace.entry("after").map(|entry| entry.status),
        Some(EntryStatus::NotReached)
    );
}

#[tokio::test]
async fn after_a_fail_open_trigger_panic_the_chain_goes_on() {
    let registry = HookRegistry::builder()
        .pre(MarkArgs("first"))
        .pre(TrippingTrigger {
            name: "tripping_open",
            policy: ErrorPolicy::FailOpen,
            priority: 65,
        })
        .pre(TrippingTrigger {
            name: "quiet",
            policy: ErrorPolicy::FailOpen,
            priority: 70,
        })
        .build()
        .expect("registry builds");
    // Only `tripping_open` and `quiet` trip on `trips_*`; `first` runs before them.
    let (report, runs) = run_counting(&registry, "trips_open").await;
    assert_eq!(runs, 1);
    assert_eq!(report.args, json!({"first": true}));
    let decisions: Vec<(String, String)> = report
        .trace
        .entries()
        .map(|entry| {
            let decision = match entry.decision() {
                Some(decision) => decision.to_string(),
                None => format!("{:?}", entry.status),
            };
            (entry.name.to_owned(), decision)
        })
        .collect();
    assert_eq!(
        decisions,
        [
            ("first".to_owned(), "allowed, rewrote".to_owned()),
            (
                "tripping_open".to_owned(),
                "failed open (ignored): panicked: trigger bug in tripping_open".to_owned()
            ),
            (
                "quiet".to_owned(),
                "failed open (ignored): panicked: trigger bug in quiet".to_owned()
            ),
        ]
    );
}

/// Waits 20 ms before it decides.
struct SlowToDecide;

impl Hook for SlowToDecide {
    fn name(&self) -> &str {
        "slow_to_decide"
    }
    fn execute<'a>(&'a self, _ctx: &'a HookContext) -> hooks::HookOutcome<'a> {
        hooks::HookOutcome::pending(async {
            tokio::time::sleep(Duration::from_millis(20)).await;
            Ok(HookResult::allow())
        })
    }
}

impl PreToolUseHook for SlowToDecide {}

#[tokio::test]
async fn a_hook_that_waits_is_timed_and_one_that_decides_at_once_is_not() {
    let registry = HookRegistry::builder()
        .pre(SlowToDecide)
        .pre(MarkArgs("at_once"))
        .build()
        .expect("registry builds");
    let (report, runs) = run_counting(&registry, "anything").await;
    assert_eq!(runs, 1);
    let waited = &report.trace.runs()[0];
    assert_eq!(report.trace.name_of(waited), "slow_to_decide");
    assert_eq!(waited.decision, Decision::Allowed { rewrote: false });
    assert!(
        waited
            .duration
            .is_some_and(|waited| waited >= Duration::from_millis(20)),
        "traced {:?}",
        waited.duration
    );
    let at_once = &report.trace.runs()[1];
    assert_eq!(report.trace.name_of(at_once), "at_once");
    assert_eq!(at_once.duration, None);
}

#[pre_tool_use(timeout = "50ms", when = tool_name == "budget_spender")]
async fn spends_its_budget(_ctx: &HookContext) -> HookResult {
    // Always ready, so it only ever yields when tokio's budget runs out.
    loop {
        tokio::task::consume_budget().await;
    }
}

#[tokio::test]
async fn a_hook_that_spends_the_cooperative_budget_still_times_out() {
    // Tokio's own timeout copes with a spent budget: it ends this test if
    // the hook's timeout does not.
    let (report, runs) = tokio::time::timeout(
        Duration::from_secs(10),
        run_counting(&registry(&["spends_its_budget"]), "budget_spender"),
    )
    .await
    .expect("the hook's own timeout ends the call");
    assert_blocked(&report, runs, "spends_its_budget", "timed out after 50ms");
}

/// Callers spawn tool calls on multi-threaded runtimes: the call future must
/// stay `Send` (checked at compile time).
#[allow(dead_code)]
fn the_tool_call_future_is_send(registry: &HookRegistry) {
    fn send<T: Send>(_: T) {}
    send(registry.run_tool_call(HookContext::tool_call("t", json!({})), echo_args));
}

#[pre_tool_use(when = tool_name == "no_timer")]
async fn yields_once(_ctx: &HookContext) -> HookResult {
    tokio::task::yield_now().await;
    HookResult::allow()
}

#[test]
fn a_waiting_hook_on_a_runtime_without_timers_fails_closed() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("a runtime without timers");
    let (report, runs) =
        runtime.block_on(async { run_counting(&registry(&["yields_once"]), "no_timer").await });
    assert_blocked(
        &report,
        runs,
        "yields_once",
        "its timeout could not be armed",
    );
    assert!(
        report.observation.to_string().contains("timers enabled"),
        "{}",
        report.observation
    );
}

/// A hook whose name and `when` text come from outside (a config file).
struct OddlyNamed {
    name: String,
    when: String,
}

impl Hook for OddlyNamed {
    fn name(&self) -> &str {
        &self.name
    }
    fn when_source(&self) -> Option<&str> {
        Some(&self.when)
    }
    fn execute<'a>(&'a self, _ctx: &'a HookContext) -> hooks::HookOutcome<'a> {
        HookResult::allow().with_side_effect("looked").into()
    }
}

impl PreToolUseHook for OddlyNamed {}

#[tokio::test]
async fn tables_and_traces_survive_huge_and_hidden_names() {
    let huge = "n".repeat(70_000);
    let registry = HookRegistry::builder()
        .pre(OddlyNamed {
            name: huge.clone(),
            when: format!("tool_name == \"{}\"", "w".repeat(70_000)),
        })
        .pre(OddlyNamed {
            name: "approve\u{202E}evorppa".into(),
            when: "tool_name == \"x\u{200B}\"".into(),
        })
        .build()
        .expect("registry");
    let table = registry.describe();
    assert!(
        table.lines().all(|line| line.chars().count() < 400),
        "{table}"
    );
    assert!(table.contains("approve\\u{202E}evorppa"), "{table}");
    assert!(table.contains("x\\u{200B}"), "{table}");
    assert!(!table.contains('\u{202E}'));
    let report = registry
        .run_tool_call(HookContext::tool_call("t", json!({})), async |_: &Value| {
            Ok::<_, String>(json!(1))
        })
        .await;
    let trace = report.trace.to_string();
    assert!(trace.contains("looked"), "{trace}");
    assert!(!trace.contains(&huge));
}

#[tokio::test]
async fn a_dry_run_refuses_a_hidden_tool_name_as_a_real_run_does() {
    let registry = registry(&["cap_limit"]);
    let explanation = registry
        .explain(HookContext::tool_call("limit_probe\u{0}", json!({})), false)
        .await;
    assert_eq!(explanation.blocked_by.as_deref(), Some("runtime"));
    assert!(
        explanation.steps[1..]
            .iter()
            .all(|step| step.verdict == hooks::trace::ExplainVerdict::NotReached)
    );
}

#[tokio::test]
async fn a_hook_that_decides_at_once_is_traced_without_a_duration() {
    let registry = registry(&["cap_limit"]);
    let report = registry
        .run_tool_call(
            HookContext::tool_call("limit_probe", json!({"limit": 5})),
            async |_: &Value| Ok::<_, String>(json!("ok")),
        )
        .await;
    let run = &report.trace.runs()[0];
    assert_eq!(run.duration, None, "decided at once: no clock read");
    assert!(
        report.trace.to_string().contains("(at once)"),
        "{}",
        report.trace
    );
}

// ---- is_error ------------------------------------------------------------------

#[pre_tool_use(when = tool_name == "is_error_probe" && args.block == true)]
async fn is_error_blocker(_: &HookContext) -> HookResult {
    HookResult::block("not this one")
}

#[post_tool_use(when = tool_name == "is_error_probe" && args.withhold == true)]
async fn is_error_withholder(_: &HookContext) -> HookResult {
    HookResult::block("result contains a secret")
}

#[post_tool_use(when = tool_name == "is_error_probe" && args.recover == true)]
async fn is_error_recoverer(_: &HookContext) -> HookResult {
    HookResult::allow().with_result(json!("cached value"))
}

async fn fail_or_echo(args: &Value) -> Result<Value, String> {
    if args["fail"] == true {
        Err("disk full".to_owned())
    } else {
        Ok(args.clone())
    }
}

/// `is_error` is true exactly when the LLM is not given a result: a tool
/// error, a block, a withheld result; a result (also one a post hook put in
/// place of a tool error) is not an error.
#[tokio::test]
async fn is_error_is_true_for_a_tool_error_a_block_and_a_withheld_result() {
    let registry = registry(&[
        "is_error_blocker",
        "is_error_withholder",
        "is_error_recoverer",
    ]);
    for (args, is_error, shape) in [
        (json!({}), false, "output"),
        (json!({"fail": true}), true, "tool error"),
        (json!({"block": true}), true, "blocked"),
        (json!({"withhold": true}), true, "withheld"),
        (json!({"fail": true, "recover": true}), false, "recovered"),
    ] {
        let report = registry
            .run_tool_call(
                HookContext::tool_call("is_error_probe", args.clone()),
                fail_or_echo,
            )
            .await;
        let observation = &report.observation;
        match shape {
            "output" | "recovered" => assert!(observation.output().is_some(), "{observation:?}"),
            "tool error" => assert!(
                matches!(observation, Observation::ToolError(m) if m == "disk full"),
                "{observation:?}"
            ),
            "blocked" => assert!(observation.is_blocked(), "{observation:?}"),
            _ => assert!(
                matches!(observation, Observation::Withheld { .. }),
                "{observation:?}"
            ),
        }
        assert_eq!(observation.is_error(), is_error, "{args}: {observation:?}");
    }
}

// ---- serialization ---------------------------------------------------------------

#[pre_tool_use(priority = 1, when = tool_name == "serialize_probe")]
async fn serialize_capper(ctx: &HookContext) -> HookResult {
    let mut args = ctx.tool_args.clone();
    args["limit"] = json!(10);
    HookResult::allow()
        .with_args(args)
        .with_side_effect("capped limit")
}

#[pre_tool_use(priority = 2, when = tool_name == "nothing_else")]
async fn serialize_unmatched(_: &HookContext) -> HookResult {
    HookResult::block("never")
}

#[post_tool_use(when = tool_name == "serialize_probe")]
async fn serialize_redactor(_: &HookContext) -> HookResult {
    HookResult::allow().with_result(json!("[redacted]"))
}

/// A report serializes with what an audit pipeline keeps: the observation,
/// the arguments the tool got, whether it ran, each hook's status and
/// decision, and the tool's own result when a post hook replaced it. A
/// context serializes with its fields: the point as its event name
/// (`PreToolUse`), the surface as its `when` name (`api`).
#[tokio::test]
async fn a_report_and_a_context_serialize_with_their_key_fields() {
    let registry = registry(&[
        "serialize_capper",
        "serialize_unmatched",
        "serialize_redactor",
    ]);
    let ctx = HookContext::tool_call("serialize_probe", json!({"limit": 500}))
        .with_user("u1")
        .with_surface(Surface::Api);
    let context = serde_json::to_value(&ctx).expect("a context serializes");
    assert_eq!(context["tool_name"], "serialize_probe");
    assert_eq!(context["user_id"], "u1");
    assert_eq!(context["point"], "PreToolUse");
    assert_eq!(context["surface"], "api");
    assert_eq!(context["tool_outcome"], Value::Null);

    let report = registry.run_tool_call(ctx, echo_args).await;
    assert!(!report.observation.is_error());
    let value = serde_json::to_value(&report).expect("a report serializes");
    assert_eq!(value["observation"], json!({"output": "[redacted]"}));
    assert_eq!(value["args"], json!({"limit": 10}));
    assert_eq!(value["tool_ran"], true);
    assert_eq!(value["tool_outcome"], json!({"success": {"limit": 10}}));
    assert_eq!(value["trace"]["bypassed"], false);
    let hooks = value["trace"]["hooks"].as_array().expect("hooks");
    let summary: Vec<(&str, &str, &str)> = hooks
        .iter()
        .map(|h| {
            (
                h["point"].as_str().unwrap_or("?"),
                h["name"].as_str().unwrap_or("?"),
                h["status"].as_str().unwrap_or("?"),
            )
        })
        .collect();
    assert_eq!(
        summary,
        [
            ("PreToolUse", "serialize_capper", "ran"),
            ("PreToolUse", "serialize_unmatched", "not_matched"),
            ("PostToolUse", "serialize_redactor", "ran"),
        ]
    );
    assert_eq!(hooks[0]["decision"], json!({"allowed": {"rewrote": true}}));
    assert_eq!(hooks[0]["side_effects"], json!(["capped limit"]));
    assert_eq!(hooks[1].get("decision"), None);

    let blocked = registry
        .run_tool_call(HookContext::tool_call("nothing_else", json!({})), echo_args)
        .await;
    let value = serde_json::to_value(&blocked).expect("a report serializes");
    assert_eq!(
        value["observation"],
        json!({"blocked": {"hook": "serialize_unmatched", "reason": "never"}})
    );
    assert_eq!(value["tool_ran"], false);
    assert_eq!(
        value["trace"]["hooks"][1]["decision"],
        json!({"blocked": "never"})
    );
}
