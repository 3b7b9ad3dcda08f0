//! One chain engine for every caller: a tool call, session start and explain
//! (the dry run) apply a hook's outcome, sealed arguments and the error
//! policy the same way. Each rule is pinned by the dispatch tests on tool
//! calls; here each other caller is checked against a real tool call.

use std::time::Duration;

use hooks::{
    ErrorPolicy, Hook, HookContext, HookError, HookOutcome, HookRegistry, HookResult, Observation,
    PostToolUseHook, PreToolUseHook, SessionStartHook, ToolOutcome, trace::ExplainVerdict,
};
use serde_json::{Value, json};

/// What a scripted hook does.
#[derive(Clone, Copy)]
enum Act {
    /// Allows, sealing the arguments.
    Seal,
    /// Allows, rewriting the arguments to `{"changed": true}`.
    Rewrite,
    /// Allows, rewriting the tool's result to `"rewritten"`.
    RewriteResult,
    /// Allows, adding session context.
    Context(&'static str),
    /// Blocks.
    Block,
    /// Returns an error (at once).
    Fail,
    /// Panics inside its future.
    PanicLater,
    /// Panics in its trigger check.
    TriggerPanics,
    /// Waits longer than its 20 ms timeout.
    Hang,
}

struct Scripted {
    name: &'static str,
    priority: i32,
    act: Act,
    policy: ErrorPolicy,
}

fn hook(name: &'static str, priority: i32, act: Act, policy: ErrorPolicy) -> Scripted {
    Scripted {
        name,
        priority,
        act,
        policy,
    }
}

impl Hook for Scripted {
    fn name(&self) -> &str {
        self.name
    }
    fn priority(&self) -> i32 {
        self.priority
    }
    fn should_trigger(&self, _: &HookContext) -> bool {
        if let Act::TriggerPanics = self.act {
            panic!("trigger bug");
        }
        true
    }
    fn execute<'a>(&'a self, _: &'a HookContext) -> HookOutcome<'a> {
        match self.act {
            Act::Seal => HookResult::allow().sealing_args().into(),
            Act::Rewrite => HookResult::allow()
                .with_args(json!({"changed": true}))
                .into(),
            Act::RewriteResult => HookResult::allow().with_result(json!("rewritten")).into(),
            Act::Context(text) => HookResult::allow().with_context(text).into(),
            Act::Block => HookResult::block("scripted block").into(),
            Act::Fail => HookOutcome::Ready(Err(HookError::new("scripted failure"))),
            Act::PanicLater => HookOutcome::pending(async { panic!("scripted panic") }),
            Act::TriggerPanics => HookResult::allow().into(),
            Act::Hang => HookOutcome::pending(async {
                tokio::time::sleep(Duration::from_secs(3600)).await;
                Ok(HookResult::allow())
            }),
        }
    }
    fn timeout(&self) -> Duration {
        Duration::from_millis(20)
    }
    fn on_error(&self) -> ErrorPolicy {
        self.policy
    }
}

impl PreToolUseHook for Scripted {}
impl SessionStartHook for Scripted {}
impl PostToolUseHook for Scripted {}

const CLOSED: ErrorPolicy = ErrorPolicy::FailClosed;
const OPEN: ErrorPolicy = ErrorPolicy::FailOpen;

fn pre_registry(hooks: Vec<Scripted>) -> HookRegistry {
    hooks
        .into_iter()
        .fold(HookRegistry::builder(), |builder, hook| builder.pre(hook))
        .build()
        .expect("registry builds")
}

fn post_registry(hooks: Vec<Scripted>) -> HookRegistry {
    hooks
        .into_iter()
        .fold(HookRegistry::builder(), |builder, hook| builder.post(hook))
        .build()
        .expect("registry builds")
}

fn session_registry(hooks: Vec<Scripted>) -> HookRegistry {
    hooks
        .into_iter()
        .fold(HookRegistry::builder(), |builder, hook| {
            builder.session_start(hook)
        })
        .build()
        .expect("registry builds")
}

/// Runs a real tool call and its dry run, and checks that they agree on
/// whether and by whom the call is blocked, and on the final arguments.
async fn call_and_explain(registry: &HookRegistry) -> (Observation, hooks::trace::Explanation) {
    let ctx = HookContext::tool_call("sql_exec", json!({"q": 1}));
    let report = registry
        .run_tool_call(ctx.clone(), async |args: &Value| {
            Ok::<_, String>(args.clone())
        })
        .await;
    let explanation = registry.explain(ctx, false).await;
    assert_eq!(
        explanation.blocked_by.as_deref(),
        report.stopped_by(),
        "explain and the tool call disagree: {explanation:?} vs {:?}",
        report.observation
    );
    (report.observation, explanation)
}

fn verdict<'e>(explanation: &'e hooks::trace::Explanation, name: &str) -> &'e ExplainVerdict {
    &explanation
        .steps
        .iter()
        .find(|step| step.name == name)
        .expect("the hook is in the explanation")
        .verdict
}

