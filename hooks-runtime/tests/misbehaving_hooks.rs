//! Hooks and observers that misbehave — panic outside `execute`, overrun
//! their timeout, rewrite sealed arguments, quote hostile arguments in their
//! reasons — and callers that drop a call: nothing they do escapes the
//! dispatcher, lets a call through that should be blocked, or falsifies what
//! observers (the audit log), traces and dry runs report.

use std::panic::AssertUnwindSafe;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::FutureExt as _;
use hooks_runtime::{
    DryRun, ErrorPolicy, Hook, HookContext, HookError, HookFuture, HookOutcome, HookRegistry,
    HookResult, Observation, PostToolUseHook, PreToolUseHook, SessionStartHook,
    observer::{CallObserver, CallRecord},
    trace::{Decision, EntryStatus, ExplainVerdict, HookFailure},
};
use serde_json::{Value, json};

// ---------------------------------------------------------------- test hook

type Exec = dyn for<'a> Fn(&'a HookContext) -> HookOutcome<'a> + Send + Sync;

/// A hook whose every method is scripted.
struct Scripted {
    name: &'static str,
    priority: i32,
    trigger: Box<dyn Fn(&HookContext) -> bool + Send + Sync>,
    exec: Box<Exec>,
    timeout: Box<dyn Fn() -> Duration + Send + Sync>,
    policy: Box<dyn Fn() -> ErrorPolicy + Send + Sync>,
    dry_run: DryRun,
}

fn hook(
    name: &'static str,
    priority: i32,
    exec: impl for<'a> Fn(&'a HookContext) -> HookOutcome<'a> + Send + Sync + 'static,
) -> Scripted {
    Scripted {
        name,
        priority,
        trigger: Box::new(|_| true),
        exec: Box::new(exec),
        timeout: Box::new(|| Duration::from_secs(5)),
        policy: Box::new(|| ErrorPolicy::FailClosed),
        dry_run: DryRun::Evaluate,
    }
}

impl Scripted {
    fn timeout(mut self, timeout: impl Fn() -> Duration + Send + Sync + 'static) -> Self {
        self.timeout = Box::new(timeout);
        self
    }
    fn policy(mut self, policy: impl Fn() -> ErrorPolicy + Send + Sync + 'static) -> Self {
        self.policy = Box::new(policy);
        self
    }
    fn trigger(mut self, trigger: impl Fn(&HookContext) -> bool + Send + Sync + 'static) -> Self {
        self.trigger = Box::new(trigger);
        self
    }
    fn dry_run(mut self, dry_run: DryRun) -> Self {
        self.dry_run = dry_run;
        self
    }
}

impl Hook for Scripted {
    fn name(&self) -> &str {
        self.name
    }
    fn priority(&self) -> i32 {
        self.priority
    }
    fn should_trigger(&self, ctx: &HookContext) -> bool {
        (self.trigger)(ctx)
    }
    fn execute<'a>(&'a self, ctx: &'a HookContext) -> HookOutcome<'a> {
        (self.exec)(ctx)
    }
    fn timeout(&self) -> Duration {
        (self.timeout)()
    }
    fn on_error(&self) -> ErrorPolicy {
        (self.policy)()
    }
    fn dry_run(&self) -> DryRun {
        self.dry_run
    }
}

impl PreToolUseHook for Scripted {}
impl PostToolUseHook for Scripted {}
impl SessionStartHook for Scripted {}

// ------------------------------------------------------------ test observer

/// What an observer saw of one call.
#[derive(Debug, Clone)]
struct Seen {
    report_args: Value,
    ctx_args: Value,
    observation: Observation,
    tool_ran: bool,
    /// (hook name, status) for every trace entry.
    entries: Vec<(String, String)>,
}

#[derive(Default)]
struct Recorder {
    seen: Mutex<Vec<Seen>>,
}

impl CallObserver for Recorder {
    fn name(&self) -> &str {
        "recorder"
    }
    fn observe<'a>(&'a self, record: CallRecord<'a>) -> HookFuture<'a> {
        let entries = record
            .report
            .trace
            .entries()
            .map(|entry| {
                let status = match entry.status {
                    EntryStatus::NotMatched => "not matched".to_owned(),
                    EntryStatus::NotReached => "not reached".to_owned(),
                    EntryStatus::Interrupted => "interrupted".to_owned(),
                    EntryStatus::Ran(run) => format!("ran: {}", run.decision),
                };
                (entry.name.to_owned(), status)
            })
            .collect();
        self.seen.lock().unwrap().push(Seen {
            report_args: record.report.args.clone(),
            ctx_args: record.ctx.tool_args.clone(),
            observation: record.report.observation.clone(),
            tool_ran: record.report.tool_ran,
            entries,
        });
        Box::pin(async { Ok(HookResult::allow()) })
    }
}

