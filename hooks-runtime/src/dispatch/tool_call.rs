//! The tool-call runner: pre hooks → tool → post hooks.

use std::fmt;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::FutureExt as _;
use serde_json::Value;

use super::detached::ObserverTask;
use super::observation::Observation;
use super::run_hook::{HookFailure, decide_now, next_triggered, panic_message, run_guarded};
use super::tool_name;
use super::trace::{CallTrace, Decision, HookRun};
use crate::context::{HookContext, HookPoint, Surface, ToolOutcome};
use crate::hook::{ErrorPolicy, Hook};
use crate::observer::{CallObserver, CallRecord};
use crate::registry::HookRegistry;
use crate::result::HookResult;

/// Everything a tool call produced.
#[derive(Debug, Clone)]
pub struct ToolCallReport {
    /// What the LLM sees.
    pub observation: Observation,
    /// The arguments after every pre hook's rewrites (what the tool received, if it ran).
    pub args: Value,
    /// Whether the tool ran.
    pub tool_ran: bool,
    /// What each hook did.
    pub trace: CallTrace,
    /// The tool's own outcome, kept when post hooks replaced or withheld it.
    original: Option<ToolOutcome>,
}

impl ToolCallReport {
    /// The tool's own result, before any post hook rewrote (e.g. truncated) or
    /// withheld it; `None` when the tool did not run or failed.
    pub fn raw_result(&self) -> Option<&Value> {
        match (&self.original, &self.observation) {
            (Some(ToolOutcome::Success(value)), _) => Some(value),
            (Some(ToolOutcome::Error(_)), _) => None,
            (None, Observation::Output(value)) => Some(value),
            (None, _) => None,
        }
    }

    /// The tool's own error message, when it ran and failed.
    pub fn tool_error(&self) -> Option<&str> {
        match (&self.original, &self.observation) {
            (Some(ToolOutcome::Error(message)), _) => Some(message),
            (Some(ToolOutcome::Success(_)), _) => None,
            (None, Observation::ToolError(message)) => Some(message),
            (None, _) => None,
        }
    }

    /// The hook (or observer) that blocked the call or withheld its result.
    pub fn stopped_by(&self) -> Option<&str> {
        match &self.observation {
            Observation::Blocked { hook, .. } | Observation::Withheld { hook, .. } => Some(hook),
            _ => None,
        }
    }
}

/// What one hook's run means for the chain.
enum Step {
    Continue,
    Stop { reason: String },
}