#[tokio::test]
async fn explain_blocks_a_rewrite_after_sealed_args_like_a_tool_call() {
    let registry = pre_registry(vec![
        hook("approves", 10, Act::Seal, CLOSED),
        hook("rewrites", 20, Act::Rewrite, CLOSED),
    ]);
    let (observation, explanation) = call_and_explain(&registry).await;
    let Observation::Blocked { hook, reason } = &observation else {
        panic!("the tool call must be blocked: {observation:?}");
    };
    assert_eq!(hook, "rewrites");
    assert!(
        reason.contains("after hook `approves` sealed them"),
        "{reason}"
    );
    assert_eq!(
        verdict(&explanation, "rewrites"),
        &ExplainVerdict::Block {
            reason: reason.clone()
        }
    );
}

#[tokio::test]
async fn explain_lets_a_rewrite_through_when_nothing_is_sealed() {
    let registry = pre_registry(vec![hook("rewrites", 20, Act::Rewrite, CLOSED)]);
    let (observation, explanation) = call_and_explain(&registry).await;
    assert_eq!(observation, Observation::Output(json!({"changed": true})));
    assert_eq!(
        verdict(&explanation, "rewrites"),
        &ExplainVerdict::Rewrite {
            args: json!({"changed": true})
        }
    );
}

#[tokio::test]
async fn explain_honours_fail_closed_and_fail_open_like_a_tool_call() {
    for (act, cause) in [
        (Act::Fail, "returned an error: scripted failure"),
        (Act::PanicLater, "panicked: scripted panic"),
        (Act::TriggerPanics, "panicked: trigger bug"),
        (Act::Hang, "timed out after 20ms"),
    ] {
        let closed = pre_registry(vec![hook("failing", 10, act, CLOSED)]);
        let (observation, explanation) = call_and_explain(&closed).await;
        assert!(observation.to_string().contains(cause), "{observation}");
        assert!(
            matches!(
                verdict(&explanation, "failing"),
                ExplainVerdict::Fail { failure, blocks: true } if failure.contains(cause)
            ),
            "{explanation:?}"
        );

        let open = pre_registry(vec![
            hook("failing", 10, act, OPEN),
            hook("blocks", 20, Act::Block, CLOSED),
        ]);
        let (observation, explanation) = call_and_explain(&open).await;
        assert_eq!(open.len(), 2);
        assert!(
            matches!(
                verdict(&explanation, "failing"),
                ExplainVerdict::Fail { blocks: false, .. }
            ),
            "{explanation:?}"
        );
        // The chain went on to the next hook, in both.
        assert_eq!(
            observation.to_string(),
            "Blocked by hook `blocks`: scripted block"
        );
    }
}

#[tokio::test]
async fn session_start_stops_on_a_block_or_a_fail_closed_failure_and_not_on_fail_open() {
    let blocked = session_registry(vec![
        hook("greets", 10, Act::Context("hello"), CLOSED),
        hook("blocks", 20, Act::Block, CLOSED),
        hook("later", 30, Act::Context("never"), CLOSED),
    ]);
    let stopped = blocked
        .start_session(HookContext::session())
        .await
        .expect_err("the block stops the session");
    assert_eq!(
        (stopped.hook.as_str(), stopped.reason.as_str()),
        ("blocks", "scripted block")
    );
    assert_eq!(
        stopped.trace.runs().len(),
        2,
        "the chain stops at the block"
    );

    for (act, cause) in [
        (Act::Fail, "returned an error: scripted failure"),
        (Act::PanicLater, "panicked: scripted panic"),
        (Act::TriggerPanics, "panicked: trigger bug"),
        (Act::Hang, "timed out after 20ms"),
    ] {
        let closed = session_registry(vec![hook("failing", 10, act, CLOSED)]);
        let stopped = closed
            .start_session(HookContext::session())
            .await
            .expect_err("a fail-closed failure stops the session");
        assert_eq!(stopped.hook, "failing");
        assert!(
            stopped.reason.contains(cause)
                && stopped
                    .reason
                    .ends_with("the session does not start because the hook fails closed"),
            "{}",
            stopped.reason
        );

        let open = session_registry(vec![
            hook("failing", 10, act, OPEN),
            hook("greets", 20, Act::Context("hello"), CLOSED),
        ]);
        let started = open
            .start_session(HookContext::session())
            .await
            .expect("a fail-open failure is ignored");
        assert_eq!(started.context, "hello", "the chain went on");
        assert!(
            started.trace.runs()[0]
                .decision
                .to_string()
                .starts_with("failed open (ignored)"),
            "{}",
            started.trace
        );
    }
}