/// An observer whose `timeout()` panics (a misbehaving observer).
struct TimeoutPanics;

impl CallObserver for TimeoutPanics {
    fn name(&self) -> &str {
        "timeout_panics"
    }
    fn observe<'a>(&'a self, _: CallRecord<'a>) -> HookFuture<'a> {
        Box::pin(async { Ok(HookResult::allow()) })
    }
    fn timeout(&self) -> Duration {
        panic!("observer timeout bug")
    }
}

/// An observer whose future panics.
struct FuturePanics;

impl CallObserver for FuturePanics {
    fn name(&self) -> &str {
        "future_panics"
    }
    fn observe<'a>(&'a self, _: CallRecord<'a>) -> HookFuture<'a> {
        Box::pin(async { panic!("observer future bug") })
    }
}

// ---------------------------------------------------------------- helpers

fn ctx() -> HookContext {
    HookContext::tool_call("sql_exec", json!({"q": "SELECT 1"}))
}

async fn echo(args: &Value) -> Result<Value, String> {
    Ok(args.clone())
}

fn allow<'a>() -> HookOutcome<'a> {
    HookResult::allow().into()
}

fn registry(pre: Vec<Scripted>, post: Vec<Scripted>) -> HookRegistry {
    let builder = pre
        .into_iter()
        .fold(HookRegistry::builder(), |builder, hook| builder.pre(hook));
    post.into_iter()
        .fold(builder, |builder, hook| builder.post(hook))
        .build()
        .expect("registry builds")
}

fn with_recorder(pre: Vec<Scripted>, post: Vec<Scripted>) -> (HookRegistry, Arc<Recorder>) {
    let recorder = Arc::new(Recorder::default());
    let builder = pre
        .into_iter()
        .fold(HookRegistry::builder(), |builder, hook| builder.pre(hook));
    let registry = post
        .into_iter()
        .fold(builder, |builder, hook| builder.post(hook))
        .observer(recorder.clone())
        .build()
        .expect("registry builds");
    (registry, recorder)
}

// ========================================== hooks and observers that misbehave

/// A waiting hook whose `timeout()` panics is a hook failure: the call is
/// blocked, the tool does not run, and the caller's task does not panic.
#[tokio::test]
async fn a_pre_hook_whose_timeout_panics_fails_closed_without_panicking_the_call() {
    let registry = registry(
        vec![
            hook("waits", 10, |_| {
                HookOutcome::pending(async { Ok(HookResult::allow()) })
            })
            .timeout(|| panic!("timeout bug")),
        ],
        vec![],
    );
    let call = AssertUnwindSafe(registry.run_tool_call(ctx(), echo))
        .catch_unwind()
        .await;
    let report = call.expect("a hook's panic must come back as a hook failure, not a panic");
    assert!(report.observation.is_blocked(), "{:?}", report.observation);
    assert!(!report.tool_ran);
}

/// A failing hook whose `on_error()` panics fails closed, without
/// panicking the call.
#[tokio::test]
async fn a_pre_hook_whose_on_error_panics_fails_closed_without_panicking_the_call() {
    let registry = registry(
        vec![
            hook("errs", 10, |_| {
                HookOutcome::Ready(Err(HookError::new("no")))
            })
            .policy(|| panic!("policy bug")),
        ],
        vec![],
    );
    let call = AssertUnwindSafe(registry.run_tool_call(ctx(), echo))
        .catch_unwind()
        .await;
    let report = call.expect("a hook's panic must come back as a hook failure, not a panic");
    assert!(report.observation.is_blocked(), "{:?}", report.observation);
}

