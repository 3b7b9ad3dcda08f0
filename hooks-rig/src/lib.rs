//! Hooks around [rig](https://docs.rs/rig-agent)'s tools: every tool call of
//! a rig agent runs through a `hooks` registry (or a `hooks::Agent`) —
//! pre hooks that block or rewrite the arguments, the approval gate that
//! holds the call while rig's loop waits, post hooks that rewrite or
//! withhold the result, the audit log — in one line for the whole agent
//! (`add_hook(hooks.agent_hook())`, see [`AgentHooks`]), which guards every
//! tool however it was added, or one line per tool, as below.
//!
//! ```
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! use hooks::{Hook, HookContext, HookOutcome, HookRegistry, HookResult, PreToolUseHook};
//! use hooks_rig::scripted::{Turn, scripted_model};
//! use hooks_rig::{CallContext, HookedTools as _, Hooks};
//! use rig_agent::AgentBuilder;
//! use rig_core::tool::{Tool, ToolContext};
//! use serde_json::{Value, json};
//!
//! // A rig tool, as any rig user writes one.
//! struct Shell;
//! impl Tool for Shell {
//!     const NAME: &'static str = "shell";
//!     type Args = Value;
//!     type Output = String;
//!     type Error = std::io::Error;
//!     fn description(&self) -> String { "Runs a shell command.".into() }
//!     fn parameters(&self) -> Value { json!({"type": "object", "properties": {"cmd": {"type": "string"}}}) }
//!     async fn call(&self, _: &mut ToolContext, args: Value) -> Result<String, std::io::Error> {
//!         Ok(format!("ran {}", args["cmd"]))
//!     }
//! }
//!
//! // A hook (usually `#[pre_tool_use]`, or the standard stack from a config file).
//! struct NoRm;
//! impl Hook for NoRm {
//!     fn name(&self) -> &str { "no_rm" }
//!     fn execute<'a>(&'a self, ctx: &'a HookContext) -> HookOutcome<'a> {
//!         let rm = ctx.tool_args["cmd"].as_str().is_some_and(|cmd| cmd.starts_with("rm "));
//!         HookOutcome::ready(if rm { HookResult::block("rm is not allowed") } else { HookResult::allow() })
//!     }
//! }
//! impl PreToolUseHook for NoRm {}
//! let hooks = Hooks::new(HookRegistry::builder().pre(NoRm).build().unwrap());
//!
//! // Any rig completion model; here a scripted one that tries `rm -rf /`.
//! let (model, seen) = scripted_model([
//!     Turn::call("call-1", "shell", json!({"cmd": "rm -rf /"})),
//!     Turn::answer("I may not delete files."),
//! ]);
//!
//! // The one line: the tool goes in behind the hooks.
//! let agent = AgentBuilder::new(model).hooked_tool(&hooks, Shell).build();
//!
//! // Per request: session-start hooks, and the ids every hook sees.
//! let ids = CallContext::new().user("alice").org("acme").conversation("conv-1");
//! let run = hooks.prepare(agent.prompt("Clean up the disk.").max_turns(4), ids).await.unwrap();
//! let answer = run.await.unwrap().output();
//!
//! assert_eq!(answer, "I may not delete files.");
//! // What the model read as the tool's result on its second turn:
//! assert_eq!(seen.results_seen(1)[0].text, "Blocked by hook `no_rm`: rm is not allowed");
//! # });
//! ```
//!
//! A `hooks::Agent` built from a config file (the standard stack: approval
//! gate, audit log, truncation…) wraps tools the same way, with
//! [`Hooks::for_agent`]; [`Hooks::tool`] and [`Hooks::dynamic_tool`] give
//! the wrapped `DynamicTool` for builders that take a list.
//!
//! What each wrapped call does:
//!
//! - **Pre hooks** see the tool's name, its arguments as JSON, and the
//!   request's ids ([`CallContext`], set per request through rig's
//!   `ToolContext`; [`Hooks::prepare`] does it). A request without them is
//!   refused unless [`Hooks::require_context`] was turned off.
//! - **A block** becomes the tool's output text, which the model reads on its
//!   next turn (``Blocked by hook `readonly_guard`: …``); the loop goes on.
//!   [`OnBlock::ToolError`] makes it a refused tool result instead.
//! - **Rewritten arguments** are what the tool receives, read back into its
//!   own `Args` type; a rewrite that no longer fits that type stops the call
//!   (the tool does not run) like a block.
//! - **Post hooks** rewrite the result (the model sees the rewrite) or
//!   withhold it (the model sees why).
//! - **The tool's errors** keep rig's presentation; a tool that panics is a
//!   tool error, not a crashed agent. Every call is observed (audited) once.
//! - **Session-start hooks** may stop a run, and what they add reaches the
//!   model as a context document ([`Hooks::prepare`]).
//!
//! Runtime-defined tools (rig's `DynamicTool`, which `rig-rmcp` turns MCP
//! tools into) are wrapped with [`Hooks::dynamic_tool`].

mod agent_hook;
mod builder_ext;
mod call_context;
mod dynamic;
mod hooks;
mod on_block;
mod outcome;
#[cfg(feature = "test-util")]
pub mod scripted;
mod session;
mod typed;
mod wrap;

pub use agent_hook::AgentHooks;
pub use builder_ext::HookedTools;
pub use call_context::CallContext;
pub use hooks::Hooks;
pub use on_block::OnBlock;
pub use session::{PrepareError, SESSION_DOCUMENT_ID, session_document};