impl HookRegistry {
    /// Runs one tool call through the hooks.
    ///
    /// Pre hooks run in order, each seeing the arguments as rewritten before it;
    /// the first block (or fail-closed failure) stops the chain and the tool never
    /// runs. Otherwise `tool` runs with the final arguments, and post hooks run
    /// on its outcome — success or error — chaining result rewrites; a block or a
    /// fail-closed failure withholds the result. Then every
    /// [`CallObserver`](crate::CallObserver) sees the call, whatever happened;
    /// a failing (fail-closed) observer withholds the observation. On the
    /// [`Evaluation`](Surface::Evaluation) surface hooks and observers are
    /// bypassed and the trace says so. A panicking tool counts as a tool error.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// use hooks_runtime::{HookContext, HookRegistry, Observation};
    /// use serde_json::{json, Value};
    ///
    /// let registry = HookRegistry::builder().build().unwrap();
    /// let ctx = HookContext::tool_call("echo", json!({"text": "hi"}));
    /// let report = registry
    ///     .run_tool_call(ctx, async |args: &Value| Ok::<_, String>(args["text"].clone()))
    ///     .await;
    /// assert_eq!(report.observation, Observation::Output(json!("hi")));
    /// # });
    /// ```
    #[allow(
        clippy::manual_async_fn,
        reason = "an async fn would keep a second copy of `ctx` in its future"
    )]
    pub fn run_tool_call<T, E>(
        &self,
        ctx: HookContext,
        tool: T,
    ) -> impl Future<Output = ToolCallReport>
    where
        T: AsyncFnOnce(&Value) -> Result<Value, E>,
        E: fmt::Display,
    {
        // Not an `async fn`: an async fn keeps a second copy of its by-value
        // arguments in its future. And one flat body, not nested async fns:
        // this future is moved on every call, so its size is time.
        async move {
            // The clock is read only when an observer will want the duration.
            // A call made from inside this registry's own observers is not
            // observed again: an observer that calls tools would feed itself.
            let started =
                (!self.hooks.observers.is_empty() && !self.observing_now()).then(Instant::now);
            let mut state = CallState {
                trace: CallTrace::tool_call(self),
                ctx,
                original: None,
                stage: Stage::Pre,
            };
            // Until the report is built, a caller that drops this future
            // (a timeout around the call, say) still gets the call observed.
            let call = Unfinished {
                registry: self,
                started,
                state: &mut state,
            };
            let (observation, tool_ran) = 'chain: {
                let CallState {
                    ctx,
                    trace,
                    original,
                    stage,
                } = &mut *call.state;
                if let Some(reason) = tool_name::problem(&ctx.tool_name) {
                    break 'chain (
                        Observation::Blocked {
                            hook: RUNTIME.to_owned(),
                            reason,
                        },
                        false,
                    );
                }
                if ctx.surface == Surface::Evaluation {
                    trace.bypassed = true;
                    tracing::debug!(tool = %ctx.tool_name, "hooks bypassed on the evaluation surface");
                    *stage = Stage::Tool;
                    break 'chain (observe(call_tool(tool, &ctx.tool_args).await), true);
                }

                ctx.point = HookPoint::PreToolUse;
                ctx.tool_outcome = None;
                if let Some((hook, reason)) =
                    run_phase(&self.hooks.pre, 0, ctx, trace, original).await
                {
                    break 'chain (Observation::Blocked { hook, reason }, false);
                }

                *stage = Stage::Tool;
                let outcome = call_tool(tool, &ctx.tool_args).await;
                ctx.point = HookPoint::PostToolUse;
                ctx.tool_outcome = Some(outcome);
                *stage = Stage::Post;
                if let Some((hook, reason)) =
                    run_phase(&self.hooks.post, 1, ctx, trace, original).await
                {
                    if original.is_none() {
                        *original = ctx.tool_outcome.take();
                    }
                    break 'chain (Observation::Withheld { hook, reason }, true);
                }
                let outcome = ctx
                    .tool_outcome
                    .take()
                    .unwrap_or(ToolOutcome::Error(String::new()));
                (observe(outcome), true)
            };
            call.finish();
            let CallState {
                mut ctx,
                trace,
                original,
                ..
            } = state;
            let Some(started) = started.filter(|_| !trace.bypassed) else {
                // Built in place: the report is moved out of this future as is.
                return ToolCallReport {
                    observation,
                    args: std::mem::take(&mut ctx.tool_args),
                    tool_ran,
                    trace,
                    original,
                };
            };
            let report = ToolCallReport {
                observation,
                args: Value::Null,
                tool_ran,
                trace,
                original,
            };
            // Boxed: observers are optional, and their state would otherwise
            // make every call's future bigger.
            Box::pin(self.observe_to_the_end(ctx, report, started.elapsed())).await
        }
    }

    /// Runs the observers on a task of their own, so that a caller who stops
    /// waiting for the call cannot cut an audit write short; waits for them
    /// and hands back the report. Without a Tokio runtime they run inline.
    async fn observe_to_the_end(
        &self,
        ctx: HookContext,
        report: ToolCallReport,
        duration: Duration,
    ) -> ToolCallReport {
        let tool_ran = report.tool_ran;
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            let (mut ctx, mut report) = (ctx, report);
            self.notify_observers(&ctx, &mut report, duration).await;
            report.args = std::mem::take(&mut ctx.tool_args);
            return report;
        };
        let task = ObserverTask::start(self, &ctx.tool_name);
        let observed = runtime.spawn(async move {
            let (mut ctx, mut report) = (ctx, report);
            task.registry()
                .notify_observers(&ctx, &mut report, duration)
                .await;
            task.finish();
            report.args = std::mem::take(&mut ctx.tool_args);
            report
        });
        match observed.await {
            Ok(report) => report,
            // Only a runtime shutting down cancels the task (observers'
            // panics are caught where they run): nothing was observed for
            // certain, so nothing is handed back.
            Err(error) => ToolCallReport {
                observation: Observation::Withheld {
                    hook: RUNTIME.to_owned(),
                    reason: format!(
                        "the call's observers did not finish ({error}); the result is withheld"
                    ),
                },
                args: Value::Null,
                tool_ran,
                trace: CallTrace::tool_call(self),
                original: None,
            },
        }
    }

    async fn notify_observers(
        &self,
        ctx: &HookContext,
        report: &mut ToolCallReport,
        duration: Duration,
    ) {
        self.as_observer(self.run_observers(ctx, report, duration))
            .await;
    }

    async fn run_observers(
        &self,
        ctx: &HookContext,
        report: &mut ToolCallReport,
        duration: Duration,
    ) {
        for observer in &self.hooks.observers {
            let outcome = run_observer(
                observer.as_ref(),
                CallRecord {
                    ctx,
                    report,
                    duration,
                },
            )
            .await;
            let Err(failure) = outcome else {
                continue;
            };
            tracing::warn!(observer = observer.name(), %failure, "call observer failed");
            if observer.on_error() == ErrorPolicy::FailClosed {
                withhold_for(observer.name(), &failure, report);
            }
        }
    }
}

