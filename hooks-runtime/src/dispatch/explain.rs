//! Dry runs: which pre hooks a call would meet, in what order, and what each
//! would decide — without running the tool.

use serde::Serialize;

use super::call_state::RUNTIME;
use super::chain::{Chain, ChainFlow};
use super::observation::Observation;
use super::phases::observe;
use super::run_hook::{guarded, triggers};
use super::tool_name;
use super::trace::{CallTrace, Decision};
use crate::context::{HookContext, HookPoint, ToolOutcome};
use crate::hook::{DryRun, ErrorPolicy, Hook};
use crate::registry::HookRegistry;

tokio::task_local! {
    static DRY_RUN: ();
}

/// Whether the current task is a dry run ([`HookRegistry::explain`]).
///
/// A dry run must change nothing: hooks that would ask a person report that
/// instead of asking, and a hook that keeps state (a rate limit's quota)
/// checks it without spending it. Hooks call this from `execute` (or their
/// future, which runs on the same task).
pub fn in_dry_run() -> bool {
    DRY_RUN.try_with(|()| ()).is_ok()
}

/// The side effect a hook records when, in a dry run, it would have asked
/// (a command hook's `ask`, the approval gate).
pub const WOULD_ASK: &str = "would ask for approval (dry run)";

/// What one pre hook would do in a dry run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "verdict", rename_all = "snake_case")]
pub enum ExplainVerdict {
    /// Its trigger does not match this call.
    NotMatched,
    /// It would let the call through.
    Allow,
    /// It would let the call through with rewritten arguments.
    Rewrite {
        /// The arguments after the rewrite.
        args: serde_json::Value,
    },
    /// A post hook would let the result through rewritten.
    RewriteResult {
        /// The tool's outcome after the rewrite.
        outcome: ToolOutcome,
    },
    /// It would block the call (a post hook: withhold the result).
    Block {
        /// The reason the LLM would see.
        reason: String,
    },
    /// It failed while deciding (error, panic, timeout).
    Fail {
        /// What went wrong.
        failure: String,
        /// Whether that blocks (`fail_closed`) or not.
        blocks: bool,
    },
    /// It would ask a person (the approval gate): not run in a dry run.
    WouldAsk,
    /// It would run an external command: not run unless asked to.
    WouldRun,
    /// An earlier hook blocked, so it would not run.
    NotReached,
}

/// One row of an explanation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ExplainStep {
    /// The hook.
    pub name: String,
    /// Its priority.
    pub priority: i32,
    /// Its trigger's source text, if it has one.
    pub when: Option<String>,
    /// What it would do.
    #[serde(flatten)]
    pub verdict: ExplainVerdict,
}

/// What a dry run says of the whole call (serialized in `snake_case`:
/// `go_ahead`, `blocked`, `would_ask`, `would_run`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ExplainOutcome {
    /// Every hook that matched would let it through: the tool would run.
    GoAhead,
    /// A hook would block it (or fail closed).
    Blocked,
    /// A hook would ask a person for approval, and nothing else is unknown:
    /// it runs only if approved.
    WouldAsk,
    /// A hook would run an external command that was not run (no
    /// `run_commands`), so its verdict is unknown. This wins over
    /// [`ExplainOutcome::WouldAsk`]: the command may block, or ask, itself.
    WouldRun,
}

impl ExplainOutcome {
    /// The outcome of these steps, given the hook that blocks, if any. A
    /// command that was not run before the block makes the outcome
    /// unknown: it could have rewritten the arguments so that the later hook
    /// lets them through (or blocked them itself).
    fn of(steps: &[ExplainStep], blocked: bool) -> Self {
        let any = |wanted: &ExplainVerdict| steps.iter().any(|step| step.verdict == *wanted);
        let unknown_before_block = steps
            .iter()
            .take_while(|step| {
                !matches!(
                    step.verdict,
                    ExplainVerdict::Block { .. } | ExplainVerdict::Fail { blocks: true, .. }
                )
            })
            .any(|step| step.verdict == ExplainVerdict::WouldRun);
        if blocked && !unknown_before_block {
            ExplainOutcome::Blocked
        } else if any(&ExplainVerdict::WouldRun) {
            ExplainOutcome::WouldRun
        } else if any(&ExplainVerdict::WouldAsk) {
            ExplainOutcome::WouldAsk
        } else {
            ExplainOutcome::GoAhead
        }
    }
}

