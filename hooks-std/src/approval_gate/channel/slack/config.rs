//! [`SlackConfig`]: how to reach the Web API and authenticate interactivity
//! requests; [`SlackSettings`]: the same in config-file form, with the
//! secrets read from environment variables.

use std::fmt;
use std::time::Duration;

use crate::approval_gate::channel::ChannelError;
use crate::approval_gate::channel::chat_kit::ChatLimits;
use crate::approval_gate::channel::chat_kit::wire::check_connection;

/// The longest `timestamp_window` ([`SlackConfig::limits`]) accepted. Click ids are
/// remembered for the approvals' `event_retention` (a day by default); a
/// window that long would let a captured request be replayed once its id is
/// forgotten.
pub const MAX_TIMESTAMP_WINDOW: Duration = Duration::from_secs(3600);

/// The Slack Web API base URL.
pub const SLACK_API_BASE_URL: &str = "https://slack.com/api";

/// Config of the Slack channel, secrets included (build it from
/// [`SlackSettings`] to read them from the environment).
///
/// `bot_token` is the app's Bot User OAuth Token (`xoxb-…`, OAuth &
/// Permissions; it needs the `chat:write` scope, and the bot must be in the
/// channel), `signing_secret` the app's Signing Secret (Basic Information →
/// App Credentials), which authenticates every interactivity request.
#[derive(Clone, PartialEq, Eq)]
pub struct SlackConfig {
    /// The Web API base URL, [`SLACK_API_BASE_URL`] by default (a fake's URL in tests).
    pub base_url: String,
    /// The bot token (`xoxb-…`).
    pub bot_token: String,
    /// The signing secret.
    pub signing_secret: String,
    /// The channel (`C…`, or `G…` for an older private channel) approval
    /// messages are posted to.
    pub channel_id: String,
    /// The workspace (`T…`) the channel belongs to; an action reported from
    /// another workspace is refused.
    pub team_id: String,
    /// How far a request's `X-Slack-Request-Timestamp` may be from now (at
    /// most [`MAX_TIMESTAMP_WINDOW`]), how long a Web API request may take,
    /// how often a rate-limited one is retried.
    pub limits: ChatLimits,
}

impl SlackConfig {
    /// A config with these credentials and ids, every other field at its default.
    pub fn new(
        bot_token: impl Into<String>,
        signing_secret: impl Into<String>,
        channel_id: impl Into<String>,
        team_id: impl Into<String>,
    ) -> Self {
        SlackConfig {
            base_url: SLACK_API_BASE_URL.to_owned(),
            bot_token: bot_token.into(),
            signing_secret: signing_secret.into(),
            channel_id: channel_id.into(),
            team_id: team_id.into(),
            limits: ChatLimits::default(),
        }
    }

    /// Checks that every credential and id is set and well formed, and the
    /// base URL is HTTP(S).
    pub fn validate(&self) -> Result<(), ChannelError> {
        let required = [
            (
                "bot_token",
                &self.bot_token,
                "copy the Bot User OAuth Token (xoxb-…) from the app's OAuth & Permissions page",
            ),
            (
                "signing_secret",
                &self.signing_secret,
                "copy the Signing Secret from the app's Basic Information page: without it \
                 interactivity requests cannot be authenticated",
            ),
            (
                "channel_id",
                &self.channel_id,
                "set the id (C…) of the channel approval messages go to",
            ),
            (
                "team_id",
                &self.team_id,
                "set the id (T…) of the workspace the channel belongs to",
            ),
        ];
        for (field, value, hint) in required {
            if value.trim().is_empty() {
                return Err(invalid(format!("{field} is empty: {hint}")));
            }
        }
        for (field, value, example) in [
            ("channel_id", &self.channel_id, "C0123ABCD"),
            ("team_id", &self.team_id, "T0123ABCD"),
        ] {
            if !is_slack_id(value) {
                return Err(invalid(format!(
                    "{field} \"{value}\" is not a Slack id (capital letters and digits, e.g. \
                     {example}); use the id, not the name"
                )));
            }
        }
        check_connection(&self.base_url, SLACK_API_BASE_URL, &self.limits).map_err(invalid)?;
        if self.limits.timestamp_window > MAX_TIMESTAMP_WINDOW {
            return Err(invalid(format!(
                "timestamp_window {:?} is longer than {:?}: a signed request could be replayed \
                 once its click id is forgotten; use Slack's 5 minutes (\"5m\")",
                self.limits.timestamp_window, MAX_TIMESTAMP_WINDOW
            )));
        }
        Ok(())
    }