/// A fail-closed observer failed: the result does not reach the LLM. A call
/// that was already stopped keeps its own hook and reason, with the observer's
/// failure added, so neither is lost.
fn withhold_for(observer: &str, failure: &HookFailure, report: &mut ToolCallReport) {
    let failed = format!(
        "observer `{observer}` {failure}; the result is withheld because the observer fails closed"
    );
    match &mut report.observation {
        Observation::Blocked { reason, .. } | Observation::Withheld { reason, .. } => {
            reason.push_str("; also, ");
            reason.push_str(&failed);
        }
        observation => {
            let withheld = Observation::Withheld {
                hook: observer.to_owned(),
                reason: match observation {
                    Observation::ToolError(message) => {
                        format!("{failed}; the tool had failed: {message}")
                    }
                    _ => failed,
                },
            };
            match std::mem::replace(observation, withheld) {
                Observation::Output(value) if report.original.is_none() => {
                    report.original = Some(ToolOutcome::Success(value));
                }
                Observation::ToolError(message) if report.original.is_none() => {
                    report.original = Some(ToolOutcome::Error(message));
                }
                _ => {}
            }
        }
    }
}

/// The name a call is stopped under when the runtime itself stops it (a
/// refused tool name, a caller that stopped waiting) rather than a hook.
pub(crate) const RUNTIME: &str = "runtime";

/// Where a call in flight has got to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    Pre,
    Tool,
    Post,
}

/// A call's state while its hooks and tool run.
struct CallState {
    ctx: HookContext,
    trace: CallTrace,
    original: Option<ToolOutcome>,
    stage: Stage,
}

/// Guards a call in flight: dropped before [`finish`](Self::finish) — the
/// caller stopped waiting — it hands what is known of the call to the
/// observers on a task of their own, so every attempted call is still
/// observed (audited) once.
struct Unfinished<'r> {
    registry: &'r HookRegistry,
    started: Option<Instant>,
    state: &'r mut CallState,
}

impl Unfinished<'_> {
    /// The call reached its end: nothing to do on drop.
    fn finish(mut self) {
        self.started = None;
    }
}

