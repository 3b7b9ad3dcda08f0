//! [`WebSettings`]: the web channel and its page in config-file form
//! (`channel: web` in the gate's config).

use std::collections::BTreeMap;
use std::net::IpAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::http::HeaderName;
use serde::Deserialize;

use super::{
    OperatorAuth, TokenAuth, TrustedHeaderAuth, WEB_CHANNEL_KIND, WatchedChannel, WebApprovals,
    WebChannel, WebConfig,
};
use crate::approval_gate::Approvals;
use crate::approval_gate::channel::ChannelError;

/// The web channel in config-file form. Operators sign in either with
/// tokens (`operators`: each operator id and the Argon2 hash of their
/// token, as [`TokenAuth::hash_token`] makes it; the tokens themselves are
/// never in config) or through an auth proxy (`trusted_header`); exactly
/// one of the two. Unknown keys are errors.
///
/// ```yaml
/// channel: web
/// web:
///   channel_id: approvals            # default `approvals`
///   base_path: /approvals            # where the application mounts the page
///   secure_cookies: true             # served over TLS
///   operators:
///     wang.fang: "$argon2id$v=19$m=19456,t=2,p=1$…"
///   # trusted_header: { header: X-Forwarded-User, proxies: [10.0.0.5] }
///   watched_channels:                # optional: another channel, read-only
///     - { kind: feishu, channel_id: oc_123, viewers: [wang.fang] }
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WebSettings {
    /// The channel id requests are stored with (default `approvals`).
    #[serde(default = "default_channel_id")]
    pub channel_id: String,
    /// The path the application mounts the page at (default `/approvals`).
    #[serde(default = "default_base_path")]
    pub base_path: String,
    /// Mark cookies `Secure`: `true` when the page is served over TLS,
    /// `false` for plain HTTP. Required: left out, a deployment behind TLS
    /// would send its session cookie without `Secure`.
    #[serde(default)]
    pub secure_cookies: Option<bool>,
    /// How long a session lasts after login (default `"8h"`).
    #[serde(
        default = "default_session_ttl",
        deserialize_with = "hooks_runtime::config::ConfigDuration::text"
    )]
    pub session_ttl: Duration,
    /// Token sign-in: operator id → Argon2 PHC hash of their token.
    #[serde(default)]
    pub operators: BTreeMap<String, String>,
    /// Sign-in by an auth proxy's header instead.
    #[serde(default)]
    pub trusted_header: Option<TrustedHeaderSettings>,
    /// Other channels whose requests the page shows read-only
    /// ([`WebConfig::watched_channels`]).
    #[serde(default)]
    pub watched_channels: Vec<WatchedChannel>,
}

/// [`TrustedHeaderAuth`] in config-file form.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TrustedHeaderSettings {
    /// The header the proxy names the operator in, e.g. `X-Forwarded-User`.
    pub header: String,
    /// The proxy's addresses; the header from any other peer is refused.
    pub proxies: Vec<IpAddr>,
}

fn default_channel_id() -> String {
    "approvals".to_owned()
}

fn default_base_path() -> String {
    WebConfig::default().base_path
}

fn default_session_ttl() -> Duration {
    WebConfig::default().session_ttl
}

fn invalid(message: String) -> ChannelError {
    ChannelError::new(WEB_CHANNEL_KIND, format!("invalid config: {message}"))
}

impl WebSettings {
    /// Checks everything the page needs: one sign-in method, usable token
    /// hashes, a valid header name and at least one proxy, the base path and
    /// the watched channels.
    pub fn validate(&self) -> Result<(), ChannelError> {
        if self.channel_id.trim().is_empty() {
            return Err(invalid(
                "`channel_id` is empty; name the channel (e.g. `approvals`) or leave it out".into(),
            ));
        }
        self.auth()?;
        self.checked_config()?;
        if self.secure_cookies.is_none() {
            return Err(invalid(
                "`secure_cookies` is missing; say `true` when the page is served over TLS \
                 (session cookies marked `Secure`), `false` for plain HTTP"
                    .into(),
            ));
        }
        Ok(())
    }

    /// The channel. Hand this same instance (or a clone) to the
    /// [`Approvals`] and to [`page`](Self::page): clones share the event
    /// hub that makes the page live.
    pub fn channel(&self) -> WebChannel {
        WebChannel::new(self.channel_id.clone())
    }

    /// The authenticator the settings describe.
    pub fn auth(&self) -> Result<Arc<dyn OperatorAuth>, ChannelError> {
        match (&self.trusted_header, self.operators.is_empty()) {
            (None, false) => TokenAuth::new(self.operators.clone())
                .map(|auth| Arc::new(auth) as Arc<dyn OperatorAuth>)
                .map_err(|error| invalid(format!("`operators`: {error}"))),
            (Some(trusted), true) => {
                if HeaderName::from_bytes(trusted.header.as_bytes()).is_err() {
                    return Err(invalid(format!(
                        "`trusted_header.header` {:?} is not an HTTP header name; give the \
                         header your auth proxy sets, e.g. `X-Forwarded-User`",
                        trusted.header
                    )));
                }
                if trusted.proxies.is_empty() {
                    return Err(invalid(
                        "`trusted_header.proxies` is empty, so every request would be \
                         refused; list the auth proxy's addresses"
                            .into(),
                    ));
                }
                Ok(Arc::new(TrustedHeaderAuth::new(
                    trusted.header.to_ascii_lowercase(),
                    trusted.proxies.iter().copied(),
                )))
            }
            (Some(_), false) => Err(invalid(
                "both `operators` and `trusted_header` are set; operators sign in one way: \
                 keep one of them"
                    .into(),
            )),
            (None, true) => Err(invalid(
                "no way to sign in: give `operators` (operator id: Argon2 hash of their \
                 token, made with `TokenAuth::hash_token`) or `trusted_header` (the auth \
                 proxy's header and addresses)"
                    .into(),
            )),
        }
    }

