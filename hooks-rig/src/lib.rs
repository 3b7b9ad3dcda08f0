//! Hooks around [rig](https://docs.rs/rig-agent)'s tools: every tool call of
//! a rig agent runs through a `hooks` registry (or a `hooks::Agent`) —
//! pre hooks that block or rewrite the arguments, the approval gate that
//! holds the call while rig's loop waits, post hooks that rewrite or
//! withhold the result, the audit log — in one line per tool.
//!
//! TODO-EXAMPLE
//!
//! What each wrapped call does:
//!
//! - **Pre hooks** see the tool's name, its arguments as JSON, and the
//!   request's ids ([`CallContext`], set per request through rig's
//!   `ToolContext`; [`Hooks::prepare`] does it).
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

pub use builder_ext::HookedTools;
pub use call_context::CallContext;
pub use hooks::Hooks;
pub use on_block::OnBlock;
pub use session::{PrepareError, SESSION_DOCUMENT_ID, session_document};
