//! Why a schema guard could not be built.

/// A schema guard could not be built; every variant names the tool, so the
/// config entry to fix is obvious. Raised at build time only: a guard that
/// built never fails to compile a schema while deciding a call.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SchemaError {
    /// The schema for this tool is not a valid JSON Schema (or uses something
    /// the guard refuses, such as a remote `$ref` or a backtracking regex).
    #[error(
        "the JSON Schema for tool \"{tool}\" is invalid: {message}; fix the schema (remote `$ref`s are not fetched, and `pattern`s must not use look-around or back-references)"
    )]
    InvalidSchema {
        /// The tool whose schema is invalid.
        tool: String,
        /// The validator's explanation.
        message: String,
    },
    /// The same tool was given two schemas.
    #[error("tool \"{tool}\" was given a JSON Schema twice; keep one")]
    DuplicateTool {
        /// The tool.
        tool: String,
    },
    /// The tool name could never match a call as written, because names are
    /// compared exactly.
    #[error(
        "tool name {tool:?} is empty or has surrounding whitespace or control characters; tool names are compared exactly, so this schema would never apply"
    )]
    BadToolName {
        /// The name as given.
        tool: String,
    },
    /// `max_depth` of zero would block every call with arguments.
    #[error("max_depth must be at least 1")]
    ZeroDepth,
}
