//! A call observer that reports every call and every hook decision to
//! `tracing`, so hook decisions reach a program's logs or its OpenTelemetry
//! pipeline (through the `tracing-opentelemetry` layer) like the rest of it.

use std::time::Duration;

use ::tracing::{Level, Span};

use super::{CallObserver, CallRecord};
use crate::dispatch::{Decision, HookFailure, HookRun, Observation};
use crate::hook::{ErrorPolicy, HookFuture};
use crate::printable::{MAX_CELL_CHARS, MAX_TEXT_CHARS, shown};
use crate::result::HookResult;

/// The `tracing` target of the span and its events (`RUST_LOG=hooks=info`).
pub const TRACING_TARGET: &str = "hooks";

/// Reports each observed tool call as a `tracing` span with one event per
/// hook that ran.
///
/// Opt-in: nothing runs unless it is added with
/// [`HookRegistryBuilder::observer`](crate::HookRegistryBuilder::observer); a
/// registry without it pays nothing. Add it *last* among the observers: it
/// reports the outcome as the observers before it left it (a failing audit
/// write that withholds the result shows as `withheld`).
///
/// **What is written.** A span `hooks.tool_call` (target `hooks`, level INFO)
/// with the fields `tool`, `agent`, `user`, `org`, `conversation`,
/// `tool_call_id`, `surface`, `outcome` (`ok`, `tool_error`, `blocked`,
/// `withheld`), `blocked_by` (the hook or observer that blocked the call or
/// withheld its result; absent otherwise), `duration_us` (the whole call) and
/// `arg_count` (the number of top-level argument keys, when the arguments are
/// an object). In it, one event `hook decided` per hook that ran, in run order,
/// with `hook`, `point`, `decision` (`allowed`, `rewrote`, `blocked`,
/// `failed_closed`, `failed_open`), `failure` (`error`, `panic`, `timeout`;
/// only for a failure) and `duration_us` only when the hook waited (a hook
/// that decided at once is recorded without a clock read, so it has no
/// duration); failures are at level WARN, other decisions INFO. Hooks that did
/// not match write nothing. Last, one event `tool call` with the outcome, so
/// a call that no hook matched still shows in an event log.
///
/// **What is not written.** Argument values and results, which may hold
/// secrets: only the number of argument keys (not their names, which the
/// model writes too). Block reasons and failure messages are not written
/// either unless [`with_reasons`](TracingObserver::with_reasons) is set,
/// since hooks may quote arguments in them (`args_schema` does). Every text
/// field is written with hidden characters (newlines, bidi overrides, …)
/// escaped as `\u{…}` and cut to 120 characters (reasons to 500), so a hostile
/// tool name cannot forge a log line.
///
/// **Where the span sits.** Observers run on a Tokio task of their own after
/// the call, where the caller's current span is not known, so the span is a
/// root span (no parent), opened and closed when the call is already over:
/// its own timing is meaningless, its `duration_us` field is the call's. To
/// relate it to the caller's spans, use the `conversation` and
/// `tool_call_id` fields. Session starts are not observed, so not reported.
///
/// It never fails and never withholds a result: it is fail-open, and
/// nothing in it can return an error.
#[derive(Debug, Clone, Copy, Default)]
pub struct TracingObserver {
    reasons: bool,
}

impl TracingObserver {
    /// The observer's name in traces and error messages.
    pub const NAME: &'static str = "tracing";

    /// An observer that writes no reasons.
    pub fn new() -> Self {
        Self::default()
    }

    /// Also writes block and withhold reasons (`reason` on the span and on
    /// the hook's event) and failure messages. Opt in only where logs may hold
    /// what hooks write: a reason may quote an argument value.
    pub fn with_reasons(mut self) -> Self {
        self.reasons = true;
        self
    }

