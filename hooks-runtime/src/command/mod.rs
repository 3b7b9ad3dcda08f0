//! Command hooks: external programs that speak the Claude Code hook protocol.
//!
//! An agent's config declares them (see [`CommandSpec`]); [`CommandHook`]
//! runs them. Existing Claude Code hook scripts work unchanged: they read the
//! call as JSON on stdin, exit 2 to block with stderr as the reason, or print
//! JSON such as `{"hookSpecificOutput": {"permissionDecision": "deny"}}`.
//! Unlike Claude Code, a command that crashes, times out or prints invalid
//! JSON blocks the call unless its spec says `on_error: fail_open`, and
//! `permissionDecision: "ask"` goes to the approval gate.
//!
//! An HTTP hook (`url:` instead of `command:`) POSTs the same input to a URL
//! and reads the answer as the command's stdout; a non-2xx answer, a timeout
//! or a connection that fails is a failure, closed unless fail-open.
//!
#![doc = include_str!("../../../docs/command-hooks.md")]

mod hook;
mod http;
mod output;
mod process;
mod protocol;
mod spec;
mod stdout;
#[cfg(target_os = "linux")]
mod supervisor;

pub use hook::{COMMAND_ENV_ALLOWLIST, CommandHook};
pub use http::HttpEndpoint;
pub use process::COMMAND_OUTPUT_LIMIT;
pub use spec::{CommandLine, CommandSpec, CommandSpecError, DEFAULT_COMMAND_TIMEOUT};
