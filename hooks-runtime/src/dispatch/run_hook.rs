//! Running one hook so that nothing it does can escape: errors, panics and
//! overruns all come back as a [`HookFailure`].

use std::any::Any;
use std::fmt;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use tokio::task::{Unconstrained, unconstrained};
use tokio::time::Sleep;

use crate::context::HookContext;
use crate::hook::{Hook, HookFuture, HookOutcome};

use crate::result::HookResult;

/// Why a hook produced no decision.
///
/// Serialized with the variant as the key: `{"error": "message"}`,
/// `{"panicked": "message"}`, `{"timed_out": "30s"}` (the timeout in the
/// config grammar).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum HookFailure {
    /// It returned an error.
    Error(String),
    /// It panicked: in `should_trigger`, `execute`, its future, `timeout`,
    /// `on_error` or `dry_run` (for an observer: `observe`, its future,
    /// `timeout` or `on_error`).
    Panicked(String),
    /// It did not finish within its timeout.
    TimedOut(#[serde(serialize_with = "as_config_duration")] Duration),
}

/// A duration in the config grammar (`30s`, `1500ms`).
fn as_config_duration<S: serde::Serializer>(
    duration: &Duration,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    serde::Serialize::serialize(&hooks_when::ConfigDuration::from(*duration), serializer)
}

impl fmt::Display for HookFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HookFailure::Error(message) => write!(f, "returned an error: {message}"),
            HookFailure::Panicked(message) => write!(f, "panicked: {message}"),
            HookFailure::TimedOut(timeout) => {
                write!(
                    f,
                    "timed out after {}",
                    hooks_when::ConfigDuration::from(*timeout)
                )
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

/// A caught panic as a failure. The payload is dropped here, under a guard
/// of its own: a payload whose `Drop` panics must not escape either.
#[cold]
#[inline(never)]
pub(crate) fn panicked(payload: Box<dyn Any + Send>) -> HookFailure {
    let message = panic_message(payload.as_ref());
    drop_quietly(payload);
    HookFailure::Panicked(message)
}

/// Drops `value`, swallowing a panic from its `Drop` (and leaking that
/// panic's own payload rather than risk a second one).
#[cold]
#[inline(never)]
pub(crate) fn drop_quietly<T>(value: T) {
    if let Err(payload) = catch_unwind(AssertUnwindSafe(move || drop(value))) {
        std::mem::forget(payload);
    }
}

/// Calls one of a hook's (or observer's) settings, such as `on_error`;
/// a panic there is a failure like one in `execute`.
#[inline]
pub(crate) fn guarded<T>(setting: impl FnOnce() -> T) -> Result<T, HookFailure> {
    catch_unwind(AssertUnwindSafe(setting)).map_err(panicked)
}

/// Asks the hook whether it applies; a panic is a failure.
#[inline]
pub(crate) fn triggers(hook: &dyn Hook, ctx: &HookContext) -> Result<bool, HookFailure> {
    guarded(|| hook.should_trigger(ctx))
}

/// The first of `hooks`, from index `from` on, whose trigger matches the call,
/// with the failure if its trigger check panicked instead; `None` when no
/// hook left matches. One tight loop over the predicates: a hook that does not
/// match costs a call to its `should_trigger` and nothing else.
#[inline]
pub(crate) fn next_triggered<H: Hook + ?Sized>(
    hooks: &[Arc<H>],
    from: usize,
    ctx: &HookContext,
) -> Option<(usize, Option<HookFailure>)> {
    let mut index = from;
    let scan = catch_unwind(AssertUnwindSafe(|| {
        while let Some(hook) = hooks.get(index) {
            if hook.should_trigger(ctx) {
                return true;
            }
            index += 1;
        }
        false
    }));
    match scan {
        Ok(true) => Some((index, None)),
        Ok(false) => None,
        // `index` is the hook whose check panicked.
        Err(payload) => Some((index, Some(panicked(payload)))),
    }
}

/// A hook asked to decide: a future of its outcome and, when it waited, how
/// long. A hook that decided at once is [`Ready`](Deciding::Ready): awaiting
/// it reads no clock and arms no timer. One that waits is awaited under
/// guard (see [`Guarded`]) and timed from when `execute` handed back its
/// future; a decision that arrives after the hook's timeout (it blocked its
/// thread past the deadline, where the timer could not cancel it) is a
/// time-out, and the decision is dropped.
///
/// One small future for both cases, so the chain awaits it directly: no
/// match on a "started" value kept across the await, no nested `async fn`
/// holding a second copy of the guard.
pub(crate) enum Deciding<'a> {
    /// It decided at once (or failed to start: an error or a panic).
    Ready(Option<Result<HookResult, HookFailure>>),
    /// It waits.
    Waiting {
        /// Its future, under guard.
        guarded: Guarded<'a>,
        /// When `execute` handed the future back.
        since: Instant,
    },
}

impl Deciding<'_> {
    /// An outcome known without running the hook (its trigger check failed).
    pub(crate) fn failed(failure: HookFailure) -> Self {
        Deciding::Ready(Some(Err(failure)))
    }
}