    fn report(&self, record: &CallRecord<'_>) {
        let ctx = record.ctx;
        let report = record.report;
        let (outcome, reason) = match &report.observation {
            Observation::Output(_) => ("ok", None),
            Observation::ToolError(_) => ("tool_error", None),
            Observation::Blocked { reason, .. } => ("blocked", Some(reason.as_str())),
            Observation::Withheld { reason, .. } => ("withheld", Some(reason.as_str())),
        };
        let reason = reason.filter(|_| self.reasons);
        let arg_count = ctx.tool_args.as_object().map(serde_json::Map::len);
        let span = ::tracing::span!(
            target: TRACING_TARGET,
            parent: None,
            Level::INFO,
            "hooks.tool_call",
            tool = %shown(&ctx.tool_name, MAX_CELL_CHARS),
            agent = %shown(&ctx.agent_id, MAX_CELL_CHARS),
            user = %shown(&ctx.user_id, MAX_CELL_CHARS),
            org = %shown(&ctx.org_id, MAX_CELL_CHARS),
            conversation = %shown(&ctx.conversation_id, MAX_CELL_CHARS),
            tool_call_id = %shown(&ctx.tool_call_id, MAX_CELL_CHARS),
            surface = ctx.surface.as_str(),
            outcome,
            blocked_by = report
                .stopped_by()
                .map(|hook| ::tracing::field::display(shown(hook, MAX_CELL_CHARS))),
            duration_us = micros(record.duration),
            arg_count,
            reason = reason.map(|text| ::tracing::field::display(shown(text, MAX_TEXT_CHARS))),
        );
        for run in report.trace.runs() {
            self.report_run(&span, report.trace.name_of(run), run);
        }
        ::tracing::event!(
            target: TRACING_TARGET,
            parent: &span,
            Level::INFO,
            outcome,
            "tool call"
        );
    }

    fn report_run(&self, span: &Span, name: &str, run: &HookRun) {
        let (decision, failure) = match &run.decision {
            Decision::Allowed { rewrote: false } => ("allowed", None),
            Decision::Allowed { rewrote: true } => ("rewrote", None),
            Decision::Blocked(_) => ("blocked", None),
            Decision::Failed { failure, policy } => (
                match policy {
                    ErrorPolicy::FailClosed => "failed_closed",
                    ErrorPolicy::FailOpen => "failed_open",
                },
                Some(match failure {
                    HookFailure::Error(_) => "error",
                    HookFailure::Panicked(_) => "panic",
                    HookFailure::TimedOut(_) => "timeout",
                }),
            ),
        };
        // Built only when asked for: reasons may quote arguments.
        let reason = match &run.decision {
            Decision::Blocked(reason) if self.reasons => Some(reason.clone()),
            Decision::Failed { failure, .. } if self.reasons => Some(failure.to_string()),
            _ => None,
        };
        // One call per level: a `tracing` event's level is fixed where it is written.
        macro_rules! hook_event {
            ($level:expr) => {
                ::tracing::event!(
                    target: TRACING_TARGET,
                    parent: span,
                    $level,
                    hook = %shown(name, MAX_CELL_CHARS),
                    point = run.point.as_str(),
                    decision,
                    failure,
                    duration_us = run.duration.map(micros),
                    reason = reason
                        .as_deref()
                        .map(|text| ::tracing::field::display(shown(text, MAX_TEXT_CHARS))),
                    "hook decided"
                )
            };
        }
        if failure.is_some() {
            hook_event!(Level::WARN);
        } else {
            hook_event!(Level::INFO);
        }
    }
}

/// Whole microseconds, saturating (a `u64` of microseconds is 584,000 years).
fn micros(duration: Duration) -> u64 {
    u64::try_from(duration.as_micros()).unwrap_or(u64::MAX)
}

impl CallObserver for TracingObserver {
    fn name(&self) -> &str {
        Self::NAME
    }

    fn observe<'a>(&'a self, record: CallRecord<'a>) -> HookFuture<'a> {
        // Written before the future is returned: there is nothing to wait for.
        self.report(&record);
        Box::pin(std::future::ready(Ok(HookResult::allow())))
    }

    /// Fail-open: a subscriber that panics must not cost the call its result.
    fn on_error(&self) -> ErrorPolicy {
        ErrorPolicy::FailOpen
    }
}
