//! The end of a call: its report, handed to every observer once.

use std::pin::Pin;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::call_state::{CallState, RUNTIME};
use super::detached::ObserverTask;
use super::observation::Observation;
use super::run_hook::{HookFailure, guarded, run_guarded};
use super::tool_call::ToolCallReport;
use crate::context::{HookContext, ToolOutcome};
use crate::hook::ErrorPolicy;
use crate::observer::{CallObserver, CallRecord};
use crate::registry::HookRegistry;

impl HookRegistry {
    /// When a call starts: the clock is read only when an observer will want
    /// the duration. A call made from inside this registry's own observers is
    /// not observed again: an observer that calls tools would feed itself.
    pub(super) fn observation_clock(&self) -> Option<Instant> {
        (!self.hooks.observers.is_empty() && !self.observing_now()).then(Instant::now)
    }

    /// The call's report, at once when nobody observes it, or after its
    /// observers ran (the boxed future: observers are optional, and their
    /// state would otherwise make every call's future bigger).
    #[allow(
        clippy::type_complexity,
        reason = "the future is unnameable; boxing it is the point"
    )]
    #[inline(always)]
    pub(super) fn conclude(
        &self,
        state: CallState,
        observation: Observation,
        tool_ran: bool,
        started: Option<Instant>,
    ) -> Result<ToolCallReport, Pin<Box<impl Future<Output = ToolCallReport> + '_>>> {
        let CallState {
            mut ctx,
            trace,
            original,
            error_source,
            ..
        } = state;
        let Some(started) = started.filter(|_| !trace.bypassed) else {
            // Built in place: the report is moved out of the call's future as is.
            return Ok(ToolCallReport {
                observation,
                args: std::mem::take(&mut ctx.tool_args),
                tool_ran,
                trace,
                original,
                error_source,
            });
        };
        // Observers read the final arguments in the report as well as in
        // the context: a copy, made only for a call someone observes.
        let report = ToolCallReport {
            observation,
            args: ctx.tool_args.clone(),
            tool_ran,
            trace,
            original,
            error_source,
        };
        Err(Box::pin(self.observe_to_the_end(
            ctx,
            report,
            started.elapsed(),
        )))
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
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            let mut report = report;
            self.notify_observers(&ctx, &mut report, duration).await;
            return report;
        };
        // Kept for the report should the task not finish: the trace is a
        // registry handle and the runs, and the task is cancelled only when
        // the runtime shuts down.
        let (tool_ran, trace) = (report.tool_ran, report.trace.clone());
        let task = ObserverTask::start(self, &ctx.tool_name);
        let observed = runtime.spawn(async move {
            let mut report = report;
            task.registry()
                .notify_observers(&ctx, &mut report, duration)
                .await;
            task.finish();
            report
        });
        match observed.await {
            Ok(report) => report,
            // Observers' panics are caught where they run (each call to an
            // observer is guarded), so this is a runtime shutting down: what
            // was observed is not known, so the result is not handed back.
            Err(error) => ToolCallReport {
                observation: Observation::Withheld {
                    hook: RUNTIME.to_owned(),
                    reason: format!(
                        "the call's observers did not finish ({error}); the result is withheld"
                    ),
                },
                args: Value::Null,
                tool_ran,
                trace,
                original: None,
                error_source: None,
            },
        }
    }

    /// Runs every observer, marked as this registry's observers.
    pub(super) async fn notify_observers(
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
            // A panic in `on_error` itself is one more failure: fail closed.
            if guarded(|| observer.on_error()).unwrap_or(ErrorPolicy::FailClosed)
                == ErrorPolicy::FailClosed
            {
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
                    report.original = Some(Box::new(ToolOutcome::Success(value)));
                }
                Observation::ToolError(message) if report.original.is_none() => {
                    report.original = Some(Box::new(ToolOutcome::Error(message)));
                }
                _ => {}
            }
        }
    }
}

async fn run_observer(
    observer: &dyn CallObserver,
    record: CallRecord<'_>,
) -> Result<(), HookFailure> {
    let timeout = guarded(|| observer.timeout())?;
    run_guarded(timeout, || observer.observe(record))
        .await
        .map(drop)
}
