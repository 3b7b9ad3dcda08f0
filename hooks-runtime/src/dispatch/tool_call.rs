//! The tool-call runner: the pre phase, the tool, the post phase, the observers.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use futures_util::FutureExt as _;
use serde_json::Value;

use super::call_state::RUNTIME;
use super::call_state::{CallState, DroppedCallGuard};
use super::observation::Observation;
use super::phases::{post_phase, pre_phase};
use super::raw_args;
use super::run_hook::{drop_quietly, panic_message};
use super::trace::{CallTrace, Refusal};
use crate::context::{HookContext, Surface, ToolOutcome};
use crate::registry::HookRegistry;

/// The error a tool failed with, boxed: what
/// [`ToolCallReport::take_tool_error_source`] hands back, to
/// [`downcast`](Box::downcast) to the tool's own error type.
pub type ToolErrorSource = Box<dyn std::error::Error + Send + Sync>;

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
    /// Boxed: rare, and the report is moved on every call.
    pub(super) original: Option<Box<ToolOutcome>>,
    /// The tool's own error value, when it failed with one (one pointer:
    /// allocated only on the error path). Not serialized: its message is.
    #[serde(skip)]
    pub(super) error_source: Option<Arc<ToolErrorSource>>,
}

impl ToolCallReport {
    /// The tool's own result, before any post hook rewrote (e.g. truncated) or
    /// withheld it; `None` when the tool did not run or failed.
    pub fn raw_result(&self) -> Option<&Value> {
        match (self.original.as_deref(), &self.observation) {
            (Some(ToolOutcome::Success(value)), _) => Some(value),
            (Some(ToolOutcome::Error(_)), _) => None,
            (None, Observation::Output(value)) => Some(value),
            (None, _) => None,
        }
    }

    /// The tool's own error message, when it ran and failed (its error's
    /// `Display`, as post hooks saw it). For the error value itself, see
    /// [`tool_error_source`](Self::tool_error_source).
    pub fn tool_error(&self) -> Option<&str> {
        match (self.original.as_deref(), &self.observation) {
            (Some(ToolOutcome::Error(message)), _) => Some(message),
            (Some(ToolOutcome::Success(_)), _) => None,
            (None, Observation::ToolError(message)) => Some(message),
            (None, _) => None,
        }
    }

    /// The error value the tool failed with, as the tool returned it (through
    /// `Into<Box<dyn Error + Send + Sync>>`), so retry logic can match on
    /// the tool's own type with
    /// [`downcast_ref`](trait@std::error::Error#method.downcast_ref). Kept when
    /// post hooks rewrote or withheld the error. `None` when the tool
    /// succeeded, did not run, panicked, or its outcome was handed to
    /// [`PendingToolCall::run_post_tool_use`](crate::PendingToolCall::run_post_tool_use)
    /// as a [`ToolOutcome`] (which carries only a message).
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// use hooks::{HookContext, HookRegistry};
    /// use serde_json::{json, Value};
    ///
    /// #[derive(Debug)]
    /// struct RateLimited { retry_after_s: u64 }
    /// impl std::fmt::Display for RateLimited {
    ///     fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
    ///         write!(f, "rate limited; retry in {} s", self.retry_after_s)
    ///     }
    /// }
    /// impl std::error::Error for RateLimited {}
    ///
    /// let registry = HookRegistry::builder().build().unwrap();
    /// let ctx = HookContext::tool_call("fetch", json!({}));
    /// let report = registry
    ///     .run_tool_call(ctx, async |_: &Value| Err(RateLimited { retry_after_s: 3 }))
    ///     .await;
    /// assert_eq!(report.tool_error(), Some("rate limited; retry in 3 s"));
    /// let limited = report.tool_error_source().and_then(|e| e.downcast_ref::<RateLimited>());
    /// assert_eq!(limited.map(|e| e.retry_after_s), Some(3));
    /// # });
    /// ```
    pub fn tool_error_source(&self) -> Option<&(dyn std::error::Error + Send + Sync + 'static)> {
        self.error_source.as_deref().map(|source| &**source)
    }

