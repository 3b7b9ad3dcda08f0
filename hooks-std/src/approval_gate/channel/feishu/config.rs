//! [`FeishuConfig`]: how to reach the Open API and authenticate callbacks.

use std::fmt;

use serde::Deserialize;

use crate::approval_gate::channel::ChannelError;
use crate::approval_gate::channel::chat_kit::ChatLimits;
use crate::approval_gate::channel::chat_kit::wire::check_connection;

/// The Open API host of Feishu (mainland China).
pub const FEISHU_BASE_URL: &str = "https://open.feishu.cn";

/// The Open API host of Lark (international).
pub const LARK_BASE_URL: &str = "https://open.larksuite.com";

/// Config of the Feishu (or Lark) channel. Unknown keys are errors.
///
/// All five credentials come from the app's page in the Feishu developer
/// console: `app_id` / `app_secret` under "Credentials & Basic Info", and
/// `verification_token` / `encrypt_key` under "Events & Callbacks →
/// Encryption Strategy". The Encrypt Key is mandatory: callbacks are only
/// signed and encrypted when one is set, and without a signature anyone who
/// can reach the callback URL could press the buttons.
///
/// ```
/// use hooks::std_hooks::approval_gate::channel::feishu::FeishuConfig;
/// let config: FeishuConfig = serde_json::from_value(serde_json::json!({
///     "app_id": "cli_a1b2", "app_secret": "s3cr3t", "chat_id": "oc_123",
///     "verification_token": "vt", "encrypt_key": "ek", "timestamp_window": "2m",
/// })).unwrap();
/// assert_eq!(config.base_url, hooks::std_hooks::approval_gate::channel::feishu::FEISHU_BASE_URL);
/// assert_eq!(config.limits.timestamp_window.as_secs(), 120);
/// config.validate().unwrap();
/// ```
#[derive(Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FeishuConfig {
    /// The Open API host, [`FEISHU_BASE_URL`] by default; [`LARK_BASE_URL`]
    /// for Lark tenants. Must be `http://` or `https://`.
    #[serde(default = "default_base_url")]
    pub base_url: String,
    /// The app's App ID (`cli_...`).
    pub app_id: String,
    /// The app's App Secret.
    pub app_secret: String,
    /// The group chat (`oc_...`) approval cards are posted to; the bot must be
    /// a member. Callbacks from any other chat are refused by the gate.
    pub chat_id: String,
    /// The Verification Token; every callback must carry it.
    pub verification_token: String,
    /// The Encrypt Key; callbacks are decrypted and their signatures checked
    /// with it. Required.
    pub encrypt_key: String,
    /// How far a callback's `X-Lark-Request-Timestamp` may be from now, how
    /// long an Open API request may take, how often a rate-limited one is
    /// retried: the keys `timestamp_window`, `request_timeout` and
    /// `max_rate_limit_retries`, beside the others.
    #[serde(flatten)]
    pub limits: ChatLimits,
}

fn default_base_url() -> String {
    FEISHU_BASE_URL.to_owned()
}

impl FeishuConfig {
    /// A config with these credentials and every other field at its default.
    pub fn new(
        app_id: impl Into<String>,
        app_secret: impl Into<String>,
        chat_id: impl Into<String>,
        verification_token: impl Into<String>,
        encrypt_key: impl Into<String>,
    ) -> Self {
        FeishuConfig {
            base_url: default_base_url(),
            app_id: app_id.into(),
            app_secret: app_secret.into(),
            chat_id: chat_id.into(),
            verification_token: verification_token.into(),
            encrypt_key: encrypt_key.into(),
            limits: ChatLimits::default(),
        }
    }