#[tokio::test]
async fn session_start_joins_context_in_run_order_and_records_at_once_hooks_untimed() {
    let registry = session_registry(vec![
        hook("second", 20, Act::Context("two"), CLOSED),
        hook("first", 10, Act::Context("one"), CLOSED),
        hook("sealer", 30, Act::Seal, CLOSED),
    ]);
    let started = registry
        .start_session(HookContext::session())
        .await
        .expect("starts");
    assert_eq!(started.context, "one\n\ntwo");
    assert!(
        started
            .trace
            .runs()
            .iter()
            .all(|run| run.duration.is_none())
    );
}

/// The post hooks' dry run shows the model what a real call would: a
/// rewritten result, a withheld one (by a block, or by a failure that fails
/// closed) and the result untouched past a failure that fails open.
#[tokio::test]
async fn explain_result_agrees_with_a_real_call_on_what_the_model_sees() {
    let cases = [
        vec![hook("rewrites", 10, Act::RewriteResult, CLOSED)],
        vec![hook("withholds", 10, Act::Block, CLOSED)],
        vec![
            hook("rewrites", 10, Act::RewriteResult, CLOSED),
            hook("fails", 20, Act::Fail, CLOSED),
        ],
        vec![hook("panics", 10, Act::PanicLater, CLOSED)],
        vec![hook("hangs", 10, Act::Hang, CLOSED)],
        vec![
            hook("fails", 10, Act::TriggerPanics, OPEN),
            hook("rewrites", 20, Act::RewriteResult, CLOSED),
        ],
    ];
    for hooks in cases {
        let names: Vec<&str> = hooks.iter().map(|h| h.name).collect();
        let registry = post_registry(hooks);
        let ctx = HookContext::tool_call("read", json!({}));
        let real = registry
            .run_tool_call(ctx.clone(), async |_: &Value| {
                Ok::<_, String>(json!("original"))
            })
            .await;
        let dry = registry
            .explain_result(ctx, ToolOutcome::Success(json!("original")), false)
            .await;
        assert_eq!(dry.observation, real.observation, "{names:?}: {dry:?}");
        assert_eq!(
            dry.withheld_by.is_some(),
            matches!(real.observation, Observation::Withheld { .. }),
            "{names:?}"
        );
        assert_eq!(dry.steps.len(), names.len());
    }
}

/// A pre-hook dry run names the reason a real call's observation carries,
/// for a block and for a failure that fails closed.
#[tokio::test]
async fn explain_gives_the_reason_a_real_call_shows() {
    for act in [Act::Block, Act::Fail, Act::PanicLater] {
        let registry = pre_registry(vec![hook("stops", 10, act, CLOSED)]);
        let (observation, explanation) = call_and_explain(&registry).await;
        let Observation::Blocked { hook, reason } = observation else {
            panic!("blocked: {observation:?}");
        };
        assert_eq!(explanation.blocked_by.as_deref(), Some(hook.as_str()));
        assert_eq!(explanation.reason.as_deref(), Some(reason.as_str()));
    }
}

/// A hook that would run an external command (not run in a dry run).
struct External;

impl Hook for External {
    fn name(&self) -> &str {
        "normalizer"
    }
    fn priority(&self) -> i32 {
        5
    }
    fn should_trigger(&self, _: &HookContext) -> bool {
        true
    }
    fn execute<'a>(&'a self, _: &'a HookContext) -> HookOutcome<'a> {
        HookResult::allow().with_args(json!({"q": "clean"})).into()
    }
    fn dry_run(&self) -> hooks::DryRun {
        hooks::DryRun::External
    }
}
impl PreToolUseHook for External {}

/// A command that was not run before a block could have rewritten the
/// arguments so that the block would not happen: the outcome is unknown,
/// not "blocked", so a policy table cannot pass on a guess.
#[tokio::test]
async fn a_block_after_a_command_not_run_is_unknown() {
    let registry = HookRegistry::builder()
        .pre(External)
        .pre(hook("blocks", 20, Act::Block, CLOSED))
        .build()
        .expect("registry");
    let explanation = registry
        .explain(HookContext::tool_call("sql_exec", json!({"q": 1})), false)
        .await;
    assert_eq!(explanation.outcome, hooks::trace::ExplainOutcome::WouldRun);
    let explanation = registry
        .explain(HookContext::tool_call("sql_exec", json!({"q": 1})), true)
        .await;
    assert_eq!(explanation.outcome, hooks::trace::ExplainOutcome::Blocked);
}
