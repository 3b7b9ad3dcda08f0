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
//! * the password of `scheme://user:password@host`, `//user:password@host`
//!   and, without a scheme, `user:password@host` (a Go DSN
//!   `user:pw@tcp(h)/db`; not after `mailto:`), up to the last `@` of the
//!   authority (a password may hold `@`);
//! * well-known token formats: OpenAI/Stripe `sk-…`/`sk_live_…`, GitHub
//!   `ghp_…`/`github_pat_…`, Slack `xox?-…`, GitLab `glpat-…`, AWS access key
//!   ids `AKIA…`/`ASIA…`, Google `AIza…`, JSON Web Tokens `eyJ….eyJ….…`;
//! * command lines: `curl -u user:password` / `--user user:password`,
//!   `-ppassword` on a line that runs `mysql…`/`maria…`, and the next word
//!   after an option named like a secret (`--password hunter2`);
//! * SQL: the quoted string after `PASSWORD` or `IDENTIFIED BY`;
//! * the `response=` of an HTTP `Digest` authorization (within 2 KiB after
//!   the word `Digest`);
//! * the value of every `name=value` or `name: value` pair (query strings,
//!   headers, env lines, JSON written as text, JSON inside a JSON string:
//!   `\"password\":\"…\"`) whose name is a secret name (the same matching
//!   as object keys, so hidden characters inside the name do not split it; a
//!   name longer than 256 characters counts as a secret name) — fullwidth
//!   `：`/`＝` and any space character (NBSP) around the separator count; a
//!   quoted value up to its closing quote (SQL's doubled `''` included) or
//!   the end of the line, an unquoted one up to whitespace, a quote, `&`,
//!   `#`, `,` or `;`; after `Bearer`/`Basic`/`Digest`/`Token`/`Negotiate`,
//!   the word after it, even on the next line.
//!
//! Not found: a secret that is none of these shapes, e.g. a bare password in
//! prose ("my password is hunter2"), or a name and value in separate strings
//! other than the two shapes the [`Redactor`](super::Redactor) knows.
//!
//! Cost: every match does bounded work (a pair's name is read back at most
//! 257 characters, a `Digest` looked for 2 KiB back, a `mysql` 1 KiB back on
//! the line), so the scan is linear in the text; measured in a debug build,
//! about 6-18 µs per byte of text made only of short pairs (`a_b=1 `,
//! `a=`), far less for ordinary text.

use std::fmt::Write as _;
use std::sync::LazyLock;

use regex::{Captures, Regex};

use super::REDACTED;
use super::key_name::MAX_KEY_CHARS;
use crate::text::is_hidden;

/// Decides whether the name of a `name=value` pair names a secret.
pub(super) trait SecretPairs {
    /// Whether the value of `name` (whose value text is `value`) is a secret.
    fn is_secret_pair(&self, name: &str, value: &str) -> bool;
}