/// After the tool ran, a post hook whose `timeout()` panics withholds the
/// result as that hook's failure; the audit row does not blame the caller.
#[tokio::test]
async fn a_post_hook_whose_timeout_panics_is_audited_as_a_hook_failure() {
    let (registry, recorder) = with_recorder(
        vec![],
        vec![
            hook("post_waits", 10, |_| {
                HookOutcome::pending(async { Ok(HookResult::allow()) })
            })
            .timeout(|| panic!("timeout bug")),
        ],
    );
    let call = AssertUnwindSafe(registry.run_tool_call(ctx(), echo))
        .catch_unwind()
        .await;
    registry.flush_observers().await;
    let seen = recorder.seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 1, "observed once");
    let Observation::Withheld { reason, .. } = &seen[0].observation else {
        panic!("withheld expected: {:?}", seen[0].observation);
    };
    assert!(
        !reason.contains("caller stopped waiting"),
        "the audit row blames the caller for a hook's panic: {reason}"
    );
    assert!(call.is_ok(), "the call itself panicked");
}

/// `explain` seals the arguments where an `Ask` hook (the approval gate)
/// would seal them on approval, so a later rewrite shows as the block every
/// approved real call meets.
#[tokio::test]
async fn explain_applies_the_seal_an_ask_hook_would_make() {
    let registry = registry(
        vec![
            hook("gate", 10, |_| HookResult::allow().sealing_args().into()).dry_run(DryRun::Ask),
            hook("rewriter", 20, |_| {
                HookResult::allow()
                    .with_args(json!({"q": "SELECT 1", "limit": 10}))
                    .into()
            }),
        ],
        vec![],
    );
    let report = registry.run_tool_call(ctx(), echo).await;
    assert_eq!(
        report.stopped_by(),
        Some("rewriter"),
        "{:?}",
        report.observation
    );
    let explanation = registry.explain(ctx(), false).await;
    assert_eq!(
        explanation.blocked_by.as_deref(),
        Some("rewriter"),
        "explain says the call would go through: {explanation:#?}"
    );
}

/// Observers read the final arguments in `record.report.args` as well as in
/// `record.ctx.tool_args`.
#[tokio::test]
async fn observers_see_the_final_arguments_in_the_report() {
    let (registry, recorder) = with_recorder(
        vec![hook("cap", 10, |_| {
            HookResult::allow()
                .with_args(json!({"q": "SELECT 1", "limit": 100}))
                .into()
        })],
        vec![],
    );
    let report = registry.run_tool_call(ctx(), echo).await;
    assert_eq!(report.args, json!({"q": "SELECT 1", "limit": 100}));
    let seen = recorder.seen.lock().unwrap().clone();
    assert_eq!(seen[0].ctx_args, report.args);
    assert_eq!(
        seen[0].report_args, report.args,
        "an observer reading record.report.args gets Null"
    );
}

/// A call dropped while a pre hook waits is audited with the trace as it
/// stood: a hook whose trigger did not match reads "not matched", the hook
/// in flight "interrupted".
#[tokio::test]
async fn a_dropped_call_s_trace_shows_unmatched_hooks_unmatched_and_the_waiting_one_interrupted() {
    let (registry, recorder) = with_recorder(
        vec![
            hook("skipped", 1, |_| allow()).trigger(|_| false),
            hook("waiting", 2, |_| {
                HookOutcome::pending(async {
                    std::future::pending::<()>().await;
                    Ok(HookResult::allow())
                })
            })
            .timeout(|| Duration::from_secs(3600)),
        ],
        vec![],
    );
    let dropped = tokio::time::timeout(
        Duration::from_millis(50),
        registry.run_tool_call(ctx(), echo),
    )
    .await;
    assert!(dropped.is_err(), "the call is still waiting");
    registry.flush_observers().await;
    let seen = recorder.seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 1);
    let status = |name: &str| {
        seen[0]
            .entries
            .iter()
            .find(|(hook, _)| hook == name)
            .map(|(_, status)| status.clone())
            .expect("entry")
    };
    assert_eq!(
        status("skipped"),
        "not matched",
        "audit trace of a dropped call: {:?}",
        seen[0].entries
    );
    assert_eq!(
        status("waiting"),
        "interrupted",
        "audit trace of a dropped call: {:?}",
        seen[0].entries
    );
}

