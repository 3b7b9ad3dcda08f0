//! The two phases of a tool call — pre hooks, then post hooks — run one at a
//! time, for front ends whose tool runs elsewhere: an agent that asks before
//! a call and reports its outcome later (Claude Code's hook protocol, an MCP
//! proxy). [`HookRegistry::run_tool_call`] is the same two phases with the
//! tool in between.

use std::time::Instant;

use serde_json::Value;

use super::call_state::{CallPhase, CallState, DroppedCallGuard, RUNTIME, observe_abandoned};
use super::chain::ChainFlow;
use super::observation::Observation;
use super::raw_args;
use super::tool_call::ToolCallReport;
use super::tool_name;
use super::trace::{CallTrace, Refusal};
use crate::context::{HookContext, HookPoint, Surface, ToolOutcome};
use crate::registry::HookRegistry;

/// The pre phase of `$state` (a `&mut CallState`) through `$registry`,
/// awaited in place: `Some(observation)` when the call is stopped. A macro
/// rather than an `async fn` so the caller's future awaits the chain
/// directly (see [`HookRegistry::enter_pre`]). `if let … else`, so that
/// nothing of the entry check is kept in the caller's future while a hook
/// waits (the scrutinee is dropped before the `else` block).
macro_rules! pre_phase {
    ($registry:expr, $state:expr) => {
        if let Err(skipped) = $registry.enter_pre($state) {
            skipped.observation()
        } else {
            let step = $state.chain().run(&$registry.hooks.pre, 0).await;
            $crate::dispatch::phases::leave_pre($state, step)
        }
    };
}
pub(super) use pre_phase;

/// The post phase of `$state` on the tool's `$outcome`, awaited in place:
/// what the LLM will see. See [`pre_phase!`].
macro_rules! post_phase {
    ($registry:expr, $state:expr, $outcome:expr) => {
        if $state.trace.bypassed {
            $crate::dispatch::phases::observe($outcome)
        } else {
            $crate::dispatch::phases::enter_post($state, $outcome);
            let step = $state.chain().run(&$registry.hooks.post, 1).await;
            $crate::dispatch::phases::leave_post($state, step)
        }
    };
}
pub(super) use post_phase;

/// What the pre phase decided.
#[derive(Debug)]
#[allow(
    clippy::large_enum_variant,
    reason = "`Proceed` is the common path; boxing it would allocate on every call. \
              The lint fires when serde_json's `preserve_order` (which rig-core turns on) \
              makes the call's context larger"
)]
pub enum PreToolUse {
    /// The pre hooks let the call through: run the tool with
    /// [`PendingToolCall::args`], then hand its outcome to
    /// [`PendingToolCall::run_post_tool_use`].
    Proceed(PendingToolCall),
    /// A pre hook (or the runtime) stopped the call: the tool must not run.
    /// The call is over and its observers have seen it.
    Blocked(ToolCallReport),
}

/// A tool call that passed its pre hooks and waits for the tool's outcome.
///
/// Hold it while the tool runs — keyed by its
/// [`tool_call_id`](Self::tool_call_id) when the outcome arrives in another
/// request — and finish it with [`run_post_tool_use`](Self::run_post_tool_use):
/// the observers (the audit log) then see the whole call once, its pre and
/// post hooks in one trace, exactly as [`HookRegistry::run_tool_call`] would
/// have shown it. Dropped without that, the call is still observed once, as
/// withheld by the runtime with its outcome unknown.
pub struct PendingToolCall {
    registry: HookRegistry,
    /// `Some` until the post phase takes it.
    state: Option<CallState>,
    started: Option<Instant>,
}

impl std::fmt::Debug for PendingToolCall {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PendingToolCall")
            .field("tool", &self.context().tool_name)
            .field("tool_call_id", &self.context().tool_call_id)
            .finish_non_exhaustive()
    }
}

