//! Redaction of secrets in tool arguments before they are logged.

use serde_json::Value;

/// The text that replaces a redacted value.
pub const REDACTED: &str = "[redacted]";

/// The key names redacted by default.
pub const DEFAULT_REDACT_KEYS: [&str; 6] = [
    "password",
    "secret",
    "token",
    "api_key",
    "authorization",
    "cookie",
];

/// Decides which object keys hold secrets.
///
/// Names and keys are compared case-insensitively with everything but letters
/// and digits dropped, and a key matches when it *contains* a name: with the
/// default names `Password`, `db_password`, `X-Api-Key`, `apiKey`,
/// `access_token` and `Set-Cookie` are all redacted. Erring towards redacting
/// too much is deliberate: an audit log must not become a secret store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Redactor {
    names: Vec<String>,
}

impl Default for Redactor {
    fn default() -> Self {
        Redactor::new(DEFAULT_REDACT_KEYS)
    }
}

impl Redactor {
    /// Redacts keys containing any of `names`.
    pub fn new<I: IntoIterator<Item = S>, S: AsRef<str>>(names: I) -> Self {
        Redactor {
            names: names
                .into_iter()
                .map(|name| normalize(name.as_ref()))
                .filter(|name| !name.is_empty())
                .collect(),
        }
    }

    /// Whether values under `key` are redacted.
    pub fn is_secret(&self, key: &str) -> bool {
        let key = normalize(key);
        self.names.iter().any(|name| key.contains(name.as_str()))
    }

    /// A copy of `value` with every secret key's value, at any depth, replaced
    /// by `"[redacted]"`, and NUL characters (which PostgreSQL text cannot
    /// hold) replaced by U+FFFD so hostile input cannot make the write fail.
    pub fn redact(&self, value: &Value) -> Value {
        match value {
            Value::Object(map) => Value::Object(
                map.iter()
                    .map(|(key, value)| {
                        let value = if self.is_secret(key) {
                            Value::String(REDACTED.to_owned())
                        } else {
                            self.redact(value)
                        };
                        (clean_text(key), value)
                    })
                    .collect(),
            ),
            Value::Array(items) => {
                Value::Array(items.iter().map(|item| self.redact(item)).collect())
            }
            Value::String(text) => Value::String(clean_text(text)),
            other => other.clone(),
        }
    }
}

fn normalize(text: &str) -> String {
    text.chars()
        .filter(char::is_ascii_alphanumeric)
        .map(|c| c.to_ascii_lowercase())
        .collect()
}

/// `text` with NUL characters replaced, so every backend can store it.
pub(crate) fn clean_text(text: &str) -> String {
    if text.contains('\0') {
        text.replace('\0', "\u{FFFD}")
    } else {
        text.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn secrets_are_redacted_at_any_depth_and_in_any_spelling() {
        let args = json!({
            "query": "select 1",
            "Password": "p",
            "auth": {"headers": [{"X-Api-Key": "k", "Accept": "json"}, {"Set-Cookie": "c"}]},
            "nested": {"deeper": {"access_token": {"value": "t"}, "keep": 1}},
        });
        let redacted = Redactor::default().redact(&args);
        assert_eq!(
            redacted,
            json!({
                "query": "select 1",
                "Password": "[redacted]",
                "auth": {"headers": [{"X-Api-Key": "[redacted]", "Accept": "json"}, {"Set-Cookie": "[redacted]"}]},
                "nested": {"deeper": {"access_token": "[redacted]", "keep": 1}},
            })
        );
    }

    #[test]
    fn custom_names_replace_the_defaults() {
        let redactor = Redactor::new(["ssn"]);
        assert_eq!(
            redactor.redact(&json!({"SSN": "1", "password": "p"})),
            json!({"SSN": "[redacted]", "password": "p"})
        );
    }

    #[test]
    fn nul_characters_are_replaced() {
        assert_eq!(
            Redactor::default().redact(&json!({"a\u{0}": "b\u{0}"})),
            json!({"a\u{FFFD}": "b\u{FFFD}"})
        );
    }
}