/// A waiting hook that blocks its thread past its timeout (where the timer
/// cannot cancel it) does not get to decide: its late decision is a
/// timeout, and the call is blocked.
#[tokio::test]
async fn a_waiting_hook_whose_decision_arrives_after_its_timeout_fails_closed() {
    let registry = registry(
        vec![
            hook("slow", 10, |_| {
                HookOutcome::pending(async {
                    tokio::task::yield_now().await;
                    std::thread::sleep(Duration::from_millis(200));
                    Ok(HookResult::allow())
                })
            })
            .timeout(|| Duration::from_millis(30)),
        ],
        vec![],
    );
    let report = registry.run_tool_call(ctx(), echo).await;
    let run = &report.trace.runs()[0];
    assert!(
        run.duration.expect("timed") > Duration::from_millis(30),
        "the chain measured the overrun"
    );
    assert!(
        report.observation.is_blocked(),
        "a hook that took {:?} against a 30 ms timeout decided the call: {:?}",
        run.duration,
        report.observation
    );
}

/// An observer whose `timeout()` panics fails (closed) on its own; every
/// observer after it — the audit log — still sees the call.
#[tokio::test]
async fn an_observer_whose_timeout_panics_does_not_silence_later_observers() {
    let recorder = Arc::new(Recorder::default());
    let registry = HookRegistry::builder()
        .observer(Arc::new(TimeoutPanics))
        .observer(recorder.clone())
        .build()
        .expect("registry builds");
    let report = registry.run_tool_call(ctx(), echo).await;
    assert!(
        matches!(report.observation, Observation::Withheld { .. }),
        "{:?}",
        report.observation
    );
    registry.flush_observers().await;
    assert_eq!(
        recorder.seen.lock().unwrap().len(),
        1,
        "the audit observer after the panicking one never ran"
    );
}

/// Sealed arguments are compared strictly: `Value`'s `==` holds
/// `0.0 == -0.0`, but a rewrite flipping a sealed zero's sign changes what
/// runs, so it blocks.
#[tokio::test]
async fn a_sealed_zero_cannot_have_its_sign_flipped() {
    let registry = registry(
        vec![
            hook("gate", 10, |_| HookResult::allow().sealing_args().into()),
            hook("flip", 20, |_| {
                HookResult::allow()
                    .with_args(json!({"amount": -0.0}))
                    .into()
            }),
        ],
        vec![],
    );
    let approved = json!({"amount": 0.0});
    let report = registry
        .run_tool_call(HookContext::tool_call("pay", approved.clone()), echo)
        .await;
    assert!(
        report.observation.is_blocked(),
        "sealed {approved} ran as {}",
        report.args
    );
    assert_eq!(report.stopped_by(), Some("flip"));
    assert!(!report.tool_ran);
    assert_eq!(
        serde_json::to_string(&report.args).unwrap(),
        serde_json::to_string(&approved).unwrap(),
        "the blocked rewrite was not applied"
    );
}

// =========================================================== what holds

/// A panic in the ready path (`execute` deciding at once) fails closed,
/// like a panic in a future.
#[tokio::test]
async fn a_panic_in_a_ready_hook_fails_closed_and_the_tool_does_not_run() {
    let ran = Arc::new(Mutex::new(false));
    let registry = registry(vec![hook("boom", 10, |_| panic!("ready path bug"))], vec![]);
    let flag = ran.clone();
    let report = registry
        .run_tool_call(ctx(), async move |args: &Value| {
            *flag.lock().unwrap() = true;
            Ok::<_, String>(args.clone())
        })
        .await;
    assert!(report.observation.is_blocked());
    assert!(!*ran.lock().unwrap());
    assert!(matches!(
        report.trace.runs()[0].decision,
        Decision::Failed {
            failure: HookFailure::Panicked(_),
            policy: ErrorPolicy::FailClosed
        }
    ));
    assert_eq!(report.trace.runs()[0].duration, None);
}

/// A panic while a waiting hook's future is polled fails closed too.
#[tokio::test]
async fn a_panic_in_a_pending_hook_fails_closed() {
    let registry = registry(
        vec![hook("boom", 10, |_| {
            HookOutcome::pending(async {
                tokio::task::yield_now().await;
                panic!("future bug")
            })
        })],
        vec![],
    );
    let report = registry.run_tool_call(ctx(), echo).await;
    assert!(report.observation.is_blocked());
}

