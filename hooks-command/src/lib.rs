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
#![doc = include_str!("../../docs/command-hooks.md")]

#[cfg(fuzzing)]
#[doc(hidden)]
pub mod fuzzing;
mod hook;
mod http;
mod output;
mod persistent;
mod process;
mod program;
mod protocol;
mod spec;
mod stdout;
#[cfg(target_os = "linux")]
mod supervisor;

pub use hook::{COMMAND_ENV_ALLOWLIST, CommandHook};
pub use http::HttpEndpoint;
pub use persistent::{FunctionLanguage, HookFunction, PERSISTENT_ANSWER_LIMIT};
pub use process::COMMAND_OUTPUT_LIMIT;
pub use spec::{CommandLine, CommandSpec, CommandSpecError, DEFAULT_COMMAND_TIMEOUT};

use std::path::Path;
use std::time::Duration;

use hooks_runtime::config::{CommandDeclaration, CommandHookBuilder};
use hooks_runtime::registry::RegisteredHook;
use serde_json::Value;

inventory::submit! {
    CommandHookBuilder { build: build_declared }
}

/// Builds a config file's command hook: reads its fields, anchors relative
/// paths to the config's directory, checks that the program exists and is
/// executable, and makes the hook.
fn build_declared(declaration: CommandDeclaration<'_>) -> Result<RegisteredHook, String> {
    let spec = declared_spec(declaration.spec, declaration.base_dir)?;
    CommandHook::new(spec, declaration.ask)
        .map(CommandHook::into_registered)
        .map_err(|problem| problem.to_string())
}

/// A config entry as a checked spec, its relative paths anchored to
/// `base_dir` (which is also the working directory when it sets none).
fn declared_spec(entry: Value, base_dir: Option<&Path>) -> Result<CommandSpec, String> {
    let mut spec: CommandSpec = serde_json::from_value(entry)
        .map_err(|problem| format!("invalid command hook: {problem}"))?;
    if let Some(base) = base_dir {
        spec.resolve_relative_to(base);
        if spec.cwd.is_none() {
            spec.cwd = Some(base.to_path_buf());
        }
    }
    program::check_program(&spec)?;
    Ok(spec)
}

/// For `hooks check`: starts the process of a config file's persistent
/// hook (`persistent: true`, or a `python` or `node` function), as the agent would,
/// and sends it a probe (see [`CommandHook::probe`]); the process is
/// stopped afterwards. `None` for an entry that is not persistent; the
/// entry and `base_dir` are what [`AgentConfig`](hooks_runtime::config::AgentConfig)
/// holds (`commands[i].spec`, `command_base_dir()`).
pub async fn probe_declared(
    entry: &Value,
    base_dir: Option<&Path>,
) -> Option<Result<Duration, String>> {
    let spec = match declared_spec(entry.clone(), base_dir) {
        Ok(spec) if spec.persistent => spec,
        Ok(_) => return None,
        Err(problem) => return Some(Err(problem)),
    };
    Some(match CommandHook::new(spec, None) {
        Ok(hook) => hook.probe().await,
        Err(problem) => Err(problem.to_string()),
    })
}
