//! Session start: context from every session-start hook, in order.

use std::time::Instant;

use super::run_hook::{decide_now, run_guarded, triggers};
use super::trace::{CallTrace, Decision, HookRun};
use crate::context::{HookContext, HookPoint, Surface};
use crate::hook::ErrorPolicy;
use crate::registry::HookRegistry;

/// A session that may start, with the context its hooks contributed.
#[derive(Debug, Clone)]
pub struct SessionStart {
    /// The hooks' `additional_context`, in run order, separated by blank lines.
    pub context: String,
    /// What each hook did.
    pub trace: CallTrace,
}

/// A session-start hook blocked or failed (closed): the session must not start.
#[derive(Debug, Clone, thiserror::Error)]
#[error("session stopped by hook `{hook}`: {reason}")]
pub struct SessionStopped {
    /// The hook that stopped it.
    pub hook: String,
    /// Why.
    pub reason: String,
    /// What each hook did.
    pub trace: CallTrace,
}

impl HookRegistry {
    /// Runs the session-start hooks before the session's first LLM call.
    ///
    /// Their `additional_context` is concatenated in run order. A hook that
    /// blocks, or fails under the default fail-closed policy, stops the session.
    pub async fn start_session(
        &self,
        mut ctx: HookContext,
    ) -> Result<SessionStart, SessionStopped> {
        let mut trace = CallTrace::session(self);
        if ctx.surface == Surface::Evaluation {
            trace.bypassed = true;
            return Ok(SessionStart {
                context: String::new(),
                trace,
            });
        }
        ctx.point = HookPoint::SessionStart;
        let mut context = String::new();
        for (index, hook) in self.hooks.session_start.iter().enumerate() {
            trace.considered[0] = index + 1;
            let (outcome, duration) = match triggers(hook.as_ref(), &ctx) {
                Ok(false) => continue,
                Ok(true) => match decide_now(hook.as_ref(), &ctx) {
                    Some(outcome) => (outcome, None),
                    None => {
                        let started = Instant::now();
                        let outcome = run_guarded(hook.timeout(), || hook.execute(&ctx)).await;
                        (outcome, Some(started.elapsed()))
                    }
                },
                Err(failure) => (Err(failure), None),
            };
            let (decision, side_effects, stop) = match outcome {
                Ok(result) if !result.allow => {
                    let reason = result
                        .error
                        .unwrap_or_else(|| "blocked without a reason".to_owned());
                    (
                        Decision::Blocked(reason.clone()),
                        result.side_effects,
                        Some(reason),
                    )
                }
                Ok(result) => {
                    if let Some(extra) = result.additional_context.filter(|text| !text.is_empty()) {
                        if !context.is_empty() {
                            context.push_str("\n\n");
                        }
                        context.push_str(&extra);
                    }
                    (
                        Decision::Allowed { rewrote: false },
                        result.side_effects,
                        None,
                    )
                }
                Err(failure) => {
                    let policy = hook.on_error();
                    let stop = (policy == ErrorPolicy::FailClosed)
                        .then(|| format!("hook `{}` {failure}; the session does not start because the hook fails closed", hook.name()));
                    (Decision::Failed { failure, policy }, Vec::new(), stop)
                }
            };
            tracing::debug!(hook = hook.name(), point = "session_start", %decision, ?duration, "hook ran");
            trace.runs.push(HookRun {
                point: HookPoint::SessionStart,
                index,
                decision,
                duration,
                side_effects,
            });
            if let Some(reason) = stop {
                return Err(SessionStopped {
                    hook: hook.name().to_owned(),
                    reason,
                    trace,
                });
            }
        }
        Ok(SessionStart { context, trace })
    }
}