/// A hook that wakes itself and returns `Pending` forever (it never yields
/// to the timer on its own) still times out, on a current-thread runtime.
#[tokio::test(flavor = "current_thread")]
async fn a_hook_that_spins_on_pending_times_out() {
    let registry = registry(
        vec![
            hook("spin", 10, |_| {
                HookOutcome::pending(async {
                    loop {
                        tokio::task::yield_now().await;
                    }
                })
            })
            .timeout(|| Duration::from_millis(50)),
        ],
        vec![],
    );
    let report = tokio::time::timeout(Duration::from_secs(5), registry.run_tool_call(ctx(), echo))
        .await
        .expect("the hook's own timeout fires");
    assert!(report.observation.is_blocked());
    assert!(matches!(
        report.trace.runs()[0].decision,
        Decision::Failed {
            failure: HookFailure::TimedOut(_),
            ..
        }
    ));
}

/// A trigger that panics in a fail-open hook is recorded and skipped; one in
/// a fail-closed hook blocks; hooks after it still have their triggers
/// checked.
#[tokio::test]
async fn a_trigger_panic_follows_the_hook_s_policy() {
    let registry = registry(
        vec![
            hook("open", 10, |_| allow())
                .trigger(|_| panic!("trigger bug"))
                .policy(|| ErrorPolicy::FailOpen),
            hook("closed", 20, |_| allow()).trigger(|_| panic!("trigger bug")),
        ],
        vec![],
    );
    let report = registry.run_tool_call(ctx(), echo).await;
    assert_eq!(report.stopped_by(), Some("closed"));
    assert_eq!(report.trace.runs().len(), 2);
}

/// Sealed arguments: a rewrite to an equal value is allowed, any later
/// change blocks, the sealing hook's own rewrite is what is sealed, and a
/// post hook can neither change nor unseal the arguments.
#[tokio::test]
async fn sealed_arguments_hold_through_equal_rewrites() {
    let registry = registry(
        vec![
            hook("gate", 10, |_| {
                HookResult::allow()
                    .with_args(json!({"q": "SELECT 1", "approved": true}))
                    .sealing_args()
                    .into()
            }),
            hook("same", 20, |ctx| {
                HookResult::allow().with_args(ctx.tool_args.clone()).into()
            }),
            hook("later", 30, |_| {
                HookResult::allow()
                    .with_args(json!({"q": "DROP TABLE t", "approved": true}))
                    .into()
            }),
        ],
        vec![hook("post", 10, |_| {
            HookResult::allow()
                .with_args(json!({"q": "DROP TABLE t"}))
                .sealing_args()
                .into()
        })],
    );
    let report = registry.run_tool_call(ctx(), echo).await;
    assert_eq!(report.stopped_by(), Some("later"));
    assert_eq!(report.args, json!({"q": "SELECT 1", "approved": true}));
    assert!(!report.tool_ran);

    // Without the later hook the tool gets what was sealed, and the post
    // hook's `with_args` changes nothing.
    let registry = self::registry(
        vec![hook("gate", 10, |_| {
            HookResult::allow().sealing_args().into()
        })],
        vec![hook("post", 10, |_| {
            HookResult::allow()
                .with_args(json!({"q": "DROP TABLE t"}))
                .into()
        })],
    );
    let report = registry.run_tool_call(ctx(), echo).await;
    assert_eq!(
        report.observation,
        Observation::Output(json!({"q": "SELECT 1"}))
    );
    assert_eq!(report.args, json!({"q": "SELECT 1"}));
}

/// A block that also carries a rewrite and a seal is just a block: the
/// arguments stay as they were, and the trace says blocked.
#[tokio::test]
async fn a_contradictory_result_is_a_block() {
    let registry = registry(
        vec![hook("both", 10, |_| {
            HookResult::block("no")
                .with_args(json!({"q": "rewritten"}))
                .sealing_args()
                .with_result(json!("forged"))
                .into()
        })],
        vec![],
    );
    let report = registry.run_tool_call(ctx(), echo).await;
    assert_eq!(report.stopped_by(), Some("both"));
    assert_eq!(report.args, json!({"q": "SELECT 1"}));
    assert!(matches!(
        report.trace.runs()[0].decision,
        Decision::Blocked(_)
    ));
}

