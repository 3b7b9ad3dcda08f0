//! Telling a command's JSON decision from plain text, so that no decision
//! hides in front of or behind other output.
//!
//! Stdout is JSON when, after any UTF-8 byte order marks and whitespace, it
//! starts with `{`. Plain text must not look like it holds a decision (see
//! [`hidden_decision`]): a JSON object or a protocol key anywhere in it, a
//! line starting with `{`, or a JSON array. Such text is most likely a
//! decision printed after progress output, and reading it as "allow" would
//! drop the decision.

use std::fmt;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

use crate::printable::is_hidden;

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

/// Why plain text may hold a decision the runtime would otherwise miss.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum HiddenDecision {
    /// A line starts with `{` once hidden characters and terminal escape
    /// sequences are skipped: most likely JSON printed after progress output.
    LineStartsWithBrace,
    /// A `{` followed by `"` (whitespace between allowed) anywhere: a JSON
    /// object on the same line as other text.
    ObjectInText,
    /// A key of the hook protocol, in double quotes.
    ProtocolKey(&'static str),
    /// The text is a JSON array (the protocol reads one object, and Claude
    /// Code does not read arrays).
    JsonArray,
}

impl fmt::Display for HiddenDecision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HiddenDecision::LineStartsWithBrace => f.write_str(
                "a line of its plain-text stdout starts with `{`, like a JSON object printed after other output",
            ),
            HiddenDecision::ObjectInText => f.write_str(
                "its plain-text stdout holds `{\"`, like a JSON object printed after other output",
            ),
            HiddenDecision::ProtocolKey(key) => write!(
                f,
                "its plain-text stdout holds the hook protocol key `\"{key}\"`, like a decision printed after other output"
            ),
            HiddenDecision::JsonArray => f.write_str(
                "its stdout is a JSON array, and the hook protocol reads one JSON object",
            ),
        }
    }
}

/// Whether plain-text `text` looks like it holds a decision, given the
/// protocol's `keys`. Hidden characters ([`crate::printable::is_hidden`])
/// are skipped everywhere. The rules about where something stands (a line
/// start, the start of the text) look at the text as a terminal draws it,
/// without escape sequences; the rules that match anywhere look at it with
/// and without them, so that neither an escape sequence between `{` and `"`
/// nor a decision inside an unterminated escape string goes unseen.
pub(crate) fn hidden_decision(text: &str, keys: &[&'static str]) -> Option<HiddenDecision> {
    let drawn = without_escapes(text);
    if drawn
        .split('\n')
        .any(|line| line.trim_start().starts_with('{'))
    {
        return Some(HiddenDecision::LineStartsWithBrace);
    }
    if is_json_array(drawn.trim()) {
        return Some(HiddenDecision::JsonArray);
    }
    let shown = without_hidden(text);
    for version in [&drawn, &shown] {
        if has_object_start(version) {
            return Some(HiddenDecision::ObjectInText);
        }
        if let Some(key) = keys
            .iter()
            .find(|key| version.contains(&format!("\"{key}\"")))
        {
            return Some(HiddenDecision::ProtocolKey(key));
        }
    }
    None
}

/// `{` followed, after whitespace, by `"`.
fn has_object_start(text: &str) -> bool {
    text.match_indices('{')
        .any(|(at, _)| text[at + 1..].trim_start().starts_with('"'))
}

/// Starts with `[` and is JSON, or opens like a JSON array of objects,
/// arrays or strings (`[{`, `[[`, `["`, `[]`). `[1/3] checking` and
/// `[INFO] done` are plain text.
fn is_json_array(text: &str) -> bool {
    let Some(rest) = text.strip_prefix('[') else {
        return false;
    };
    matches!(
        rest.trim_start().chars().next(),
        Some('{' | '[' | '"' | ']')
    ) || serde_json::from_str::<Value>(text).is_ok()
}

/// `text` without hidden characters; line breaks become `\n`.
fn without_hidden(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        push_visible(&mut out, c);
    }
    out
}

