//! Dispatch: running the registry's hooks around a tool call or a session start.
//!
//! The rules, applied in one place (`chain`): pre hooks in (priority, name) order with chained
//! argument rewrites, the first block stops the chain; post hooks on success
//! and error with chained result rewrites; every failure — error, panic,
//! timeout — blocks unless the hook is explicitly fail-open; every call yields
//! a trace.

mod call_state;
mod chain;
mod detached;
mod explain;
mod observation;
mod observers;
mod phases;
mod raw_args;
mod run_hook;
mod session;
mod tool_call;
mod tool_name;
mod trace;

pub(crate) use detached::ObserverTasks;
pub use explain::{
    ExplainOutcome, ExplainStep, ExplainVerdict, Explanation, ResultExplanation, WOULD_ASK,
    in_dry_run,
};
pub use observation::Observation;
pub use phases::{PendingToolCall, PreToolUse};
pub use raw_args::{MAX_RAW_ARGS_BYTES, RAW_ARGS_PREVIEW_CHARS};
pub use run_hook::HookFailure;
pub use session::{SessionStart, SessionStopped};
pub use tool_call::{ToolCallReport, ToolErrorSource};
pub use trace::{CallTrace, Decision, EntryStatus, HookRun, Refusal, TraceEntry};
