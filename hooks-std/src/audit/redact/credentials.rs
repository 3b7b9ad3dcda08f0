//! Credentials inside free text: what an argument value, an error message or
//! a block reason may carry whatever key it sits under.
//!
//! Masked (each replaced by `[redacted]`, the text around it kept):
//!
//! * PEM private keys, `-----BEGIN … PRIVATE KEY-----` to the matching end
//!   line (or the end of the text when it is missing);
//! * `Bearer …` and `Basic …` credentials that look like tokens (at least 8
//!   characters with a digit or symbol, or at least 20) — "Basic
//!   authentication" stays;
//! * the password of `scheme://user:password@host`;
//! * well-known token formats: OpenAI/Stripe `sk-…`/`sk_live_…`, GitHub
//!   `ghp_…`/`github_pat_…`, Slack `xox?-…`, GitLab `glpat-…`, AWS access key
//!   ids `AKIA…`/`ASIA…`, Google `AIza…`, JSON Web Tokens `eyJ….eyJ….…`;
//! * the value of every `name=value` or `name: value` pair (query strings,
//!   headers, env lines, JSON written as text) whose name is a secret name
//!   (the same matching as object keys) — a quoted value up to its closing
//!   quote, an unquoted one up to whitespace, a quote, `&`, `#`, `,` or `;`.
//!
//! Not found: a secret that is none of these shapes, e.g. a bare password in
//! prose ("my password is hunter2") or a credential split across values.

use std::fmt::Write as _;
use std::sync::LazyLock;

use regex::{Captures, Regex};

use super::REDACTED;

/// Decides whether the name of a `name=value` pair names a secret.
pub(super) trait SecretPairs {
    /// Whether the value of `name` (whose value text is `value`) is a secret.
    fn is_secret_pair(&self, name: &str, value: &str) -> bool;
}

static CREDENTIALS: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"(?P<pem>-----BEGIN[ A-Z0-9]*PRIVATE KEY-----(?s:.*?)(?:-----END[ A-Z0-9]*PRIVATE KEY-----|\z))",
        r"|(?P<scheme>(?-u:\b)(?i:bearer|basic)[ \t]+)(?P<scheme_credential>[A-Za-z0-9._~+/\-]+=*)",
        r"|(?P<userinfo>(?-u:\b)[A-Za-z][A-Za-z0-9+.\-]*://[^/\s:@]*:)(?P<password>[^/\s@]+)@",
        r"|(?P<token>(?-u:\b)(?:sk-(?:proj-)?[A-Za-z0-9_\-]{20,}|[sr]k_(?:live|test)_[A-Za-z0-9]{16,}",
        r"|gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{20,}|xox[abposr]-[A-Za-z0-9\-]{10,}",
        r"|glpat-[A-Za-z0-9_\-]{20,}|(?:AKIA|ASIA)[0-9A-Z]{16}|AIza[0-9A-Za-z_\-]{35}",
        r"|eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]*))",
        r#"|(?P<name>[\w.\-]{1,64})["']?(?P<separator>[ \t]*[:=][ \t]*)"#,
        // A value's end is found in code (`value_end`), so that no search
        // runs far past where the next one starts: hostile text such as
        // `a=a=a=…` or `x="x="…` stays linear.
        r#"(?P<value>["']|(?i:bearer|basic|digest|token|negotiate)[ \t]+[^\s"'&#,;]+|[^\s"'&#,;:=]+)"#,
    ))
    .expect("the credential patterns compile")
});

/// `text` with every credential it holds masked; `None` when there is none
/// (the common case, which allocates nothing).
pub(super) fn mask_credentials(text: &str, pairs: &dyn SecretPairs) -> Option<String> {
    if !may_hold_a_credential(text) {
        return None;
    }
    let mut out: Option<String> = None;
    let mut copied = 0;
    let mut from = 0;
    while from < text.len() {
        let Some(found) = CREDENTIALS.captures_at(text, from) else {
            break;
        };
        let whole = found.get(0).expect("group 0 always matches");
        let Some((start, end, masked)) = masking(&found, text, pairs) else {
            // Not a credential: look again from just after what decided
            // that (a pair's value may itself hold one, e.g. a URL).
            from = resume_at(&found, whole.start(), text);
            continue;
        };
        let out = out.get_or_insert_with(|| String::with_capacity(text.len()));
        out.push_str(&text[copied..start]);
        out.push_str(&masked);
        copied = end;
        from = end.max(whole.start() + 1);
        from = next_boundary(text, from);
    }
    out.map(|mut out| {
        out.push_str(&text[copied..]);
        out
    })
}

