//! A tool call's arguments as the model wrote them: JSON text, read whole
//! and strictly before any hook sees it.
//!
//! Models write argument text that does not parse (a cut-off object, a
//! trailing comment, two objects in a row). Such a call must not vanish
//! before the hooks and the audit log: it is refused by the runtime, with
//! the parser's reason in the observation so the model can try again, and
//! observed like any other blocked call. What the hooks and the tool get
//! when the text does parse is exactly one value, with no reading a later
//! parser could disagree with: an object whose key repeats is refused
//! rather than resolved.

use std::collections::HashSet;
use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

use crate::printable::shown;

/// The longest argument text, in bytes, that
/// [`HookRegistry::run_tool_call_raw`](crate::HookRegistry::run_tool_call_raw)
/// reads (4 MiB). Longer text is refused unread: nothing a model writes as
/// arguments in one turn comes near it, and reading it whole would cost every
/// hook and the audit log that much memory.
pub const MAX_RAW_ARGS_BYTES: usize = 4 * 1024 * 1024;

/// How much of refused argument text the report, the observers and the
/// audit log keep, in characters (hidden characters escaped).
pub const RAW_ARGS_PREVIEW_CHARS: usize = 4_096;

/// Characters of a repeated key quoted in a refusal.
const KEY_CHARS: usize = 60;

/// Argument text reads as this value, or why not (the observation's reason).
pub(super) fn read(raw: &str) -> Result<Value, String> {
    if raw.len() > MAX_RAW_ARGS_BYTES {
        return Err(format!(
            "the arguments are {} bytes long, over the limit of {MAX_RAW_ARGS_BYTES} bytes; \
             they were not read. Send shorter arguments",
            raw.len()
        ));
    }
    // A tool without parameters is often called with no text at all.
    if raw.trim_ascii().is_empty() {
        return Ok(Value::Object(serde_json::Map::new()));
    }
    let value: Value = serde_json::from_str(raw).map_err(not_json)?;
    // A second, cheap pass over the text: the first one keeps the last of
    // two equal keys, and another reader (the tool's own, a proxy's) may
    // keep the first.
    let mut reader = serde_json::Deserializer::from_str(raw);
    NoRepeatedKeys
        .deserialize(&mut reader)
        .and_then(|()| reader.end())
        .map_err(not_json)?;
    match value {
        Value::Object(_) => Ok(value),
        other => Err(format!(
            "the arguments are not a JSON object (they are {}); a tool takes an object \
             of named arguments, such as {{\"path\": \"notes.txt\"}}",
            kind(&other)
        )),
    }
}

/// The text kept of refused arguments: hidden characters escaped, cut to
/// [`RAW_ARGS_PREVIEW_CHARS`].
pub(super) fn preview(raw: &str) -> Value {
    // Cut by bytes first (every character is at least one), so a 4 MiB text
    // is not scanned whole to keep its first few thousand characters.
    let mut end = raw.len().min(RAW_ARGS_PREVIEW_CHARS * 4 + 4);
    while !raw.is_char_boundary(end) {
        end -= 1;
    }
    let head = &raw[..end];
    let mut kept = shown(head, RAW_ARGS_PREVIEW_CHARS).into_owned();
    if end < raw.len() && !kept.ends_with('…') {
        kept.push('…');
    }
    Value::String(kept)
}

fn not_json(error: serde_json::Error) -> String {
    format!("the arguments are not valid JSON: {error}")
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Walks a JSON document and fails on the first object with a key twice.
struct NoRepeatedKeys;

impl<'de> DeserializeSeed<'de> for NoRepeatedKeys {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for NoRepeatedKeys {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_i128<E>(self, _: i128) -> Result<(), E> {
        Ok(())
    }
    fn visit_u128<E>(self, _: u128) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_none<E>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut items: A) -> Result<(), A::Error> {
        while items.next_element_seed(NoRepeatedKeys)?.is_some() {}
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut entries: A) -> Result<(), A::Error> {
        let mut seen = HashSet::new();
        while let Some(key) = entries.next_key::<String>()? {
            // Keys equal but for case count as one: parsers that match keys
            // without regard to case (Go's, .NET's) would take whichever
            // comes last, which need not be the one the hooks read
            // (`sql` and `ſql`, `filePath` and `filepath`).
            if !seen.insert(folded(&key)) {
                // The key is the model's text: escaped and cut.
                let key = shown(&key, KEY_CHARS);
                return Err(de::Error::custom(format_args!(
                    "the key `{key}` appears twice in one object (keys that differ only in \
                     case count as the same); send each argument once"
                )));
            }
            entries.next_value_seed(NoRepeatedKeys)?;
        }
        Ok(())
    }
}

/// A key with case folded: upper-cased then lower-cased, which also maps
/// the long s (`ſ`) and the Kelvin sign onto `s` and `k`.
fn folded(key: &str) -> String {
    key.to_uppercase().to_lowercase()
}