    /// The base URL without trailing slashes.
    pub(crate) fn base(&self) -> &str {
        self.base_url.trim_end_matches('/')
    }
}

/// Whether `text` looks like a Slack id: capital ASCII letters and digits.
pub(crate) fn is_slack_id(text: &str) -> bool {
    !text.is_empty()
        && text.len() <= 64
        && text
            .bytes()
            .all(|byte| byte.is_ascii_uppercase() || byte.is_ascii_digit())
}

impl fmt::Debug for SlackConfig {
    /// Secrets are redacted.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SlackConfig")
            .field("base_url", &self.base_url)
            .field("bot_token", &"<redacted>")
            .field("signing_secret", &"<redacted>")
            .field("channel_id", &self.channel_id)
            .field("team_id", &self.team_id)
            .field("limits", &self.limits)
            .finish()
    }
}

fn invalid(message: impl Into<String>) -> ChannelError {
    ChannelError::new("slack", format!("invalid config: {}", message.into()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::approval_gate::channel::slack::SlackSettings;
    use serde_json::json;

    fn settings() -> serde_json::Value {
        json!({"bot_token_env": "BOT", "signing_secret_env": "SIGN",
               "channel_id": "C1", "team_id": "T1"})
    }

    fn env(name: &str) -> Option<String> {
        match name {
            "BOT" => Some("xoxb-1".into()),
            "SIGN" => Some("s3".into()),
            _ => None,
        }
    }

    #[test]
    fn defaults_and_resolution() {
        let settings: SlackSettings = serde_json::from_value(settings()).unwrap();
        let config = settings.resolve_with(env).unwrap();
        assert_eq!(config, SlackConfig::new("xoxb-1", "s3", "C1", "T1"));
        assert_eq!(config.base_url, SLACK_API_BASE_URL);
        assert_eq!(config.limits.timestamp_window, Duration::from_secs(300));
    }

    #[test]
    fn unknown_keys_and_inline_secrets_fail() {
        let mut value = settings();
        value["bot_token"] = json!("xoxb-inline");
        let error = serde_json::from_value::<SlackSettings>(value).unwrap_err();
        assert!(error.to_string().contains("unknown field"), "{error}");
        let mut value = settings();
        value["timestamp_window"] = json!("soon");
        assert!(serde_json::from_value::<SlackSettings>(value).is_err());
    }

    #[test]
    fn missing_secrets_and_bad_ids_are_named() {
        let settings: SlackSettings = serde_json::from_value(settings()).unwrap();
        let error = settings.resolve_with(|_| None).unwrap_err();
        assert!(error.message.contains("BOT"), "{error}");
        let error = settings
            .resolve_with(|name| (name == "BOT").then(|| "x".to_owned()))
            .unwrap_err();
        assert!(error.message.contains("SIGN"), "{error}");
        let mut config = SlackConfig::new("xoxb-1", "s", "#approvals", "T1");
        assert!(
            config
                .validate()
                .unwrap_err()
                .message
                .contains("channel_id")
        );
        config.channel_id = "C1".into();
        config.team_id = " ".into();
        assert!(config.validate().unwrap_err().message.contains("team_id"));
        config.team_id = "T1".into();
        config.base_url = "ftp://x".into();
        assert!(config.validate().unwrap_err().message.contains("base_url"));
    }

    #[test]
    fn debug_redacts_secrets() {
        let text = format!(
            "{:?}",
            SlackConfig::new("xoxb-top", "sigsecret", "C1", "T1")
        );
        assert!(
            !text.contains("xoxb-top") && !text.contains("sigsecret"),
            "{text}"
        );
    }
}
