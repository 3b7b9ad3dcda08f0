//! **hooks**: deterministic enforcement around an AI agent's tool calls.
//!
//! A hook is platform code that runs at a fixed point of the agent loop,
//! outside the LLM: the model cannot see it, argue with it or talk it out of a
//! step. Declare hooks on async fns; build a registry; run every tool call
//! through it.
//!
//! ```
//! use hooks::prelude::*;
//! use serde_json::{json, Value};
//!
//! fn org_is_readonly(org_id: &str) -> bool {
//!     org_id == "acme"
//! }
//!
//! #[pre_tool_use(priority = 5, when = tool_name starts_with "sql_")]
//! async fn readonly_guard(ctx: &HookContext) -> HookResult {
//!     if org_is_readonly(&ctx.org_id) {
//!         return HookResult::block("Org is in read-only mode — write blocked.");
//!     }
//!     HookResult::allow()
//! }
//!
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! let registry = HookRegistry::builder().registered_named(["readonly_guard"]).build().unwrap();
//! let ctx = HookContext::tool_call("sql_exec", json!({"q": "DELETE FROM t"})).with_org("acme");
//! let report = registry.run_tool_call(ctx, async |_: &Value| Ok::<_, String>(json!("deleted"))).await;
//! assert!(!report.tool_ran);
//! assert_eq!(report.observation.to_string(), "Blocked by hook `readonly_guard`: Org is in read-only mode — write blocked.");
//! # });
//! ```
//!
//! Every failure of a hook — an `Err`, a panic, a timeout — blocks the call
//! unless the hook says `on_error = fail_open`. See the README for the
//! contract, and `docs/when.md` for the `when` language.
//!
//! The root holds the contract (hooks, their context and result, the
//! registry, agents, what a call produced); the rest is in modules:
//! [`config`] (agent config files), [`factory`] (hooks built by name, shared
//! resources), [`command`] (command hooks), [`observer`] (code that sees
//! every call), [`trace`] (what each hook did), [`registry`], [`when`],
//! [`text`], [`std_hooks`] (the standard hooks, with the config keys of
//! each — the rate limit's per-connector quotas under `connectors:`, for
//! one; `docs/std-hooks.md` has them all with defaults and examples), and
//! [`cli`] (the `hooks` command line, with policy tests, for your own
//! binary).

pub use hooks_macros::{post_tool_use, pre_tool_use, session_start};
#[doc(hidden)]
pub use hooks_runtime::__private;
pub use hooks_runtime::*;

#[cfg(feature = "std-hooks")]
pub mod cli;
#[cfg(feature = "mcp")]
pub mod mcp_proxy;
/// Hooks around rig's tools (the `hooks-rig` crate): see its docs.
#[cfg(feature = "rig")]
#[doc(inline)]
pub use hooks_rig as rig;
#[cfg(feature = "serve")]
pub mod serve;

/// The standard hooks (approval gate, audit log, read-only guard, truncation, rate limit).
#[cfg(feature = "std-hooks")]
#[doc(inline)]
pub use hooks_std as std_hooks;

/// `use hooks::prelude::*;` brings the attributes and the types a hook fn needs.
pub mod prelude {
    pub use hooks_macros::{post_tool_use, pre_tool_use, session_start};
    pub use hooks_runtime::{
        Agent, ErrorPolicy, Hook, HookContext, HookError, HookPoint, HookRegistry, HookResult,
        Observation, PostToolUseHook, PreToolUseHook, SessionStartHook, Surface, ToolOutcome,
    };
}

/// The examples of `docs/frameworks.md`, compiled as doctests so the page
/// cannot drift from the API.
#[cfg(all(doctest, feature = "rig", feature = "tower"))]
#[doc = include_str!("../docs/frameworks.md")]
mod frameworks_md {}

/// The Rust example of `docs/std-hooks.md` (a post hook reading the text
/// the model reads), compiled as a doctest.
#[cfg(all(doctest, feature = "std-hooks"))]
#[doc = include_str!("../docs/std-hooks.md")]
mod std_hooks_md {}
