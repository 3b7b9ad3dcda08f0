//! One row of `connector_call_logs`, built from what the dispatcher observed.

use hooks_runtime::output::ToolOutput;
use hooks_runtime::{Observation, ToolCallReport, observer::CallRecord};
use serde_json::Value;

use super::redact::{Redactor, clean_text};

/// How a call ended, as stored in the `outcome` column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AuditOutcome {
    /// The tool ran and its result reached the LLM.
    Ok,
    /// The tool ran and failed.
    ToolError,
    /// A hook blocked the call, or withheld its result.
    Blocked,
}

impl AuditOutcome {
    /// The column value: `ok`, `tool_error` or `blocked`.
    pub fn as_str(self) -> &'static str {
        match self {
            AuditOutcome::Ok => "ok",
            AuditOutcome::ToolError => "tool_error",
            AuditOutcome::Blocked => "blocked",
        }
    }
}

/// What the model was sent in place of the tool's outcome, as stored in
/// the `sent` column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sent {
    /// The tool's own result or error.
    AsIs,
    /// The result or error as post hooks changed it (truncated, redacted).
    Rewritten,
    /// A notice instead of the result: a post hook withheld it.
    Withheld,
}

impl Sent {
    /// The column value: `as_is`, `rewritten` or `withheld`.
    pub fn as_str(self) -> &'static str {
        match self {
            Sent::AsIs => "as_is",
            Sent::Rewritten => "rewritten",
            Sent::Withheld => "withheld",
        }
    }
}

/// A row of `connector_call_logs`, ready to insert.
#[derive(Debug, Clone, PartialEq)]
pub struct AuditRow {
    /// The conversation the call belongs to.
    pub conversation_id: String,
    /// The tool call's id within the conversation.
    pub tool_call_id: String,
    /// The agent that made the call.
    pub agent_id: String,
    /// The user the agent acted for.
    pub user_id: String,
    /// The user's org.
    pub org_id: String,
    /// Where the call came from (`chat`, `api`, …).
    pub surface: &'static str,
    /// The tool.
    pub tool_name: String,
    /// The connector, when the call has one.
    pub connector: Option<String>,
    /// The connector action, when the call has one.
    pub action: Option<String>,
    /// How the call ended.
    pub outcome: AuditOutcome,
    /// The hook (or observer) that blocked the call or withheld its result.
    pub blocked_by: Option<String>,
    /// The block reason or the tool's error text, with credentials masked
    /// ([`Redactor::redact_text`]).
    pub reason: Option<String>,
    /// The arguments the tool received (or would have), redacted.
    pub args: Value,
    /// Characters of the text the model would have read of the tool's raw
    /// result, before post hooks; `None` if it produced none.
    pub result_size: Option<i64>,
    /// Characters of the text the model was given (the result's text as
    /// post hooks left it, or the reason or error it read instead).
    pub observation_size: i64,
    /// Wall time of the call, hooks and tool included.
    pub duration_ms: i64,
    /// What the model was sent; `None` when the tool did not run.
    pub sent: Option<Sent>,
}

impl AuditRow {
    /// The row for one observed call.
    pub fn from_record(record: &CallRecord<'_>, redactor: &Redactor) -> AuditRow {
        let ctx = record.ctx;
        let report = record.report;
        let (outcome, blocked_by, reason) = match &report.observation {
            // Reasons and tool errors may quote the arguments (a command
            // hook's stderr, a driver's error), so they are redacted too.
            Observation::Blocked { hook, reason } | Observation::Withheld { hook, reason } => (
                AuditOutcome::Blocked,
                Some(clean_text(hook)),
                Some(redactor.redact_text(reason)),
            ),
            _ => match report.tool_error() {
                Some(error) => (
                    AuditOutcome::ToolError,
                    None,
                    Some(redactor.redact_text(error)),
                ),
                None => (AuditOutcome::Ok, None, None),
            },
        };
        AuditRow {
            conversation_id: clean_text(&ctx.conversation_id),
            tool_call_id: clean_text(&ctx.tool_call_id),
            agent_id: clean_text(&ctx.agent_id),
            user_id: clean_text(&ctx.user_id),
            org_id: clean_text(&ctx.org_id),
            surface: ctx.surface.as_str(),
            tool_name: clean_text(&ctx.tool_name),
            connector: ctx.connector().map(clean_text),
            action: ctx.action().map(clean_text),
            outcome,
            blocked_by,
            reason,
            args: redactor.redact(&ctx.tool_args),
            result_size: report
                .raw_result()
                .map(|raw| count(ToolOutput::new(raw, ctx.output_form).char_count())),
            observation_size: count(match &report.observation {
                Observation::Output(output) => {
                    ToolOutput::new(output, ctx.output_form).char_count()
                }
                other => other.to_string().chars().count(),
            }),
            duration_ms: i64::try_from(record.duration.as_millis()).unwrap_or(i64::MAX),
            sent: sent(report),
        }
    }
}

/// What the model was sent of a call's outcome.
fn sent(report: &ToolCallReport) -> Option<Sent> {
    if !report.tool_ran {
        return None;
    }
    Some(match &report.observation {
        Observation::Blocked { .. } | Observation::Withheld { .. } => Sent::Withheld,
        Observation::Output(output) if report.raw_result() == Some(output) => Sent::AsIs,
        Observation::ToolError(error) if report.tool_error() == Some(error.as_str()) => Sent::AsIs,
        Observation::Output(_) | Observation::ToolError(_) => Sent::Rewritten,
    })
}

fn count(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}
