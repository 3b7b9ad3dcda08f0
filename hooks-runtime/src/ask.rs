//! Routing "ask a person" decisions to an approval mechanism.
//!
//! A hook that cannot decide alone — a Claude-Code-style command hook
//! answering `permissionDecision: "ask"` — hands the call to an
//! [`AskHandler`]; the standard library's approval gate is one. Without a
//! handler, "ask" blocks (fail closed).

use crate::context::HookContext;
use crate::hook::HookFuture;

/// Something that can put a tool call in front of a person and wait for the
/// verdict: it resolves to `allow` once approved, to a block otherwise.
pub trait AskHandler: Send + Sync {
    /// Asks for approval of the call in `ctx`; `reason` says why it is asked
    /// (shown to the approver).
    fn ask<'a>(&'a self, ctx: &'a HookContext, reason: &'a str) -> HookFuture<'a>;
}