impl Drop for Unfinished<'_> {
    fn drop(&mut self) {
        let Some(started) = self.started.take() else {
            return;
        };
        let state = &mut *self.state;
        if state.trace.bypassed {
            return;
        }
        let (observation, tool_ran, original) = match state.stage {
            Stage::Pre => (
                Observation::Blocked {
                    hook: RUNTIME.to_owned(),
                    reason: "the caller stopped waiting before the pre hooks finished; \
                             the tool did not run"
                        .to_owned(),
                },
                false,
                None,
            ),
            Stage::Tool => (
                Observation::Withheld {
                    hook: RUNTIME.to_owned(),
                    reason: "the caller stopped waiting while the tool ran; \
                             its outcome is unknown"
                        .to_owned(),
                },
                true,
                None,
            ),
            Stage::Post => (
                Observation::Withheld {
                    hook: RUNTIME.to_owned(),
                    reason: "the caller stopped waiting after the tool ran, while the \
                             post hooks ran; the result was not delivered"
                        .to_owned(),
                },
                true,
                state
                    .original
                    .take()
                    .or_else(|| state.ctx.tool_outcome.take()),
            ),
        };
        let report = ToolCallReport {
            observation,
            args: Value::Null,
            tool_ran,
            trace: state.trace.clone(),
            original,
        };
        let ctx = state.ctx.clone();
        let duration = started.elapsed();
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => {
                let task = ObserverTask::start(self.registry, &ctx.tool_name);
                runtime.spawn(async move {
                    let mut report = report;
                    task.registry()
                        .notify_observers(&ctx, &mut report, duration)
                        .await;
                    task.finish();
                });
            }
            Err(_) => tracing::error!(
                tool = %ctx.tool_name,
                "a tool call was dropped outside a Tokio runtime before it finished; \
                 its observers (the audit log) could not be run"
            ),
        }
    }
}

/// Runs one point's hooks in order (`slot` indexes the trace's points) and
/// returns the hook that stopped the chain, with its reason.
///
/// Triggers are checked synchronously first, so a hook that does not match
/// costs one predicate call: no future, no clock, no allocation. A matched
/// hook that decides at once costs no clock read either; the clock is read
/// only around a hook that waits.
#[allow(
    clippy::manual_async_fn,
    reason = "an async fn would keep a second copy of its arguments in its future"
)]
fn run_phase<'a, H: Hook + ?Sized>(
    hooks: &'a [Arc<H>],
    slot: usize,
    ctx: &'a mut HookContext,
    trace: &'a mut CallTrace,
    original: &'a mut Option<ToolOutcome>,
) -> impl Future<Output = Option<(String, String)>> + 'a {
    // Not an `async fn`, which would keep a second copy of its arguments.
    async move {
        // The pre hook that sealed the arguments, if one did.
        let mut sealed_by: Option<String> = None;
        let mut from = 0;
        while let Some((index, trigger_failure)) = next_triggered(hooks, from, ctx) {
            from = index + 1;
            let hook = &*hooks[index];
            // The trace contract: a hook that decided at once is recorded
            // without a clock read; only a hook that waited is timed.
            let (outcome, duration) = match trigger_failure {
                Some(failure) => (Err(failure), None),
                None => match decide_now(hook, ctx) {
                    Some(outcome) => (outcome, None),
                    None => {
                        // Read before `execute` is called: a hook may work
                        // before it returns its future, and that counts too.
                        let started = Instant::now();
                        let outcome = run_guarded(hook.timeout(), || hook.execute(ctx)).await;
                        (outcome, Some(started.elapsed()))
                    }
                },
            };
            let step = record(
                hook,
                index,
                outcome,
                duration,
                ctx,
                trace,
                original,
                &mut sealed_by,
            );
            if let Step::Stop { reason } = step {
                trace.considered[slot] = index + 1;
                return Some((hook.name().to_owned(), reason));
            }
        }
        trace.considered[slot] = hooks.len();
        None
    }
}

async fn run_observer(
    observer: &dyn CallObserver,
    record: CallRecord<'_>,
) -> Result<(), HookFailure> {
    run_guarded(observer.timeout(), || observer.observe(record))
        .await
        .map(drop)
}

async fn call_tool<T, E>(tool: T, args: &Value) -> ToolOutcome
where
    T: AsyncFnOnce(&Value) -> Result<Value, E>,
    E: fmt::Display,
{
    // A tool may panic while it creates its future (a plain closure that
    // returns an `async` block) as well as while it runs.
    let future = match std::panic::catch_unwind(AssertUnwindSafe(|| tool(args))) {
        Ok(future) => future,
        Err(payload) => {
            return ToolOutcome::Error(format!(
                "the tool panicked: {}",
                panic_message(payload.as_ref())
            ));
        }
    };
    match AssertUnwindSafe(future).catch_unwind().await {
        Ok(Ok(value)) => ToolOutcome::Success(value),
        Ok(Err(error)) => ToolOutcome::Error(error.to_string()),
        Err(payload) => ToolOutcome::Error(format!(
            "the tool panicked: {}",
            panic_message(payload.as_ref())
        )),
    }
}