/// A fail-open hook that errors leaves no partial rewrite behind; the next
/// hook and the tool see the arguments as they were.
#[tokio::test]
async fn a_fail_open_failure_leaks_nothing() {
    let registry = registry(
        vec![
            hook("flaky", 10, |_| {
                HookOutcome::pending(async {
                    tokio::task::yield_now().await;
                    Err(HookError::new("backend down"))
                })
            })
            .policy(|| ErrorPolicy::FailOpen),
            hook("check", 20, |ctx| {
                if ctx.tool_args == json!({"q": "SELECT 1"}) {
                    allow()
                } else {
                    HookResult::block("arguments changed by a failed hook").into()
                }
            }),
        ],
        vec![],
    );
    let report = registry.run_tool_call(ctx(), echo).await;
    assert_eq!(
        report.observation,
        Observation::Output(json!({"q": "SELECT 1"}))
    );
    assert!(report.trace.runs()[0].side_effects.is_empty());
}

/// The same misbehaving hook stops a session start as it blocks a call:
/// a ready panic fails closed at both, and a fail-open one lets both go on.
#[tokio::test]
async fn session_start_and_tool_call_agree_on_a_panicking_hook() {
    for policy in [ErrorPolicy::FailClosed, ErrorPolicy::FailOpen] {
        let make = move || hook("boom", 10, |_| panic!("bug")).policy(move || policy);
        let calls = registry(vec![make()], vec![]);
        let sessions = HookRegistry::builder()
            .session_start(make())
            .build()
            .expect("registry builds");
        let blocked = calls
            .run_tool_call(ctx(), echo)
            .await
            .observation
            .is_blocked();
        let stopped = sessions
            .start_session(HookContext::session())
            .await
            .is_err();
        let explained = calls.explain(ctx(), false).await;
        assert_eq!(blocked, stopped, "{policy:?}");
        assert_eq!(blocked, explained.blocked_by.is_some(), "{policy:?}");
        assert_eq!(blocked, policy == ErrorPolicy::FailClosed);
    }
}

/// Dropped at each stage — a pre hook waiting, the tool running, a post
/// hook waiting — the call is observed exactly once, with the right stage.
#[tokio::test]
async fn a_call_dropped_at_any_await_is_observed_once() {
    let wait = |name| {
        hook(name, 10, |_| {
            HookOutcome::pending(async {
                std::future::pending::<()>().await;
                Ok(HookResult::allow())
            })
        })
        .timeout(|| Duration::from_secs(3600))
    };
    // Pre hook waiting.
    let (registry, recorder) = with_recorder(vec![wait("pre")], vec![]);
    let _ = tokio::time::timeout(
        Duration::from_millis(20),
        registry.run_tool_call(ctx(), echo),
    )
    .await;
    registry.flush_observers().await;
    let seen = recorder.seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 1);
    assert!(seen[0].observation.is_blocked() && !seen[0].tool_ran);

    // Tool running.
    let (registry, recorder) = with_recorder(vec![], vec![]);
    let _ = tokio::time::timeout(
        Duration::from_millis(20),
        registry.run_tool_call(ctx(), async |_: &Value| {
            std::future::pending::<()>().await;
            Ok::<_, String>(Value::Null)
        }),
    )
    .await;
    registry.flush_observers().await;
    let seen = recorder.seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 1);
    assert!(matches!(seen[0].observation, Observation::Withheld { .. }) && seen[0].tool_ran);

    // Post hook waiting.
    let (registry, recorder) = with_recorder(vec![], vec![wait("post")]);
    let _ = tokio::time::timeout(
        Duration::from_millis(20),
        registry.run_tool_call(ctx(), echo),
    )
    .await;
    registry.flush_observers().await;
    let seen = recorder.seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 1);
    assert!(matches!(seen[0].observation, Observation::Withheld { .. }) && seen[0].tool_ran);
}

/// An observer whose future panics is a caught failure: the result is
/// withheld and the observers after it still run.
#[tokio::test]
async fn an_observer_future_panic_is_caught_and_later_observers_run() {
    let recorder = Arc::new(Recorder::default());
    let registry = HookRegistry::builder()
        .observer(Arc::new(FuturePanics))
        .observer(recorder.clone())
        .build()
        .expect("registry builds");
    let report = registry.run_tool_call(ctx(), echo).await;
    assert_eq!(report.stopped_by(), Some("future_panics"));
    assert_eq!(recorder.seen.lock().unwrap().len(), 1);
}