/// The dry run of one call through the pre hooks.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Explanation {
    /// The tool.
    pub tool: String,
    /// What would happen to the call as a whole.
    pub outcome: ExplainOutcome,
    /// Every pre hook in run order.
    pub steps: Vec<ExplainStep>,
    /// The hook that would block the call, if any.
    pub blocked_by: Option<String>,
    /// The reason the LLM would see when the call is blocked: the same text
    /// a real call's [`Observation::Blocked`] carries.
    pub reason: Option<String>,
}

impl HookRegistry {
    /// Dry-runs `ctx` through the pre hooks in order, without the tool.
    ///
    /// Ordinary hooks are evaluated by the same chain engine as a real call
    /// (their rewrites chain, sealed arguments hold, a failure blocks unless
    /// the hook is fail-open, the first block stops the chain). Hooks that would ask a person (the approval gate)
    /// are reported as [`ExplainVerdict::WouldAsk`]; hooks that would run an
    /// external command as [`ExplainVerdict::WouldRun`], unless
    /// `run_commands` is set, in which case they are evaluated too.
    pub async fn explain(&self, ctx: HookContext, run_commands: bool) -> Explanation {
        DRY_RUN
            .scope((), self.explain_steps(ctx, run_commands))
            .await
    }

    async fn explain_steps(&self, mut ctx: HookContext, run_commands: bool) -> Explanation {
        ctx.point = HookPoint::PreToolUse;
        ctx.tool_outcome = None;
        let mut steps = Vec::new();
        let mut stopped = None;
        // As in a real run, a refused tool name stops the call before any hook.
        if let Some(reason) = tool_name::problem(&ctx.tool_name) {
            steps.push(ExplainStep {
                name: RUNTIME.to_owned(),
                priority: i32::MIN,
                when: None,
                verdict: ExplainVerdict::Block {
                    reason: reason.clone(),
                },
            });
            stopped = Some((RUNTIME.to_owned(), reason));
        }
        // The hooks run through the same chain engine as a real call (so
        // sealed arguments and error policies hold the same way); its trace
        // is read back into verdicts.
        let mut trace = CallTrace::tool_call(self);
        let mut original = None;
        let mut chain = Chain::new(&mut ctx, &mut trace, &mut original);
        walk(
            &mut chain,
            self.hooks.pre.iter().map(|hook| hook.as_ref() as &dyn Hook),
            run_commands,
            &mut steps,
            &mut stopped,
        )
        .await;
        let (blocked_by, reason) = stopped.unzip();
        Explanation {
            tool: ctx.tool_name.clone(),
            outcome: ExplainOutcome::of(&steps, blocked_by.is_some()),
            steps,
            blocked_by,
            reason,
        }
    }
}

/// The dry run of a tool's outcome through the post hooks: what each would
/// do to it and what the LLM would be shown.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ResultExplanation {
    /// The tool.
    pub tool: String,
    /// Every post hook in run order.
    pub steps: Vec<ExplainStep>,
    /// The hook that would withhold the result, if any.
    pub withheld_by: Option<String>,
    /// Whether a post hook would run an external command that was not run
    /// (no `run_commands`): then what the LLM would see is not known.
    pub unknown: bool,
    /// What the LLM would be shown, as far as the hooks that ran decide.
    pub observation: Observation,
}

impl HookRegistry {
    /// Dry-runs the post hooks on `outcome`, the tool's result (or error)
    /// for the call in `ctx` (its arguments as the pre hooks left them).
    ///
    /// The same chain engine as a real call: rewrites chain, a failure
    /// withholds the result unless the hook is fail-open, the first
    /// withholding hook stops the chain. Hooks that would run an external
    /// command are reported as [`ExplainVerdict::WouldRun`] unless
    /// `run_commands` is set. Observers do not run: nothing is recorded.
    pub async fn explain_result(
        &self,
        ctx: HookContext,
        outcome: ToolOutcome,
        run_commands: bool,
    ) -> ResultExplanation {
        DRY_RUN
            .scope((), self.explain_result_steps(ctx, outcome, run_commands))
            .await
    }

