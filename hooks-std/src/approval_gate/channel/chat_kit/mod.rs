//! What every HTTP chat channel (Feishu, Slack) shares, written once:
//!
//! - [`ChatLimits`] (`limits.rs`): the callback timestamp window, the request
//!   timeout and the retries of a rate-limited call, with their defaults;
//! - [`ChatHttp`](http::ChatHttp) (`http.rs`): the HTTP client, JSON bodies
//!   and the retry loop of a rate-limited call, following the platform's
//!   [`RateLimitPolicy`](rate_limit::RateLimitPolicy) (`rate_limit.rs`);
//! - `signed.rs`: a signed callback's headers and its timestamp window;
//! - `wire.rs`: reading fields out of what a platform sends, clipping
//!   outside text for error messages, the clock, the base URL check;
//! - here: reading a secret from the environment variable a config names.
//!
//! Each platform keeps only what is its own: its fields, its API's answers,
//! its signature scheme and its card.

pub(crate) mod http;
mod limits;
pub(crate) mod rate_limit;
pub(crate) mod signed;
pub(crate) mod wire;

pub use limits::ChatLimits;

use super::ChannelError;

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

#[cfg(test)]
mod tests {
    use super::*;

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