    /// Takes the tool's error value out of the report, owned (see
    /// [`tool_error_source`](Self::tool_error_source)); `None` when there is
    /// none, or when a clone of this report still shares it (the value is
    /// then left in place: read it with `tool_error_source`).
    pub fn take_tool_error_source(&mut self) -> Option<ToolErrorSource> {
        let shared = self.error_source.take()?;
        match Arc::try_unwrap(shared) {
            Ok(source) => Some(source),
            Err(shared) => {
                self.error_source = Some(shared);
                None
            }
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
    /// The tool's error type only needs `Into<Box<dyn Error + Send + Sync>>`
    /// (`String` and `&str` have it, as does every `Error + Send + Sync`
    /// type): post hooks and the LLM see its `Display`, and the value itself
    /// stays in the report ([`ToolCallReport::tool_error_source`]).
    ///
    /// When the arguments are the model's own JSON text, use
    /// [`run_tool_call_raw`](Self::run_tool_call_raw): text that does not
    /// parse is then a blocked, observed call rather than one the caller
    /// drops on the floor.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// use hooks::{HookContext, HookRegistry, Observation};
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
        E: Into<ToolErrorSource>,
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
            let call = DroppedCallGuard::new(self, started, &mut state);
            // The phases' steps, with the chains awaited here (see
            // `enter_pre`): `run_pre_tool_use` and `run_post_tool_use` are
            // the same steps with the tool run elsewhere.
            //
            // `if let … else` and a bound `conclude`: what this future keeps
            // while a hook or the tool waits is only what it needs then (a
            // `match` keeps its whole scrutinee, and the future is moved on
            // every call).
            let (observation, tool_ran) = if let Some(blocked) = pre_phase!(self, call.state) {
                (blocked, false)
            } else {
                let (outcome, error_source) = call_tool(tool, &call.state.ctx.tool_args).await;
                call.state.error_source = error_source;
                (post_phase!(self, call.state, outcome), true)
            };
            call.finish();
            let observing = match self.conclude(state, observation, tool_ran, started) {
                Ok(report) => return report,
                Err(observing) => observing,
            };
            observing.await
        }
    }

    /// Runs one tool call whose arguments are the model's own JSON text, as
    /// it emitted it: what a front end gets from an LLM API's tool call.
    ///
    /// `raw_args` replaces `ctx.tool_args`. When it reads as a JSON object,
    /// the call is exactly [`run_tool_call`](Self::run_tool_call) with that
    /// object. Otherwise the tool does not run and **no pre hook runs**
    /// (hooks read arguments as JSON, and there is none): the call is
    /// [`Blocked`](Observation::Blocked) by `runtime`, with a reason the
    /// model can act on and retry, such as `the arguments are not valid
    /// JSON: EOF while parsing an object at line 1 column 14`;
    /// [`CallTrace::refused`] is [`Refusal::Arguments`]; and the observers
    /// (the audit log) see the call like any blocked one, with its arguments
    /// (in the context and the report) the raw text as a JSON string, hidden
    /// characters escaped as `\u{…}` and cut to
    /// [`RAW_ARGS_PREVIEW_CHARS`](crate::RAW_ARGS_PREVIEW_CHARS) characters.
    ///
    /// Refused are: text that is not JSON (trailing text after the value
    /// included, and lone UTF-16 surrogates in `\u` escapes); an object
    /// that has the same key twice, at any depth (readers disagree on which
    /// one counts, so the hooks could check one value and a tool or proxy
    /// that re-reads the text use another); JSON that is not an object
    /// (tools take named arguments); text longer than
    /// [`MAX_RAW_ARGS_BYTES`](crate::MAX_RAW_ARGS_BYTES), unread. Empty
    /// or all-whitespace text is read as `{}`, as models send for tools
    /// without parameters. `\u0000` escapes are valid JSON and reach the
    /// hooks as the NUL character they denote.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// use hooks::{HookContext, HookRegistry, Observation};
    /// use serde_json::{json, Value};
    ///
    /// let registry = HookRegistry::builder().build().unwrap();
    /// let echo = async |args: &Value| Ok::<_, String>(args["text"].clone());
    ///
    /// let ctx = HookContext::tool_call("echo", Value::Null);
    /// let report = registry.run_tool_call_raw(ctx, r#"{"text": "hi"}"#, echo).await;
    /// assert_eq!(report.observation, Observation::Output(json!("hi")));
    ///
    /// let ctx = HookContext::tool_call("echo", Value::Null);
    /// let report = registry.run_tool_call_raw(ctx, r#"{"text": "hi""#, echo).await;
    /// assert!(!report.tool_ran);
    /// assert!(report.observation.to_string().contains("the arguments are not valid JSON"));
    /// assert_eq!(report.args, json!(r#"{"text": "hi""#));
    /// # });
    /// ```
    pub async fn run_tool_call_raw<T, E>(
        &self,
        mut ctx: HookContext,
        raw_args: &str,
        tool: T,
    ) -> ToolCallReport
    where
        T: AsyncFnOnce(&Value) -> Result<Value, E>,
        E: Into<ToolErrorSource>,
    {
        match raw_args::read(raw_args) {
            Ok(args) => {
                ctx.tool_args = args;
                self.run_tool_call(ctx, tool).await
            }
            Err(reason) => {
                ctx.tool_args = raw_args::preview(raw_args);
                self.refuse_arguments(ctx, reason).await
            }
        }
    }