impl Future for Deciding<'_> {
    type Output = (Result<HookResult, HookFailure>, Option<Duration>);

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        // Every field is `Unpin` (see `Guarded`).
        match self.get_mut() {
            Deciding::Ready(outcome) => match outcome.take() {
                Some(outcome) => Poll::Ready((outcome, None)),
                None => panic!("a hook's decision was polled after it completed"),
            },
            Deciding::Waiting { guarded, since } => {
                let outcome = std::task::ready!(Pin::new(&mut *guarded).poll(cx));
                let elapsed = since.elapsed();
                Poll::Ready(match outcome {
                    Ok(_) if elapsed > guarded.timeout => {
                        (Err(HookFailure::TimedOut(guarded.timeout)), Some(elapsed))
                    }
                    outcome => (outcome, Some(elapsed)),
                })
            }
        }
    }
}

/// Asks the hook to decide, catching a panic in [`Hook::execute`] (and in
/// [`Hook::timeout`], read only when the hook waits): a hook that decides at
/// once is done here, without a boxed future, a timer or a clock read.
#[inline]
pub(crate) fn start<'a, H: Hook + ?Sized>(hook: &'a H, ctx: &'a HookContext) -> Deciding<'a> {
    let started = catch_unwind(AssertUnwindSafe(|| match hook.execute(ctx) {
        HookOutcome::Ready(Ok(result)) => Deciding::Ready(Some(Ok(result))),
        HookOutcome::Ready(Err(error)) => {
            Deciding::Ready(Some(Err(HookFailure::Error(error.message().to_owned()))))
        }
        HookOutcome::Pending(future) => Deciding::Waiting {
            guarded: Guarded {
                state: State::Running(future),
                timeout: hook.timeout(),
                deadline: None,
            },
            since: Instant::now(),
        },
    }));
    match started {
        Ok(deciding) => deciding,
        Err(payload) => Deciding::failed(panicked(payload)),
    }
}

/// Starts the future `start` builds and returns it under guard: awaiting the
/// [`Guarded`] turns an error, a panic (while starting or while running) or
/// an overrun of `timeout` into a [`HookFailure`]. Call observers run
/// through here; hooks through [`start`].
pub(crate) fn run_guarded<'a>(
    timeout: Duration,
    start: impl FnOnce() -> HookFuture<'a>,
) -> Guarded<'a> {
    let state = match catch_unwind(AssertUnwindSafe(start)) {
        Ok(future) => State::Running(future),
        Err(payload) => State::Failed(panicked(payload)),
    };
    Guarded {
        state,
        timeout,
        deadline: None,
    }
}

/// A hook's (or observer's) future under guard; see [`run_guarded`].
///
/// Written by hand rather than as an `async fn` because it sits on the path
/// of every matched hook: it is a few words, so the dispatch loop that awaits
/// it stays small. Most hooks decide without waiting, so the timer is armed
/// only once the future returns `Pending`: a hook that is ready at once never
/// touches the timer wheel. The timeout cancels the future at its next
/// `.await`; code that blocks its thread cannot be interrupted, so hooks must
/// not block.
pub(crate) struct Guarded<'a> {
    state: State<'a>,
    timeout: Duration,
    /// Armed at the first `Pending`. Outside tokio's cooperative budget: a
    /// hook that spends the task's budget on every poll must still time out.
    deadline: Option<Pin<Box<Unconstrained<Sleep>>>>,
}

enum State<'a> {
    /// Waiting for the hook's future.
    Running(HookFuture<'a>),
    /// Failed before it started.
    Failed(HookFailure),
    Done,
}

impl Future for Guarded<'_> {
    type Output = Result<HookResult, HookFailure>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        // Every field is `Unpin` (the hook's future is boxed).
        let this = self.get_mut();
        let State::Running(future) = &mut this.state else {
            return match std::mem::replace(&mut this.state, State::Done) {
                State::Failed(failure) => Poll::Ready(Err(failure)),
                _ => panic!("a guarded hook future was polled after it completed"),
            };
        };
        let outcome = match catch_unwind(AssertUnwindSafe(|| future.as_mut().poll(cx))) {
            Ok(Poll::Pending) => {
                let timeout = this.timeout;
                let deadline = &mut this.deadline;
                // Tokio panics when the runtime has no timer: that is a
                // failure of this hook's guard, so the hook fails (closed).
                let waiting = catch_unwind(AssertUnwindSafe(|| {
                    deadline
                        .get_or_insert_with(|| Box::pin(unconstrained(tokio::time::sleep(timeout))))
                        .as_mut()
                        .poll(cx)
                        .is_pending()
                }));
                match waiting {
                    Ok(true) => return Poll::Pending,
                    Ok(false) => Err(HookFailure::TimedOut(timeout)),
                    Err(payload) => {
                        let message = panic_message(payload.as_ref());
                        drop_quietly(payload);
                        Err(HookFailure::Error(format!(
                            "it waited, and its timeout could not be armed ({message}); dispatch \
                             needs a Tokio runtime with timers enabled (`enable_time` or `enable_all`)"
                        )))
                    }
                }
            }
            Ok(Poll::Ready(Ok(result))) => Ok(result),
            Ok(Poll::Ready(Err(error))) => Err(HookFailure::Error(error.message().to_owned())),
            Err(payload) => Err(panicked(payload)),
        };
        // Drops (cancels, on a timeout) the hook's future now, not when the
        // caller gets around to dropping this, and under a guard: a value the
        // future held may panic as it is dropped.
        drop_quietly(std::mem::replace(&mut this.state, State::Done));
        this.deadline = None;
        Poll::Ready(outcome)
    }
}
