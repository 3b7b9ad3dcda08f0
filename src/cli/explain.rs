//! `hooks explain`: one call dry-run through the pre hooks.

use std::io::{self, Write};

use serde_json::{Value, json};

use super::escape::printable;
use crate::config::AgentConfig;
use crate::trace::{ExplainOutcome, ExplainVerdict};
use crate::{HookContext, HookRegistry};

/// The call `explain` dry-runs.
pub(super) struct Call {
    pub(super) tool: String,
    pub(super) args: Value,
    pub(super) metadata: Value,
    pub(super) user: String,
    pub(super) org: String,
}

/// Dry-runs `call` and prints what each pre hook would do; returns the exit
/// code its outcome leads to.
pub(super) async fn explain(
    config: &AgentConfig,
    registry: &HookRegistry,
    call: Call,
    run_commands: bool,
    json: bool,
    out: &mut dyn Write,
) -> io::Result<u8> {
    let mut ctx = HookContext::tool_call(&call.tool, call.args)
        .with_agent(config.agent.clone())
        .with_user(call.user)
        .with_org(call.org)
        .with_conversation("hooks-explain")
        .with_tool_call_id("dry-run");
    if let Some(metadata) = call.metadata.as_object() {
        for (key, value) in metadata {
            ctx = ctx.with_metadata(key.clone(), value.clone());
        }
    }
    let explanation = registry.explain(ctx, run_commands).await;
    let code = exit_code(explanation.outcome);
    if json {
        // The explanation, with the exit code it leads to beside its outcome.
        let mut value =
            serde_json::to_value(&explanation).unwrap_or_else(|e| json!({"error": e.to_string()}));
        if let Some(object) = value.as_object_mut() {
            object.insert("exit_code".to_owned(), json!(code));
        }
        writeln!(out, "{value}")?;
        return Ok(code);
    }
    // Everything printed here may come from the model's call (pasted into
    // the command line) or quote it (reasons, failures, rewritten
    // arguments): escaped, so it cannot add a line or reorder one.
    writeln!(
        out,
        "{} through agent `{}` (dry run; the tool does not run):",
        printable(&call.tool),
        printable(&config.agent)
    )?;
    for (i, step) in explanation.steps.iter().enumerate() {
        writeln!(
            out,
            "  {:>2}. {:<24} p{:<4} {}",
            i + 1,
            printable(&step.name),
            step.priority,
            printable(&verdict_text(&step.verdict))
        )?;
    }
    match (&explanation.blocked_by, explanation.outcome) {
        (_, ExplainOutcome::WouldRun) => writeln!(
            out,
            "=> depends on a command hook's verdict (--run-commands to run it)"
        ),
        (Some(hook), _) => writeln!(out, "=> blocked by `{}`", printable(hook)),
        (None, ExplainOutcome::WouldAsk) => {
            writeln!(
                out,
                "=> would ask for approval; goes ahead only if approved"
            )
        }
        (None, _) => writeln!(out, "=> would go ahead"),
    }?;
    Ok(code)
}

/// One step's verdict as a table cell.
pub(super) fn verdict_text(verdict: &ExplainVerdict) -> String {
    match verdict {
        ExplainVerdict::NotMatched => "not matched".to_owned(),
        ExplainVerdict::Allow => "allow".to_owned(),
        ExplainVerdict::Rewrite { args } => format!("allow, rewrites args to {args}"),
        ExplainVerdict::RewriteResult { outcome } => {
            format!("allow, rewrites the result to {}", json!(outcome))
        }
        ExplainVerdict::Block { reason } => format!("BLOCK: {reason}"),
        ExplainVerdict::Fail { failure, blocks } => format!(
            "{}: hook {failure}",
            if *blocks {
                "BLOCK (fails closed)"
            } else {
                "fails open"
            }
        ),
        ExplainVerdict::WouldAsk => "would ask for approval".to_owned(),
        ExplainVerdict::WouldRun => "would run its command (--run-commands to run it)".to_owned(),
        ExplainVerdict::NotReached => "not reached".to_owned(),
    }
}

/// The exit code of `explain` for an outcome.
fn exit_code(outcome: ExplainOutcome) -> u8 {
    match outcome {
        ExplainOutcome::GoAhead => 0,
        ExplainOutcome::Blocked => 3,
        ExplainOutcome::WouldAsk => 4,
        ExplainOutcome::WouldRun => 5,
    }
}
