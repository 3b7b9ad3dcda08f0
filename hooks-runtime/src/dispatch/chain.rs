//! The chain engine: the one place that runs a hook, applies its outcome to
//! the call, records it in the trace, checks sealed arguments and decides
//! fail-open or fail-closed. The tool call (pre and post), session start and
//! explain (the dry run) all go through it, so its rules hold the same way
//! for each.

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use super::run_hook::{Deciding, HookFailure, guarded, next_triggered, start};
use super::trace::{CallTrace, Decision, HookRun};
use crate::context::{HookContext, HookPoint, ToolOutcome};
use crate::hook::{ErrorPolicy, Hook};
use crate::result::HookResult;

/// A matched hook's decision, or its trigger check's failure, as a future.
#[inline(always)]
fn decide<'a, H: Hook + ?Sized>(
    hook: &'a H,
    ctx: &'a HookContext,
    trigger_failure: Option<HookFailure>,
) -> Deciding<'a> {
    match trigger_failure {
        Some(failure) => Deciding::failed(failure),
        None => start(hook, ctx),
    }
}

/// What one hook's run means for the chain.
pub(crate) enum ChainFlow {
    /// The chain goes on.
    Continue,
    /// The hook stopped the call, the result or the session.
    Stop {
        /// The hook that stopped it.
        hook: String,
        /// Why: what the LLM (or the caller) sees.
        reason: String,
    },
}

/// One chain in progress: the call as the hooks so far left it.
pub(crate) struct Chain<'c> {
    /// The call; pre hooks rewrite its arguments, post hooks its outcome.
    pub(crate) ctx: &'c mut HookContext,
    /// Where each hook that ran is recorded.
    pub(crate) trace: &'c mut CallTrace,
    /// The tool's own outcome, kept (once) when a post hook replaces it.
    pub(crate) original: &'c mut Option<Box<ToolOutcome>>,
    /// Where session-start hooks' context is collected (`None` elsewhere).
    pub(crate) context: Option<&'c mut String>,
    /// The pre hook that sealed the arguments, if one did.
    sealed_by: Option<String>,
}

impl<'c> Chain<'c> {
    /// A chain over `ctx` recording into `trace`.
    pub(crate) fn new(
        ctx: &'c mut HookContext,
        trace: &'c mut CallTrace,
        original: &'c mut Option<Box<ToolOutcome>>,
    ) -> Self {
        Chain {
            ctx,
            trace,
            original,
            context: None,
            sealed_by: None,
        }
    }

    /// Seals the arguments as they stand, as `hook` would on approval (a dry
    /// run does not ask, but a later rewrite must still show as the block
    /// it would be). A seal already made stays.
    pub(crate) fn seal(&mut self, hook: &str) {
        if self.ctx.point == HookPoint::PreToolUse && self.sealed_by.is_none() {
            self.sealed_by = Some(hook.to_owned());
        }
    }