    async fn explain_result_steps(
        &self,
        mut ctx: HookContext,
        outcome: ToolOutcome,
        run_commands: bool,
    ) -> ResultExplanation {
        ctx.point = HookPoint::PostToolUse;
        ctx.tool_outcome = Some(outcome);
        let mut steps = Vec::new();
        let mut trace = CallTrace::tool_call(self);
        let mut original = None;
        let mut chain = Chain::new(&mut ctx, &mut trace, &mut original);
        let mut stopped = None;
        walk(
            &mut chain,
            self.hooks
                .post
                .iter()
                .map(|hook| hook.as_ref() as &dyn Hook),
            run_commands,
            &mut steps,
            &mut stopped,
        )
        .await;
        let withheld_by = stopped.as_ref().map(|(hook, _)| hook.clone());
        let observation = match stopped {
            Some((hook, reason)) => Observation::Withheld { hook, reason },
            None => observe(
                ctx.tool_outcome
                    .take()
                    .unwrap_or(ToolOutcome::Error(String::new())),
            ),
        };
        ResultExplanation {
            tool: ctx.tool_name.clone(),
            unknown: steps
                .iter()
                .any(|step| step.verdict == ExplainVerdict::WouldRun),
            steps,
            withheld_by,
            observation,
        }
    }
}

/// Evaluates `hooks` in order on the chain, appending a step for each; the
/// first that stops the chain sets `stopped` (the hook and the reason the
/// LLM would see) and the rest are not reached. A `stopped` already set
/// (the runtime refused the call) reaches none.
async fn walk<'h>(
    chain: &mut Chain<'_>,
    hooks: impl Iterator<Item = &'h dyn Hook>,
    run_commands: bool,
    steps: &mut Vec<ExplainStep>,
    stopped: &mut Option<(String, String)>,
) {
    for (index, hook) in hooks.enumerate() {
        let verdict = if stopped.is_some() {
            ExplainVerdict::NotReached
        } else {
            let (verdict, step) = evaluate(chain, hook, index, run_commands).await;
            if let ChainFlow::Stop { hook, reason } = step {
                *stopped = Some((hook, reason));
            }
            verdict
        };
        steps.push(ExplainStep {
            name: hook.name().to_owned(),
            priority: hook.priority(),
            when: hook.when_source().map(str::to_owned),
            verdict,
        });
    }
}

/// What `hook` would do, and what that means for the chain.
async fn evaluate(
    chain: &mut Chain<'_>,
    hook: &dyn Hook,
    index: usize,
    run_commands: bool,
) -> (ExplainVerdict, ChainFlow) {
    let verdict = |verdict| (verdict, ChainFlow::Continue);
    let trigger_failure = match triggers(hook, chain.ctx) {
        Ok(false) => return verdict(ExplainVerdict::NotMatched),
        Ok(true) => None,
        Err(failure) => Some(failure),
    };
    // A panic in `dry_run` is a failure of the hook, like one in its trigger.
    let (mode, trigger_failure) = match trigger_failure {
        Some(failure) => (DryRun::Evaluate, Some(failure)),
        None => match guarded(|| hook.dry_run()) {
            Ok(mode) => (mode, None),
            Err(failure) => (DryRun::Evaluate, Some(failure)),
        },
    };
    if trigger_failure.is_none() {
        match mode {
            DryRun::Ask => {
                // It only ever lets a call through by sealing its arguments.
                chain.seal(hook.name());
                return verdict(ExplainVerdict::WouldAsk);
            }
            DryRun::External if !run_commands => return verdict(ExplainVerdict::WouldRun),
            _ => {}
        }
    }
    let step = chain.run_hook(hook, index, trigger_failure).await;
    let Some(run) = chain.trace.runs.last() else {
        return (ExplainVerdict::NotReached, step);
    };
    let verdict = match &run.decision {
        Decision::Allowed { .. } if run.side_effects.iter().any(|e| e == WOULD_ASK) => {
            // A command hook that would ask: approved, it would seal too.
            chain.seal(hook.name());
            ExplainVerdict::WouldAsk
        }
        Decision::Allowed { rewrote: true } => match (chain.ctx.point, &chain.ctx.tool_outcome) {
            (HookPoint::PostToolUse, Some(outcome)) => ExplainVerdict::RewriteResult {
                outcome: outcome.clone(),
            },
            _ => ExplainVerdict::Rewrite {
                args: chain.ctx.tool_args.clone(),
            },
        },
        Decision::Allowed { rewrote: false } => ExplainVerdict::Allow,
        Decision::Blocked(reason) => ExplainVerdict::Block {
            reason: reason.clone(),
        },
        Decision::Failed { failure, policy } => ExplainVerdict::Fail {
            failure: failure.to_string(),
            blocks: *policy == ErrorPolicy::FailClosed,
        },
    };
    (verdict, step)
}