static CREDENTIALS: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"(?P<pem>-----BEGIN[ A-Z0-9]*PRIVATE KEY-----(?s:.*?)(?:-----END[ A-Z0-9]*PRIVATE KEY-----|\z))",
        r"|(?P<scheme>(?-u:\b)(?i:bearer|basic)[ \t\r\n]+)(?P<scheme_credential>[A-Za-z0-9._~+/\-]+=*)",
        r"|(?P<userinfo>(?:(?-u:\b)[A-Za-z][A-Za-z0-9+.\-]*:)?//[^/\s:@]*:)(?P<password>[^/\s@]+)@",
        r"|(?P<token>(?-u:\b)(?:sk-(?:proj-)?[A-Za-z0-9_\-]{20,}|[sr]k_(?:live|test)_[A-Za-z0-9]{16,}",
        r"|gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{20,}|xox[abposr]-[A-Za-z0-9\-]{10,}",
        r"|glpat-[A-Za-z0-9_\-]{20,}|(?:AKIA|ASIA)[0-9A-Z]{16}|AIza[0-9A-Za-z_\-]{35}",
        r"|eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]*))",
        // `curl -u user:password`, `--user user:password`.
        r#"|(?P<user_option>(?:^|\s)(?:-u|--user)[ \t]*["']?[^\s:"']*:)(?P<user_password>[^\s"']+)"#,
        // `mysql -ppassword` (checked for a MySQL command on the line).
        r#"|(?P<short_p>[ \t]-p)(?P<short_p_value>[^\s"'\-][^\s"']*)"#,
        // `--password secret`: an option whose name is a secret name.
        r#"|(?P<option>(?:^|\s)--?(?P<option_name>[\w\-]+)[ \t]+)(?P<option_value>["']|[^\s"'\-][^\s"']*)"#,
        // SQL: `WITH PASSWORD 'secret'`, `IDENTIFIED BY 'secret'`.
        r#"|(?P<sql>(?-u:\b)(?i:password|identified[ \t\r\n]+by)[ \t\r\n]+)(?P<sql_value>["'])"#,
        r#"|(?P<name>[\w.\-\p{Cf}]+)(?:\\?["'])?(?P<separator>[\t\p{Zs}]*[:=：＝][\t\p{Zs}]*)"#,
        // A value's end is found in code (`value_end`), so that no search
        // runs far past where the next one starts: hostile text such as
        // `a=a=a=…` or `x="x="…` stays linear.
        r#"(?P<value>\\["']|["']|(?i:bearer|basic|digest|token|negotiate)[ \t\r\n]+[^\s"'&#,;]+|[^\s"'&#,;:=：＝]+)"#,
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
        || text.contains(['\u{FF1A}', '\u{FF1D}'])
        || ["AKIA", "ASIA", "AIza", "eyJ"]
            .iter()
            .any(|prefix| text.contains(prefix))
        || bytes.windows(5).any(|window| {
            [b"basic", b"beare", b"passw", b"ident"]
                .iter()
                .any(|word| window.eq_ignore_ascii_case(*word))
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
        return Some((
            password.start(),
            authority_password_end(text, password.start()),
            REDACTED.to_owned(),
        ));
    }
    if let Some(token) = found.name("token") {
        return Some((token.start(), token.end(), REDACTED.to_owned()));
    }
    if let Some(password) = found.name("user_password") {
        return Some((password.start(), password.end(), REDACTED.to_owned()));
    }
    if let Some(password) = found.name("short_p_value") {
        let line_start = text[..password.start()].rfind('\n').map_or(0, |at| at + 1);
        return on_a_mysql_line(&text[line_start..password.start()])
            .then(|| (password.start(), password.end(), REDACTED.to_owned()));
    }
    if let Some(value) = found.name("option_value") {
        let name = found.name("option_name")?;
        if !pairs.is_secret_pair(name.as_str(), value.as_str()) {
            return None;
        }
        return Some(masked_value(text, value.start(), value.end()));
    }
    if let Some(value) = found.name("sql_value") {
        return Some(masked_value(text, value.start(), value.end()));
    }
    let name = found.name("name")?;
    let value = found.name("value")?;
    let name_start = name_start(text, name.start());
    let full_name = &text[name_start..name.end()];
    let secret = pairs.is_secret_pair(full_name, value.as_str())
        || (full_name.eq_ignore_ascii_case("response") && after_digest(text, name_start));
    if secret {
        return Some(masked_value(text, value.start(), value.end()));
    }
    // `user:password@host` without a scheme (a Go DSN `user:pw@tcp(h)/db`,
    // `admin:pw@host`): the value holds an `@`; mask up to the last one.
    let plain_colon = found
        .name("separator")
        .is_some_and(|separator| separator.as_str() == ":");
    if plain_colon
        && !full_name.eq_ignore_ascii_case("mailto")
        && let Some(at) = value.as_str().rfind('@').filter(|at| *at > 0)
    {
        return Some((value.start(), value.start() + at, REDACTED.to_owned()));
    }
    None
}

