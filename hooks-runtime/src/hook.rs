//! The hook contract: one object-safe [`Hook`] trait and a marker per hook point.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use crate::context::HookContext;
use crate::result::HookResult;

/// Priority of a hook that does not choose one. Lower runs earlier.
pub const DEFAULT_PRIORITY: i32 = 50;

/// How long a hook may run before it counts as failed.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

/// The future of a hook that waits (and of a call observer, or an approval handler).
pub type HookFuture<'a> = Pin<Box<dyn Future<Output = Result<HookResult, HookError>> + Send + 'a>>;

/// What [`Hook::execute`] returns: the decision, when the hook can decide at
/// once, or the future that will decide.
///
/// One way to decide, two speeds (tower's `Either<Ready, Future>` idea): a
/// hook that decides from the call alone returns [`Ready`](HookOutcome::Ready)
/// and costs the dispatcher no boxed future, no timer and no clock read; a
/// hook that waits (I/O, a person) returns [`Pending`](HookOutcome::Pending)
/// and runs under its [`timeout`](Hook::timeout).
pub enum HookOutcome<'a> {
    /// Decided at once.
    Ready(Result<HookResult, HookError>),
    /// Decides when this future completes.
    Pending(HookFuture<'a>),
}

impl<'a> HookOutcome<'a> {
    /// Decided at once: `result` (a `HookResult`, or a `Result` whose `Err` is a failure).
    pub fn ready(result: impl IntoHookOutcome) -> Self {
        HookOutcome::Ready(result.into_hook_outcome())
    }

    /// Decides when `future` completes (boxed here).
    pub fn pending(
        future: impl Future<Output = Result<HookResult, HookError>> + Send + 'a,
    ) -> Self {
        HookOutcome::Pending(Box::pin(future))
    }
}

/// Awaiting an outcome gives the decision, whichever way the hook took
/// (handy when calling a hook directly, as in tests; the dispatcher matches
/// on the outcome instead, so a ready decision costs it no future).
impl<'a> std::future::IntoFuture for HookOutcome<'a> {
    type Output = Result<HookResult, HookError>;
    type IntoFuture = HookFuture<'a>;

    fn into_future(self) -> Self::IntoFuture {
        match self {
            HookOutcome::Ready(result) => Box::pin(std::future::ready(result)),
            HookOutcome::Pending(future) => future,
        }
    }
}

impl From<HookResult> for HookOutcome<'_> {
    fn from(result: HookResult) -> Self {
        HookOutcome::Ready(Ok(result))
    }
}

impl fmt::Debug for HookOutcome<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HookOutcome::Ready(result) => f.debug_tuple("Ready").field(result).finish(),
            HookOutcome::Pending(_) => f.write_str("Pending(..)"),
        }
    }
}

/// What happens when a hook fails (returns an error, panics or times out).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum ErrorPolicy {
    /// Treat the failure as a block: the call does not run, the result is withheld,
    /// the session does not start. The default, because a guard that cannot decide
    /// must not let the call through.
    #[default]
    FailClosed,
    /// Ignore the failure (it still shows in the trace). An explicit opt-out for
    /// hooks whose work is optional.
    FailOpen,
}

impl ErrorPolicy {
    /// The name used in attributes and config (`fail_closed`, `fail_open`).
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorPolicy::FailClosed => "fail_closed",
            ErrorPolicy::FailOpen => "fail_open",
        }
    }
}

/// Serialized as its config name: `fail_closed`, `fail_open`.
impl serde::Serialize for ErrorPolicy {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl fmt::Display for ErrorPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An error a hook reports instead of a decision. Under the default policy it
/// blocks the call.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct HookError {
    message: String,
}

impl HookError {
    /// An error with this message.
    pub fn new(message: impl fmt::Display) -> Self {
        HookError {
            message: message.to_string(),
        }
    }

    /// The message.
    pub fn message(&self) -> &str {
        &self.message
    }
}

/// A hook: a name, an order, a trigger and an async decision.
///
/// Implement this and one of [`PreToolUseHook`], [`PostToolUseHook`] or
/// [`SessionStartHook`] (which say where the hook may be registered), or let
/// `#[pre_tool_use]`, `#[post_tool_use]` or `#[session_start]` write both.
/// The trait is object-safe: registries hold `Arc<dyn PreToolUseHook>` and friends.
pub trait Hook: Send + Sync {
    /// A unique name within a registry. Must not panic: the registry reads
    /// it when it is built (where a panic surfaces at once) and in every
    /// trace, outside the guard that turns the hook's panics into failures.
    fn name(&self) -> &str;

    /// Lower runs earlier; ties are ordered by name. Read when the registry
    /// is built.
    fn priority(&self) -> i32 {
        DEFAULT_PRIORITY
    }

    /// Whether the hook applies to this call. Must be cheap and must not block;
    /// a panic here counts as a hook failure.
    fn should_trigger(&self, _ctx: &HookContext) -> bool {
        true
    }