/// `text` as a terminal draws it: without escape sequences (7-bit `ESC …`
/// and 8-bit C1 introducers) and hidden characters; line breaks become `\n`.
///
/// Skipped: control sequences (`ESC [` or U+009B, parameters, one final
/// byte); strings (`ESC ]` OSC, `ESC P` DCS, `ESC X` SOS, `ESC ^` PM,
/// `ESC _` APC, and their C1 forms) up to BEL, ST (`ESC \` or U+009C) or
/// the end; `ESC` with intermediates (0x20–0x2F) and one final byte, as in
/// `ESC ( B`; and `ESC` with any other one character, except `{` and `"`,
/// which stay (when in doubt, the text is read as holding more).
fn without_escapes(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        let introducer = match c {
            '\u{1B}' => match chars.peek().copied() {
                Some('{' | '"') | None => continue,
                Some(next) => {
                    chars.next();
                    next
                }
            },
            '\u{9B}' => '[',
            '\u{9D}' => ']',
            '\u{90}' => 'P',
            '\u{98}' => 'X',
            '\u{9E}' => '^',
            '\u{9F}' => '_',
            _ => {
                push_visible(&mut out, c);
                continue;
            }
        };
        match introducer {
            '[' => {
                chars.by_ref().find(|c| ('\u{40}'..='\u{7E}').contains(c));
            }
            ']' | 'P' | 'X' | '^' | '_' => {
                while let Some(c) = chars.next() {
                    if matches!(c, '\u{07}' | '\u{9C}') {
                        break;
                    }
                    if c == '\u{1B}' {
                        if chars.peek() == Some(&'\\') {
                            chars.next();
                        }
                        break;
                    }
                }
            }
            '\u{20}'..='\u{2F}' => {
                while chars
                    .next_if(|c| ('\u{20}'..='\u{2F}').contains(c))
                    .is_some()
                {}
                chars.next();
            }
            _ => {}
        }
    }
    out
}

fn push_visible(out: &mut String, c: char) {
    if is_line_break(c) {
        out.push('\n');
    } else if !is_hidden(c) {
        out.push(c);
    }
}

/// Line terminators a terminal or a reader might honour: `\n`, `\r`,
/// vertical tab, form feed, NEL, and the Unicode line and paragraph
/// separators.
fn is_line_break(c: char) -> bool {
    matches!(
        c,
        '\n' | '\r' | '\u{0B}' | '\u{0C}' | '\u{85}' | '\u{2028}' | '\u{2029}'
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
            assert_eq!(
                hidden_decision(text, KEYS),
                Some(HiddenDecision::LineStartsWithBrace),
                "{text:?}"
            );
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

    const KEYS: &[&str] = &["decision", "continue"];

    #[test]
    fn braces_brackets_and_words_in_ordinary_text_are_plain_text() {
        for text in [
            "",
            "ok",
            "checked {a} and {b}",
            "a\nb: {x}",
            "\u{1B}[0m ok",
            "[1/3] checking",
            "[INFO] done",
            "a decision: continue",
            "say \"hi\" {x}",
            "\u{1B}(B\u{1B}[m done",
        ] {
            assert_eq!(hidden_decision(text, KEYS), None, "{text:?}");
        }
    }

    #[test]
    fn json_inside_a_line_escapes_and_arrays_count() {
        use HiddenDecision::*;
        for (text, found) in [
            ("checking... {\"x\": 1}", ObjectInText),
            ("ok { \n \"x\": 1}", ObjectInText),
            ("ok {\u{1B}[0m\"x\": 1}", ObjectInText),
            ("ok {\u{200B}\"x\": 1}", ObjectInText),
            // Inside an unterminated OSC string, which a terminal hides.
            ("ok \u{1B}]0;{\"x\": 1}", ObjectInText),
            ("note: \"decision\": \"block\"", ProtocolKey("decision")),
            ("note: \"deci\u{200B}sion\"", ProtocolKey("decision")),
            ("\u{1B}(B{", LineStartsWithBrace),
            ("\u{1B}(0\u{1B})B{", LineStartsWithBrace),
            ("\u{1B}Pq#0;2\u{1B}\\{", LineStartsWithBrace),
            ("\u{1B}_app\u{07}{", LineStartsWithBrace),
            ("\u{1B}^pm\u{9C}{", LineStartsWithBrace),
            ("\u{1B}Xsos\u{1B}\\{", LineStartsWithBrace),
            ("\u{9B}0m{", LineStartsWithBrace),
            ("\u{9D}0;t\u{07}{", LineStartsWithBrace),
            ("\u{90}q\u{9C}{", LineStartsWithBrace),
            ("\u{FFF0}{", LineStartsWithBrace),
            ("\u{1B}{", LineStartsWithBrace),
            ("[{}]", JsonArray),
            ("[ \"block\" ]", JsonArray),
            ("[]", JsonArray),
            ("[1, 2]", JsonArray),
            ("\u{1B}[0m[[1]]", JsonArray),
        ] {
            assert_eq!(hidden_decision(text, KEYS), Some(found), "{text:?}");
        }
    }
}
