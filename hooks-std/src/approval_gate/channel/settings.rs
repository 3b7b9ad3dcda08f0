//! Picking a channel by name from config: [`ChannelSettings`], with the
//! secrets of every channel read from environment variables the config
//! names (never written in the config itself).

use std::sync::Arc;

#[cfg(feature = "feishu")]
use super::feishu::{FeishuChannel, FeishuSettings};
#[cfg(feature = "slack")]
use super::slack::{SlackChannel, SlackSettings};
#[cfg(feature = "web")]
use super::web::{WEB_CHANNEL_KIND, WebSettings};
use super::{Channel, ChannelError};

/// A config section for a channel this build leaves out (its feature is
/// off): read only to say which feature to turn on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NotInThisBuild;

impl<'de> serde::Deserialize<'de> for NotInThisBuild {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        serde::de::IgnoredAny::deserialize(deserializer).map(|_| NotInThisBuild)
    }
}

/// A configured approval channel, by name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChannelSettings {
    /// Feishu / Lark (`channel: feishu`, the default where a `feishu`
    /// section is configured; feature `feishu`).
    #[cfg(feature = "feishu")]
    Feishu(FeishuSettings),
    /// Slack (`channel: slack`; feature `slack`).
    #[cfg(feature = "slack")]
    Slack(SlackSettings),
    /// The built-in approvals page (`channel: web`; feature `web`).
    #[cfg(feature = "web")]
    Web(WebSettings),
}

impl ChannelSettings {
    /// The channel kind it builds (`feishu`, `slack`, `web`).
    pub fn kind(&self) -> &'static str {
        match *self {
            #[cfg(feature = "feishu")]
            ChannelSettings::Feishu(_) => FeishuChannel::KIND,
            #[cfg(feature = "slack")]
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
    #[cfg_attr(
        not(any(feature = "feishu", feature = "slack")),
        allow(unused_variables, unreachable_code)
    )]
    pub fn build_with(
        &self,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<Arc<dyn Channel>, ChannelError> {
        Ok(match *self {
            #[cfg(feature = "feishu")]
            ChannelSettings::Feishu(ref settings) => {
                Arc::new(FeishuChannel::new(settings.resolve_with(env)?)?)
            }
            #[cfg(feature = "slack")]
            ChannelSettings::Slack(ref settings) => {
                Arc::new(SlackChannel::new(settings.resolve_with(env)?)?)
            }
            #[cfg(feature = "web")]
            ChannelSettings::Web(ref settings) => {
                settings.validate()?;
                Arc::new(settings.channel())
            }
        })
    }

    /// The id the built channel stores with requests
    /// ([`Channel::channel_id`]), known without its secrets.
    pub fn channel_id(&self) -> String {
        match *self {
            #[cfg(feature = "feishu")]
            ChannelSettings::Feishu(ref settings) => settings.chat_id.clone(),
            #[cfg(feature = "slack")]
            ChannelSettings::Slack(ref settings) => {
                format!("{}/{}", settings.team_id, settings.channel_id)
            }
            #[cfg(feature = "web")]
            ChannelSettings::Web(ref settings) => settings.channel_id.clone(),
        }
    }
}

#[cfg(all(test, feature = "feishu", feature = "slack", feature = "web"))]
mod tests {
    use super::*;
    use crate::approval_gate::ApprovalGateConfig;
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
