//! Running one hook so that nothing it does can escape: errors, panics and
//! overruns all come back as a [`HookFailure`].

use std::any::Any;
use std::fmt;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::task::Poll;
use std::time::Duration;

use futures_util::FutureExt as _;

use crate::context::HookContext;
use crate::hook::{Hook, HookFuture};
use crate::registry::format_duration;
use crate::result::HookResult;

/// Why a hook produced no decision.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HookFailure {
    /// It returned an error.
    Error(String),
    /// It panicked (in `should_trigger`, in `execute` or in its future).
    Panicked(String),
    /// It did not finish within its timeout.
    TimedOut(Duration),
}

impl fmt::Display for HookFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HookFailure::Error(message) => write!(f, "returned an error: {message}"),
            HookFailure::Panicked(message) => write!(f, "panicked: {message}"),
            HookFailure::TimedOut(timeout) => {
                write!(f, "timed out after {}", format_duration(*timeout))
            }
        }
    }
}

/// The message of a caught panic.
pub(crate) fn panic_message(payload: &(dyn Any + Send)) -> String {
    if let Some(text) = payload.downcast_ref::<&str>() {
        (*text).to_owned()
    } else if let Some(text) = payload.downcast_ref::<String>() {
        text.clone()
    } else {
        "a panic with a non-string payload".to_owned()
    }
}

/// Asks the hook whether it applies; a panic is a failure.
#[inline]
pub(crate) fn triggers(hook: &dyn Hook, ctx: &HookContext) -> Result<bool, HookFailure> {
    catch_unwind(AssertUnwindSafe(|| hook.should_trigger(ctx)))
        .map_err(|payload| HookFailure::Panicked(panic_message(payload.as_ref())))
}

/// Runs the hook under its timeout, catching panics.
pub(crate) async fn run_hook(
    hook: &dyn Hook,
    ctx: &HookContext,
) -> Result<HookResult, HookFailure> {
    run_guarded(hook.timeout(), || hook.execute(ctx)).await
}

/// Starts the future `start` builds and awaits it under `timeout`, turning an
/// error, a panic (while starting or while running) or an overrun into a
/// [`HookFailure`]. Hooks and call observers both run through here.
///
/// Most hooks decide without waiting, so the future is polled once before any
/// timer is armed: a hook that is ready at once never touches the timer wheel.
/// The timeout cancels the future at its next `.await`; code that blocks its
/// thread cannot be interrupted, so hooks must not block.
pub(crate) async fn run_guarded<'a>(
    timeout: Duration,
    start: impl FnOnce() -> HookFuture<'a>,
) -> Result<HookResult, HookFailure> {
    let future = catch_unwind(AssertUnwindSafe(start))
        .map_err(|payload| HookFailure::Panicked(panic_message(payload.as_ref())))?;
    let mut future = AssertUnwindSafe(future).catch_unwind();
    let outcome = match futures_util::poll!(&mut future) {
        Poll::Ready(outcome) => outcome,
        // Boxed so the timer's state only costs space when a hook really waits.
        Poll::Pending => match Box::pin(tokio::time::timeout(timeout, future)).await {
            Ok(outcome) => outcome,
            Err(_elapsed) => return Err(HookFailure::TimedOut(timeout)),
        },
    };
    match outcome {
        Err(payload) => Err(HookFailure::Panicked(panic_message(payload.as_ref()))),
        Ok(Err(error)) => Err(HookFailure::Error(error.message().to_owned())),
        Ok(Ok(result)) => Ok(result),
    }
}