fn observe(outcome: ToolOutcome) -> Observation {
    match outcome {
        ToolOutcome::Success(value) => Observation::Output(value),
        ToolOutcome::Error(message) => Observation::ToolError(message),
    }
}

/// Applies the outcome of one pre or post hook that matched (or whose trigger
/// check failed) to the call and records it in the trace.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn record<H: Hook + ?Sized>(
    hook: &H,
    index: usize,
    outcome: Result<HookResult, HookFailure>,
    duration: Option<Duration>,
    ctx: &mut HookContext,
    trace: &mut CallTrace,
    original: &mut Option<ToolOutcome>,
    sealed_by: &mut Option<String>,
) -> Step {
    let point = ctx.point;
    let (decision, side_effects, step) = match outcome {
        Ok(result) => apply(result, hook.name(), ctx, original, sealed_by),
        Err(failure) => fail(hook, failure),
    };
    // No log event per hook that ran as it should: asking `tracing` whether
    // one is wanted costs about 20 ns per hook (measured with no subscriber
    // installed), and the returned trace holds all of it. Failures are
    // logged where they are handled, in `fail`.
    trace.runs.push(HookRun {
        point,
        index,
        decision,
        duration,
        side_effects,
    });
    step
}

/// Applies a hook's result to the call. `sealed_by` names the pre hook that
/// sealed the arguments (an approval covers exactly them): a later rewrite
/// that changes them stops the call.
#[inline(always)]
fn apply(
    result: HookResult,
    hook: &str,
    ctx: &mut HookContext,
    original: &mut Option<ToolOutcome>,
    sealed_by: &mut Option<String>,
) -> (Decision, Vec<String>, Step) {
    let HookResult {
        allow,
        error,
        modified_args,
        modified_result,
        modified_error,
        side_effects,
        seal_args,
        ..
    } = result;
    if !allow {
        let reason = error.unwrap_or_else(|| "blocked without a reason".to_owned());
        return (
            Decision::Blocked(reason.clone()),
            side_effects,
            Step::Stop { reason },
        );
    }
    if let (Some(sealer), Some(args)) = (sealed_by.as_deref(), &modified_args)
        && *args != ctx.tool_args
    {
        let reason = format!(
            "hook `{hook}` rewrote the arguments after hook `{sealer}` sealed them; \
             the call is blocked because what was approved is not what would run"
        );
        return (
            Decision::Blocked(reason.clone()),
            side_effects,
            Step::Stop { reason },
        );
    }
    if seal_args && ctx.point == HookPoint::PreToolUse && sealed_by.is_none() {
        *sealed_by = Some(hook.to_owned());
    }
    let rewrote = match ctx.point {
        HookPoint::PreToolUse => modified_args.map(|args| ctx.tool_args = args).is_some(),
        _ => {
            let replacement = match (modified_result, modified_error, &ctx.tool_outcome) {
                (Some(value), _, _) => Some(ToolOutcome::Success(value)),
                (None, Some(message), Some(ToolOutcome::Error(_))) => {
                    Some(ToolOutcome::Error(message))
                }
                _ => None,
            };
            match replacement {
                Some(outcome) => {
                    // Keep the tool's own outcome (once) for audit and traces.
                    let replaced = ctx.tool_outcome.replace(outcome);
                    if original.is_none() {
                        *original = replaced;
                    }
                    true
                }
                None => false,
            }
        }
    };
    (Decision::Allowed { rewrote }, side_effects, Step::Continue)
}

#[cold]
#[inline(never)]
fn fail<H: Hook + ?Sized>(hook: &H, failure: HookFailure) -> (Decision, Vec<String>, Step) {
    let policy = hook.on_error();
    tracing::warn!(hook = hook.name(), %failure, ?policy, "hook failed");
    let step = match policy {
        ErrorPolicy::FailClosed => Step::Stop {
            reason: format!(
                "hook `{}` {failure}; blocked because the hook fails closed",
                hook.name()
            ),
        },
        ErrorPolicy::FailOpen => Step::Continue,
    };
    (Decision::Failed { failure, policy }, Vec::new(), step)
}
