//! What a hooked tool service answers instead of a result.

use crate::dispatch::{Observation, ToolCallReport};

/// Why a [`HookService`](super::HookService) call produced no result.
///
/// The hooks decide; this error only carries the decision. Each variant
/// (but [`NotReady`](Self::NotReady)) holds the call's whole
/// [`ToolCallReport`], and [`observation`](Self::observation) is the text to
/// hand the model in place of a result, so an agent loop can keep going
/// ("Blocked by hook `readonly_guard`: …") instead of failing the run.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ToolCallError {
    /// A pre hook (or the runtime, for a malformed tool name) stopped the
    /// call: the wrapped service was not called.
    #[error("the tool call was blocked by hook `{hook}`: {reason}")]
    Blocked {
        /// The hook that blocked.
        hook: String,
        /// Why, as the hook wrote it.
        reason: String,
        /// The whole call.
        report: Box<ToolCallReport>,
    },
    /// The wrapped service ran but a post hook (or a fail-closed observer)
    /// withheld its result.
    #[error("the tool's result was withheld by hook `{hook}`: {reason}")]
    Withheld {
        /// The hook that withheld the result.
        hook: String,
        /// Why.
        reason: String,
        /// The whole call.
        report: Box<ToolCallReport>,
    },
    /// The wrapped service failed (returned an error, or panicked), and no
    /// post hook replaced the error with a result. The service's own error
    /// value is in [`ToolCallReport::tool_error_source`].
    #[error("the tool failed: {message}")]
    Tool {
        /// The error's message, as post hooks left it.
        message: String,
        /// The whole call.
        report: Box<ToolCallReport>,
    },
    /// The wrapped service's `poll_ready` failed: no call was made, and no
    /// hook ran. Retry once the service is ready, or drop it.
    #[error("the tool service is not ready: {0}")]
    NotReady(#[source] crate::dispatch::ToolErrorSource),
}

impl ToolCallError {
    /// The call's report (`None` for [`NotReady`](Self::NotReady): no call was made).
    pub fn report(&self) -> Option<&ToolCallReport> {
        match self {
            ToolCallError::Blocked { report, .. }
            | ToolCallError::Withheld { report, .. }
            | ToolCallError::Tool { report, .. } => Some(report),
            ToolCallError::NotReady(_) => None,
        }
    }

    /// What the model should see instead of a result; its `Display` is the
    /// text (`Blocked by hook `…`: …`, `Tool error: …`).
    pub fn observation(&self) -> Observation {
        match self {
            ToolCallError::Blocked { report, .. }
            | ToolCallError::Withheld { report, .. }
            | ToolCallError::Tool { report, .. } => report.observation.clone(),
            ToolCallError::NotReady(source) => {
                Observation::ToolError(format!("the tool service is not ready: {source}"))
            }
        }
    }

    /// The call's outcome as a `Result`: the result the model sees, or why
    /// there is none.
    pub(super) fn from_report(report: ToolCallReport) -> Result<serde_json::Value, ToolCallError> {
        match &report.observation {
            Observation::Output(value) => Ok(value.clone()),
            Observation::ToolError(message) => Err(ToolCallError::Tool {
                message: message.clone(),
                report: Box::new(report),
            }),
            Observation::Blocked { hook, reason } => Err(ToolCallError::Blocked {
                hook: hook.clone(),
                reason: reason.clone(),
                report: Box::new(report),
            }),
            Observation::Withheld { hook, reason } => Err(ToolCallError::Withheld {
                hook: hook.clone(),
                reason: reason.clone(),
                report: Box::new(report),
            }),
        }
    }
}
