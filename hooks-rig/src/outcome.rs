//! From the hooks' report to what rig's loop (and so the model) gets.

use hooks_runtime::{Observation, ToolCallReport};
use rig_core::tool::{ToolExecutionError, ToolOutput};
use serde_json::Value;

use crate::on_block::OnBlock;

/// Why the wrapped tool produced no result of its own.
#[derive(Debug, thiserror::Error)]
pub(crate) enum Failure {
    /// The arguments do not deserialize into the tool's `Args`.
    #[error("{}: {source}", if *rewritten {
        "the hooks rewrote the arguments into a shape the tool does not accept"
    } else {
        "the arguments do not fit the tool's parameters"
    })]
    Args {
        /// Whether a pre hook changed them (then the call counts as blocked).
        rewritten: bool,
        source: serde_json::Error,
    },
    /// The tool's own error, as rig presents it.
    #[error("{0}")]
    Tool(ToolExecutionError),
}

/// The JSON the hooks see of a tool's output: text as a string, one JSON
/// block as itself, anything else (multimodal content) as its content list.
pub(crate) fn output_value(output: &ToolOutput) -> Value {
    if let Some(text) = output.as_text() {
        return Value::String(text.to_owned());
    }
    if let Some(value) = output.as_json() {
        return value.clone();
    }
    serde_json::to_value(output).unwrap_or(Value::Null)
}

/// What rig gets for a call the hooks ran: `produced` is the tool's own
/// output (kept when no post hook changed it, so rich content survives).
pub(crate) fn into_rig(
    mut report: ToolCallReport,
    produced: Option<ToolOutput>,
    on_block: OnBlock,
) -> Result<ToolOutput, ToolExecutionError> {
    match &report.observation {
        Observation::Output(value) => Ok(match produced {
            Some(output) if output_value(&output) == *value => output,
            _ => value_output(value),
        }),
        Observation::ToolError(message) => {
            let message = message.clone();
            let source = report
                .take_tool_error_source()
                .and_then(|source| source.downcast::<Failure>().ok());
            match source.map(|failure| *failure) {
                // Rewritten arguments the tool cannot take: the tool did
                // not run, and the call is stopped as a block would be.
                Some(Failure::Args {
                    rewritten: true, ..
                }) => blocked(
                    &Observation::Blocked {
                        hook: "runtime".to_owned(),
                        reason: message,
                    },
                    on_block,
                ),
                Some(Failure::Args { .. }) => Err(ToolExecutionError::invalid_args(message)),
                // The tool's error as it wrote it, unless a post hook
                // rewrote its text.
                Some(Failure::Tool(error)) if error.to_string() == message => Err(error),
                _ => Err(ToolExecutionError::other(
                    Observation::ToolError(message).to_string(),
                )),
            }
        }
        stopped @ (Observation::Blocked { .. } | Observation::Withheld { .. }) => {
            blocked(stopped, on_block)
        }
    }
}

fn blocked(observation: &Observation, on_block: OnBlock) -> Result<ToolOutput, ToolExecutionError> {
    let text = observation.to_string();
    match on_block {
        OnBlock::ToolOutput => Ok(ToolOutput::text(text)),
        OnBlock::ToolError => Err(ToolExecutionError::refused(text)),
    }
}

fn value_output(value: &Value) -> ToolOutput {
    match value {
        Value::String(text) => ToolOutput::text(text.clone()),
        other => ToolOutput::json(other.clone()),
    }
}

/// A call refused before the hooks could run (its ids could not be read):
/// the tool does not run.
pub(crate) fn refused(reason: String, on_block: OnBlock) -> Result<ToolOutput, ToolExecutionError> {
    blocked(
        &Observation::Blocked {
            hook: "runtime".to_owned(),
            reason,
        },
        on_block,
    )
}
