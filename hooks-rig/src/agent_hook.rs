//! [`AgentHooks`]: the hooks at rig's agent level, around every tool call
//! the agent dispatches — whichever way the tool was added.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use hooks_runtime::{Observation, PendingToolCall, PreToolUse, ToolOutcome};
use rig_agent::agent::{
    AgentHook, DispatchAction, DispatchEvent, HookContext as RigContext, OutcomeAction,
    OutcomeEvent, RunId, RunStart, RunStartAction,
};
use rig_core::effect::{EffectId, Outcome};
use rig_core::error::{ErrorKind, ErrorReport};
use rig_core::tool::{ToolExecutionError, ToolOutput, ToolResult};
use serde_json::Value;

use crate::hooks::{Hooks, Inner};
use crate::on_block::OnBlock;
use crate::outcome::output_value;

/// The hooks as a rig [`AgentHook`]: every tool call of the agent runs
/// through them, whether its tool came in with plain `.tool()`, as a
/// dynamic or MCP tool, or later through a tool server.
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// use hooks::{Hook, HookContext, HookOutcome, HookRegistry, HookResult, PreToolUseHook};
/// use hooks_rig::scripted::{Turn, scripted_model};
/// use hooks_rig::{CallContext, Hooks};
/// use rig_agent::AgentBuilder;
/// use rig_core::tool::{Tool, ToolContext};
/// use serde_json::{Value, json};
///
/// struct Shell;
/// impl Tool for Shell {
///     const NAME: &'static str = "shell";
///     type Args = Value;
///     type Output = String;
///     type Error = std::io::Error;
///     fn description(&self) -> String { "Runs a shell command.".into() }
///     fn parameters(&self) -> Value { json!({"type": "object", "properties": {"cmd": {"type": "string"}}}) }
///     async fn call(&self, _: &mut ToolContext, args: Value) -> Result<String, std::io::Error> {
///         Ok(format!("ran {}", args["cmd"]))
///     }
/// }
///
/// struct NoRm;
/// impl Hook for NoRm {
///     fn name(&self) -> &str { "no_rm" }
///     fn execute<'a>(&'a self, ctx: &'a HookContext) -> HookOutcome<'a> {
///         let rm = ctx.tool_args["cmd"].as_str().is_some_and(|cmd| cmd.starts_with("rm "));
///         HookOutcome::ready(if rm { HookResult::block("rm is not allowed") } else { HookResult::allow() })
///     }
/// }
/// impl PreToolUseHook for NoRm {}
/// let hooks = Hooks::new(HookRegistry::builder().pre(NoRm).build().unwrap());
///
/// let (model, seen) = scripted_model([
///     Turn::call("call-1", "shell", json!({"cmd": "rm -rf /"})),
///     Turn::answer("I may not delete files."),
/// ]);
/// // The tool goes in as rig users add tools; the hooks guard the agent.
/// let agent = AgentBuilder::new(model).tool(Shell).add_hook(hooks.agent_hook()).build();
///
/// let ids = CallContext::new().user("alice").org("acme").conversation("conv-1");
/// let run = hooks.prepare(agent.prompt("Clean up the disk.").max_turns(4), ids).await.unwrap();
/// assert_eq!(run.await.unwrap().output(), "I may not delete files.");
/// assert_eq!(seen.results_seen(1)[0].text, "Blocked by hook `no_rm`: rm is not allowed");
/// # });
/// ```
///
/// What it does with each tool call, at rig's dispatch boundary:
///
/// - **Before the call** (`on_dispatch`), the pre hooks run on the tool's
///   name, its arguments as the model wrote them, and the request's
///   [`CallContext`](crate::CallContext) (required unless
///   [`Hooks::require_context`] turned it off). The approval gate holds the
///   call here while rig waits. Rewritten arguments are what the tool
///   receives.
/// - **A block** skips the call: the tool does not run and the model reads
///   the hooks' text as its result ([`OnBlock::ToolOutput`]), or a refused
///   result with that text ([`OnBlock::ToolError`]); with
///   [`stop_on_block`](Self::stop_on_block) the run ends instead.
/// - **After the call** (`on_outcome`), the post hooks see the tool's
///   output — or its error, as the text the model would read — and a
///   rewrite or a withheld result replaces what the model reads.
/// - Every call is observed (audited) once. A call whose pre phase this
///   hook cannot find when its result arrives has its result withheld.
///
/// Use this or [`HookedTools`](crate::HookedTools), not both on one agent:
/// a tool wrapped with `hooked_tool` under this hook runs the hooks twice.
/// Choose the agent level unless only some tools are to be guarded.
#[derive(Clone, Debug)]
pub struct AgentHooks {
    hooks: Arc<Inner>,
    stop_on_block: bool,
    held: Held,
}

/// The calls between their pre and post phases, by run and dispatch.
type Held = Arc<Mutex<HashMap<(RunId, EffectId), Call>>>;