    /// Decides: at once ([`HookOutcome::Ready`]) or through a future
    /// ([`HookOutcome::Pending`]). Must not block its thread either way; the
    /// attributes return `Ready` for hook fns whose body never awaits.
    fn execute<'a>(&'a self, ctx: &'a HookContext) -> HookOutcome<'a>;

    /// How long a hook that waits ([`HookOutcome::Pending`]) may take before
    /// it counts as failed: its future is cancelled at the deadline, and a
    /// decision that arrives after it (the future blocked its thread past
    /// the deadline) is dropped as a timeout. A [`HookOutcome::Ready`]
    /// decision is never timed (no clock is read for it). Read only when the
    /// hook waits; a panic here is a hook failure.
    fn timeout(&self) -> Duration {
        DEFAULT_TIMEOUT
    }

    /// What a failure means. Read when the hook fails; a panic here fails
    /// closed.
    fn on_error(&self) -> ErrorPolicy {
        ErrorPolicy::FailClosed
    }

    /// The `when` expression behind [`should_trigger`](Hook::should_trigger), for tables and traces.
    fn when_source(&self) -> Option<&str> {
        None
    }

    /// One line saying what the hook is for.
    fn description(&self) -> Option<&str> {
        None
    }

    /// How a dry run (`HookRegistry::explain`, `hooks explain`) treats this
    /// hook: evaluate it (default), or only report that it would ask a person
    /// or run an external command. A panic here is a hook failure.
    ///
    /// A dry run must change nothing: an [`Evaluate`](DryRun::Evaluate) hook
    /// that keeps state (a quota, a counter) checks
    /// [`in_dry_run`](crate::in_dry_run) and leaves its state as it is.
    fn dry_run(&self) -> DryRun {
        DryRun::Evaluate
    }

    /// For tables (`describe()`, `hooks check`): the timeout as configured,
    /// when [`timeout`](Hook::timeout) — the bound the runtime enforces —
    /// adds margins to it, and what they are for. `None` (the default) says
    /// `timeout()` is the configured value itself. Read only for tables; a
    /// panic here is not caught, so it must not panic.
    fn timeout_note(&self) -> Option<TimeoutNote> {
        None
    }
}

/// A hook's configured timeout and why the bound the runtime enforces
/// ([`Hook::timeout`]) is longer: shown by `describe()` and `hooks check`
/// so a table never prints a number the config does not explain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TimeoutNote {
    /// The timeout the config set (or the hook's default when it set none).
    pub configured: Duration,
    /// What [`Hook::timeout`] adds to it, for a person: e.g. "+4s to kill
    /// and reap the command".
    pub why: String,
}

/// How a dry run treats a hook.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DryRun {
    /// Run it: it decides from the call (and, without changing it, its own
    /// state; see [`in_dry_run`](crate::in_dry_run)).
    #[default]
    Evaluate,
    /// Do not run it: it would ask a person (the approval gate).
    Ask,
    /// Do not run it unless asked: it runs an external command.
    External,
}

/// A hook that runs before a tool: it may block the call or rewrite its arguments.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a pre-tool-use hook",
    note = "implement `Hook` and `PreToolUseHook` for it, or declare it with `#[pre_tool_use]`"
)]
pub trait PreToolUseHook: Hook {}

/// A hook that runs after a tool (on success and on error): it may rewrite or withhold the result.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a post-tool-use hook",
    note = "implement `Hook` and `PostToolUseHook` for it, or declare it with `#[post_tool_use]`"
)]
pub trait PostToolUseHook: Hook {}

/// A hook that runs once before a session's first LLM call: it may add context or stop the session.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a session-start hook",
    note = "implement `Hook` and `SessionStartHook` for it, or declare it with `#[session_start]`"
)]
pub trait SessionStartHook: Hook {}

/// What a hook function may return: a [`HookResult`], or a `Result<HookResult, E>`
/// whose `Err` is a hook failure (so it fails closed by default).
#[diagnostic::on_unimplemented(
    message = "a hook function must return `HookResult` or `Result<HookResult, E>` with `E: Display`, not `{Self}`",
    label = "this return type is not a hook outcome",
    note = "return `HookResult::allow()`, `HookResult::block(\"reason\")`, or wrap them in `Ok(..)`"
)]
pub trait IntoHookOutcome {
    /// Converts into the outcome the dispatcher expects.
    fn into_hook_outcome(self) -> Result<HookResult, HookError>;
}

impl IntoHookOutcome for HookResult {
    fn into_hook_outcome(self) -> Result<HookResult, HookError> {
        Ok(self)
    }
}

impl<E: fmt::Display> IntoHookOutcome for Result<HookResult, E> {
    fn into_hook_outcome(self) -> Result<HookResult, HookError> {
        self.map_err(HookError::new)
    }
}
