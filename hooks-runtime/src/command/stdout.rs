//! Telling a command's JSON decision from plain text, so that no decision
//! hides in front of or behind other output.
//!
//! Stdout is JSON when, after any UTF-8 byte order marks and whitespace, it
//! starts with `{`. Plain text must not have a line that starts with `{`
//! once whitespace, control and invisible characters are skipped — such a
//! line is most likely a decision printed after progress output, and reading
//! the text as "allow" would drop it.

use std::fmt;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

/// The text from its first `{`, if `stdout` is a JSON object once leading
/// byte order marks and whitespace are skipped; trailing whitespace removed.
pub(crate) fn json_start(stdout: &str) -> Option<&str> {
    let text = stdout
        .trim_start_matches(|c: char| c == '\u{FEFF}' || c.is_whitespace())
        .trim_end();
    text.starts_with('{').then_some(text)
}

/// Parses JSON output, refusing duplicate keys at any depth: with them, one
/// spelling of a decision would silently replace another
/// (`{"decision": "block", …, "decision": null}` reads as no decision).
pub(crate) fn parse_json(text: &str) -> Result<Value, serde_json::Error> {
    serde_json::from_str::<Unique>(text).map(|unique| unique.0)
}

/// A JSON value whose objects have no duplicate keys.
struct Unique(Value);

impl<'de> Deserialize<'de> for Unique {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(UniqueVisitor).map(Unique)
    }
}

struct UniqueVisitor;

impl<'de> Visitor<'de> for UniqueVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E: de::Error>(self, value: bool) -> Result<Value, E> {
        Ok(Value::Bool(value))
    }

    fn visit_i64<E: de::Error>(self, value: i64) -> Result<Value, E> {
        Ok(Value::from(value))
    }

    fn visit_u64<E: de::Error>(self, value: u64) -> Result<Value, E> {
        Ok(Value::from(value))
    }

    fn visit_f64<E: de::Error>(self, value: f64) -> Result<Value, E> {
        Ok(Value::from(value))
    }

    fn visit_str<E: de::Error>(self, value: &str) -> Result<Value, E> {
        Ok(Value::String(value.to_owned()))
    }

    fn visit_string<E: de::Error>(self, value: String) -> Result<Value, E> {
        Ok(Value::String(value))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(Unique(item)) = seq.next_element()? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut object = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            if object.contains_key(&key) {
                return Err(de::Error::custom(format!(
                    "the key `{key}` appears twice in one object"
                )));
            }
            let Unique(value) = map.next_value()?;
            object.insert(key, value);
        }
        Ok(Value::Object(object))
    }
}

/// Plain text with leading and trailing whitespace (and byte order marks) removed.
pub(crate) fn plain(stdout: &str) -> &str {
    stdout
        .trim_start_matches(|c: char| c == '\u{FEFF}' || c.is_whitespace())
        .trim_end()
}

/// Whether a line of `text` starts with `{` after skipped characters. Lines
/// end at any line terminator a terminal or a reader might honour: `\n`,
/// `\r`, vertical tab, form feed, NEL, and the Unicode line and paragraph
/// separators.
pub(crate) fn has_line_starting_with_brace(text: &str) -> bool {
    text.split(is_line_break)
        .any(|line| first_visible(line) == Some('{'))
}

/// The first character of `line` a terminal would draw: skipped characters
/// and ANSI escape sequences (`ESC [ … final`, `ESC ] … BEL or ESC \`, and
/// two-character `ESC x`) draw nothing.
fn first_visible(line: &str) -> Option<char> {
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1B}' {
            match chars.next() {
                // Control sequence: parameters and intermediates, then one final byte.
                Some('[') => {
                    chars.by_ref().find(|c| ('\u{40}'..='\u{7E}').contains(c));
                }
                // Operating system command: up to BEL or ESC.
                Some(']') => {
                    let end = chars.by_ref().find(|c| *c == '\u{07}' || *c == '\u{1B}');
                    if end == Some('\u{1B}') {
                        chars.next(); // the backslash of `ESC \`
                    }
                }
                _ => {}
            }
            continue;
        }
        if !is_skipped(c) {
            return Some(c);
        }
    }
    None
}

