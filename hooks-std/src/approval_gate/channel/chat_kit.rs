//! What every HTTP chat channel (Feishu, Slack) shares, written once: the
//! defaults of the settings each takes (callback timestamp window, request
//! timeout, retries of a rate-limited call), reading a secret from the
//! environment variable a config names, and the back-off between retries.
//! Each platform keeps only what is its own: its fields, its headers, its
//! signature and its card.

use std::time::Duration;

use axum::http::HeaderMap;

use super::ChannelError;

/// How far a callback's timestamp may be from now, unless configured: five
/// minutes, as both platforms' documentation advises.
pub(crate) fn default_timestamp_window() -> Duration {
    Duration::from_secs(5 * 60)
}

/// The timeout of each platform API request, unless configured.
pub(crate) fn default_request_timeout() -> Duration {
    Duration::from_secs(10)
}

/// How many times a rate-limited platform call is retried, unless configured.
pub(crate) fn default_max_rate_limit_retries() -> u32 {
    3
}

/// The secret in the environment variable `name`, which the settings'
/// `field` names; `kind` is the channel's, for the error.
pub(crate) fn secret_from_env(
    env: &impl Fn(&str) -> Option<String>,
    kind: &'static str,
    field: &str,
    name: &str,
) -> Result<String, ChannelError> {
    if name.trim().is_empty() {
        return Err(ChannelError::new(
            kind,
            format!(
                "invalid config: {field} is empty: name the environment variable that holds \
                 the secret"
            ),
        ));
    }
    match env(name) {
        Some(value) if !value.trim().is_empty() => Ok(value),
        _ => Err(ChannelError::new(
            kind,
            format!(
                "invalid config: environment variable {name} (named by {field}) is not set or \
                 empty; export the secret in it before starting"
            ),
        )),
    }
}

/// The wait before retry number `retries` (0-based) of a rate-limited call
/// when the platform announced none: `initial`, doubled per retry, at most
/// `max`.
pub(crate) fn backoff(initial: Duration, retries: u32, max: Duration) -> Duration {
    initial
        .saturating_mul(2u32.saturating_pow(retries))
        .min(max)
}

/// The header `name` as the text of a number (trimmed), if present and
/// readable.
pub(crate) fn header_text<'h>(headers: &'h HeaderMap, name: &str) -> Option<&'h str> {
    headers
        .get(name)
        .and_then(|value| value.to_str().ok())
        .map(str::trim)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_up_to_its_cap() {
        let (initial, max) = (Duration::from_millis(500), Duration::from_secs(30));
        assert_eq!(backoff(initial, 0, max), initial);
        assert_eq!(backoff(initial, 3, max), Duration::from_secs(4));
        assert_eq!(backoff(initial, 40, max), max);
    }

    #[test]
    fn a_secret_is_read_from_the_variable_named() {
        let env = |name: &str| (name == "SET").then(|| "s3cret".to_owned());
        assert_eq!(
            secret_from_env(&env, "slack", "f", "SET").unwrap(),
            "s3cret"
        );
        for (name, says) in [
            ("", "f is empty"),
            ("UNSET", "UNSET (named by f) is not set"),
        ] {
            let error = secret_from_env(&env, "slack", "f", name).unwrap_err();
            assert!(error.message.contains(says), "{}", error.message);
        }
    }
}
