//! [`FeishuSettings`]: the Feishu channel in config-file form.

use serde::Deserialize;

use super::{FEISHU_BASE_URL, FeishuChannel, FeishuConfig};
use crate::approval_gate::channel::ChannelError;
use crate::approval_gate::channel::chat_kit::{ChatLimits, secret_from_env};

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
    /// The keys `timestamp_window`, `request_timeout` and
    /// `max_rate_limit_retries`, as in [`FeishuConfig`].
    #[serde(flatten)]
    pub limits: ChatLimits,
}

impl FeishuSettings {
    /// The [`FeishuConfig`], secrets looked up with `env`; validated.
    pub fn resolve_with(
        &self,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<FeishuConfig, ChannelError> {
        let secret =
            |field: &str, name: &str| secret_from_env(&env, FeishuChannel::KIND, field, name);
        let mut config = FeishuConfig::new(
            self.app_id.clone(),
            secret("app_secret_env", &self.app_secret_env)?,
            self.chat_id.clone(),
            secret("verification_token_env", &self.verification_token_env)?,
            secret("encrypt_key_env", &self.encrypt_key_env)?,
        );
        config.base_url = self.base_url.clone();
        config.limits = self.limits;
        config.validate()?;
        Ok(config)
    }
}

fn default_feishu_base_url() -> String {
    FEISHU_BASE_URL.to_owned()
}
