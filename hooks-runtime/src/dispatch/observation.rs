//! What the LLM sees after a tool call.

use std::fmt;

use serde_json::Value;

/// The observation handed back to the LLM.
///
/// Serialized with the variant as the key: `{"output": result}`,
/// `{"tool_error": "message"}`, `{"blocked": {"hook": …, "reason": …}}`,
/// `{"withheld": {"hook": …, "reason": …}}`.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Observation {
    /// The tool ran; this is its result as the post hooks left it.
    Output(Value),
    /// The tool ran and failed; post hooks did not replace the error.
    ToolError(String),
    /// A pre hook stopped the call; the tool never ran.
    Blocked {
        /// The hook that blocked.
        hook: String,
        /// Why.
        reason: String,
    },
    /// The tool ran but a post hook withheld its result.
    Withheld {
        /// The hook that withheld it.
        hook: String,
        /// Why.
        reason: String,
    },
}

impl Observation {
    /// True when a pre hook blocked the call.
    pub fn is_blocked(&self) -> bool {
        matches!(self, Observation::Blocked { .. })
    }

    /// True when the LLM is told the call did not produce a result: the tool
    /// failed ([`ToolError`](Observation::ToolError)), a pre hook blocked the
    /// call ([`Blocked`](Observation::Blocked)), or a post hook withheld the
    /// result ([`Withheld`](Observation::Withheld)). False for
    /// [`Output`](Observation::Output) — also when a post hook replaced a
    /// tool error with a result (the LLM then sees that result; the tool's
    /// own error stays in [`ToolCallReport::tool_error`](crate::ToolCallReport::tool_error)).
    pub fn is_error(&self) -> bool {
        !matches!(self, Observation::Output(_))
    }

    /// The result, when the tool ran and its result reaches the LLM.
    pub fn output(&self) -> Option<&Value> {
        match self {
            Observation::Output(value) => Some(value),
            _ => None,
        }
    }
}

/// The text the LLM reads: strings verbatim, other results as JSON.
impl fmt::Display for Observation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Observation::Output(Value::String(text)) => f.write_str(text),
            Observation::Output(value) => write!(f, "{value}"),
            Observation::ToolError(message) => write!(f, "Tool error: {message}"),
            Observation::Blocked { hook, reason } => {
                write!(f, "Blocked by hook `{hook}`: {reason}")
            }
            Observation::Withheld { hook, reason } => {
                write!(f, "Result withheld by hook `{hook}`: {reason}")
            }
        }
    }
}
