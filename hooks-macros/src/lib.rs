//! Attribute macros that declare hooks: `#[pre_tool_use]`, `#[post_tool_use]`
//! and `#[session_start]`.
//!
//! Use them through the `hooks` crate, which re-exports them:
//!
//! ```ignore
//! use hooks::prelude::*;
//!
//! #[pre_tool_use(priority = 5, when = tool_name starts_with "sql_")]
//! async fn readonly_guard(ctx: &HookContext) -> HookResult {
//!     HookResult::allow()
//! }
//! ```
//!
//! Each attribute keeps the function as written, generates a hidden type that
//! implements `Hook` and the point's marker trait, and registers it through
//! `inventory` (re-exported by the runtime, so users never depend on it).
//! Every mistake in the attribute is a compile error at the mistake. When the
//! fn's body has no `.await` (and no macro that might hide one), the body
//! moves into a plain fn that the `async fn` calls, and the hook's `execute`
//! returns `HookOutcome::Ready` from it: the dispatcher runs it at once,
//! without a boxed future. Otherwise `execute` returns `HookOutcome::Pending`
//! with the fn's future.
//!
//! Arguments: `name = "…"` (default: the fn's name), `priority = N` (default
//! 50; lower runs earlier), `when = EXPR` (the `when` language, checked here),
//! `timeout = "500ms" | "2s" | "2m"` (default 30 s; only on a body that
//! waits — one that decides at once is never timed, so `timeout` there is a
//! compile error), `on_error = fail_closed | fail_open` (default
//! `fail_closed`), `description = "…"`, `crate = path` (where the API is
//! reached, default `::hooks`: a crate that re-exports `hooks` under another
//! name, or one that depends on `hooks_runtime` alone, writes e.g.
//! `crate = hooks_runtime`; the path may also be a string,
//! `crate = "my_reexport::hooks"`, as in tokio's attributes).

mod args;
mod awaits;
mod diagnostics;
mod expand;
mod signature;
mod when_source;

use proc_macro::TokenStream;

use expand::expand;
use hooks_when::HookPoint;

/// Declares a hook that runs before a tool: it may block the call or rewrite its arguments.
#[proc_macro_attribute]
pub fn pre_tool_use(attr: TokenStream, item: TokenStream) -> TokenStream {
    expand(HookPoint::PreToolUse, attr.into(), item.into()).into()
}

/// Declares a hook that runs after a tool, on success and on error: it may rewrite or withhold the result.
#[proc_macro_attribute]
pub fn post_tool_use(attr: TokenStream, item: TokenStream) -> TokenStream {
    expand(HookPoint::PostToolUse, attr.into(), item.into()).into()
}

/// Declares a hook that runs once before a session's first LLM call: it may add context or stop the session.
#[proc_macro_attribute]
pub fn session_start(attr: TokenStream, item: TokenStream) -> TokenStream {
    expand(HookPoint::SessionStart, attr.into(), item.into()).into()
}