impl HookRegistry {
    /// Runs a tool call's pre hooks only; the tool runs elsewhere.
    ///
    /// The same rules as [`run_tool_call`](Self::run_tool_call) apply:
    /// chained rewrites, the first block stops the chain, failures block
    /// unless fail-open, a refused tool name never reaches a hook.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// use hooks::{HookContext, HookRegistry, Observation, PreToolUse, ToolOutcome};
    /// use serde_json::json;
    ///
    /// let registry = HookRegistry::builder().build().unwrap();
    /// let ctx = HookContext::tool_call("echo", json!({"text": "hi"})).with_tool_call_id("call-1");
    /// let PreToolUse::Proceed(call) = registry.run_pre_tool_use(ctx).await else {
    ///     panic!("nothing blocks here");
    /// };
    /// // … the tool runs elsewhere with `call.args()` …
    /// let outcome = ToolOutcome::Success(call.args()["text"].clone());
    /// let report = call.run_post_tool_use(outcome).await;
    /// assert_eq!(report.observation, Observation::Output(json!("hi")));
    /// # });
    /// ```
    #[allow(
        clippy::manual_async_fn,
        reason = "an async fn would keep a second copy of `ctx` in its future"
    )]
    pub fn run_pre_tool_use(&self, ctx: HookContext) -> impl Future<Output = PreToolUse> + '_ {
        let mut state = CallState::new(self, ctx);
        async move {
            let started = self.observation_clock();
            let call = DroppedCallGuard::new(self, started, &mut state);
            let blocked = pre_phase!(self, call.state);
            call.finish();
            let Some(observation) = blocked else {
                return PreToolUse::Proceed(PendingToolCall {
                    registry: self.clone(),
                    state: Some(state),
                    started,
                });
            };
            // Bound, then awaited: a `match` awaiting in one arm would keep
            // the whole `Result` (a report's size) in this future.
            let observing = match self.conclude(state, observation, false, started) {
                Ok(report) => return PreToolUse::Blocked(report),
                Err(observing) => observing,
            };
            PreToolUse::Blocked(observing.await)
        }
    }

    /// [`run_pre_tool_use`](Self::run_pre_tool_use) for arguments that are
    /// the model's JSON text as it emitted it (`raw_args` replaces the
    /// context's arguments). Text that is not a readable JSON object is
    /// blocked before any hook, as
    /// [`run_tool_call_raw`](Self::run_tool_call_raw) blocks it.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// use hooks::{HookContext, HookRegistry, PreToolUse};
    /// use serde_json::{Value, json};
    ///
    /// let registry = HookRegistry::builder().build().unwrap();
    /// let ctx = HookContext::tool_call("echo", Value::Null);
    /// let PreToolUse::Proceed(call) = registry.run_pre_tool_use_raw(ctx, r#"{"text": "hi"}"#).await else {
    ///     panic!("nothing blocks here");
    /// };
    /// assert_eq!(call.args(), &json!({"text": "hi"}));
    ///
    /// let ctx = HookContext::tool_call("echo", Value::Null);
    /// let PreToolUse::Blocked(report) = registry.run_pre_tool_use_raw(ctx, "[1, 2").await else {
    ///     panic!("text that is not JSON is blocked");
    /// };
    /// assert!(report.observation.to_string().contains("not valid JSON"));
    /// # });
    /// ```
    pub async fn run_pre_tool_use_raw(&self, mut ctx: HookContext, raw_args: &str) -> PreToolUse {
        match raw_args::read(raw_args) {
            Ok(args) => {
                ctx.tool_args = args;
                self.run_pre_tool_use(ctx).await
            }
            Err(reason) => {
                ctx.tool_args = raw_args::preview(raw_args);
                PreToolUse::Blocked(self.refuse_arguments(ctx, reason).await)
            }
        }
    }

    /// Before the pre hooks: `Ok` when they run (then [`CallState::chain`]
    /// over the pre hooks, and [`leave_pre`]); `Err` when they do not: the
    /// tool name is refused, or hooks are bypassed.
    ///
    /// The phases are steps, not `async fn`s, so a call's future awaits the
    /// chain directly: every nested future is built and then copied into its
    /// parent, on every call.
    pub(super) fn enter_pre(&self, state: &mut CallState) -> Result<(), Skipped> {
        let CallState {
            ctx, trace, stage, ..
        } = state;
        if let Some(reason) = tool_name::problem(&ctx.tool_name) {
            trace.refused = Some(Refusal::ToolName);
            return Err(Skipped::Refused(reason));
        }
        if ctx.surface == Surface::Evaluation {
            trace.bypassed = true;
            tracing::debug!(tool = %ctx.tool_name, "hooks bypassed on the evaluation surface");
            *stage = CallPhase::Tool;
            return Err(Skipped::Bypassed);
        }
        ctx.point = HookPoint::PreToolUse;
        ctx.tool_outcome = None;
        Ok(())
    }
}

