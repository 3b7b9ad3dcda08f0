//! Agent config files: which hooks an agent runs, in YAML, JSON or TOML.
//!
//! Three shapes are accepted (see [`ConfigShape`]): this project's, the seed
//! system's `model_config_json.hooks.class_hooks`, and a Claude Code settings
//! file's `hooks` block. Building a registry from a config fails — and the
//! agent must not run — on any error: an unknown hook (with a did-you-mean),
//! a bad `when` (with line and column), bad per-hook config, a command that
//! cannot be found or is not executable, an `args.…` path that a tool's
//! declared argument schema says cannot exist (a guard that never fires).
//! Errors name the file and the entry; what the build could not check is
//! returned as [`ConfigWarning`]s
//! ([`AgentConfig::build_registry_with_warnings`]).
//! Files over 1 MiB, and YAML nested too deep for its parser to be quick,
//! are refused before they are parsed (see `limits`).
//!
#![doc = include_str!("../../../docs/agents.md")]

mod agent;
mod build;
mod command_hooks;
mod dead_guards;
mod entries;
mod error;
mod format;
mod limits;
mod permission_rule;
mod warning;

pub use agent::{AgentConfig, ClassHookEntry, CommandEntry, ConfigShape};
pub use command_hooks::{CommandDeclaration, CommandHookBuilder};
pub use error::{AgentConfigError, AgentConfigErrors};
pub use format::ConfigFormat;
pub use hooks_when::{ConfigDuration, DurationError};
pub use warning::ConfigWarning;