    /// Runs `hooks` (the hooks of the context's point) in order, `slot`
    /// indexing the trace's points, until one stops the chain.
    ///
    /// Triggers are checked synchronously first, so a hook that does not
    /// match costs one predicate call: no future, no clock, no allocation.
    #[allow(
        clippy::manual_async_fn,
        reason = "an async fn would keep a second copy of its arguments in its future"
    )]
    pub(crate) fn run<'a, H: Hook + ?Sized>(
        &'a mut self,
        hooks: &'a [Arc<H>],
        slot: usize,
    ) -> impl Future<Output = ChainFlow> + 'a {
        async move {
            let mut from = 0;
            // `let … else` rather than `while let` (whose scrutinee lives
            // through the body), and the hook's decision awaited as one small
            // future (`Deciding`): nothing but what the loop needs is kept in
            // this future while a hook waits.
            #[allow(
                clippy::while_let_loop,
                reason = "a `while let` keeps its scrutinee in the future across the await"
            )]
            loop {
                let Some((index, trigger_failure)) = next_triggered(hooks, from, self.ctx) else {
                    break;
                };
                from = index + 1;
                let hook = &*hooks[index];
                // The hooks before this one are settled (ran or did not
                // match), so a call dropped while this one waits is traced
                // right; this one is the hook in flight.
                self.trace.considered[slot] = index;
                // `run_hook`, written out: an awaited call would build its
                // future and copy it into this one for every matched hook.
                let (outcome, duration) = decide(hook, self.ctx, trigger_failure).await;
                let step = self.settle(hook, index, outcome, duration);
                if let ChainFlow::Stop { .. } = step {
                    self.trace.considered[slot] = index + 1;
                    return step;
                }
            }
            self.trace.considered[slot] = hooks.len();
            ChainFlow::Continue
        }
    }

    /// Runs one hook that matched (or whose trigger check failed:
    /// `trigger_failure`) and settles its outcome. Explain's dry run walks
    /// the hooks itself and calls this for each.
    #[inline(always)]
    pub(crate) async fn run_hook<H: Hook + ?Sized>(
        &mut self,
        hook: &H,
        index: usize,
        trigger_failure: Option<HookFailure>,
    ) -> ChainFlow {
        let (outcome, duration) = decide(hook, self.ctx, trigger_failure).await;
        self.settle(hook, index, outcome, duration)
    }

    /// Applies one hook's outcome to the call and records it in the trace.
    #[inline(always)]
    fn settle<H: Hook + ?Sized>(
        &mut self,
        hook: &H,
        index: usize,
        outcome: Result<HookResult, HookFailure>,
        duration: Option<Duration>,
    ) -> ChainFlow {
        let point = self.ctx.point;
        let (decision, side_effects, step) = match outcome {
            Ok(result) => self.apply(result, hook.name()),
            Err(failure) => fail(hook, point, failure),
        };
        // No log event per hook that ran as it should: asking `tracing`
        // whether one is wanted costs about 20 ns per hook (measured with no
        // subscriber installed), and the trace holds all of it. Failures are
        // logged where they are handled, in `fail`.
        self.trace.runs.push(HookRun {
            point,
            index,
            decision,
            duration,
            side_effects,
        });
        step
    }

    /// Applies a decision. A later rewrite that changes arguments a pre
    /// hook sealed (an approval covers exactly them) stops the call.
    #[inline(always)]
    fn apply(&mut self, result: HookResult, hook: &str) -> (Decision, Vec<String>, ChainFlow) {
        let (blocked, changes) = result.into_parts();
        let Some(changes) = changes else {
            // The common case: a plain allow or a block with no extras.
            return match blocked {
                None => (
                    Decision::Allowed { rewrote: false },
                    Vec::new(),
                    ChainFlow::Continue,
                ),
                Some(reason) => stop(hook, reason.into(), Vec::new()),
            };
        };
        let changes = *changes;
        if let Some(reason) = blocked {
            return stop(hook, reason.into(), changes.side_effects);
        }
        let ctx = &mut *self.ctx;
        if let (Some(sealer), Some(args)) = (self.sealed_by.as_deref(), &changes.modified_args)
            && !same_json(args, &ctx.tool_args)
        {
            let reason = format!(
                "hook `{hook}` rewrote the arguments after hook `{sealer}` sealed them; \
                 the call is blocked because what was approved is not what would run"
            );
            return stop(hook, reason, changes.side_effects);
        }
        if changes.seal_args && ctx.point == HookPoint::PreToolUse && self.sealed_by.is_none() {
            self.sealed_by = Some(hook.to_owned());
        }
        let rewrote = match ctx.point {
            HookPoint::PreToolUse => changes
                .modified_args
                .map(|args| ctx.tool_args = args)
                .is_some(),
            HookPoint::PostToolUse => {
                let replacement = match (
                    changes.modified_result,
                    changes.modified_error,
                    &ctx.tool_outcome,
                ) {
                    // A hook's string in place of a shaped result (a
                    // Claude Code tool's, an MCP result) takes the shape,
                    // so the client accepts it and later hooks see one.
                    (Some(value), _, Some(ToolOutcome::Success(previous))) => {
                        Some(ToolOutcome::Success(ctx.output_form.fit(previous, value)))
                    }
                    (Some(value), _, _) => Some(ToolOutcome::Success(value)),
                    (None, Some(message), Some(ToolOutcome::Error(_))) => {
                        Some(ToolOutcome::Error(message))
                    }
                    _ => None,
                };
                match replacement {
                    Some(outcome) => {
                        // Keep the tool's own outcome (once) for audit and traces.
                        let replaced = ctx.tool_outcome.replace(outcome);
                        if self.original.is_none() {
                            *self.original = replaced.map(Box::new);
                        }
                        true
                    }
                    None => false,
                }
            }
            HookPoint::SessionStart => {
                if let (Some(context), Some(extra)) = (
                    self.context.as_deref_mut(),
                    changes.additional_context.filter(|text| !text.is_empty()),
                ) {
                    if !context.is_empty() {
                        context.push_str("\n\n");
                    }
                    context.push_str(&extra);
                }
                false
            }
        };
        (
            Decision::Allowed { rewrote },
            changes.side_effects,
            ChainFlow::Continue,
        )
    }
}

/// Whether two JSON values are the same down to the sign of a zero:
/// `Value`'s `==` holds `0.0 == -0.0`, and sealed arguments must run exactly
/// as approved. Only a rewrite after a seal pays for this.
fn same_json(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) if x.is_f64() && y.is_f64() => {
            x.as_f64().map(f64::to_bits) == y.as_f64().map(f64::to_bits)
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same_json(p, q))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(key, p)| y.get(key).is_some_and(|q| same_json(p, q)))
        }
        _ => a == b,
    }
}

fn stop(
    hook: &str,
    reason: String,
    side_effects: Vec<String>,
) -> (Decision, Vec<String>, ChainFlow) {
    (
        Decision::Blocked(reason.clone()),
        side_effects,
        ChainFlow::Stop {
            hook: hook.to_owned(),
            reason,
        },
    )
}

/// A hook failed: it stops the chain unless it is explicitly fail-open.
#[cold]
#[inline(never)]
fn fail<H: Hook + ?Sized>(
    hook: &H,
    point: HookPoint,
    failure: HookFailure,
) -> (Decision, Vec<String>, ChainFlow) {
    // A panic in `on_error` itself is one more failure: fail closed.
    let policy = guarded(|| hook.on_error()).unwrap_or(ErrorPolicy::FailClosed);
    tracing::warn!(hook = hook.name(), point = point.as_str(), %failure, ?policy, "hook failed");
    let step = match policy {
        ErrorPolicy::FailClosed => ChainFlow::Stop {
            hook: hook.name().to_owned(),
            reason: match point {
                HookPoint::SessionStart => format!(
                    "hook `{}` {failure}; the session does not start because the hook fails closed",
                    hook.name()
                ),
                _ => format!(
                    "hook `{}` {failure}; blocked because the hook fails closed",
                    hook.name()
                ),
            },
        },
        ErrorPolicy::FailOpen => ChainFlow::Continue,
    };
    (Decision::Failed { failure, policy }, Vec::new(), step)
}
