//! Characters a person cannot see, or that change the order of what they
//! see, and how to show them.
//!
//! An approver decides from what a card shows. A payee written
//! `"Alice\u{202E}ecilA"` displays as something other than the bytes the tool
//! receives, and a zero-width space makes two different ids look alike. Every
//! channel that shows untrusted text to a person (Feishu today; Slack and a
//! web page later) renders it through [`escape_hidden`] or
//! [`escape_hidden_in_json`] and flags the message when
//! [`EscapedText::had_hidden`] is set.

use std::fmt::Write as _;

pub use hooks_runtime::text::is_hidden;

/// Text with its hidden characters written as escapes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EscapedText {
    /// The text, each hidden character replaced by `\uXXXX` (or `\u{XXXXX}`
    /// beyond the Basic Multilingual Plane).
    pub text: String,
    /// Whether any hidden character was found; a channel flags its message
    /// when it was ("contains hidden characters").
    pub had_hidden: bool,
}

/// Whether `text` holds any [hidden](is_hidden) character.
pub fn has_hidden(text: &str) -> bool {
    text.chars().any(is_hidden)
}

/// `text` for a person: hidden characters escaped, and backslashes doubled so
/// that an escape on screen always stands for a hidden character (a literal
/// `\u202E` typed by the model shows as `\\u202E`).
pub fn escape_hidden(text: &str) -> EscapedText {
    escape(text, Mode::Plain)
}

/// Serialized JSON for a person: hidden characters escaped as JSON escapes
/// (inside a string literal the result still means the same value). The
/// serializer already wrote backslashes as `\\` and line feeds inside
/// strings as `\n`, so backslashes stay as they are and a raw line feed —
/// which the serializer only writes between tokens — is kept as layout.
/// Beyond the Basic Multilingual Plane the escape is JSON's surrogate pair
/// (`\uDB40\uDC41` for U+E0041), so the text stays valid JSON.
pub fn escape_hidden_in_json(json_text: &str) -> EscapedText {
    escape(json_text, Mode::Json)
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Plain,
    Json,
}

fn escape(text: &str, mode: Mode) -> EscapedText {
    let escaped = |c: char| is_hidden(c) && !(mode == Mode::Json && c == '\n');
    let doubled = |c: char| mode == Mode::Plain && c == '\\';
    if !text.chars().any(|c| escaped(c) || doubled(c)) {
        return EscapedText {
            text: text.to_owned(),
            had_hidden: false,
        };
    }
    let mut out = String::with_capacity(text.len() + 16);
    let mut had_hidden = false;
    for c in text.chars() {
        if escaped(c) {
            had_hidden = true;
            push_escape(&mut out, c, mode);
        } else if doubled(c) {
            out.push_str("\\\\");
        } else {
            out.push(c);
        }
    }
    EscapedText {
        text: out,
        had_hidden,
    }
}

fn push_escape(out: &mut String, c: char, mode: Mode) {
    let code = u32::from(c);
    // Writing to a String cannot fail.
    if code <= 0xFFFF {
        let _ = write!(out, "\\u{code:04X}");
    } else if mode == Mode::Json {
        for unit in c.encode_utf16(&mut [0; 2]) {
            let _ = write!(out, "\\u{unit:04X}");
        }
    } else {
        let _ = write!(out, "\\u{{{code:X}}}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ordinary_text_is_untouched() {
        for text in ["Alice", "payee: 张三", "Ünïcödé café", "a b", "emoji 🙂"] {
            let escaped = escape_hidden(text);
            assert_eq!(escaped.text, text);
            assert!(!escaped.had_hidden, "{text}");
        }
    }

    #[test]
    fn every_kind_of_hidden_character_is_escaped() {
        for (c, shown) in [
            ('\u{202E}', "\\u202E"),
            ('\u{202C}', "\\u202C"),
            ('\u{2066}', "\\u2066"),
            ('\u{2069}', "\\u2069"),
            ('\u{200E}', "\\u200E"),
            ('\u{200F}', "\\u200F"),
            ('\u{061C}', "\\u061C"),
            ('\u{200B}', "\\u200B"),
            ('\u{200D}', "\\u200D"),
            ('\u{2060}', "\\u2060"),
            ('\u{FEFF}', "\\uFEFF"),
            ('\u{00AD}', "\\u00AD"),
            ('\u{115F}', "\\u115F"),
            ('\u{1160}', "\\u1160"),
            ('\u{3164}', "\\u3164"),
            ('\u{FFA0}', "\\uFFA0"),
            ('\u{FE0F}', "\\uFE0F"),
            ('\u{034F}', "\\u034F"),
            ('\u{00A0}', "\\u00A0"),
            ('\u{3000}', "\\u3000"),
            ('\u{2028}', "\\u2028"),
            ('\u{0085}', "\\u0085"),
            ('\u{7}', "\\u0007"),
            ('\n', "\\u000A"),
            ('\u{E000}', "\\uE000"),
            ('\u{E0041}', "\\u{E0041}"),
            ('\u{E0100}', "\\u{E0100}"),
            ('\u{2800}', "\\u2800"),
        ] {
            let escaped = escape_hidden(&format!("a{c}b"));
            assert_eq!(escaped.text, format!("a{shown}b"), "U+{:04X}", u32::from(c));
            assert!(escaped.had_hidden);
        }
    }

    #[test]
    fn a_typed_escape_cannot_pass_for_a_hidden_character() {
        let escaped = escape_hidden("Alice\\u202E");
        assert_eq!(escaped.text, "Alice\\\\u202E");
        assert!(!escaped.had_hidden);
    }

    #[test]
    fn escaped_json_still_means_the_same_value() {
        let value =
            serde_json::json!({"payee": "Alice\u{202E}ecila\u{200B}\u{E0041}", "note": "a\\b"});
        let text = serde_json::to_string_pretty(&value).unwrap();
        let escaped = escape_hidden_in_json(&text);
        assert!(escaped.had_hidden);
        assert!(
            escaped
                .text
                .contains("Alice\\u202Eecila\\u200B\\uDB40\\uDC41"),
            "{}",
            escaped.text
        );
        let back: serde_json::Value = serde_json::from_str(&escaped.text).unwrap();
        assert_eq!(back, value);
    }
}
