//! The one enum of hook points, shared by the parser, the macros and the runtime.
//!
//! Which point a hook runs at decides which fields its `when` may test, so the
//! `when` language owns the list; the macros and the runtime re-use it rather
//! than keeping copies that could drift.

use std::fmt;

/// The point of the agent loop at which a hook runs.
///
/// The order (`SessionStart < PreToolUse < PostToolUse`) is the order of the
/// loop, which tables sort by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum HookPoint {
    /// Once, before the first LLM call of a session: inject context or stop the
    /// session. Its `when` has no tool fields, no `args` and no `result`.
    SessionStart,
    /// Before a tool runs: validate, block or rewrite its arguments. Its `when`
    /// has tool fields and `args`, but no `result`.
    PreToolUse,
    /// After a tool ran (successfully or not): side effects, rewrite or
    /// withhold the result. Its `when` may test every field, `result` included.
    PostToolUse,
}

impl HookPoint {
    /// Every hook point, in the order of the agent loop.
    pub const ALL: [HookPoint; 3] = [
        HookPoint::SessionStart,
        HookPoint::PreToolUse,
        HookPoint::PostToolUse,
    ];

    /// The snake_case name used in attributes, tables, error messages and
    /// config files (`pre_tool_use`).
    pub fn as_str(self) -> &'static str {
        match self {
            HookPoint::SessionStart => "session_start",
            HookPoint::PreToolUse => "pre_tool_use",
            HookPoint::PostToolUse => "post_tool_use",
        }
    }
}

impl fmt::Display for HookPoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