/// Why a call's pre hooks did not run. Small on purpose: the caller's
/// future holds it while it decides what to do.
pub(super) enum Skipped {
    /// The tool name is refused, for this reason: the call is blocked.
    Refused(String),
    /// Hooks are bypassed (evaluation runs): the tool runs.
    Bypassed,
}

impl Skipped {
    /// What the call's pre phase comes to: `Some` when it is stopped.
    pub(super) fn observation(self) -> Option<Observation> {
        match self {
            Skipped::Refused(reason) => Some(Observation::Blocked {
                hook: RUNTIME.to_owned(),
                reason,
            }),
            Skipped::Bypassed => None,
        }
    }
}

/// Before the post hooks, on the tool's outcome (hooks not bypassed): then
/// [`CallState::chain`] over the post hooks and [`leave_post`].
pub(super) fn enter_post(state: &mut CallState, outcome: ToolOutcome) {
    state.ctx.point = HookPoint::PostToolUse;
    state.ctx.tool_outcome = Some(outcome);
    state.stage = CallPhase::Post;
}

/// After the pre hooks: `Some(observation)` when they stopped the call.
pub(super) fn leave_pre(state: &mut CallState, step: ChainFlow) -> Option<Observation> {
    match step {
        ChainFlow::Stop { hook, reason } => Some(Observation::Blocked { hook, reason }),
        ChainFlow::Continue => {
            state.stage = CallPhase::Tool;
            None
        }
    }
}

/// After the post hooks: what the LLM will see.
pub(super) fn leave_post(state: &mut CallState, step: ChainFlow) -> Observation {
    let CallState { ctx, original, .. } = state;
    if let ChainFlow::Stop { hook, reason } = step {
        if original.is_none() {
            *original = ctx.tool_outcome.take().map(Box::new);
        }
        return Observation::Withheld { hook, reason };
    }
    let outcome = ctx
        .tool_outcome
        .take()
        .unwrap_or(ToolOutcome::Error(String::new()));
    observe(outcome)
}

impl PendingToolCall {
    /// The arguments after every pre hook's rewrites: what the tool must get.
    pub fn args(&self) -> &Value {
        &self.context().tool_args
    }

    /// The call as the pre hooks left it.
    pub fn context(&self) -> &HookContext {
        &self.state().ctx
    }

    /// The id that pairs this call's pre and post phases (and its audit row).
    pub fn tool_call_id(&self) -> &str {
        &self.context().tool_call_id
    }

    /// What each pre hook did.
    pub fn trace(&self) -> &CallTrace {
        &self.state().trace
    }

    /// Runs the post hooks on the tool's outcome, then the observers, and
    /// returns the whole call's report — the same report
    /// [`HookRegistry::run_tool_call`] gives for the same hooks and outcome.
    pub async fn run_post_tool_use(mut self, outcome: ToolOutcome) -> ToolCallReport {
        let registry = self.registry.clone();
        let started = self.started.take();
        let Some(mut state) = self.state.take() else {
            unreachable!("a pending call's state is taken only here, by value")
        };
        let call = DroppedCallGuard::new(&registry, started, &mut state);
        let observation = post_phase!(registry, call.state, outcome);
        call.finish();
        let observing = match registry.conclude(state, observation, true, started) {
            Ok(report) => return report,
            Err(observing) => observing,
        };
        observing.await
    }

    fn state(&self) -> &CallState {
        match &self.state {
            Some(state) => state,
            None => unreachable!("a pending call's state is taken only by consuming it"),
        }
    }
}

impl Drop for PendingToolCall {
    fn drop(&mut self) {
        if let (Some(mut state), Some(started)) = (self.state.take(), self.started.take()) {
            observe_abandoned(&self.registry, &mut state, started);
        }
    }
}

/// What the LLM sees of a tool's outcome that no hook replaced.
pub(super) fn observe(outcome: ToolOutcome) -> Observation {
    match outcome {
        ToolOutcome::Success(value) => Observation::Output(value),
        ToolOutcome::Error(message) => Observation::ToolError(message),
    }
}