    /// Records a call that a front end refused before any hook ran (an MCP
    /// proxy refusing a hidden or unlisted tool, say): the tool does not
    /// run, no hook runs, and the observers (the audit log) see the call as
    /// [`Blocked`](Observation::Blocked) by `by` with `reason`, like any
    /// blocked call; [`CallTrace::refused`] is [`Refusal::FrontEnd`]. A
    /// refusal leaves the same trail as a block.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// use hooks::trace::Refusal;
    /// use hooks::{HookContext, HookRegistry};
    /// use serde_json::json;
    ///
    /// let registry = HookRegistry::builder().build().unwrap();
    /// let ctx = HookContext::tool_call("Delete_Repo", json!({}));
    /// let report = registry.refuse_tool_call(ctx, "mcp_proxy", "not listed".into()).await;
    /// assert!(!report.tool_ran);
    /// assert_eq!(report.trace.refused(), Some(Refusal::FrontEnd));
    /// assert_eq!(report.stopped_by(), Some("mcp_proxy"));
    /// # });
    /// ```
    pub async fn refuse_tool_call(
        &self,
        ctx: HookContext,
        by: &str,
        reason: String,
    ) -> ToolCallReport {
        self.refuse(ctx, Refusal::FrontEnd, by, reason).await
    }

    /// A call whose argument text was refused: blocked before any hook,
    /// observed like any blocked call.
    #[cold]
    pub(super) async fn refuse_arguments(
        &self,
        ctx: HookContext,
        reason: String,
    ) -> ToolCallReport {
        self.refuse(ctx, Refusal::Arguments, RUNTIME, reason).await
    }

    /// A call refused (for `refusal`, by `by`) before any hook, observed
    /// like any blocked call.
    #[cold]
    async fn refuse(
        &self,
        ctx: HookContext,
        refusal: Refusal,
        by: &str,
        reason: String,
    ) -> ToolCallReport {
        let mut state = CallState::new(self, ctx);
        // A refused tool name is the first thing wrong with a call, as in
        // `run_tool_call`.
        let (refusal, by, reason) = match super::tool_name::problem(&state.ctx.tool_name) {
            Some(name_problem) => (Refusal::ToolName, RUNTIME, name_problem),
            None => (refusal, by, reason),
        };
        tracing::debug!(tool = %state.ctx.tool_name, %reason, "tool call refused before any hook");
        state.trace.refused = Some(refusal);
        // On the evaluation surface observers are bypassed, as for any call.
        state.trace.bypassed = state.ctx.surface == Surface::Evaluation;
        let observation = Observation::Blocked {
            hook: by.to_owned(),
            reason,
        };
        let started = self.observation_clock();
        match self.conclude(state, observation, false, started) {
            Ok(report) => report,
            Err(observing) => observing.await,
        }
    }
}

/// Runs the tool on the call's final arguments: its outcome, and the error
/// value it failed with, if it did (returned rather than written through a
/// reference, so this future, part of every call's, holds nothing more).
async fn call_tool<T, E>(tool: T, args: &Value) -> (ToolOutcome, Option<Arc<ToolErrorSource>>)
where
    T: AsyncFnOnce(&Value) -> Result<Value, E>,
    E: Into<ToolErrorSource>,
{
    // A tool may panic while it creates its future (a plain closure that
    // returns an `async` block) as well as while it runs, and its error's
    // conversion and `Display` may panic too: each is a tool error.
    let future = match std::panic::catch_unwind(AssertUnwindSafe(|| tool(args))) {
        Ok(future) => future,
        Err(payload) => return (tool_panicked(payload), None),
    };
    let outcome = async {
        match future.await {
            Ok(value) => (ToolOutcome::Success(value), None),
            Err(error) => failed(error.into()),
        }
    };
    match AssertUnwindSafe(outcome).catch_unwind().await {
        Ok(outcome) => outcome,
        Err(payload) => (tool_panicked(payload), None),
    }
}

/// The outcome of a tool that returned an error value, and the value.
#[cold]
fn failed(error: ToolErrorSource) -> (ToolOutcome, Option<Arc<ToolErrorSource>>) {
    let message = error.to_string();
    (ToolOutcome::Error(message), Some(Arc::new(error)))
}

#[cold]
#[inline(never)]
fn tool_panicked(payload: Box<dyn std::any::Any + Send>) -> ToolOutcome {
    let message = panic_message(payload.as_ref());
    drop_quietly(payload);
    ToolOutcome::Error(format!("the tool panicked: {message}"))
}
