//! [`SlackSettings`]: the Slack channel in config-file form.

use serde::Deserialize;

use super::{SLACK_API_BASE_URL, SlackConfig};
use crate::approval_gate::channel::ChannelError;
use crate::approval_gate::channel::chat_kit::{ChatLimits, secret_from_env};

/// The Slack channel in config-file form: ids inline, secrets named by the
/// environment variables holding them. Unknown keys are errors.
///
/// ```
/// use hooks::std_hooks::approval_gate::channel::slack::SlackSettings;
/// let settings: SlackSettings = serde_json::from_value(serde_json::json!({
///     "bot_token_env": "SLACK_BOT_TOKEN",
///     "signing_secret_env": "SLACK_SIGNING_SECRET",
///     "channel_id": "C0123ABCD",
///     "team_id": "T0123ABCD",
/// })).unwrap();
/// let env = |name: &str| match name {
///     "SLACK_BOT_TOKEN" => Some("xoxb-1".to_owned()),
///     "SLACK_SIGNING_SECRET" => Some("8f742231b10e8888abcd99yyyzzz85a5".to_owned()),
///     _ => None,
/// };
/// let config = settings.resolve_with(env).unwrap();
/// assert_eq!(config.bot_token, "xoxb-1");
/// assert!(settings.resolve_with(|_| None).unwrap_err().message.contains("SLACK_BOT_TOKEN"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SlackSettings {
    /// The environment variable holding the bot token (`xoxb-…`).
    pub bot_token_env: String,
    /// The environment variable holding the signing secret.
    pub signing_secret_env: String,
    /// The channel (`C…`) approval messages are posted to.
    pub channel_id: String,
    /// The workspace (`T…`) of the channel.
    pub team_id: String,
    /// The Web API base URL (default [`SLACK_API_BASE_URL`]).
    #[serde(default = "default_base_url")]
    pub base_url: String,
    /// The keys `timestamp_window` (default `"5m"`), `request_timeout`
    /// (default `"10s"`) and `max_rate_limit_retries` (default 3).
    #[serde(flatten)]
    pub limits: ChatLimits,
}

impl SlackSettings {
    /// The [`SlackConfig`], secrets read from the process environment.
    pub fn resolve(&self) -> Result<SlackConfig, ChannelError> {
        self.resolve_with(|name| std::env::var(name).ok())
    }

    /// The [`SlackConfig`], secrets looked up with `env`; validated.
    pub fn resolve_with(
        &self,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<SlackConfig, ChannelError> {
        let secret = |field: &str, name: &str| secret_from_env(&env, "slack", field, name);
        let config = SlackConfig {
            base_url: self.base_url.clone(),
            bot_token: secret("bot_token_env", &self.bot_token_env)?,
            signing_secret: secret("signing_secret_env", &self.signing_secret_env)?,
            channel_id: self.channel_id.clone(),
            team_id: self.team_id.clone(),
            limits: self.limits,
        };
        config.validate()?;
        Ok(config)
    }
}

fn default_base_url() -> String {
    SLACK_API_BASE_URL.to_owned()
}
