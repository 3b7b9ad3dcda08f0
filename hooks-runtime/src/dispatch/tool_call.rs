//! The tool-call runner: the pre phase, the tool, the post phase, the observers.

use std::fmt;
use std::panic::AssertUnwindSafe;

use futures_util::FutureExt as _;
use serde_json::Value;

use super::call_state::{CallState, Unfinished};
use super::observation::Observation;
use super::phases::{post_phase, pre_phase};
use super::run_hook::{drop_quietly, panic_message};
use super::trace::CallTrace;
use crate::context::{HookContext, ToolOutcome};
use crate::registry::HookRegistry;

/// Everything a tool call produced.
///
/// Serializes as `observation`, `args`, `tool_ran`, `trace` (see
/// [`CallTrace`]) and, when a post hook replaced or withheld the tool's own
/// outcome, `tool_outcome` (a [`ToolOutcome`]: what the tool itself returned).
#[derive(Debug, Clone, serde::Serialize)]
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
    #[serde(rename = "tool_outcome", skip_serializing_if = "Option::is_none")]
    pub(super) original: Option<ToolOutcome>,
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
        // Not an `async fn`, and the call's state built before the `async`
        // block: a by-value argument captured by the block would keep a
        // second copy of the context in the future, and the future is moved
        // on every call (by whoever awaits it), so its size is time.
        let mut state = CallState::new(self, ctx);
        async move {
            let started = self.observation_clock();
            // Until the report is built, a caller that drops this future
            // (a timeout around the call, say) still gets the call observed.
            let call = Unfinished::new(self, started, &mut state);
            // The phases' steps, with the chains awaited here (see
            // `enter_pre`): `run_pre_tool_use` and `run_post_tool_use` are
            // the same steps with the tool run elsewhere.
            let blocked = pre_phase!(self, call.state);
            let (observation, tool_ran) = match blocked {
                Some(blocked) => (blocked, false),
                None => {
                    let outcome = call_tool(tool, &call.state.ctx.tool_args).await;
                    (post_phase!(self, call.state, outcome), true)
                }
            };
            call.finish();
            match self.conclude(state, observation, tool_ran, started) {
                Ok(report) => report,
                Err(observing) => observing.await,
            }
        }
    }
}

async fn call_tool<T, E>(tool: T, args: &Value) -> ToolOutcome
where
    T: AsyncFnOnce(&Value) -> Result<Value, E>,
    E: fmt::Display,
{
    // A tool may panic while it creates its future (a plain closure that
    // returns an `async` block) as well as while it runs, and its error's
    // `Display` may panic too: each is a tool error.
    let future = match std::panic::catch_unwind(AssertUnwindSafe(|| tool(args))) {
        Ok(future) => future,
        Err(payload) => return tool_panicked(payload),
    };
    let outcome = async {
        match future.await {
            Ok(value) => ToolOutcome::Success(value),
            Err(error) => {
                let message = error.to_string();
                drop(error);
                ToolOutcome::Error(message)
            }
        }
    };
    match AssertUnwindSafe(outcome).catch_unwind().await {
        Ok(outcome) => outcome,
        Err(payload) => tool_panicked(payload),
    }
}

#[cold]
#[inline(never)]
fn tool_panicked(payload: Box<dyn std::any::Any + Send>) -> ToolOutcome {
    let message = panic_message(payload.as_ref());
    drop_quietly(payload);
    ToolOutcome::Error(format!("the tool panicked: {message}"))
}
