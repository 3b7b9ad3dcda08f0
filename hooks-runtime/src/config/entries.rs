//! The entries of the accepted shapes as serde types: a `class_hooks` entry,
//! the seed's `model_config_json`, a Claude Code settings file's matcher
//! group and handler. Each entry is read on its own, so every bad entry is
//! reported (with where it is), not only the first.

use serde::Deserialize;
use serde_json::Value;

/// A `class_hooks` entry in its mapping form.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct NamedEntry {
    /// The hook's (or factory's) name.
    pub(super) name: String,
    /// Its config; `null` when absent.
    #[serde(default)]
    pub(super) config: Value,
}

/// This project's `hooks` block.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct NativeHooks {
    /// Hooks by name: each a name or a [`NamedEntry`].
    #[serde(default)]
    pub(super) class_hooks: Option<Value>,
    /// Command hook declarations (read by the command spec).
    #[serde(default)]
    pub(super) commands: Option<Vec<Value>>,
}

/// The seed system's `model_config_json` (it holds the model's settings
/// too; only these keys concern hooks).
#[derive(Debug, Default, Deserialize)]
pub(super) struct SeedModelConfig {
    /// The hooks.
    #[serde(default)]
    pub(super) hooks: Option<SeedHooks>,
}

/// The seed's `model_config_json.hooks`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct SeedHooks {
    /// Hooks by name.
    #[serde(default)]
    pub(super) class_hooks: Option<Value>,
}

/// One matcher group of a Claude Code settings file's event.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ClaudeGroup {
    /// Which tools (a regex, `*` or absent for all).
    #[serde(default)]
    pub(super) matcher: Option<String>,
    /// The handlers, each read as a [`ClaudeHandler`].
    pub(super) hooks: Vec<Value>,
}

/// One handler of a matcher group: a `command` or an `http` handler.
#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase", deny_unknown_fields)]
pub(super) enum ClaudeHandler {
    /// A shell command, run through `/bin/sh -c` as Claude Code runs it.
    Command {
        /// The command line.
        command: String,
        /// Seconds (Claude Code's unit) or a duration string.
        #[serde(default)]
        timeout: Option<Value>,
        /// A permission rule the call must match (`Bash(git push *)`).
        #[serde(default, rename = "if")]
        condition: Option<String>,
        /// What a failure of the hook means: `block` (the default here) or `allow`.
        #[serde(default, rename = "onFailure")]
        on_failure: Option<OnFailure>,
        /// The text Claude Code shows while the hook runs; accepted so a
        /// settings file loads, shown nowhere here.
        #[serde(default, rename = "statusMessage")]
        #[expect(dead_code, reason = "read so that a settings file with it loads")]
        status_message: Option<String>,
    },
    /// The hook input POSTed to a URL; the answer read as a command's stdout.
    Http {
        /// Where to post.
        url: String,
        /// Request headers; `$NAME` / `${NAME}` expand the variables
        /// `allowedEnvVars` lists.
        #[serde(default)]
        headers: std::collections::BTreeMap<String, String>,
        /// The environment variables headers may name.
        #[serde(default, rename = "allowedEnvVars")]
        allowed_env_vars: Vec<String>,
        /// Seconds (Claude Code's unit) or a duration string.
        #[serde(default)]
        timeout: Option<Value>,
        /// A permission rule the call must match.
        #[serde(default, rename = "if")]
        condition: Option<String>,
        /// What a failure means: `block` (the default here) or `allow`.
        #[serde(default, rename = "onFailure")]
        on_failure: Option<OnFailure>,
        /// Shown by Claude Code while the hook runs; not used here.
        #[serde(default, rename = "statusMessage")]
        #[expect(dead_code, reason = "read so that a settings file with it loads")]
        status_message: Option<String>,
    },
}

/// A handler's `onFailure`.
#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(super) enum OnFailure {
    /// A failure blocks the call: this project's `fail_closed`.
    Block,
    /// A failure lets the call go on: `fail_open`.
    Allow,
}
