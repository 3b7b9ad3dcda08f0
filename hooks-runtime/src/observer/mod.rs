//! Call observers: code that must see every attempted tool call exactly once.
//!
//! A post hook only runs when the tool ran, so an audit log built as a post
//! hook would miss every blocked call. Observers run after the whole chain, on
//! every path — allowed, blocked by any hook, tool error, hook failure — and
//! before the observation is handed back, so a durable write is committed
//! before the LLM sees anything.
//!
//! [`TracingObserver`] is the one shipped here: it reports calls and hook
//! decisions to `tracing` for logs and OpenTelemetry.

mod tracing;

use std::time::Duration;

use crate::context::HookContext;
use crate::dispatch::ToolCallReport;
use crate::hook::{DEFAULT_TIMEOUT, ErrorPolicy, HookFuture};

pub use self::tracing::{TRACING_TARGET, TracingObserver};

/// What an observer is shown: the call and everything it produced.
#[derive(Debug, Clone, Copy)]
pub struct CallRecord<'a> {
    /// The call's context: ids, metadata, and the arguments after every pre hook's rewrites.
    pub ctx: &'a HookContext,
    /// The observation, the final arguments (as in `ctx`), the trace and the
    /// raw outcome.
    pub report: &'a ToolCallReport,
    /// Wall time of the whole call, hooks and tool included.
    pub duration: Duration,
}

/// Sees every attempted tool call once, after the hooks and the tool.
///
/// Its future resolves to a [`HookResult`](crate::HookResult) only so the
/// dispatcher can treat observers like hooks: the decision is ignored, but an
/// error, panic or timeout withholds the observation (the LLM gets an error
/// naming the observer) unless the observer is fail-open.
pub trait CallObserver: Send + Sync {
    /// A name for traces and error messages. Must not panic (it is read
    /// outside the guard that turns an observer's panics into failures).
    fn name(&self) -> &str;

    /// Records the call.
    fn observe<'a>(&'a self, record: CallRecord<'a>) -> HookFuture<'a>;

    /// How long [`observe`](CallObserver::observe) may take. A panic here
    /// is a failure of this observer; the others still run.
    fn timeout(&self) -> Duration {
        DEFAULT_TIMEOUT
    }

    /// What a failure means; fail closed by default (and when this panics).
    fn on_error(&self) -> ErrorPolicy {
        ErrorPolicy::FailClosed
    }
}
