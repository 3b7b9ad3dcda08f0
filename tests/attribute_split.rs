//! The attribute's split: a hook fn whose body has no `.await` becomes a
//! plain fn that decides at once (`HookOutcome::Ready`); one with an
//! `.await` becomes a future. The split changes nothing a user relies on:
//! panics, `?`, early returns and errors fail the same way on both paths, at
//! a tool call, at session start and in a dry run. (A `timeout` on a body
//! that never waits is a compile error: `tests/ui/fail/timeout_on_a_hook_that_never_waits.rs`.)
//!
//! One more test here needs a standard hook (the rate limit), so it lives
//! in this crate too: a dry run spends no real quota.

use hooks::prelude::*;
use hooks::trace::{Decision, ExplainVerdict, HookFailure};
use serde_json::{Value, json};

fn registry(names: &[&str]) -> HookRegistry {
    HookRegistry::builder()
        .registered_named(names)
        .build()
        .expect("registry builds")
}

async fn echo(args: &Value) -> Result<Value, String> {
    Ok(args.clone())
}

fn call(tool: &str) -> HookContext {
    HookContext::tool_call(tool, json!({"q": "SELECT 1"}))
}

// A ready hook (no `.await`) and a waiting one, with the same bodies.

#[pre_tool_use(when = tool_name == "ra_panic")]
async fn ra_ready_panics(ctx: &HookContext) -> HookResult {
    if ctx.tool_args["q"].is_string() {
        panic!("ready body bug");
    }
    HookResult::allow()
}

#[pre_tool_use(when = tool_name == "ra_panic_wait")]
async fn ra_waiting_panics(ctx: &HookContext) -> HookResult {
    std::future::ready(()).await;
    if ctx.tool_args["q"].is_string() {
        panic!("waiting body bug");
    }
    HookResult::allow()
}

#[derive(Debug)]
struct Denied;

impl std::fmt::Display for Denied {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("lookup failed")
    }
}

fn lookup(ctx: &HookContext) -> Result<(), Denied> {
    if ctx.tool_args["q"].is_string() {
        Err(Denied)
    } else {
        Ok(())
    }
}

#[pre_tool_use(when = tool_name == "ra_question")]
async fn ra_ready_question_mark(ctx: &HookContext) -> Result<HookResult, Denied> {
    lookup(ctx)?;
    Ok(HookResult::allow().with_args(json!({"after": "question mark"})))
}

/// An error whose `Display` panics: the conversion into a hook error runs
/// inside `execute` on the ready path.
struct BadDisplay;

impl std::fmt::Display for BadDisplay {
    fn fmt(&self, _: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        panic!("display bug")
    }
}

#[pre_tool_use(when = tool_name == "ra_bad_display")]
async fn ra_ready_bad_display(_ctx: &HookContext) -> Result<HookResult, BadDisplay> {
    Err(BadDisplay)
}

/// Its only `.await` is inside a closure it never calls: the check is
/// conservative and makes it wait; it still decides correctly.
#[pre_tool_use(when = tool_name == "ra_closure")]
async fn ra_await_in_closure(_ctx: &HookContext) -> HookResult {
    let _later = || async { std::future::ready(()).await };
    HookResult::block("closure hook decided")
}

#[session_start]
async fn ra_session_panics(_ctx: &HookContext) -> HookResult {
    panic!("session body bug")
}

#[tokio::test]
async fn a_panic_in_a_ready_body_fails_closed_like_one_in_a_waiting_body() {
    let registry = registry(&["ra_ready_panics", "ra_waiting_panics"]);
    for (tool, waited) in [("ra_panic", false), ("ra_panic_wait", true)] {
        let report = registry.run_tool_call(call(tool), echo).await;
        assert!(report.observation.is_blocked(), "{tool}");
        let run = &report.trace.runs()[0];
        assert_eq!(run.duration.is_some(), waited, "{tool}: the path taken");
        assert!(
            matches!(
                run.decision,
                Decision::Failed {
                    failure: HookFailure::Panicked(_),
                    ..
                }
            ),
            "{tool}: {:?}",
            run.decision
        );
        let explanation = registry.explain(call(tool), false).await;
        assert!(explanation.blocked_by.is_some(), "{tool}: dry run");
    }
}

#[tokio::test]
async fn question_mark_in_a_ready_body_is_a_failure_and_drops_the_rewrite() {
    let registry = registry(&["ra_ready_question_mark"]);
    let report = registry.run_tool_call(call("ra_question"), echo).await;
    assert!(report.observation.is_blocked());
    assert_eq!(report.args, json!({"q": "SELECT 1"}));
    assert!(matches!(
        &report.trace.runs()[0].decision,
        Decision::Failed { failure: HookFailure::Error(message), .. } if message == "lookup failed"
    ));
}

#[tokio::test]
async fn an_error_whose_display_panics_fails_closed() {
    let registry = registry(&["ra_ready_bad_display"]);
    let report = registry.run_tool_call(call("ra_bad_display"), echo).await;
    assert!(report.observation.is_blocked());
}

#[tokio::test]
async fn an_await_inside_a_closure_makes_the_hook_wait_and_it_still_decides() {
    let registry = registry(&["ra_await_in_closure"]);
    let report = registry.run_tool_call(call("ra_closure"), echo).await;
    assert_eq!(report.stopped_by(), Some("ra_await_in_closure"));
    assert!(
        report.trace.runs()[0].duration.is_some(),
        "took the waiting path"
    );
    let explanation = registry.explain(call("ra_closure"), false).await;
    assert!(matches!(
        explanation.steps[0].verdict,
        ExplainVerdict::Block { .. }
    ));
}

#[tokio::test]
async fn a_ready_session_hook_that_panics_stops_the_session() {
    let registry = registry(&["ra_session_panics"]);
    let stopped = registry
        .start_session(HookContext::session())
        .await
        .expect_err("fails closed");
    assert_eq!(stopped.hook, "ra_session_panics");
}

/// A dry run changes nothing: `explain` evaluates the connector rate limit,
/// which checks the user's quota without spending it, so the real call
/// that follows still gets the user's only call.
#[tokio::test(start_paused = true)]
async fn explain_does_not_spend_the_user_s_rate_limit_quota() {
    let limiter = hooks_std::ConnectorRateLimit::from_config(
        &json!({"default": {"calls": 1, "period": "1h"}}),
        None,
    )
    .expect("config");
    let registry = HookRegistry::builder()
        .pre(limiter)
        .build()
        .expect("registry builds");
    let ctx = || HookContext::tool_call("crm__lookup", json!({})).with_user("alice");
    let explanation = registry.explain(ctx(), false).await;
    assert_eq!(explanation.blocked_by, None, "{explanation:?}");
    let report = registry.run_tool_call(ctx(), echo).await;
    assert!(
        !report.observation.is_blocked(),
        "the dry run spent alice's only call: {:?}",
        report.observation
    );
}
