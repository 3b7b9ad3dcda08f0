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
//! unless the hook says `on_error = fail_open`. Each guide is the page of
//! the module it describes: the `when` language on [`when`], agents from
//! config files on [`config`], command hooks on [`command`], the standard
//! hooks on `std_hooks`, the approval gate on `approval_gate`, the command line on
//! `cli`, Claude Code on `serve` and the MCP proxy on `mcp_proxy`; writing
//! hooks and the contract follow below.
//!
//! The root holds the contract (hooks, their context and result, the
//! registry, agents, what a call produced); the rest is in modules:
//! [`config`] (agent config files), [`factory`] (hooks built by name, shared
//! resources), [`command`] (command hooks), [`observer`] (code that sees
//! every call), [`trace`] (what each hook did), [`registry`], [`when`],
//! [`text`], [`std_hooks`] (the standard hooks, with the config keys of
//! each — the rate limit's per-connector quotas under `connectors:`, for
//! one, with every key's default and an example), and
//! `cli` (the `hooks` command line, with policy tests, for your own
//! binary).
//!
#![doc = include_str!("../docs/hooks.md")]

pub use hooks_macros::{post_tool_use, pre_tool_use, session_start};
#[doc(hidden)]
pub use hooks_runtime::__private;
// The contract at the root: the hook traits and what they take and give,
// the registry and agents, and what a call produced. Everything else is in
// its module (constants in `registry`).
/// Command hooks (the `hooks-command` crate): programs and HTTP endpoints
/// that speak the Claude Code hook protocol. Linking it lets config files'
/// command hooks build.
#[doc(inline)]
pub use hooks_command as command;
/// Declares an agent flag a hook reads (see [`factory::AgentFlag`]).
pub use hooks_runtime::agent_flag;
/// Registers a hook factory by name (see [`factory`]).
pub use hooks_runtime::hook_factory;
/// Tower middleware: the hooks in front of any `Service<ToolCall>`.
#[cfg(feature = "tower")]
#[doc(inline)]
pub use hooks_runtime::tower;
pub use hooks_runtime::{
    Agent, DryRun, ErrorPolicy, Hook, HookContext, HookError, HookFuture, HookOutcome, HookPoint,
    HookRegistry, HookRegistryBuilder, HookResult, IntoHookOutcome, Observation, PendingToolCall,
    PostToolUseHook, PreToolUse, PreToolUseHook, SessionStart, SessionStartHook, SessionStopped,
    Surface, TimeoutNote, ToolCallReport, ToolErrorSource, ToolOutcome, UnknownEvent,
};
pub use hooks_runtime::{config, factory, observer, output, registry, text, trace, when};

#[cfg(feature = "cli")]
pub mod cli;
#[cfg(feature = "mcp")]
pub mod mcp_proxy;
/// Hooks around rig's tools (the `hooks-rig` crate): see its docs.
#[cfg(feature = "rig")]
#[doc(inline)]
pub use hooks_rig as rig;
#[cfg(feature = "serve")]
pub mod serve;

/// The standard hooks (approval gate, audit log, read-only guard, truncation,
/// rate limit, args schema guard), each behind a feature of its name.
#[cfg(any(
    feature = "approval-gate",
    feature = "audit-log",
    feature = "connector-rate-limit",
    feature = "result-truncate",
    feature = "readonly-guard",
    feature = "args-schema",
    feature = "sqlite",
    feature = "postgres"
))]
#[doc(inline)]
pub use hooks_std as std_hooks;

/// The human-approval gate (also at `hooks::std_hooks::approval_gate`):
/// `hooks::approval_gate::ApprovalGate::builder(database, channel)` builds it with
/// its callback router.
#[cfg(feature = "approval-gate")]
pub use hooks_std::approval_gate;

/// `use hooks::prelude::*;` brings the attributes and the types a hook fn needs.
pub mod prelude {
    pub use hooks_macros::{post_tool_use, pre_tool_use, session_start};
    pub use hooks_runtime::{
        Agent, ErrorPolicy, Hook, HookContext, HookError, HookPoint, HookRegistry, HookResult,
        Observation, PostToolUseHook, PreToolUseHook, SessionStartHook, Surface, ToolOutcome,
    };
}

/// The pages that describe no one module (the repository's `docs/`): the
/// framework adapters together, policies written in Python, and the
/// benchmarks. Every other guide is the page of the module it describes.
pub mod guide {
    #[doc = include_str!("../docs/python-hooks.md")]
    pub mod python_hooks {}
    #[cfg(all(feature = "rig", feature = "tower"))]
    #[doc = include_str!("../docs/frameworks.md")]
    pub mod frameworks {}
    #[doc = include_str!("../docs/performance.md")]
    pub mod performance {}
}
