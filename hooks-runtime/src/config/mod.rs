//! Agent config files: which hooks an agent runs, in YAML, JSON or TOML.
//!
//! Three shapes are accepted (see [`ConfigShape`]): this project's, the seed
//! system's `model_config_json.hooks.class_hooks`, and a Claude Code settings
//! file's `hooks` block. Building a registry from a config fails — and the
//! agent must not run — on any error: an unknown hook (with a did-you-mean),
//! a bad `when` (with line and column), bad per-hook config, a command that
//! cannot be found or is not executable. Errors name the file and the entry.
//! Files over 1 MiB, and YAML nested too deep for its parser to be quick,
//! are refused before they are parsed (see `limits`).

mod agent;
mod build;
mod entries;
mod error;
mod format;
mod limits;
mod permission_rule;
mod program;

pub use agent::{AgentConfig, ClassHookEntry, CommandEntry, ConfigShape};
pub use error::{AgentConfigError, AgentConfigErrors};
pub use format::ConfigFormat;
pub use hooks_when::{ConfigDuration, DurationError};
