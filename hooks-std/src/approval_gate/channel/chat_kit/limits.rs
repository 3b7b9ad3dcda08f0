//! [`ChatLimits`]: the three settings every chat channel takes alike.

use std::time::Duration;

use serde::Deserialize;

/// How a chat channel bounds its traffic with the platform: how old a
/// signed callback may be, how long one API request may take, and how many
/// times a rate-limited call is retried.
///
/// Each chat channel's config and settings carry these keys at their own
/// top level (`timestamp_window: "2m"` sits beside `app_id` or
/// `channel_id`), each with the default below when left out.
///
/// ```
/// use std::time::Duration;
/// use hooks::std_hooks::approval_gate::channel::ChatLimits;
/// let limits: ChatLimits =
///     serde_json::from_value(serde_json::json!({"request_timeout": "2s"})).unwrap();
/// assert_eq!(limits.request_timeout, Duration::from_secs(2));
/// assert_eq!(limits, ChatLimits { request_timeout: Duration::from_secs(2), ..ChatLimits::default() });
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
pub struct ChatLimits {
    /// How far a callback's signed timestamp may be from now (default
    /// `"5m"`, as both Feishu's and Slack's documentation advise); older or
    /// newer callbacks are refused as replays.
    #[serde(
        default = "default_timestamp_window",
        deserialize_with = "hooks_runtime::config::ConfigDuration::text"
    )]
    pub timestamp_window: Duration,
    /// The timeout of each platform API request (default `"10s"`).
    #[serde(
        default = "default_request_timeout",
        deserialize_with = "hooks_runtime::config::ConfigDuration::text"
    )]
    pub request_timeout: Duration,
    /// How many times a rate-limited platform call is retried (default 3).
    #[serde(default = "default_max_rate_limit_retries")]
    pub max_rate_limit_retries: u32,
}

impl Default for ChatLimits {
    fn default() -> Self {
        ChatLimits {
            timestamp_window: default_timestamp_window(),
            request_timeout: default_request_timeout(),
            max_rate_limit_retries: default_max_rate_limit_retries(),
        }
    }
}

impl ChatLimits {
    /// Checks that the window and the timeout are longer than zero; the
    /// message says what to write instead.
    pub(crate) fn check(&self) -> Result<(), String> {
        if self.request_timeout.is_zero() {
            return Err("request_timeout must be longer than zero, e.g. \"10s\"".to_owned());
        }
        if self.timestamp_window.is_zero() {
            return Err("timestamp_window must be longer than zero, e.g. \"5m\"".to_owned());
        }
        Ok(())
    }
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
