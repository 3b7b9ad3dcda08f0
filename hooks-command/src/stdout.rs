//! Telling a command's JSON decision from plain text, so that no decision
//! hides in front of or behind other output.
//!
//! Stdout is JSON when, after any UTF-8 byte order marks and whitespace, it
//! opens like a JSON object (`{"` or `{}`). Plain text must not hold a decision (see
//! [`hidden_decision`]): a JSON object with a deciding protocol key anywhere
//! in it, such a key in quotes followed by `:`, a JSON array of objects, or
//! double-encoded JSON. Such text is most likely a decision printed after
//! progress output, and reading it as "allow" would drop the decision.

use std::fmt;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

use hooks_runtime::text::is_hidden;

/// The text from its first `{`, if `stdout` opens like a JSON object (`{`,
/// whitespace, then `"` or `}`) once leading byte order marks and
/// whitespace are skipped; trailing whitespace removed. Text that opens
/// with other braces (Go's `{Name:acme}`, `{src,dst}`, a Python dict, a `{`
/// alone on a line) is plain text, which [`hidden_decision`] reads.
pub(crate) fn json_start(stdout: &str) -> Option<&str> {
    let text = stdout
        .trim_start_matches(|c: char| c == '\u{FEFF}' || c.is_whitespace())
        .trim_end();
    let opens_object = text
        .strip_prefix('{')
        .is_some_and(|rest| rest.trim_start().starts_with(['"', '}']));
    opens_object.then_some(text)
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
    /// A JSON object that holds a deciding protocol key (at any depth),
    /// found by parsing from a `{` in the text: most likely a decision
    /// printed after other output.
    ObjectInText(&'static str),
    /// A deciding protocol key in double or single quotes (a Python dict)
    /// followed by `:`: a decision printed as text or as JSON too broken to
    /// parse.
    ProtocolKey(&'static str),
    /// The text is a JSON array that holds an object (the protocol reads
    /// one object, and Claude Code does not read arrays).
    JsonArray,
    /// The text is one JSON string (double-encoded JSON, as `jq tojson`
    /// prints) that holds a decision.
    EncodedString,
}

impl fmt::Display for HiddenDecision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HiddenDecision::ObjectInText(key) => write!(
                f,
                "its plain text holds a JSON object with the hook protocol key `{key}`, like a decision printed after other output"
            ),
            HiddenDecision::ProtocolKey(key) => write!(
                f,
                "its plain text holds the hook protocol key `\"{key}\":`, like a decision printed after other output"
            ),
            HiddenDecision::JsonArray => f.write_str(
                "its output is a JSON array that holds an object, and the hook protocol reads one JSON object",
            ),
            HiddenDecision::EncodedString => f.write_str(
                "its output is a JSON string that holds a decision (double-encoded JSON)",
            ),
        }
    }
}

/// How many levels of backslash escaping (`\"` for `"`) are undone when
/// looking for a decision: JSON encoded inside JSON, and again.
const ESCAPE_LEVELS: usize = 4;

