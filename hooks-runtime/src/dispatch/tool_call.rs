//! The tool-call runner: pre hooks → tool → post hooks.

use std::fmt;
use std::panic::AssertUnwindSafe;
use std::time::{Duration, Instant};

use futures_util::FutureExt as _;
use serde_json::Value;

use super::chain::{Chain, Step};
use super::detached::ObserverTask;
use super::observation::Observation;
use super::run_hook::{HookFailure, panic_message, run_guarded};
use super::tool_name;
use super::trace::CallTrace;
use crate::context::{HookContext, HookPoint, Surface, ToolOutcome};
use crate::hook::ErrorPolicy;
use crate::observer::{CallObserver, CallRecord};
use crate::registry::HookRegistry;

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
                if let Step::Stop { hook, reason } = Chain::new(ctx, trace, original)
                    .run(&self.hooks.pre, 0)
                    .await
                {
                    break 'chain (Observation::Blocked { hook, reason }, false);
                }

                *stage = Stage::Tool;
                let outcome = call_tool(tool, &ctx.tool_args).await;
                ctx.point = HookPoint::PostToolUse;
                ctx.tool_outcome = Some(outcome);
                *stage = Stage::Post;
                if let Step::Stop { hook, reason } = Chain::new(ctx, trace, original)
                    .run(&self.hooks.post, 1)
                    .await
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
