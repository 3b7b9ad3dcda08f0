//! The tool-call runner: pre hooks → tool → post hooks.

use std::fmt;
use std::panic::AssertUnwindSafe;
use std::time::Instant;

use futures_util::FutureExt as _;
use serde_json::Value;

use super::observation::Observation;
use super::run_hook::{HookFailure, panic_message, run_guarded, run_hook, triggers};
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
    pub async fn run_tool_call<T, E>(&self, mut ctx: HookContext, tool: T) -> ToolCallReport
    where
        T: AsyncFnOnce(&Value) -> Result<Value, E>,
        E: fmt::Display,
    {
        // The clock is read only when an observer will want the duration.
        let started = (!self.hooks.observers.is_empty()).then(Instant::now);
        let mut report = self.run_chain(&mut ctx, tool).await;
        if let Some(started) = started
            && !report.trace.bypassed()
        {
            self.notify_observers(&ctx, &mut report, started.elapsed())
                .await;
        }
        report.args = std::mem::take(&mut ctx.tool_args);
        report
    }

    async fn notify_observers(
        &self,
        ctx: &HookContext,
        report: &mut ToolCallReport,
        duration: std::time::Duration,
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
                let reason = format!(
                    "observer `{}` {failure}; the result is withheld because the observer fails closed",
                    observer.name()
                );
                if let Observation::Output(value) = std::mem::replace(
                    &mut report.observation,
                    Observation::Withheld {
                        hook: observer.name().to_owned(),
                        reason,
                    },
                ) && report.original.is_none()
                {
                    report.original = Some(ToolOutcome::Success(value));
                }
            }
        }
    }

    /// Pre hooks, tool, post hooks. Leaves the final arguments in `ctx`.
    async fn run_chain<T, E>(&self, ctx: &mut HookContext, tool: T) -> ToolCallReport
    where
        T: AsyncFnOnce(&Value) -> Result<Value, E>,
        E: fmt::Display,
    {
        let mut trace = CallTrace::tool_call(self);
        let report = |observation, tool_ran, trace, original| ToolCallReport {
            observation,
            args: Value::Null,
            tool_ran,
            trace,
            original,
        };
        if ctx.surface == Surface::Evaluation {
            trace.bypassed = true;
            tracing::debug!(tool = %ctx.tool_name, "hooks bypassed on the evaluation surface");
            let outcome = call_tool(tool, &ctx.tool_args).await;
            return report(observe(outcome), true, trace, None);
        }

        ctx.point = HookPoint::PreToolUse;
        ctx.tool_outcome = None;
        let pre = self.hooks.pre.iter().map(|hook| hook.as_ref() as &dyn Hook);
        if let Some((hook, reason)) = run_phase(pre, 0, ctx, &mut trace, &mut None).await {
            let blocked = Observation::Blocked { hook, reason };
            return report(blocked, false, trace, None);
        }

        let outcome = call_tool(tool, &ctx.tool_args).await;
        ctx.point = HookPoint::PostToolUse;
        ctx.tool_outcome = Some(outcome);
        let mut original = None;
        let post = self
            .hooks
            .post
            .iter()
            .map(|hook| hook.as_ref() as &dyn Hook);
        if let Some((hook, reason)) = run_phase(post, 1, ctx, &mut trace, &mut original).await {
            let withheld = Observation::Withheld { hook, reason };
            let original = original.or_else(|| ctx.tool_outcome.take());
            return report(withheld, true, trace, original);
        }
        let outcome = ctx
            .tool_outcome
            .take()
            .unwrap_or(ToolOutcome::Error(String::new()));
        report(observe(outcome), true, trace, original)
    }
}

/// Runs one point's hooks in order (`slot` indexes the trace's points) and
/// returns the hook that stopped the chain, with its reason.
///
/// Triggers are checked synchronously first, so a hook that does not match
/// costs one predicate call: no future, no clock, no allocation.
async fn run_phase<'h>(
    hooks: impl Iterator<Item = &'h dyn Hook>,
    slot: usize,
    ctx: &mut HookContext,
    trace: &mut CallTrace,
    original: &mut Option<ToolOutcome>,
) -> Option<(String, String)> {
    let mut phase = Phase::default();
    for (index, hook) in hooks.enumerate() {
        trace.considered[slot] = index + 1;
        let trigger = triggers(hook, ctx);
        if trigger == Ok(false) {
            continue;
        }
        if let Step::Stop { reason } =
            run_step(hook, index, trigger.err(), ctx, trace, original, &mut phase).await
        {
            return Some((hook.name().to_owned(), reason));
        }
    }
    None
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
    match AssertUnwindSafe(tool(args)).catch_unwind().await {
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

/// What one phase's hooks pass along to each other.
#[derive(Default)]
struct Phase {
    /// The pre hook that sealed the arguments, if one did.
    sealed_by: Option<String>,
    /// When the last matched hook ended: the next one's start. One clock
    /// read per matched hook (only trigger checks, a few nanoseconds, run in
    /// between).
    clock: Option<Instant>,
}

/// Runs one pre or post hook whose trigger matched (or whose trigger check
/// failed, `trigger_failure`), applies its rewrite and records it.
async fn run_step(
    hook: &dyn Hook,
    index: usize,
    trigger_failure: Option<HookFailure>,
    ctx: &mut HookContext,
    trace: &mut CallTrace,
    original: &mut Option<ToolOutcome>,
    phase: &mut Phase,
) -> Step {
    let point = ctx.point;
    let started = phase.clock.take().unwrap_or_else(Instant::now);
    let outcome = match trigger_failure {
        Some(failure) => Err(failure),
        None => run_hook(hook, ctx).await,
    };
    let ended = Instant::now();
    phase.clock = Some(ended);
    let duration = ended.saturating_duration_since(started);
    let (decision, side_effects, step) = match outcome {
        Ok(result) => apply(result, hook.name(), ctx, original, &mut phase.sealed_by),
        Err(failure) => fail(hook, failure),
    };
    tracing::debug!(hook = hook.name(), %point, %decision, ?duration, "hook ran");
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
        _ => match modified_result {
            Some(value) => {
                // Keep the tool's own outcome (once) for audit and traces.
                let replaced = ctx.tool_outcome.replace(ToolOutcome::Success(value));
                if original.is_none() {
                    *original = replaced;
                }
                true
            }
            None => false,
        },
    };
    (Decision::Allowed { rewrote }, side_effects, Step::Continue)
}

fn fail(hook: &dyn Hook, failure: HookFailure) -> (Decision, Vec<String>, Step) {
    let policy = hook.on_error();
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