/// Whether plain-text `text` holds a decision, given the protocol `keys`
/// that decide something. It does when, after skipping hidden characters
/// ([`crate::printable::is_hidden`]) and — in a second reading — terminal
/// escape sequences, and after undoing up to [`ESCAPE_LEVELS`] levels of
/// backslash escaping:
///
/// * a key appears in double or single quotes followed by `:` (whitespace
///   between allowed);
/// * JSON parsed from any `{` is an object holding a key at any depth (so
///   `\u` escapes in a key are seen);
/// * the whole text is a JSON array holding an object, or a JSON string
///   holding a decision.
///
/// Ordinary text is not a decision: braces that do not start a JSON object
/// (C, Go's `%+v`, shell brace expansion, a `{` alone on a line), JSON
/// objects without a deciding key, arrays of strings, checkboxes, and
/// protocol words in quotes without a `:`.
pub(crate) fn hidden_decision(text: &str, keys: &[&'static str]) -> Option<HiddenDecision> {
    find(text, keys, ESCAPE_LEVELS)
}

fn find(text: &str, keys: &[&'static str], levels: usize) -> Option<HiddenDecision> {
    let drawn = without_escapes(text);
    let shown = without_hidden(text);
    // Most text has no escape sequence: one reading is enough then.
    let readings = if shown == drawn {
        vec![drawn]
    } else {
        vec![drawn, shown]
    };
    for reading in readings {
        let mut version = reading;
        for level in 0..=levels {
            if let Some(found) = quoted_key(&version, keys) {
                return Some(HiddenDecision::ProtocolKey(found));
            }
            if let Some(found) = object_with_key(&version, keys) {
                return Some(HiddenDecision::ObjectInText(found));
            }
            match serde_json::from_str::<Value>(version.trim()) {
                Ok(Value::Array(items)) if items.iter().any(holds_object) => {
                    return Some(HiddenDecision::JsonArray);
                }
                Ok(Value::String(inner))
                    if level < levels && find(&inner, keys, levels - level - 1).is_some() =>
                {
                    return Some(HiddenDecision::EncodedString);
                }
                _ => {}
            }
            let unescaped = unescape(&version);
            if unescaped == version {
                break;
            }
            version = unescaped;
        }
    }
    None
}

/// The first key of `keys` found as `"key"` or `'key'` followed, after
/// whitespace, by `:`.
fn quoted_key(text: &str, keys: &[&'static str]) -> Option<&'static str> {
    keys.iter().copied().find(|key| {
        ['"', '\''].into_iter().any(|quote| {
            let quoted = format!("{quote}{key}{quote}");
            text.match_indices(&quoted)
                .any(|(at, _)| text[at + quoted.len()..].trim_start().starts_with(':'))
        })
    })
}

/// The first key of `keys` held by a JSON object parsed from a `{` of `text`.
fn object_with_key(text: &str, keys: &[&'static str]) -> Option<&'static str> {
    let mut from = 0;
    while let Some(offset) = text[from..].find('{') {
        let at = from + offset;
        let mut values = serde_json::Deserializer::from_str(&text[at..]).into_iter::<Value>();
        match values.next() {
            Some(Ok(value)) => {
                if let Some(key) = key_in(&value, keys) {
                    return Some(key);
                }
                // Objects inside it were searched with it.
                from = at + values.byte_offset().max(1);
            }
            _ => from = at + 1,
        }
    }
    None
}

/// The first key of `keys` used in an object anywhere in `value`.
fn key_in(value: &Value, keys: &[&'static str]) -> Option<&'static str> {
    match value {
        Value::Object(object) => keys
            .iter()
            .copied()
            .find(|key| object.contains_key(*key))
            .or_else(|| object.values().find_map(|value| key_in(value, keys))),
        Value::Array(items) => items.iter().find_map(|value| key_in(value, keys)),
        _ => None,
    }
}

fn holds_object(value: &Value) -> bool {
    match value {
        Value::Object(_) => true,
        Value::Array(items) => items.iter().any(holds_object),
        _ => false,
    }
}

/// One level of backslash escaping undone: `\"` → `"`, `\'` → `'`, `\\` → `\`.
fn unescape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.next() {
                Some(next @ ('"' | '\'' | '\\')) => out.push(next),
                Some(next) => {
                    out.push(c);
                    out.push(next);
                }
                None => out.push(c),
            }
        } else {
            out.push(c);
        }
    }
    out
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
        assert_eq!(json_start("{ \n \"a"), Some("{ \n \"a"));
        assert_eq!(json_start("{Name:acme}"), None);
        assert_eq!(json_start("{'decision': 'block'}"), None);
        assert_eq!(json_start("{"), None);
        assert_eq!(plain("\u{FEFF} ok \n"), "ok");
    }

    #[test]
    fn a_decision_after_any_line_break_or_invisible_prefix_counts() {
        for prefix in [
            "a\n",
            "a\r",
            "a\u{0B}",
            "a\u{0C}",
            "a\u{85}",
            "a\u{2028}",
            "a\u{2029}",
            "a\n \t",
            "a\n\u{0}",
            "a\n\u{1B}[0m",
            "a\n\u{1B}]0;title\u{07}",
            "a\n\u{1B}]0;title\u{1B}\\",
            "a\n\u{200B}",
            "a\n\u{202E}",
            "a\n\u{FEFF}",
            "a\n\u{E0020}",
            "",
        ] {
            // The key spelt with a `\u` escape: only parsing finds it.
            let text = format!("{prefix}{{\"\\u0064ecision\": \"block\"}}");
            assert_eq!(
                hidden_decision(&text, KEYS),
                Some(HiddenDecision::ObjectInText("decision")),
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
            "[ ] lint skipped",
            "[]",
            "[ \"block\" ]",
            "[\"a.txt\", \"b.txt\"] unchanged",
            "warning: config lacks \"decision\"; using default",
            "Press \"continue\" in the UI",
            "int main()\n{\n    return 0;\n}",
            "{",
            "  {",
            "{Name:acme Limit:500}",
            "{src,dst}/y done",
            "input ok: {\"payee\": \"acme\"}",
            "{\"payee\": {\"x\": [1]}}",
            "args: {'payee': 'acme'}",
            "\"{\\\"payee\\\": 1}\"",
            "{\"payee\": \"say \\\"decision\\\" aloud\"}",
        ] {
            assert_eq!(hidden_decision(text, KEYS), None, "{text:?}");
        }
    }

    #[test]
    fn json_inside_a_line_escapes_and_arrays_count() {
        use HiddenDecision::*;
        for (text, found) in [
            ("checking... {\"decision\": 1}", ProtocolKey("decision")),
            (
                "ok { \n \"x\": {\"\\u0063ontinue\": false}}",
                ObjectInText("continue"),
            ),
            (
                "ok {\u{1B}[0m\"\\u0064ecision\": 1}",
                ObjectInText("decision"),
            ),
            (
                "ok {\u{200B}\"\\u0064ecision\": 1}",
                ObjectInText("decision"),
            ),
            // Inside an unterminated OSC string, which a terminal hides.
            ("ok \u{1B}]0;{\"decision\": 1}", ProtocolKey("decision")),
            ("note: \"decision\": \"block\"", ProtocolKey("decision")),
            ("note: \"decision\"\n  : \"block\"", ProtocolKey("decision")),
            ("note: \"deci\u{200B}sion\": 1", ProtocolKey("decision")),
            ("result: {'decision': 'block'}", ProtocolKey("decision")),
            ("\u{1B}(B{\"\\u0064ecision\":1}", ObjectInText("decision")),
            (
                "\u{1B}Pq#0;2\u{1B}\\{\"\\u0064ecision\":1}",
                ObjectInText("decision"),
            ),
            ("\u{9B}0m{\"\\u0064ecision\":1}", ObjectInText("decision")),
            ("\u{FFF0}{\"\\u0064ecision\":1}", ObjectInText("decision")),
            ("[{}]", JsonArray),
            ("\u{1B}[0m[[{\"x\": 1}]]", JsonArray),
            // Double-encoded, once and twice, alone and after text.
            ("\"{\\\"decision\\\":\\\"block\\\"}\"", EncodedString),
            ("checking \"{\\\"decision\\\":1}\"", ProtocolKey("decision")),
            ("\"\\\"{\\\\\\\"decision\\\\\\\":1}\\\"\"", EncodedString),
            ("\"{\\\"\\\\u0064ecision\\\":1}\"", EncodedString),
        ] {
            assert_eq!(hidden_decision(text, KEYS), Some(found), "{text:?}");
        }
    }

    #[test]
    fn many_braces_are_read_quickly() {
        // Each a text near the output cap on which a naive scan would try
        // a long parse from every `{`, or undo escaping many times.
        for unit in [
            "{\"a\":[",
            "{\"a\":{",
            "{\"a\":1,",
            "{\\\"a\\\":[",
            "{\"a\":\"{",
            "[{\"a\":",
        ] {
            let text = unit.repeat(10_000 / unit.len());
            let started = std::time::Instant::now();
            assert_eq!(hidden_decision(&text, KEYS), None, "{unit}");
            let took = started.elapsed();
            assert!(took < std::time::Duration::from_secs(2), "{unit}: {took:?}");
        }
    }
}