fn is_line_break(c: char) -> bool {
    matches!(
        c,
        '\n' | '\r' | '\u{0B}' | '\u{0C}' | '\u{85}' | '\u{2028}' | '\u{2029}'
    )
}

/// Whitespace, control characters, and characters that draw nothing: format
/// characters (Unicode category Cf: zero-width spaces and joiners, bidi
/// controls, the byte order mark, tags…), variation selectors, and the
/// fillers that render blank.
fn is_skipped(c: char) -> bool {
    c.is_whitespace()
        || c.is_control()
        || matches!(
            c,
            '\u{00AD}'
                | '\u{034F}'
                | '\u{0600}'..='\u{0605}'
                | '\u{061C}'
                | '\u{06DD}'
                | '\u{070F}'
                | '\u{0890}'..='\u{0891}'
                | '\u{08E2}'
                | '\u{115F}'..='\u{1160}'
                | '\u{17B4}'..='\u{17B5}'
                | '\u{180B}'..='\u{180F}'
                | '\u{200B}'..='\u{200F}'
                | '\u{202A}'..='\u{202E}'
                | '\u{2060}'..='\u{206F}'
                | '\u{2800}'
                | '\u{3164}'
                | '\u{FE00}'..='\u{FE0F}'
                | '\u{FEFF}'
                | '\u{FFA0}'
                | '\u{FFF9}'..='\u{FFFB}'
                | '\u{110BD}'
                | '\u{110CD}'
                | '\u{13430}'..='\u{1343F}'
                | '\u{1BCA0}'..='\u{1BCA3}'
                | '\u{1D173}'..='\u{1D17A}'
                | '\u{E0000}'..='\u{E0FFF}'
        )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_is_found_after_boms_and_whitespace_only() {
        assert_eq!(json_start("{}"), Some("{}"));
        assert_eq!(json_start("\u{FEFF}\u{FEFF} \n\t{} \n"), Some("{}"));
        assert_eq!(json_start("\u{3000}{}"), Some("{}"));
        assert_eq!(json_start("\u{200B}{}"), None);
        assert_eq!(json_start("ok {}"), None);
        assert_eq!(plain("\u{FEFF} ok \n"), "ok");
    }

    #[test]
    fn a_brace_after_any_line_break_or_invisible_prefix_counts() {
        for text in [
            "a\n{",
            "a\r{",
            "a\u{0B}{",
            "a\u{0C}{",
            "a\u{85}{",
            "a\u{2028}{",
            "a\u{2029}{",
            "a\n \t{",
            "a\n\u{0}{",
            "a\n\u{1B}[0m{",
            "a\n\u{1B}]0;title\u{07}{",
            "a\n\u{1B}]0;title\u{1B}\\{",
            "a\n\u{200B}{",
            "a\n\u{202E}{",
            "a\n\u{FEFF}{",
            "a\n\u{E0020}{",
            "{",
        ] {
            assert!(has_line_starting_with_brace(text), "{text:?}");
        }
    }

    #[test]
    fn duplicate_keys_are_refused_at_any_depth() {
        let value = parse_json(r#"{"a": [1, {"b": null}], "c": "d"}"#).unwrap();
        assert_eq!(value, serde_json::json!({"a": [1, {"b": null}], "c": "d"}));
        for text in [
            r#"{"decision": "block", "decision": null}"#,
            r#"{"hookSpecificOutput": {"permissionDecision": "deny", "permissionDecision": "allow"}}"#,
            r#"{"a": [{"x": 1, "x": 1}]}"#,
        ] {
            let error = parse_json(text).unwrap_err().to_string();
            assert!(error.contains("appears twice"), "{text}: {error}");
        }
    }

    #[test]
    fn braces_inside_lines_are_plain_text() {
        for text in ["", "ok", "checked {a} and {b}", "a\nb: {x}", "\u{1B}[0m ok"] {
            assert!(!has_line_starting_with_brace(text), "{text:?}");
        }
    }
}
