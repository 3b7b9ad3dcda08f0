//! A tool call in flight, and the guard that still gets it observed when
//! its caller stops waiting.

use std::sync::Arc;
use std::time::Instant;

use super::chain::Chain;
use super::detached::ObserverTask;
use super::observation::Observation;
use super::tool_call::{ToolCallReport, ToolErrorSource};
use super::trace::CallTrace;
use crate::context::{HookContext, ToolOutcome};
use crate::registry::HookRegistry;

/// The name a call is stopped under when the runtime itself stops it (a
/// refused tool name, a caller that stopped waiting) rather than a hook.
pub(crate) const RUNTIME: &str = "runtime";

/// Where a call in flight has got to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum CallPhase {
    /// The pre hooks are running.
    Pre,
    /// The pre hooks let it through; the tool runs (or runs elsewhere).
    Tool,
    /// The tool ran; the post hooks are running.
    Post,
}

/// A call's state while its hooks and tool run.
pub(super) struct CallState {
    pub(super) ctx: HookContext,
    pub(super) trace: CallTrace,
    /// The tool's own outcome, kept when a post hook replaced or withheld it.
    /// Boxed: rare, and the call's state is moved on every call.
    pub(super) original: Option<Box<ToolOutcome>>,
    /// The tool's own error value, when it failed with one.
    pub(super) error_source: Option<Arc<ToolErrorSource>>,
    pub(super) stage: CallPhase,
}

impl CallState {
    /// A call of `registry` that has not started its pre hooks.
    pub(super) fn new(registry: &HookRegistry, ctx: HookContext) -> Self {
        CallState {
            trace: CallTrace::tool_call(registry),
            ctx,
            original: None,
            error_source: None,
            stage: CallPhase::Pre,
        }
    }
}

impl CallState {
    /// The chain engine over this call (its pre or post hooks).
    pub(super) fn chain(&mut self) -> Chain<'_> {
        Chain::new(&mut self.ctx, &mut self.trace, &mut self.original)
    }
}

/// Guards a call in flight: dropped before [`finish`](Self::finish) — the
/// caller stopped waiting — it hands what is known of the call to the
/// observers on a task of their own, so every attempted call is still
/// observed (audited) once.
pub(super) struct DroppedCallGuard<'r> {
    pub(super) registry: &'r HookRegistry,
    /// When the call started; `None` when nobody observes it.
    pub(super) started: Option<Instant>,
    pub(super) state: &'r mut CallState,
}

impl<'r> DroppedCallGuard<'r> {
    /// Guards `state` until [`finish`](Self::finish); `started` is `None`
    /// when nobody observes the call (nothing to hand over then).
    pub(super) fn new(
        registry: &'r HookRegistry,
        started: Option<Instant>,
        state: &'r mut CallState,
    ) -> Self {
        DroppedCallGuard {
            registry,
            started,
            state,
        }
    }

    /// The call reached its end (or the end of a phase): nothing to do on drop.
    pub(super) fn finish(mut self) {
        self.started = None;
    }
}

impl Drop for DroppedCallGuard<'_> {
    fn drop(&mut self) {
        if let Some(started) = self.started.take() {
            observe_abandoned(self.registry, self.state, started);
        }
    }
}

/// A call that will not reach its end (its caller stopped waiting, or the
/// post phase was never run): its observers see it, on a task of their own,
/// as blocked or withheld by the runtime, with the stage it had reached.
pub(super) fn observe_abandoned(registry: &HookRegistry, state: &mut CallState, started: Instant) {
    if state.trace.bypassed {
        return;
    }
    let (observation, tool_ran, original) = match state.stage {
        CallPhase::Pre => (
            Observation::Blocked {
                hook: RUNTIME.to_owned(),
                reason: "the caller stopped waiting before the pre hooks finished; \
                         the tool did not run"
                    .to_owned(),
            },
            false,
            None,
        ),
        CallPhase::Tool => (
            Observation::Withheld {
                hook: RUNTIME.to_owned(),
                reason: "the tool's outcome never reached the post hooks (the caller \
                         stopped waiting while the tool ran); it is unknown"
                    .to_owned(),
            },
            true,
            None,
        ),
        CallPhase::Post => (
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
                .or_else(|| state.ctx.tool_outcome.take().map(Box::new)),
        ),
    };
    let mut trace = state.trace.clone();
    // The only awaits before the end are a waiting hook's, so the hook in
    // flight is the one the chain of this stage had got to.
    trace.interrupted = match state.stage {
        CallPhase::Pre => Some(0),
        CallPhase::Tool => None,
        CallPhase::Post => Some(1),
    };
    let report = ToolCallReport {
        observation,
        args: state.ctx.tool_args.clone(),
        tool_ran,
        trace,
        original,
        error_source: state.error_source.take(),
    };
    let ctx = state.ctx.clone();
    let duration = started.elapsed();
    match tokio::runtime::Handle::try_current() {
        Ok(runtime) => {
            let task = ObserverTask::start(registry, &ctx.tool_name);
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