/// The masked form of a value starting at `start`: a quoted value keeps its
/// quotes (`"[redacted]"`, `\"[redacted]\"` inside a JSON string).
fn masked_value(text: &str, start: usize, matched_end: usize) -> (usize, usize, String) {
    let end = value_end(text, start, matched_end);
    let rest = &text[start..end];
    let quote = ["\\\"", "\\'", "\"", "'"]
        .into_iter()
        .find(|quote| rest.starts_with(quote));
    let masked = match quote {
        Some(quote) => {
            let mut masked = String::new();
            let _ = write!(masked, "{quote}{REDACTED}");
            if rest.len() >= 2 * quote.len() && rest.ends_with(quote) {
                masked.push_str(quote);
            }
            masked
        }
        None => REDACTED.to_owned(),
    };
    (start, end, masked)
}

/// Where the password of `scheme://user:password@host` ends: at the last
/// `@` of the authority (a password may hold `@`).
fn authority_password_end(text: &str, start: usize) -> usize {
    let rest = &text[start..];
    let authority = rest
        .find(|c: char| c.is_whitespace() || matches!(c, '/' | '?' | '#'))
        .unwrap_or(rest.len());
    start + rest[..authority].rfind('@').unwrap_or(authority)
}

/// Where a pair's name starts: the pattern sees at most 64 characters of
/// it, so the name is followed back to its first character (up to one past
/// the key cap, which makes an over-long name a secret name).
fn name_start(text: &str, matched_start: usize) -> usize {
    let mut start = matched_start;
    for (taken, (at, c)) in text[..matched_start].char_indices().rev().enumerate() {
        let name_char = c.is_alphanumeric() || matches!(c, '_' | '.' | '-') || is_hidden(c);
        if !name_char || taken > MAX_KEY_CHARS {
            break;
        }
        start = at;
    }
    start
}

/// How far back from a `response=` pair an HTTP `Digest` scheme is looked for.
const DIGEST_LOOKBACK: usize = 2048;

/// Whether a `Digest` authorization scheme comes shortly before `at` (its
/// `response=` value is the credential).
fn after_digest(text: &str, at: usize) -> bool {
    let from = next_boundary(text, at.saturating_sub(DIGEST_LOOKBACK));
    text.as_bytes()[from..at]
        .windows(7)
        .any(|window| window.eq_ignore_ascii_case(b"digest "))
}

/// Whether a line (up to a `-p` option) runs a MySQL or MariaDB client,
/// whose `-p` takes the password glued to it.
fn on_a_mysql_line(line: &str) -> bool {
    let line = &line[next_boundary(line, line.len().saturating_sub(1024))..];
    line.as_bytes().windows(5).any(|window| {
        window.eq_ignore_ascii_case(b"mysql") || window.eq_ignore_ascii_case(b"maria")
    })
}

/// Where a secret pair's value ends: a quoted value at its closing quote
/// (or the end of the line), an unquoted one at whitespace, a quote, `&`,
/// `#`, `,` or `;` — past any `:` or `=` in it, which the pattern stops at.
fn value_end(text: &str, start: usize, matched_end: usize) -> usize {
    let rest = &text[start..];
    if let Some(quote) = ["\\\"", "\\'"]
        .into_iter()
        .find(|quote| rest.starts_with(quote))
    {
        // `\"value\"`: JSON written inside a JSON string.
        return escaped_quote_end(text, start, quote);
    }
    if let Some(quote) = rest.chars().next().filter(|c| matches!(c, '"' | '\'')) {
        let mut escaped = false;
        let mut chars = rest.char_indices().skip(1).peekable();
        while let Some((at, c)) = chars.next() {
            match c {
                '\n' => return start + at,
                '\\' if quote == '"' && !escaped => escaped = true,
                // SQL doubles a quote inside a quoted string: 'it''s'.
                '\'' if quote == '\'' && chars.peek().is_some_and(|&(_, next)| next == '\'') => {
                    chars.next();
                }
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

/// The end of a value opened by the escaped quote `quote` (`\"`) at
/// `start`: just after the next `quote`, or at the end of the line.
fn escaped_quote_end(text: &str, start: usize, quote: &str) -> usize {
    let body = start + quote.len();
    for (at, c) in text[body..].char_indices() {
        if c == '\n' {
            return body + at;
        }
        if text[body + at..].starts_with(quote) {
            return body + at + quote.len();
        }
    }
    text.len()
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