/// Whether `text` has what every credential shape needs: a `:` or `=` (pairs,
/// URLs), a `-` or `_` (PEM lines, most token formats), a token prefix
/// without either (`AKIA`, `ASIA`, `AIza`, `eyJ`), or a `Bearer`/`Basic`
/// scheme. Most values (names, amounts, ids) have none and skip the scan.
fn may_hold_a_credential(text: &str) -> bool {
    let bytes = text.as_bytes();
    bytes.iter().any(|b| matches!(b, b':' | b'=' | b'-' | b'_'))
        || ["AKIA", "ASIA", "AIza", "eyJ"]
            .iter()
            .any(|prefix| text.contains(prefix))
        || bytes.windows(5).any(|window| {
            window.eq_ignore_ascii_case(b"basic") || window.eq_ignore_ascii_case(b"beare")
        })
}

/// What to mask in one match: the byte range and its replacement.
fn masking(
    found: &Captures<'_>,
    text: &str,
    pairs: &dyn SecretPairs,
) -> Option<(usize, usize, String)> {
    if let Some(pem) = found.name("pem") {
        return Some((pem.start(), pem.end(), REDACTED.to_owned()));
    }
    if let Some(credential) = found.name("scheme_credential") {
        let basic = found
            .name("scheme")
            .is_some_and(|scheme| scheme.as_str().trim().eq_ignore_ascii_case("basic"));
        let masked = looks_like_a_token(credential.as_str())
            || (basic && decodes_to_user_and_password(credential.as_str()));
        return masked.then(|| (credential.start(), credential.end(), REDACTED.to_owned()));
    }
    if let Some(password) = found.name("password") {
        return Some((password.start(), password.end(), REDACTED.to_owned()));
    }
    if let Some(token) = found.name("token") {
        return Some((token.start(), token.end(), REDACTED.to_owned()));
    }
    let name = found.name("name")?;
    let value = found.name("value")?;
    if !pairs.is_secret_pair(name.as_str(), value.as_str()) {
        return None;
    }
    let end = value_end(text, value.start(), value.end());
    let masked = match value.as_str() {
        quote @ ("\"" | "'") => {
            let mut masked = String::new();
            let _ = write!(masked, "{quote}{REDACTED}");
            if text[..end].ends_with(quote) && end > value.start() + 1 {
                masked.push_str(quote);
            }
            masked
        }
        _ => REDACTED.to_owned(),
    };
    Some((value.start(), end, masked))
}

/// Where a secret pair's value ends: a quoted value at its closing quote
/// (or the end of the line), an unquoted one at whitespace, a quote, `&`,
/// `#`, `,` or `;` — past any `:` or `=` in it, which the pattern stops at.
fn value_end(text: &str, start: usize, matched_end: usize) -> usize {
    let rest = &text[start..];
    if let Some(quote) = rest.chars().next().filter(|c| matches!(c, '"' | '\'')) {
        let mut escaped = false;
        for (at, c) in rest.char_indices().skip(1) {
            match c {
                '\n' => return start + at,
                '\\' if quote == '"' && !escaped => escaped = true,
                c if c == quote && !escaped => return start + at + c.len_utf8(),
                _ => escaped = false,
            }
        }
        return text.len();
    }
    let tail = &text[matched_end..];
    matched_end
        + tail
            .find(|c: char| c.is_whitespace() || matches!(c, '"' | '\'' | '&' | '#' | ',' | ';'))
            .unwrap_or(tail.len())
}

/// Where to look next after a match that held no credential: a pair's value
/// and a scheme's credential are searched again; anything else moves one
/// character on.
fn resume_at(found: &Captures<'_>, start: usize, text: &str) -> usize {
    let at = found
        .name("value")
        .or_else(|| found.name("scheme_credential"))
        .map_or(start + 1, |inner| inner.start().max(start + 1));
    next_boundary(text, at)
}

/// The first character boundary at or after `at`.
fn next_boundary(text: &str, mut at: usize) -> usize {
    while at < text.len() && !text.is_char_boundary(at) {
        at += 1;
    }
    at.min(text.len())
}

/// Whether a `Basic` credential is base64 of `user:password`.
fn decodes_to_user_and_password(credential: &str) -> bool {
    use base64::Engine as _;
    use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD};
    STANDARD
        .decode(credential)
        .or_else(|_| STANDARD_NO_PAD.decode(credential))
        .is_ok_and(|bytes| bytes.contains(&b':'))
}

/// A scheme's credential, not an English word: long, or with a digit or
/// symbol in it.
fn looks_like_a_token(credential: &str) -> bool {
    let length = credential.chars().count();
    length >= 20 || (length >= 8 && credential.chars().any(|c| !c.is_ascii_alphabetic()))
}
