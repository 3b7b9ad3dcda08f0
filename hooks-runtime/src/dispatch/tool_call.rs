//! The tool-call runner: pre hooks → tool → post hooks.

use std::fmt;
use std::panic::AssertUnwindSafe;
use std::time::Instant;

use futures_util::FutureExt as _;
use serde_json::Value;

use super::observation::Observation;
use super::run_hook::{HookFailure, panic_message, run_hook, triggers};
use super::trace::{CallTrace, Decision, HookRun};
use crate::context::{HookContext, HookPoint, Surface, ToolOutcome};
use crate::hook::{ErrorPolicy, Hook};
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
    /// fail-closed failure withholds the result. On the
    /// [`Evaluation`](Surface::Evaluation) surface hooks are bypassed and the
    /// trace says so. A panicking tool counts as a tool error.
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
        let mut trace = CallTrace::tool_call(self);
        if ctx.surface == Surface::Evaluation {
            trace.bypassed = true;
            tracing::debug!(tool = %ctx.tool_name, "hooks bypassed on the evaluation surface");
            let outcome = call_tool(tool, &ctx.tool_args).await;
            return ToolCallReport {
                observation: observe(outcome),
                args: ctx.tool_args,
                tool_ran: true,
                trace,
            };
        }

        ctx.point = HookPoint::PreToolUse;
        ctx.tool_outcome = None;
        for (index, hook) in self.hooks.pre.iter().enumerate() {
            trace.considered[0] = index + 1;
            let trigger = triggers(hook.as_ref(), &ctx);
            if trigger == Ok(false) {
                continue;
            }
            let step = run_step(hook.as_ref(), index, trigger.err(), &mut ctx, &mut trace).await;
            if let Step::Stop { reason } = step {
                return ToolCallReport {
                    observation: Observation::Blocked {
                        hook: hook.name().to_owned(),
                        reason,
                    },
                    args: ctx.tool_args,
                    tool_ran: false,
                    trace,
                };
            }
        }

        let outcome = call_tool(tool, &ctx.tool_args).await;
        ctx.point = HookPoint::PostToolUse;
        ctx.tool_outcome = Some(outcome);
        for (index, hook) in self.hooks.post.iter().enumerate() {
            trace.considered[1] = index + 1;
            let trigger = triggers(hook.as_ref(), &ctx);
            if trigger == Ok(false) {
                continue;
            }
            let step = run_step(hook.as_ref(), index, trigger.err(), &mut ctx, &mut trace).await;
            if let Step::Stop { reason } = step {
                return ToolCallReport {
                    observation: Observation::Withheld {
                        hook: hook.name().to_owned(),
                        reason,
                    },
                    args: ctx.tool_args,
                    tool_ran: true,
                    trace,
                };
            }
        }
        let outcome = ctx
            .tool_outcome
            .take()
            .unwrap_or(ToolOutcome::Error(String::new()));
        ToolCallReport {
            observation: observe(outcome),
            args: ctx.tool_args,
            tool_ran: true,
            trace,
        }
    }
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

/// Runs one pre or post hook whose trigger matched (or whose trigger check
/// failed, `trigger_failure`), applies its rewrite and records it.
///
/// Callers check the trigger synchronously first, so a hook that does not
/// match costs one predicate call: no future, no clock, no allocation.
async fn run_step(
    hook: &dyn Hook,
    index: usize,
    trigger_failure: Option<HookFailure>,
    ctx: &mut HookContext,
    trace: &mut CallTrace,
) -> Step {
    let point = ctx.point;
    let started = Instant::now();
    let outcome = match trigger_failure {
        Some(failure) => Err(failure),
        None => run_hook(hook, ctx).await,
    };
    let duration = started.elapsed();
    let (decision, side_effects, step) = match outcome {
        Ok(result) => apply(result, ctx),
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

fn apply(result: HookResult, ctx: &mut HookContext) -> (Decision, Vec<String>, Step) {
    let HookResult {
        allow,
        error,
        modified_args,
        modified_result,
        side_effects,
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
    let rewrote = match ctx.point {
        HookPoint::PreToolUse => modified_args.map(|args| ctx.tool_args = args).is_some(),
        _ => modified_result
            .map(|value| ctx.tool_outcome = Some(ToolOutcome::Success(value)))
            .is_some(),
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
