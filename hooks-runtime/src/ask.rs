//! Routing "ask a person" decisions to an approval mechanism.
//!
//! A hook that cannot decide alone — a Claude-Code-style command hook
//! answering `permissionDecision: "ask"` — hands the call to an
//! [`AskHandler`]; the standard library's approval gate is one. Without a
//! handler, "ask" blocks (fail closed).

use std::time::Duration;

use crate::context::HookContext;
use crate::hook::HookFuture;

/// Something that can put a tool call in front of a person and wait for the
/// verdict: it resolves to `allow` once approved, to a block otherwise.
pub trait AskHandler: Send + Sync {
    /// Asks for approval of the call in `ctx`; `reason` says why it is asked
    /// (shown to the approver).
    fn ask<'a>(&'a self, ctx: &'a HookContext, reason: &'a str) -> HookFuture<'a>;

    /// The longest [`ask`](Self::ask) may take (a person's deadline plus
    /// delivery). A hook that asks adds it to its own timeout, so waiting for
    /// a person never counts as the hook overrunning.
    fn max_wait(&self) -> Duration;
}