/// A call this hook decided before its dispatch.
#[derive(Debug)]
enum Call {
    /// Passed its pre hooks: the tool runs, the post hooks follow. Boxed:
    /// the map holds it for the length of the tool's run.
    Running(Box<PendingToolCall>),
    /// Stopped by the hooks, with the text the model reads.
    Blocked(String),
}

impl Hooks {
    /// These hooks as a rig `AgentHook`, for `AgentBuilder::add_hook` (or a
    /// run's `add_hook`): every tool call of the agent runs through them.
    /// See [`AgentHooks`].
    pub fn agent_hook(&self) -> AgentHooks {
        AgentHooks {
            hooks: self.inner_arc(),
            stop_on_block: false,
            held: Held::default(),
        }
    }
}

impl AgentHooks {
    /// A block (or a withheld result) ends the run with the hooks' text,
    /// instead of reaching the model as the call's result.
    pub fn stop_on_block(mut self) -> Self {
        self.stop_on_block = true;
        self
    }

    fn hold(&self, run: RunId, id: EffectId, call: Call) {
        self.lock().insert((run, id), call);
    }

    fn take(&self, run: RunId, id: EffectId) -> Option<Call> {
        self.lock().remove(&(run, id))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<(RunId, EffectId), Call>> {
        self.held.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// What a dispatch comes to when the hooks stop it.
    fn stop(&self, run: RunId, id: EffectId, text: String) -> DispatchAction {
        if self.stop_on_block {
            return DispatchAction::stop(text);
        }
        if self.hooks.on_block == OnBlock::ToolError {
            // The skip rig makes of the denial becomes a refusal on the
            // way out (`on_outcome`).
            self.hold(run, id, Call::Blocked(text.clone()));
        }
        DispatchAction::skip(text)
    }
}

impl AgentHook for AgentHooks {
    fn name(&self) -> Option<String> {
        Some("hooks".to_owned())
    }

    async fn on_run_start(&self, ctx: &RigContext, _event: RunStart<'_>) -> RunStartAction {
        // Calls a dropped run leaves between their phases are let go (and
        // observed as abandoned) when the run's scratchpad goes.
        if !ctx.scratchpad().contains::<RunCleanup>() {
            ctx.scratchpad().insert(RunCleanup(Arc::new(CleanupOnDrop {
                run: ctx.run_id(),
                held: self.held.clone(),
            })));
        }
        RunStartAction::Continue
    }

    async fn on_dispatch(&self, ctx: &RigContext, event: DispatchEvent<'_>) -> DispatchAction {
        let (Some(name), Some(args)) = (event.tool_name(), event.tool_args()) else {
            return DispatchAction::Proceed;
        };
        let (run, id) = (ctx.run_id(), event.id);
        let call = match event.context {
            Some(tool_context) => self.hooks.hook_context(tool_context, name, Value::Null),
            None if !self.hooks.requires_context() => {
                Ok(crate::CallContext::default().hook_context(name, Value::Null))
            }
            None => Err(
                "rig dispatched the call without a tool context, so the request's \
                         hooks CallContext cannot be read"
                    .to_owned(),
            ),
        };
        let pending = match call {
            Ok(call) => self.hooks.run_pre_raw(call, args).await,
            Err(reason) => {
                let text = Observation::Blocked {
                    hook: "runtime".to_owned(),
                    reason,
                }
                .to_string();
                return self.stop(run, id, text);
            }
        };
        let pending = match pending {
            PreToolUse::Proceed(pending) => pending,
            PreToolUse::Blocked(report) => {
                return self.stop(run, id, report.observation.to_string());
            }
        };
        let rewritten = serde_json::from_str::<Value>(args).ok().as_ref() != Some(pending.args());
        let action = if rewritten {
            DispatchAction::rewrite_tool_args(event.kind, pending.args().clone())
        } else {
            DispatchAction::Proceed
        };
        self.hold(run, id, Call::Running(Box::new(pending)));
        action
    }

    async fn on_outcome(&self, ctx: &RigContext, event: OutcomeEvent<'_>) -> OutcomeAction {
        if event.tool_name().is_none() {
            return OutcomeAction::Proceed;
        }
        let result = event.tool_result();
        if matches!(event.outcome, Err(report) if report.kind == ErrorKind::Cancelled) {
            // The run is ending: the held call goes (observed as abandoned).
            drop(self.take(ctx.run_id(), event.id));
            return OutcomeAction::Proceed;
        }
        let pending = match self.take(ctx.run_id(), event.id) {
            Some(Call::Running(pending)) => pending,
            Some(Call::Blocked(text)) => {
                return replace(ToolResult::failed(ToolExecutionError::refused(text)));
            }
            // Stopped before it ran (by these hooks or by another of rig's
            // hooks): nothing to guard.
            None if result.is_some_and(ToolResult::is_skipped) => return OutcomeAction::Proceed,
            None => {
                let text = Observation::Withheld {
                    hook: "runtime".to_owned(),
                    reason: "the hooks have no record of this call's pre phase, so its \
                             result is not shown"
                        .to_owned(),
                }
                .to_string();
                return self.withhold(&event, text);
            }
        };
        // The tool must have run with what the hooks checked: a rig hook
        // added after this one may have patched the arguments again. Then
        // the result is withheld, and the audit row says why.
        let ran_with = event
            .tool_args()
            .and_then(|args| serde_json::from_str::<Value>(args).ok());
        if ran_with.as_ref() != Some(pending.args()) {
            let reason = format!(
                "the tool ran with input other than the input the hooks allowed ({} instead \
                 of {}); its result is withheld (add the hooks' agent hook after any rig hook \
                 that rewrites arguments)",
                event.tool_args().unwrap_or_default(),
                pending.args()
            );
            (*pending)
                .run_post_tool_use(ToolOutcome::Error(reason.clone()))
                .await;
            let text = Observation::Withheld {
                hook: "runtime".to_owned(),
                reason,
            }
            .to_string();
            return self.withhold(&event, text);
        }
        let (outcome, seen) = match (event.outcome, result) {
            (Ok(_), Some(result)) if result.is_success() => {
                let value = output_value(result.output());
                (ToolOutcome::Success(value.clone()), value)
            }
            (Ok(_), Some(result)) => {
                let text = text_of(result.output());
                (ToolOutcome::Error(text.clone()), Value::String(text))
            }
            (Ok(other), None) => {
                let text = format!("the tool answered with a {} outcome", other.family());
                (ToolOutcome::Error(text.clone()), Value::String(text))
            }
            (Err(report), _) => (
                ToolOutcome::Error(report.message.clone()),
                Value::String(report.message.clone()),
            ),
        };
        let report = (*pending).run_post_tool_use(outcome).await;
        match report.observation {
            Observation::Output(value) => {
                if value == seen && result.is_some_and(ToolResult::is_success) {
                    OutcomeAction::Proceed
                } else {
                    self.rewrite(&event, value_output(value))
                }
            }
            Observation::ToolError(message) => {
                if Value::String(message.clone()) == seen && result.is_some() {
                    OutcomeAction::Proceed
                } else {
                    self.rewrite(&event, ToolOutput::text(message))
                }
            }
            stopped @ (Observation::Blocked { .. } | Observation::Withheld { .. }) => {
                self.withhold(&event, stopped.to_string())
            }
        }
    }
}

impl AgentHooks {
    /// The call's result, with `output` as what the model reads.
    fn rewrite(&self, event: &OutcomeEvent<'_>, output: ToolOutput) -> OutcomeAction {
        match event.tool_result() {
            Some(result) => replace(result.clone().with_output(output)),
            None => replace(ToolResult::failed(
                ToolExecutionError::other("the tool failed").with_model_output(output),
            )),
        }
    }

    /// The call's result withheld: the model reads `text` instead (or the
    /// run ends with it).
    fn withhold(&self, event: &OutcomeEvent<'_>, text: String) -> OutcomeAction {
        if self.stop_on_block {
            return OutcomeAction::stop(text);
        }
        match self.hooks.on_block {
            OnBlock::ToolError => replace(ToolResult::failed(ToolExecutionError::refused(text))),
            _ => self.rewrite(event, ToolOutput::text(text)),
        }
    }
}

fn replace(result: ToolResult) -> OutcomeAction {
    OutcomeAction::Replace(Ok::<_, ErrorReport>(Outcome::ToolResult { result }))
}

/// The text a model reads of a tool output.
fn text_of(output: &ToolOutput) -> String {
    match output_value(output) {
        Value::String(text) => text,
        other => other.to_string(),
    }
}

fn value_output(value: Value) -> ToolOutput {
    match value {
        Value::String(text) => ToolOutput::text(text),
        other => ToolOutput::json(other),
    }
}

/// Lets go of a run's held calls when the run's scratchpad is dropped.
#[derive(Clone)]
struct RunCleanup(#[allow(dead_code, reason = "held for its Drop")] Arc<CleanupOnDrop>);

struct CleanupOnDrop {
    run: RunId,
    held: Held,
}

impl Drop for CleanupOnDrop {
    fn drop(&mut self) {
        let left: Vec<Call> = {
            let mut held = self.held.lock().unwrap_or_else(PoisonError::into_inner);
            let keys: Vec<_> = held
                .keys()
                .filter(|(run, _)| *run == self.run)
                .copied()
                .collect();
            keys.into_iter()
                .filter_map(|key| held.remove(&key))
                .collect()
        };
        // Dropped outside the lock: each running call is observed as
        // abandoned as it goes.
        drop(left);
    }
}
