//! Redaction of secrets in tool arguments and messages before they are logged.

mod credentials;
mod key_name;

use serde_json::Value;

use credentials::{SecretPairs, mask_credentials};
use key_name::KeyWords;

/// The text that replaces a redacted value.
pub const REDACTED: &str = "[redacted]";

/// The key names redacted by default (see [`Redactor`] for how they match).
pub const DEFAULT_REDACT_KEYS: &[&str] = &[
    "password",
    "passwd",
    "pwd",
    "passphrase",
    "secret",
    "client_secret",
    "token",
    "refresh_token",
    "api_key",
    "private_key",
    "secret_key",
    "access_key",
    "credential",
    "auth",
    "authorization",
    "bearer",
    "cookie",
    "session",
    "jwt",
    "otp",
];

/// Names that mark a secret only as the name of a `name=value` pair inside
/// text (`?key=…`, `sig=…`, `pass=…`): as object keys they are too common
/// (`{"key": "invoice-7"}`) to redact.
const PAIR_ONLY_NAMES: [&str; 4] = ["key", "sig", "signature", "pass"];

/// Decides which object keys hold secrets, and masks credentials in text.
///
/// **Keys.** A key and each name are split into words (at `_`, `-`, `.`,
/// spaces and camelCase: `apiKey`, `API-KEY`, `x_api_key` are all `api key`),
/// after invisible characters are dropped and NFKC applied; each word is
/// case-folded and reduced to its Unicode confusable skeleton (so `pаssword`
/// with a Cyrillic `а`, fullwidth `ＰＡＳＳＷＯＲＤ` and `passw0rd` are
/// `password`). A name of more than four characters matches anywhere in the
/// key's joined words (`db_password`, `dbpassword`, `access_token`,
/// `credentials`, `Set-Cookie`); a name of four or fewer (`auth`, `pwd`,
/// `jwt`, `otp`) only as whole words (`basic_auth` yes, `author` no). The
/// value under a matching key is replaced whole, at any depth — except a
/// number or boolean under a key that also has a describing word (`count`,
/// `length`, `max`, `enabled`, `expires`, …: `session_count: 3`,
/// `max_tokens: 100`), which is a fact about a secret, not one. Erring
/// towards redacting too much is deliberate: an audit log must not become a
/// secret store.
///
/// **Values.** Every string, at any depth, and every message the audit log
/// stores (block reasons, tool errors) has the credentials it holds masked in
/// place: `Bearer`/`Basic` credentials, URL passwords, PEM private keys,
/// well-known token formats, and the value of `name=value` / `name: value`
/// pairs whose name is a secret name (plus `key`, `sig`, `signature`, `pass`
/// there). See the `credentials` module docs for the exact shapes; a secret
/// in none of these shapes, in prose, is not found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Redactor {
    names: Vec<KeyWords>,
    pair_names: Vec<KeyWords>,
}

impl Default for Redactor {
    fn default() -> Self {
        Redactor::new(DEFAULT_REDACT_KEYS)
    }
}

impl Redactor {
    /// Redacts keys containing any of `names` (the defaults are replaced,
    /// not extended; value patterns apply either way).
    pub fn new<I: IntoIterator<Item = S>, S: AsRef<str>>(names: I) -> Self {
        let names: Vec<KeyWords> = names
            .into_iter()
            .map(|name| KeyWords::new(name.as_ref()))
            .filter(|name| !name.is_empty())
            .collect();
        let pair_names = PAIR_ONLY_NAMES
            .iter()
            .map(|name| KeyWords::new(name))
            .collect();
        Redactor { names, pair_names }
    }

    /// Whether values under `key` are redacted (whatever the value).
    pub fn is_secret(&self, key: &str) -> bool {
        let key = KeyWords::new(key);
        self.names.iter().any(|name| key.contains(name))
    }

    /// Whether `value` under `key` is redacted: [`is_secret`](Self::is_secret),
    /// unless the value is a number or boolean describing the secret.
    fn redacts(&self, key: &str, value: &Value) -> bool {
        let key = KeyWords::new(key);
        if !self.names.iter().any(|name| key.contains(name)) {
            return false;
        }
        !(matches!(value, Value::Number(_) | Value::Bool(_)) && key.has_descriptor())
    }