    /// Checks that every credential is set and the base URL is HTTP(S).
    pub fn validate(&self) -> Result<(), ChannelError> {
        let required = [
            (
                "app_id",
                &self.app_id,
                "copy the App ID from the app's Credentials page in the Feishu developer console",
            ),
            (
                "app_secret",
                &self.app_secret,
                "copy the App Secret from the app's Credentials page in the Feishu developer console",
            ),
            (
                "chat_id",
                &self.chat_id,
                "set the oc_... id of the group chat approval cards go to",
            ),
            (
                "verification_token",
                &self.verification_token,
                "copy the Verification Token from Events & Callbacks → Encryption Strategy",
            ),
            (
                "encrypt_key",
                &self.encrypt_key,
                "set an Encrypt Key under Events & Callbacks → Encryption Strategy and copy it here: \
                 without it Feishu neither encrypts nor signs callbacks, so they cannot be authenticated",
            ),
        ];
        for (field, value, hint) in required {
            if value.trim().is_empty() {
                return Err(invalid(format!("{field} is empty: {hint}")));
            }
        }
        check_connection(
            &self.base_url,
            &format!("{FEISHU_BASE_URL} (Feishu) or {LARK_BASE_URL} (Lark)"),
            &self.limits,
        )
        .map_err(invalid)?;
        Ok(())
    }

    /// The base URL without trailing slashes.
    pub(crate) fn base(&self) -> &str {
        self.base_url.trim_end_matches('/')
    }
}

fn invalid(message: impl Into<String>) -> ChannelError {
    ChannelError::new("feishu", format!("invalid config: {}", message.into()))
}

impl fmt::Debug for FeishuConfig {
    /// Secrets are redacted.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FeishuConfig")
            .field("base_url", &self.base_url)
            .field("app_id", &self.app_id)
            .field("app_secret", &"<redacted>")
            .field("chat_id", &self.chat_id)
            .field("verification_token", &"<redacted>")
            .field("encrypt_key", &"<redacted>")
            .field("limits", &self.limits)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::time::Duration;

    fn base() -> serde_json::Value {
        json!({"app_id": "cli_1", "app_secret": "s", "chat_id": "oc_1",
               "verification_token": "vt", "encrypt_key": "ek"})
    }

    #[test]
    fn defaults() {
        let config: FeishuConfig = serde_json::from_value(base()).unwrap();
        assert_eq!(config, FeishuConfig::new("cli_1", "s", "oc_1", "vt", "ek"));
        assert_eq!(config.base_url, FEISHU_BASE_URL);
        assert_eq!(config.limits.timestamp_window, Duration::from_secs(300));
        assert_eq!(config.limits.request_timeout, Duration::from_secs(10));
        assert_eq!(config.limits.max_rate_limit_retries, 3);
        config.validate().unwrap();
    }

    #[test]
    fn durations_parse_and_unknown_keys_fail() {
        let mut value = base();
        value["timestamp_window"] = json!("90s");
        value["request_timeout"] = json!("500ms");
        value["base_url"] = json!(LARK_BASE_URL);
        let config: FeishuConfig = serde_json::from_value(value.clone()).unwrap();
        assert_eq!(config.limits.timestamp_window, Duration::from_secs(90));
        assert_eq!(config.limits.request_timeout, Duration::from_millis(500));
        value["timestamp_window"] = json!("soon");
        assert!(serde_json::from_value::<FeishuConfig>(value.clone()).is_err());
        let mut value = base();
        value["encryptkey"] = json!("x");
        let error = serde_json::from_value::<FeishuConfig>(value).unwrap_err();
        assert!(error.to_string().contains("unknown field"), "{error}");
    }

    #[test]
    fn validation() {
        let mut config = FeishuConfig::new("cli_1", "s", "oc_1", "vt", "");
        let error = config.validate().unwrap_err();
        assert!(error.message.contains("encrypt_key is empty"), "{error}");
        assert!(error.message.contains("cannot be authenticated"), "{error}");
        config.encrypt_key = "ek".into();
        config.base_url = "ftp://example.com".into();
        assert!(config.validate().unwrap_err().message.contains("base_url"));
        config.base_url = "https://".into();
        assert!(config.validate().is_err());
        config.base_url = "http://127.0.0.1:1234/".into();
        config.validate().unwrap();
        assert_eq!(config.base(), "http://127.0.0.1:1234");
        config.app_secret = " ".into();
        assert!(
            config
                .validate()
                .unwrap_err()
                .message
                .contains("app_secret")
        );
    }

    #[test]
    fn debug_redacts_secrets() {
        let config = FeishuConfig::new("cli_1", "topsecret", "oc_1", "vtoken", "ekey");
        let text = format!("{config:?}");
        assert!(!text.contains("topsecret") && !text.contains("vtoken") && !text.contains("ekey"));
    }
}
