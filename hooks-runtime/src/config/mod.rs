//! Agent config files: which hooks an agent runs, in YAML, JSON or TOML.
//!
//! Three shapes are accepted (see [`ConfigShape`]): this project's, the seed
//! system's `model_config_json.hooks.class_hooks`, and a Claude Code settings
//! file's `hooks` block. Building a registry from a config fails — and the
//! agent must not run — on any error: an unknown hook (with a did-you-mean),
//! a bad `when` (with line and column), bad per-hook config, a missing
//! command. Errors name the file and the entry.

mod agent;
mod build;
mod error;
mod format;

pub use agent::{AgentConfig, ClassHookEntry, CommandEntry, ConfigShape};
pub use build::APPROVAL_GATE;
pub use error::{AgentConfigError, AgentConfigErrors};
pub use format::ConfigFormat;
