//! What the model gets when the hooks stop a call.

/// How a blocked call (or a withheld result) reaches rig's agent loop.
///
/// Either way the tool did not run (or its result is withheld), the call is
/// audited once, and the text is the hooks' observation, such as
/// ``Blocked by hook `readonly_guard`: Org is in read-only mode``.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum OnBlock {
    /// The text is the tool's output: the model reads it as the call's
    /// result and the loop goes on (the default).
    #[default]
    ToolOutput,
    /// The text is a tool refusal (`ToolExecutionError::refused`, which rig
    /// reports as a refused tool result, visible to the model and to rig's
    /// hooks as `ToolResult::is_refused`): an agent hook can end the run on it.
    ToolError,
}
