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

/// Deserializes a hook's config; `null` means "all defaults". Unknown keys are
/// errors because every config struct denies them.
pub(crate) fn parse_config<T: DeserializeOwned + Default>(
    hook: &str,
    config: &serde_json::Value,
) -> Result<T, ConfigError> {
    if config.is_null() {
        return Ok(T::default());
    }
    serde_json::from_value(config.clone())
        .map_err(|error| ConfigError::new(hook, error.to_string()))
}

/// Serde support for durations written as `"500ms"`, `"2s"`, `"2m"`.
pub(crate) mod duration_text {
    use std::time::Duration;

    use serde::{Deserialize, Deserializer};

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Duration, D::Error> {
        let text = String::deserialize(deserializer)?;
        hooks_runtime::parse_duration(&text).map_err(serde::de::Error::custom)
    }
}
