//! Picking a channel by name from config: [`ChannelSettings`], with the
//! secrets of every channel read from environment variables the config
//! names (never written in the config itself).

use std::sync::Arc;
use std::time::Duration;

use serde::Deserialize;

use super::feishu::{FEISHU_BASE_URL, FeishuChannel, FeishuConfig};
use super::slack::{SlackChannel, SlackSettings};
#[cfg(feature = "web")]
use super::web::{WEB_CHANNEL_KIND, WebSettings};
use super::{Channel, ChannelError};

/// A configured approval channel, by name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChannelSettings {
    /// Feishu / Lark (`channel: feishu`, the default where a `feishu`
    /// section is configured).
    Feishu(FeishuSettings),
    /// Slack (`channel: slack`).
    Slack(SlackSettings),
    /// The built-in approvals page (`channel: web`; feature `web`).
    #[cfg(feature = "web")]
    Web(WebSettings),
}

impl ChannelSettings {
    /// The channel kind it builds (`feishu`, `slack`, `web`).
    pub fn kind(&self) -> &'static str {
        match self {
            ChannelSettings::Feishu(_) => FeishuChannel::KIND,
            ChannelSettings::Slack(_) => SlackChannel::KIND,
            #[cfg(feature = "web")]
            ChannelSettings::Web(_) => WEB_CHANNEL_KIND,
        }
    }

    /// The channel, secrets read from the process environment.
    pub fn build(&self) -> Result<Arc<dyn Channel>, ChannelError> {
        self.build_with(|name| std::env::var(name).ok())
    }

    /// The channel, secrets looked up with `env` (a stand-in for the
    /// process environment in tests and examples).
    ///
    /// `web` needs no secrets; its settings are checked whole (sign-in,
    /// base path, watched channels) and it builds a
    /// [`WebChannel`](super::web::WebChannel). Config cannot build the
    /// page's router: the application starts the `Approvals` with this
    /// channel, makes the page with [`WebSettings::page`] and mounts its
    /// router at `base_path` itself.
    pub fn build_with(
        &self,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<Arc<dyn Channel>, ChannelError> {
        Ok(match self {
            ChannelSettings::Feishu(settings) => {
                Arc::new(FeishuChannel::new(settings.resolve_with(env)?)?)
            }
            ChannelSettings::Slack(settings) => {
                Arc::new(SlackChannel::new(settings.resolve_with(env)?)?)
            }
            #[cfg(feature = "web")]
            ChannelSettings::Web(settings) => {
                settings.validate()?;
                Arc::new(settings.channel())
            }
        })
    }

    /// The id the built channel stores with requests
    /// ([`Channel::channel_id`]), known without its secrets.
    pub fn channel_id(&self) -> String {
        match self {
            ChannelSettings::Feishu(settings) => settings.chat_id.clone(),
            ChannelSettings::Slack(settings) => {
                format!("{}/{}", settings.team_id, settings.channel_id)
            }
            #[cfg(feature = "web")]
            ChannelSettings::Web(settings) => settings.channel_id.clone(),
        }
    }
}

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gate::ApprovalGateConfig;
    use serde_json::json;

    fn feishu() -> serde_json::Value {
        json!({"app_id": "cli_1", "app_secret_env": "FS_SECRET", "chat_id": "oc_1",
               "verification_token_env": "FS_TOKEN", "encrypt_key_env": "FS_KEY"})
    }

    fn env(name: &str) -> Option<String> {
        match name {
            "FS_SECRET" => Some("secret".into()),
            "FS_TOKEN" => Some("token".into()),
            "FS_KEY" => Some("key".into()),
            _ => None,
        }
    }

    #[test]
    fn feishu_is_the_default_where_configured() {
        let config: ApprovalGateConfig =
            serde_json::from_value(json!({"feishu": feishu()})).unwrap();
        let settings = config.channel_settings().unwrap().unwrap();
        assert_eq!(settings.kind(), "feishu");
        assert_eq!(settings.channel_id(), "oc_1");
        let channel = settings.build_with(env).unwrap();
        assert_eq!((channel.kind(), channel.channel_id()), ("feishu", "oc_1"));
        // No channel named and no section: the machinery's own channel.
        let config: ApprovalGateConfig = serde_json::from_value(json!({})).unwrap();
        assert_eq!(config.channel_settings().unwrap(), None);
    }

    #[test]
    fn feishu_secrets_come_from_the_environment_only() {
        let settings: FeishuSettings = serde_json::from_value(feishu()).unwrap();
        let error = settings
            .resolve_with(|name| (name != "FS_KEY").then(|| "x".to_owned()))
            .unwrap_err();
        assert!(error.message.contains("FS_KEY"), "{error}");
        let mut inline = feishu();
        inline["app_secret"] = json!("inline");
        let error = serde_json::from_value::<FeishuSettings>(inline).unwrap_err();
        assert!(error.to_string().contains("unknown field"), "{error}");
    }

    #[test]
    fn a_section_for_the_other_channel_is_an_error() {
        let slack = json!({"bot_token_env": "B", "signing_secret_env": "S",
                           "channel_id": "C1", "team_id": "T1"});
        let config: ApprovalGateConfig =
            serde_json::from_value(json!({"channel": "slack", "slack": slack, "feishu": feishu()}))
                .unwrap();
        let error = config.channel_settings().unwrap_err();
        assert!(
            error.message.contains("remove the `feishu` section"),
            "{error}"
        );
        let config: ApprovalGateConfig =
            serde_json::from_value(json!({"channel": "feishu"})).unwrap();
        let error = config.channel_settings().unwrap_err();
        assert!(
            error.message.contains("needs a `feishu` section"),
            "{error}"
        );
        let config: ApprovalGateConfig = serde_json::from_value(json!({"channel": "web"})).unwrap();
        let error = config.channel_settings().unwrap_err();
        assert!(
            error.message.contains("needs a `web` section")
                && error.message.contains("`operators`"),
            "{error}"
        );
        let web = json!({"trusted_header": {"header": "X-User", "proxies": ["10.0.0.5"]}});
        let config: ApprovalGateConfig =
            serde_json::from_value(json!({"web": web.clone()})).unwrap();
        let error = config.channel_settings().unwrap_err();
        assert!(error.message.contains("add `channel: web`"), "{error}");
        let config: ApprovalGateConfig =
            serde_json::from_value(json!({"channel": "web", "web": web, "slack": {
                "bot_token_env": "B", "signing_secret_env": "S", "channel_id": "C1", "team_id": "T1"}}))
            .unwrap();
        let error = config.channel_settings().unwrap_err();
        assert!(
            error.message.contains("remove the `slack` section"),
            "{error}"
        );
    }

    #[test]
    fn web_builds_from_config_and_refuses_a_malformed_section() {
        let web = json!({"channel_id": "ops", "secure_cookies": true,
                         "trusted_header": {"header": "X-User", "proxies": ["10.0.0.5"]}});
        let config: ApprovalGateConfig =
            serde_json::from_value(json!({"channel": "web", "web": web})).unwrap();
        let settings = config.channel_settings().unwrap().unwrap();
        assert_eq!(
            (settings.kind(), settings.channel_id().as_str()),
            ("web", "ops")
        );
        let channel = settings.build_with(|_| None).unwrap();
        assert_eq!((channel.kind(), channel.channel_id()), ("web", "ops"));
        let broken = json!({"trusted_header": {"header": "X-User", "proxies": []}});
        let config: ApprovalGateConfig =
            serde_json::from_value(json!({"channel": "web", "web": broken})).unwrap();
        let error = config
            .channel_settings()
            .unwrap()
            .unwrap()
            .build_with(|_| None)
            .err()
            .expect("refused");
        assert!(
            error.message.contains("`trusted_header.proxies` is empty"),
            "{error}"
        );
    }
}