    /// The page's settings (everything not in config at its default).
    pub fn config(&self) -> WebConfig {
        WebConfig {
            base_path: self.base_path.clone(),
            session_ttl: self.session_ttl,
            secure_cookies: self.secure_cookies.unwrap_or(true),
            watched_channels: self.watched_channels.clone(),
            ..WebConfig::default()
        }
    }

    fn checked_config(&self) -> Result<WebConfig, ChannelError> {
        let config = self.config();
        if config.session_ttl.is_zero() {
            return Err(invalid("`session_ttl` must not be zero".into()));
        }
        WebApprovals::check_config(&config, &self.channel_id)
            .map_err(|error| invalid(error.to_string()))?;
        Ok(config)
    }

    /// The page for `approvals`, which must have been started with this
    /// settings' channel (built by [`channel`](Self::channel) or
    /// [`ChannelSettings::build`](crate::approval_gate::channel::ChannelSettings::build)).
    /// Mount its [`router`](WebApprovals::router) at `base_path`.
    pub fn page(&self, approvals: Approvals) -> Result<WebApprovals, ChannelError> {
        let Some(channel) = approvals.channel().as_web().cloned() else {
            return Err(invalid(format!(
                "the approval machinery talks through the {} channel \"{}\", not a web \
                 channel; start the `Approvals` with the channel these settings build",
                approvals.channel().kind(),
                approvals.channel().channel_id()
            )));
        };
        WebApprovals::new(approvals, channel, self.auth()?, self.checked_config()?)
            .map_err(|error| invalid(error.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A real Argon2 hash, made once (hashing is slow on purpose).
    fn hash() -> String {
        static HASH: std::sync::OnceLock<String> = std::sync::OnceLock::new();
        HASH.get_or_init(|| TokenAuth::hash_token("t").expect("hash"))
            .clone()
    }

    fn error_of(value: serde_json::Value) -> String {
        let settings: WebSettings = serde_json::from_value(value).expect("parses");
        settings.validate().expect_err("refused").to_string()
    }

    #[test]
    fn token_settings_validate_and_describe_the_page() {
        let settings: WebSettings = serde_json::from_value(json!({
            "channel_id": "ops", "base_path": "/ops/approvals", "secure_cookies": true,
            "session_ttl": "1h", "operators": {"alice": hash()},
        }))
        .expect("parses");
        settings.validate().expect("valid");
        let config = settings.config();
        assert_eq!(config.base_path, "/ops/approvals");
        assert!(config.secure_cookies);
        assert_eq!(config.session_ttl, Duration::from_secs(3600));
        assert!(settings.auth().expect("auth").has_login());
    }

    #[test]
    fn trusted_header_settings_validate() {
        let settings: WebSettings = serde_json::from_value(json!({
            "trusted_header": {"header": "X-Forwarded-User", "proxies": ["10.0.0.5"]},
            "secure_cookies": false,
        }))
        .expect("parses");
        settings.validate().expect("valid");
        assert!(!settings.auth().expect("auth").has_login());
    }

    #[test]
    fn malformed_settings_say_what_to_fix() {
        let cases = [
            (json!({}), "give `operators`"),
            (
                json!({"operators": {"alice": hash()},
                       "trusted_header": {"header": "X-User", "proxies": ["10.0.0.5"]}}),
                "keep one of them",
            ),
            (json!({"operators": {"alice": "secret"}}), "Argon2 PHC"),
            (json!({"operators": {"": hash()}}), "use a plain id"),
            (
                json!({"trusted_header": {"header": "X User", "proxies": ["10.0.0.5"]}}),
                "not an HTTP header name",
            ),
            (
                json!({"trusted_header": {"header": "X-User", "proxies": []}}),
                "list the auth proxy's addresses",
            ),
            (
                json!({"operators": {"alice": hash()}, "base_path": "approvals/"}),
                "must start with `/`",
            ),
            (
                json!({"operators": {"alice": hash()},
                       "watched_channels": [{"kind": "web", "channel_id": "approvals"}]}),
                "the page's own channel",
            ),
            (
                json!({"operators": {"alice": hash()}, "channel_id": " "}),
                "`channel_id` is empty",
            ),
            (
                json!({"operators": {"alice": hash()}, "base_path": "//evil.example"}),
                "no empty, `.` or `..` segment",
            ),
            (
                json!({"operators": {"alice": hash()}, "base_path": "/a/../b"}),
                "no empty, `.` or `..` segment",
            ),
            (
                json!({"operators": {"alice": hash()}}),
                "`secure_cookies` is missing",
            ),
        ];
        for (value, expected) in cases {
            let error = error_of(value.clone());
            assert!(error.contains(expected), "{value}: {error}");
            assert!(error.starts_with("web channel: invalid config"), "{error}");
        }
        for (value, expected) in [
            (json!({"token": "inline"}), "unknown field"),
            (json!({"session_ttl": "0s"}), "longer than zero"),
            (
                json!({"trusted_header": {"header": "X-User", "proxies": ["not-an-ip"]}}),
                "invalid IP address",
            ),
        ] {
            let error = serde_json::from_value::<WebSettings>(value.clone())
                .expect_err("refused")
                .to_string();
            assert!(error.contains(expected), "{value}: {error}");
        }
    }
}