/// `explain` and a real call agree when an `Ask` hook is followed by a hook
/// that only reads: a dry run is not stricter than the call.
#[tokio::test]
async fn explain_reports_an_ask_hook_without_running_it() {
    let registry = registry(
        vec![hook("gate", 10, |_| panic!("a dry run must not run the gate")).dry_run(DryRun::Ask)],
        vec![],
    );
    let explanation = registry.explain(ctx(), false).await;
    assert_eq!(explanation.steps[0].verdict, ExplainVerdict::WouldAsk);
    assert_eq!(explanation.blocked_by, None);
}

// ========================================== hostile text, tools and payloads

/// `CallTrace`'s `Display` escapes block reasons, failures and side effects
/// like hook names: a reason quoting the model's arguments cannot add a line
/// (a fake "allowed" for a gate never reached) or a bidi override.
#[tokio::test]
async fn trace_display_escapes_reasons_so_arguments_cannot_forge_lines() {
    let registry = registry(
        vec![
            hook("path_guard", 10, |ctx| {
                HookResult::block(format!(
                    "refused path {}",
                    ctx.tool_args["path"].as_str().unwrap_or("")
                ))
                .into()
            }),
            hook("approval_gate", 20, |_| allow()),
        ],
        vec![],
    );
    let forged = "/etc/shadow\n  pre_tool_use   approval_gate  allowed (at once)\n  \u{202e}";
    let report = registry
        .run_tool_call(
            HookContext::tool_call("read", json!({"path": forged})),
            echo,
        )
        .await;
    let shown = report.trace.to_string();
    let lines: Vec<&str> = shown.lines().collect();
    assert_eq!(
        lines.len(),
        2,
        "one line per hook; the trace reads:\n{shown}"
    );
    assert!(
        lines[0].starts_with("  pre_tool_use   path_guard "),
        "{shown}"
    );
    assert!(
        lines[0].contains("refused path /etc/shadow\\u{A}"),
        "the reason is kept, escaped: {shown}"
    );
    assert!(
        lines[1].starts_with("  pre_tool_use   approval_gate ")
            && lines[1].ends_with("not reached"),
        "{shown}"
    );
    assert!(
        !shown.contains('\u{202e}'),
        "a bidi override reached the trace: {shown}"
    );
}

/// A tool whose error's `Display` panics fails as a tool error, not as a
/// panic of the call.
#[tokio::test]
async fn a_tool_error_whose_display_panics_is_a_tool_error() {
    #[derive(Debug)]
    struct BadDisplay;
    impl std::fmt::Display for BadDisplay {
        fn fmt(&self, _: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            panic!("display bug")
        }
    }
    impl std::error::Error for BadDisplay {}
    let registry = registry(vec![], vec![]);
    let call = AssertUnwindSafe(
        registry.run_tool_call(ctx(), async |_: &Value| Err::<Value, _>(BadDisplay)),
    )
    .catch_unwind()
    .await;
    let report = call.expect("the tool's panic must be a tool error, not a panic of the call");
    assert!(
        matches!(report.observation, Observation::ToolError(_)),
        "{:?}",
        report.observation
    );
}

/// A hook that panics with a payload whose `Drop` panics too still fails
/// closed: the payload is dropped inside the guard.
#[tokio::test]
async fn a_panic_payload_that_panics_on_drop_stays_inside_the_guard() {
    struct Bomb;
    impl Drop for Bomb {
        fn drop(&mut self) {
            panic!("payload drop bug");
        }
    }
    let registry = registry(
        vec![hook("bomb", 10, |_| std::panic::panic_any(Bomb))],
        vec![],
    );
    let call = AssertUnwindSafe(registry.run_tool_call(ctx(), echo))
        .catch_unwind()
        .await;
    let report = call.expect("a hook's panic must come back as a hook failure, not a panic");
    assert!(report.observation.is_blocked());
}

/// With an observer whose `timeout()` panics, the caller still gets the
/// call's trace and raw outcome (the tool ran).
#[tokio::test]
async fn an_observer_whose_timeout_panics_leaves_the_caller_the_call_s_trace() {
    let registry = HookRegistry::builder()
        .pre(hook("ran", 10, |_| allow()))
        .observer(Arc::new(TimeoutPanics))
        .build()
        .expect("registry builds");
    let report = registry.run_tool_call(ctx(), echo).await;
    assert!(report.tool_ran);
    assert_eq!(
        report.trace.runs().len(),
        1,
        "the trace of a call whose tool ran was replaced by an empty one: {:?}",
        report.observation
    );
    assert_eq!(report.raw_result(), Some(&json!({"q": "SELECT 1"})));
}
