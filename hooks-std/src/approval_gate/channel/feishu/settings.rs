//! [`FeishuSettings`]: the Feishu channel in config-file form.

use std::time::Duration;

use serde::Deserialize;

use super::{FEISHU_BASE_URL, FeishuChannel, FeishuConfig};
use crate::approval_gate::channel::ChannelError;

/// The Feishu channel in config-file form: ids inline, secrets named by the
/// environment variables holding them. Unknown keys are errors.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FeishuSettings {
    /// The app's App ID (`cli_...`).
    pub app_id: String,
    /// The environment variable holding the App Secret.
    pub app_secret_env: String,
    /// The group chat (`oc_...`) approval cards go to.
    pub chat_id: String,
    /// The environment variable holding the Verification Token.
    pub verification_token_env: String,
    /// The environment variable holding the Encrypt Key.
    pub encrypt_key_env: String,
    /// The Open API host (default [`FEISHU_BASE_URL`]).
    #[serde(default = "default_feishu_base_url")]
    pub base_url: String,
    /// How far a callback's timestamp may be from now (default `"5m"`).
    #[serde(
        default = "default_timestamp_window",
        deserialize_with = "hooks_runtime::config::ConfigDuration::text"
    )]
    pub timestamp_window: Duration,
    /// The timeout of each Open API request (default `"10s"`).
    #[serde(
        default = "default_request_timeout",
        deserialize_with = "hooks_runtime::config::ConfigDuration::text"
    )]
    pub request_timeout: Duration,
    /// How many times a rate-limited Open API call is retried (default 3).
    #[serde(default = "default_max_rate_limit_retries")]
    pub max_rate_limit_retries: u32,
}

impl FeishuSettings {
    /// The [`FeishuConfig`], secrets looked up with `env`; validated.
    pub fn resolve_with(
        &self,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<FeishuConfig, ChannelError> {
        let secret = |field: &str, name: &str| match env(name) {
            Some(value) if !name.trim().is_empty() && !value.trim().is_empty() => Ok(value),
            _ => Err(ChannelError::new(
                FeishuChannel::KIND,
                format!(
                    "invalid config: environment variable \"{name}\" (named by {field}) is not \
                     set or empty; export the secret in it before starting"
                ),
            )),
        };
        let mut config = FeishuConfig::new(
            self.app_id.clone(),
            secret("app_secret_env", &self.app_secret_env)?,
            self.chat_id.clone(),
            secret("verification_token_env", &self.verification_token_env)?,
            secret("encrypt_key_env", &self.encrypt_key_env)?,
        );
        config.base_url = self.base_url.clone();
        config.timestamp_window = self.timestamp_window;
        config.request_timeout = self.request_timeout;
        config.max_rate_limit_retries = self.max_rate_limit_retries;
        config.validate()?;
        Ok(config)
    }
}

fn default_feishu_base_url() -> String {
    FEISHU_BASE_URL.to_owned()
}

fn default_timestamp_window() -> Duration {
    Duration::from_secs(5 * 60)
}

fn default_request_timeout() -> Duration {
    Duration::from_secs(10)
}

fn default_max_rate_limit_retries() -> u32 {
    3
}
