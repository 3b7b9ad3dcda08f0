//! Small helpers every channel needs for what platforms send and answer:
//! reading fields out of JSON with errors that name the field, clipping
//! outside text for error messages, the clock for timestamp windows, and
//! the connection settings every platform config checks alike.

use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::Value;

use super::limits::ChatLimits;
use crate::approval_gate::channel::CallbackError;

/// The value at `path` (object keys) in `value`.
pub(crate) fn lookup<'a>(value: &'a Value, path: &[&str]) -> Option<&'a Value> {
    path.iter().try_fold(value, |current, key| current.get(key))
}

/// The non-empty string at `path`; an absent field is reported by `missing`
/// (which says what the channel expected), an empty or non-string one by name.
pub(crate) fn required_str<'a>(
    value: &'a Value,
    path: &[&str],
    missing: fn(&str) -> CallbackError,
) -> Result<&'a str, CallbackError> {
    match lookup(value, path) {
        Some(Value::String(text)) if !text.is_empty() => Ok(text),
        Some(Value::String(_)) => Err(CallbackError::Malformed(format!(
            "{} is empty",
            path.join(".")
        ))),
        Some(_) => Err(CallbackError::Malformed(format!(
            "{} is not a string",
            path.join(".")
        ))),
        None => Err(missing(&path.join("."))),
    }
}

/// The string at `path`, if any: an absent or null field is `None`, a
/// non-string one an error naming it.
pub(crate) fn optional_str<'a>(
    value: &'a Value,
    path: &[&str],
) -> Result<Option<&'a str>, CallbackError> {
    match lookup(value, path) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(text)) => Ok(Some(text)),
        Some(_) => Err(CallbackError::Malformed(format!(
            "{} is not a string",
            path.join(".")
        ))),
    }
}

/// At most 64 characters of outside text, for error messages.
pub(crate) fn clip(text: &str) -> String {
    match text.char_indices().nth(64) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_owned(),
    }
}

/// At most 200 characters of a response body, for error messages.
pub(crate) fn snippet(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    match text.char_indices().nth(200) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None if text.is_empty() => "empty".to_owned(),
        None => text.into_owned(),
    }
}

/// The current Unix time in seconds (0 if the clock is before 1970).
pub(crate) fn unix_now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|elapsed| i64::try_from(elapsed.as_secs()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

/// Checks the connection settings every platform config has: `base_url` is
/// an http(s) URL with a host (else the message names `use_instead`), and
/// the [`ChatLimits`] are usable. The message says what to write instead.
pub(crate) fn check_connection(
    base_url: &str,
    use_instead: &str,
    limits: &ChatLimits,
) -> Result<(), String> {
    let lower = base_url.to_ascii_lowercase();
    let host = lower
        .strip_prefix("https://")
        .or_else(|| lower.strip_prefix("http://"));
    if host.is_none_or(|host| host.trim_matches('/').is_empty()) {
        return Err(format!(
            "base_url \"{base_url}\" is not an http(s) URL: use {use_instead}"
        ));
    }
    limits.check()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn fields_are_named() {
        let value = json!({"a": {"b": "x", "e": "", "n": 1}});
        let missing = |field: &str| CallbackError::Malformed(format!("{field} is missing"));
        assert_eq!(required_str(&value, &["a", "b"], missing), Ok("x"));
        for (path, said) in [
            (["a", "e"], "a.e is empty"),
            (["a", "n"], "a.n is not a string"),
            (["a", "z"], "a.z is missing"),
        ] {
            assert_eq!(
                required_str(&value, &path, missing),
                Err(CallbackError::Malformed(said.to_owned()))
            );
        }
    }

    #[test]
    fn clipping() {
        assert_eq!(clip("short"), "short");
        assert_eq!(clip(&"é".repeat(70)).chars().count(), 65);
        assert_eq!(snippet(b""), "empty");
        assert_eq!(snippet(&[b'a'; 300]).chars().count(), 201);
    }
}
