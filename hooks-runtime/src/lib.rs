//! The hook contract: context, results, traits, registry and fail-closed dispatch.
//!
//! Most users depend on the `hooks` facade and declare hooks with its
//! attributes; this crate is what those attributes expand to, and what
//! framework authors build on.
//!
//! ```
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! use hooks::{Hook, HookContext, HookOutcome, HookRegistry, HookResult, Observation, PreToolUseHook};
//! use serde_json::{json, Value};
//!
//! /// Blocks SQL writes.
//! struct NoWrites;
//!
//! impl Hook for NoWrites {
//!     fn name(&self) -> &str { "no_writes" }
//!     fn priority(&self) -> i32 { 5 }
//!     fn should_trigger(&self, ctx: &HookContext) -> bool { ctx.tool_name.starts_with("sql_") }
//!     fn execute<'a>(&'a self, ctx: &'a HookContext) -> HookOutcome<'a> {
//!         // Decides from the call alone: at once, no future.
//!         let query = ctx.tool_args["q"].as_str().unwrap_or("");
//!         HookOutcome::ready(if query.trim_start().to_ascii_uppercase().starts_with("SELECT") {
//!             HookResult::allow()
//!         } else {
//!             HookResult::block("writes are not allowed")
//!         })
//!     }
//! }
//! impl PreToolUseHook for NoWrites {}
//!
//! let registry = HookRegistry::builder().pre(NoWrites).build().unwrap();
//! let ctx = HookContext::tool_call("sql_exec", json!({"q": "DELETE FROM t"}));
//! let report = registry.run_tool_call(ctx, async |_: &Value| Ok::<_, String>(json!("done"))).await;
//! assert!(!report.tool_ran);
//! assert_eq!(report.observation.to_string(), "Blocked by hook `no_writes`: writes are not allowed");
//! # });
//! ```
//!
//! Dispatch needs a Tokio runtime with timers enabled (`#[tokio::main]` has them).

mod agent;
mod ask;
pub mod config;
mod context;
mod dispatch;
pub mod factory;
mod hook;
pub mod observer;
pub mod output;
mod printable;
pub mod registry;
mod result;
#[cfg(feature = "tower")]
pub mod tower;
pub mod when;

pub use agent::Agent;
pub use context::{HookContext, HookPoint, Surface, ToolOutcome};
pub use dispatch::{
    MAX_RAW_ARGS_BYTES, Observation, PendingToolCall, PreToolUse, RAW_ARGS_PREVIEW_CHARS,
    SessionStart, SessionStopped, ToolCallReport, ToolErrorSource,
};
pub use hook::{
    DEFAULT_PRIORITY, DEFAULT_TIMEOUT, DryRun, ErrorPolicy, Hook, HookError, HookFuture,
    HookOutcome, IntoHookOutcome, PostToolUseHook, PreToolUseHook, SessionStartHook, TimeoutNote,
};
pub use hooks_when::UnknownEvent;
pub use registry::{HookRegistry, HookRegistryBuilder};
pub use result::HookResult;

/// What each hook did in one call (or would do, in a dry run).
pub mod trace {
    pub use crate::dispatch::{
        CallTrace, Decision, EntryStatus, ExplainOutcome, ExplainStep, ExplainVerdict, Explanation,
        HookFailure, HookRun, Refusal, ResultExplanation, TraceEntry, WOULD_ASK, in_dry_run,
    };
}

/// Text helpers shared by the crates: hidden characters, name suggestions,
/// durations as config files write them.
pub mod text {
    pub use crate::printable::is_hidden;
    pub use hooks_when::{did_you_mean, parse_duration};
}

/// What the attribute macros expand to. Not a public API: it may change in any release.
#[doc(hidden)]
pub mod __private {
    pub use hooks_when::rt as when;
    pub use inventory;
    pub use std::boxed::Box;
    pub use std::option::Option;
    pub use std::result::Result;
    pub use std::sync::Arc;
    pub use std::time::Duration;

    pub use crate::registry::{HookRegistration, RegisteredHook};
    pub use crate::{
        ErrorPolicy, Hook, HookContext, HookError, HookOutcome, HookPoint, HookResult,
        IntoHookOutcome, PostToolUseHook, PreToolUseHook, SessionStartHook,
    };

    /// Converts a hook fn's return value; spanned at the user's return type by the macro.
    #[inline]
    pub fn into_outcome<T: IntoHookOutcome>(value: T) -> Result<HookResult, crate::HookError> {
        value.into_hook_outcome()
    }
}
