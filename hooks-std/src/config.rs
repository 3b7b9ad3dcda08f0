//! Per-hook config, as it arrives from an agent's config file.

use serde::de::DeserializeOwned;

/// A hook's config did not fit its config struct.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid config for hook \"{hook}\": {message}")]
pub struct ConfigError {
    /// The hook whose config is wrong.
    pub hook: String,
    /// What is wrong (serde's message: unknown field, wrong type, …).
    pub message: String,
}

impl ConfigError {
    /// An error about `hook`'s config.
    pub fn new(hook: &str, message: impl Into<String>) -> Self {
        ConfigError {
            hook: hook.to_owned(),
            message: message.into(),
        }
    }
}

/// Deserializes a hook's config with the runtime's one
/// [`parse_factory_config`](hooks_runtime::factory::parse_factory_config) (`null`
/// means "all defaults"; unknown keys are errors because every config struct
/// denies them), as a typed [`ConfigError`].
#[cfg_attr(
    not(any(
        feature = "approval-gate",
        feature = "audit-log",
        feature = "connector-rate-limit",
        feature = "result-truncate",
        feature = "readonly-guard",
        feature = "args-schema"
    )),
    allow(dead_code)
)]
pub(crate) fn parse_config<T: DeserializeOwned + Default>(
    hook: &str,
    config: &serde_json::Value,
) -> Result<T, ConfigError> {
    hooks_runtime::factory::parse_factory_config(hook, config).map_err(|message| {
        // The runtime's message already names the hook; keep what is wrong.
        let prefix = format!("invalid config for hook \"{hook}\": ");
        let message = match message.strip_prefix(&prefix) {
            Some(what) => what.to_owned(),
            None => message,
        };
        ConfigError::new(hook, message)
    })
}