    /// A copy of `value` with every secret key's value, at any depth, replaced
    /// by `"[redacted]"`, credentials inside strings masked, and NUL
    /// characters (which PostgreSQL text cannot hold) replaced by U+FFFD so
    /// hostile input cannot make the write fail.
    pub fn redact(&self, value: &Value) -> Value {
        match value {
            Value::Object(map) => Value::Object(
                map.iter()
                    .map(|(key, value)| {
                        let value = if self.redacts(key, value) {
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
            Value::String(text) => Value::String(self.redact_text(text)),
            other => other.clone(),
        }
    }

    /// `text` (a message, a tool error, a string value) with the credentials
    /// it holds masked and NUL characters replaced.
    pub fn redact_text(&self, text: &str) -> String {
        let text = clean_text(text);
        mask_credentials(&text, self).unwrap_or(text)
    }
}

impl SecretPairs for Redactor {
    fn is_secret_pair(&self, name: &str, value: &str) -> bool {
        let key = KeyWords::new(name);
        let named = self
            .names
            .iter()
            .chain(&self.pair_names)
            .any(|secret| key.contains(secret));
        let describes = key.has_descriptor()
            && serde_json::from_str::<Value>(value.trim_matches(['"', '\'']))
                .is_ok_and(|value| value.is_number() || value.is_boolean());
        named && !describes
    }
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
            "headers": [{"X-Api-Key": "k", "Accept": "json"}, {"Set-Cookie": "c"}],
            "nested": {"deeper": {"access_token": {"value": "t"}, "keep": 1}},
        });
        let redacted = Redactor::default().redact(&args);
        assert_eq!(
            redacted,
            json!({
                "query": "select 1",
                "Password": "[redacted]",
                "headers": [{"X-Api-Key": "[redacted]", "Accept": "json"}, {"Set-Cookie": "[redacted]"}],
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

    #[test]
    fn credentials_in_text_are_masked_in_place() {
        let redactor = Redactor::default();
        for (text, expected) in [
            (
                "Authorization: Bearer eyJhbGciOi.x1",
                "Authorization: [redacted]",
            ),
            (
                "curl -H 'Bearer abc123def456'",
                "curl -H 'Bearer [redacted]'",
            ),
            ("Basic dXNlcjpwYXNz and more", "Basic [redacted] and more"),
            (
                "GET https://api.example.com/v1?access_token=abc123&page=2",
                "GET https://api.example.com/v1?access_token=[redacted]&page=2",
            ),
            ("token=t0k3n", "token=[redacted]"),
            ("?key=AIzaSy-abc", "?key=[redacted]"),
            (
                "postgres://app:hunter2@db:5432/x",
                "postgres://app:[redacted]@db:5432/x",
            ),
            (
                r#"{"password": "hunter 2", "user": "ann"}"#,
                r#"{"password": "[redacted]", "user": "ann"}"#,
            ),
            (
                "export CLIENT_SECRET=s3cr3t",
                "export CLIENT_SECRET=[redacted]",
            ),
            ("key AKIAIOSFODNN7EXAMPLE here", "key [redacted] here"),
            ("ghp_0123456789abcdefghijklmnopqrstuvwxyz", "[redacted]"),
            ("sk-proj-abcdefghijklmnopqrstuvwx", "[redacted]"),
            ("xoxb-1234567890-abcdef", "[redacted]"),
            (
                "-----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY-----\nrest",
                "[redacted]\nrest",
            ),
            ("-----BEGIN PRIVATE KEY-----\nMIIE cut", "[redacted]"),
            ("p\u{430}ssword=hunter2", "p\u{430}ssword=[redacted]"),
        ] {
            assert_eq!(redactor.redact_text(text), expected, "{text}");
        }
    }

    #[test]
    fn ordinary_text_is_left_alone() {
        let redactor = Redactor::default();
        for text in [
            "Basic authentication is disabled",
            "the bearer bonds matured",
            "Error: connection refused at 10:30",
            "https://example.com/path?page=2&sort=asc",
            "author=ann; max_tokens=100; session_count=3",
            "task-1234567890abcdefghijklmnop",
            "a=b=c=d=e",
            "",
        ] {
            assert_eq!(redactor.redact_text(text), text);
        }
    }

    /// Hostile text costs time in proportion to its length: four times the
    /// text may take about four times as long, not sixteen.
    #[test]
    fn hostile_text_is_scanned_in_linear_time() {
        let redactor = Redactor::default();
        let cost = |text: &str| {
            (0..2)
                .map(|_| {
                    let started = std::time::Instant::now();
                    redactor.redact_text(text);
                    started.elapsed()
                })
                .min()
                .expect("two runs")
        };
        for unit in [
            "a=",
            "x: ",
            "-----BEGIN ",
            "x=\"",
            "a:",
            "Bearer ",
            "password=",
            "https://",
            "p\u{430}ss=\u{430}",
        ] {
            let small = cost(&unit.repeat(1_500));
            let large = cost(&unit.repeat(6_000));
            assert!(
                large < small * 8 + std::time::Duration::from_millis(50),
                "{unit:?}: 1,500 repeats took {small:?}, 6,000 took {large:?}"
            );
        }
    }
}
