//! The leaf tests shared by the interpreter and by generated predicates.
//!
//! Compiled (`#[pre_tool_use(when = …)]`) and interpreted (config) predicates
//! call exactly these functions, so the two can only differ in how they walk
//! the tree, never in what a test means. Nothing here allocates or panics.
//!
//! This module is public for the code the macros generate; it is not a stable API.

use std::cmp::Ordering as CmpOrdering;

pub use regex::Regex;
pub use serde_json::{Map, Value};
pub use std::sync::LazyLock;

pub use crate::ast::{JsonRoot, Ordering, TextField};
pub use crate::eval::Subject;
pub use crate::glob::glob_match;

/// Objects up to this many keys are searched by a linear scan.
const SCAN_LIMIT: usize = 8;

/// One step of a JSON path, borrowed.
#[derive(Debug, Clone, Copy)]
pub enum Seg<'a> {
    /// An object key.
    Key(&'a str),
    /// An array index.
    Index(usize),
}

/// A literal, borrowed.
#[derive(Debug, Clone, Copy)]
pub enum Lit<'a> {
    /// A string.
    Str(&'a str),
    /// An integer.
    Int(i64),
    /// A float.
    Float(f64),
    /// A boolean.
    Bool(bool),
}

/// The value of a string field; `None` when the context does not have it.
#[inline(always)]
pub fn text<S: Subject + ?Sized>(subject: &S, field: TextField) -> Option<&str> {
    subject.text(field)
}

/// The JSON value at `path` below `root`; `None` when any step is missing.
#[inline(always)]
pub fn json<'v, S: Subject + ?Sized>(
    subject: &'v S,
    root: JsonRoot,
    path: &[Seg<'_>],
) -> Option<&'v Value> {
    json_at(subject, root, path.iter().copied())
}

/// [`json`] over any sequence of steps (the interpreter walks its own path type).
#[inline(always)]
pub fn json_at<'v, 'p, S, I>(subject: &'v S, root: JsonRoot, path: I) -> Option<&'v Value>
where
    S: Subject + ?Sized,
    I: IntoIterator<Item = Seg<'p>>,
{
    let mut path = path.into_iter();
    let mut current = match root {
        JsonRoot::Args => subject.args(),
        JsonRoot::Result => subject.result()?,
        JsonRoot::Metadata => {
            let first = path.next()?;
            map_step(subject.metadata(), first)?
        }
    };
    for segment in path {
        current = match current {
            Value::Object(map) => map_step(map, segment)?,
            Value::Array(items) => match segment {
                Seg::Index(index) => items.get(index)?,
                Seg::Key(_) => return None,
            },
            _ => return None,
        };
    }
    Some(current)
}

#[inline(always)]
fn map_step<'v>(map: &'v Map<String, Value>, segment: Seg<'_>) -> Option<&'v Value> {
    match segment {
        // Small objects (the usual args and metadata) are scanned: comparing
        // lengths first skips most keys, and once inlined next to a constant
        // key the byte comparison needs no library call. Larger ones use the map.
        Seg::Key(key) if map.len() <= SCAN_LIMIT => map
            .iter()
            .find(|(candidate, _)| same(candidate, key))
            .map(|(_, value)| value),
        Seg::Key(key) => map.get(key),
        Seg::Index(index) => {
            let mut buffer = [0u8; 20];
            map.get(decimal(index, &mut buffer))
        }
    }
}

/// Writes `value` in decimal into `buffer` without allocating.
#[inline]
fn decimal(mut value: usize, buffer: &mut [u8; 20]) -> &str {
    let mut start = buffer.len();
    loop {
        start -= 1;
        buffer[start] = b'0' + (value % 10) as u8;
        value /= 10;
        if value == 0 {
            break;
        }
    }
    std::str::from_utf8(&buffer[start..]).unwrap_or("")
}

/// String equality. Lengths first; short texts byte by byte, which unrolls
/// into a few compares when one side is a literal of a compiled predicate
/// (the general comparison calls `memcmp`, costly next to a 4-byte test).
#[inline(always)]
fn same(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    if b.len() <= 16 {
        a.iter().zip(b).all(|(x, y)| x == y)
    } else {
        a == b
    }
}

/// `field == "x"`
#[inline(always)]
pub fn text_eq(value: Option<&str>, expected: &str) -> bool {
    value.is_some_and(|v| same(v, expected))
}

/// `field != "x"` (false when the field is missing)
#[inline(always)]
pub fn text_ne(value: Option<&str>, expected: &str) -> bool {
    value.is_some_and(|v| !same(v, expected))
}

/// `field starts_with "x"`
#[inline(always)]
pub fn text_starts_with(value: Option<&str>, prefix: &str) -> bool {
    value.is_some_and(|v| v.starts_with(prefix))
}

/// `field ends_with "x"`
#[inline(always)]
pub fn text_ends_with(value: Option<&str>, suffix: &str) -> bool {
    value.is_some_and(|v| v.ends_with(suffix))
}

/// `field contains "x"`
#[inline]
pub fn text_contains(value: Option<&str>, needle: &str) -> bool {
    value.is_some_and(|v| contains(v.as_bytes(), needle.as_bytes()))
}

/// Substring search. Tool names and ids are short, where a plain scan beats
/// the setup of the general string searcher; long texts use the latter.
#[inline]
fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    match needle {
        [] => true,
        _ if needle.len() > haystack.len() => false,
        [first, rest @ ..] if haystack.len() <= 64 => haystack
            .windows(needle.len())
            .any(|window| window[0] == *first && &window[1..] == rest),
        _ => {
            // Both are valid UTF-8 (they came from `&str`).
            let (Ok(haystack), Ok(needle)) =
                (std::str::from_utf8(haystack), std::str::from_utf8(needle))
            else {
                return false;
            };
            haystack.contains(needle)
        }
    }
}

/// `field matches "glob"`
#[inline]
pub fn text_glob(value: Option<&str>, pattern: &str) -> bool {
    value.is_some_and(|v| glob_match(pattern, v))
}

/// `field matches_regex "re"`
#[inline]
pub fn text_regex(value: Option<&str>, regex: &Regex) -> bool {
    value.is_some_and(|v| regex.is_match(v))
}

/// `field in ["a", "b"]`
#[inline(always)]
pub fn text_in<'a, I: IntoIterator<Item = &'a str>>(value: Option<&str>, items: I) -> bool {
    value.is_some_and(|v| items.into_iter().any(|item| same(v, item)))
}

/// `field exists`
#[inline(always)]
pub fn text_exists(value: Option<&str>) -> bool {
    value.is_some()
}

/// The string inside a JSON value, if it is one.
#[inline(always)]
pub fn json_str(value: Option<&Value>) -> Option<&str> {
    value.and_then(Value::as_str)
}

/// `json == literal`: same JSON type and equal (numbers compare by value).
///
/// Against a number literal, a string that is exactly a JSON number (see
/// [`numeric`]) is that number: the model writes `"60000"` as readily as
/// `60000`, and the tool that coerces it pays the same amount.
#[inline(always)]
pub fn json_eq(value: Option<&Value>, literal: Lit<'_>) -> bool {
    match (value, literal) {
        (Some(Value::String(v)), Lit::Str(expected)) => same(v, expected),
        (Some(Value::Bool(v)), Lit::Bool(expected)) => *v == expected,
        (Some(value), Lit::Int(_) | Lit::Float(_)) => {
            numeric(value).and_then(|v| v.compare(literal)) == Some(CmpOrdering::Equal)
        }
        _ => false,
    }
}

/// `json != literal`: same JSON type and different; false when missing or of
/// another type (a string that is exactly a JSON number counts as a number).
#[inline]
pub fn json_ne(value: Option<&Value>, literal: Lit<'_>) -> bool {
    let same_type = match (value, literal) {
        (Some(Value::String(_)), Lit::Str(_)) | (Some(Value::Bool(_)), Lit::Bool(_)) => true,
        (Some(value), Lit::Int(_) | Lit::Float(_)) => numeric(value).is_some(),
        _ => false,
    };
    same_type && !json_eq(value, literal)
}

/// `json < <= > >= number`: false unless the value is a number or a string
/// that is exactly a JSON number.
#[inline(always)]
pub fn json_cmp(value: Option<&Value>, ordering: Ordering, literal: Lit<'_>) -> bool {
    let Some(found) = value
        .and_then(numeric)
        .and_then(|number| number.compare(literal))
    else {
        return false;
    };
    match ordering {
        Ordering::Lt => found == CmpOrdering::Less,
        Ordering::Le => found != CmpOrdering::Greater,
        Ordering::Gt => found == CmpOrdering::Greater,
        Ordering::Ge => found != CmpOrdering::Less,
    }
}

/// A number read from a JSON value, for comparisons with number literals.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Numeric {
    /// An integer that fits `i64`.
    Int(i64),
    /// An integer above `i64::MAX`.
    BigInt(u64),
    /// Anything else: a fraction, an exponent, or an integer beyond `u64`.
    Float(f64),
}

impl Numeric {
    /// Compares with a numeric literal: exactly for integers, as f64 otherwise.
    #[inline(always)]
    fn compare(self, literal: Lit<'_>) -> Option<CmpOrdering> {
        match (self, literal) {
            (Numeric::Int(v), Lit::Int(expected)) => Some(v.cmp(&expected)),
            // Above i64::MAX, so above every i64 literal.
            (Numeric::BigInt(_), Lit::Int(_)) => Some(CmpOrdering::Greater),
            (Numeric::Float(v), Lit::Int(expected)) => v.partial_cmp(&(expected as f64)),
            (Numeric::Int(v), Lit::Float(expected)) => (v as f64).partial_cmp(&expected),
            (Numeric::BigInt(v), Lit::Float(expected)) => (v as f64).partial_cmp(&expected),
            (Numeric::Float(v), Lit::Float(expected)) => v.partial_cmp(&expected),
            (_, Lit::Str(_) | Lit::Bool(_)) => None,
        }
    }
}

/// The number a JSON value stands for: a JSON number, or a string that is
/// exactly one after trimming ASCII whitespace (`"60000"`, `" 5e4 "`, `"-1.5"`;
/// not `"60,000"`, `"+5"`, `"0x10"`, `"NaN"`, `"1_000"`). Anything else is `None`.
#[inline(always)]
pub fn numeric(value: &Value) -> Option<Numeric> {
    match value {
        Value::Number(number) => Some(if let Some(v) = number.as_i64() {
            Numeric::Int(v)
        } else if let Some(v) = number.as_u64() {
            Numeric::BigInt(v)
        } else {
            Numeric::Float(number.as_f64()?)
        }),
        Value::String(text) => numeric_text(text),
        _ => None,
    }
}

/// Reads a string that is exactly a JSON number (RFC 8259 §6) once ASCII
/// whitespace is trimmed from both ends; `None` for anything else.
#[inline]
fn numeric_text(text: &str) -> Option<Numeric> {
    let text = text.trim_ascii();
    let bytes = text.as_bytes();
    let mut at = usize::from(bytes.first() == Some(&b'-'));
    let digits = |at: &mut usize| {
        let start = *at;
        while bytes.get(*at).is_some_and(u8::is_ascii_digit) {
            *at += 1;
        }
        *at - start
    };
    let integer_digits = digits(&mut at);
    // No leading zeros: `0` alone, or a non-zero first digit.
    if integer_digits == 0 || (integer_digits > 1 && bytes[at - integer_digits] == b'0') {
        return None;
    }
    let mut integral = true;
    if bytes.get(at) == Some(&b'.') {
        at += 1;
        if digits(&mut at) == 0 {
            return None;
        }
        integral = false;
    }
    if matches!(bytes.get(at), Some(b'e' | b'E')) {
        at += 1;
        if matches!(bytes.get(at), Some(b'+' | b'-')) {
            at += 1;
        }
        if digits(&mut at) == 0 {
            return None;
        }
        integral = false;
    }
    if at != bytes.len() {
        return None;
    }
    if integral {
        if let Ok(v) = text.parse::<i64>() {
            return Some(Numeric::Int(v));
        }
        if let Ok(v) = text.parse::<u64>() {
            return Some(Numeric::BigInt(v));
        }
    }
    // The grammar above is a subset of what `f64::from_str` accepts; values
    // beyond f64's range read as infinities, which still order correctly.
    text.parse::<f64>().ok().map(Numeric::Float)
}

/// `json contains literal`: a substring of a string, or an element of an array.
#[inline]
pub fn json_contains(value: Option<&Value>, literal: Lit<'_>) -> bool {
    match (value, literal) {
        (Some(Value::String(v)), Lit::Str(needle)) => v.contains(needle),
        (Some(Value::Array(items)), _) => items.iter().any(|item| json_eq(Some(item), literal)),
        _ => false,
    }
}

/// `json in [literal, …]`
#[inline]
pub fn json_in<'a, I: IntoIterator<Item = Lit<'a>>>(value: Option<&Value>, items: I) -> bool {
    value.is_some() && items.into_iter().any(|item| json_eq(value, item))
}

/// `json exists`: present and not `null`.
#[inline(always)]
pub fn json_exists(value: Option<&Value>) -> bool {
    value.is_some_and(|v| !v.is_null())
}

/// A bare JSON field: true only for JSON `true`.
#[inline(always)]
pub fn json_true(value: Option<&Value>) -> bool {
    matches!(value, Some(Value::Bool(true)))
}

/// Compiles a pattern the macro already validated with this same engine.
pub fn checked_regex(pattern: &str) -> Regex {
    // The attribute macro rejected the pattern at compile time if it did not
    // compile; reaching this expect would mean two regex versions disagree.
    Regex::new(pattern).expect("`matches_regex` pattern was validated at compile time")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn contains_agrees_with_str_contains_on_short_and_long_text() {
        let long = "x".repeat(100) + "needle" + &"y".repeat(50);
        let cases = [
            ("sql_delete_rows", "delete"),
            ("sql_delete_rows", ""),
            ("ab", "abc"),
            ("查询价格表", "价格"),
            ("查询价格表", "格价"),
            ("aaab", "aab"),
            (long.as_str(), "needle"),
            (long.as_str(), "needles"),
        ];
        for (haystack, needle) in cases {
            assert_eq!(
                text_contains(Some(haystack), needle),
                haystack.contains(needle),
                "{haystack:?} contains {needle:?}"
            );
        }
        assert!(!text_contains(None, ""));
    }

    #[test]
    fn string_equality_agrees_with_str_eq() {
        let long = "k".repeat(40);
        let longer = "k".repeat(39) + "j";
        let cases = [
            ("chat", "chat"),
            ("chat", "chaT"),
            ("chat", "chats"),
            ("", ""),
            ("价格", "价格"),
            ("价格", "价值"),
            (long.as_str(), long.as_str()),
            (long.as_str(), longer.as_str()),
        ];
        for (a, b) in cases {
            assert_eq!(same(a, b), a == b, "{a:?} == {b:?}");
            assert_eq!(text_eq(Some(a), b), a == b);
            assert_eq!(text_ne(Some(a), b), a != b);
        }
        assert!(!text_eq(None, "") && !text_ne(None, "x"));
        assert!(text_in(Some("api"), ["chat", "api"]));
        assert!(!text_in(Some("ap"), ["chat", "api"]));
    }

    #[test]
    fn numbers_compare_across_int_and_float() {
        let v = serde_json::json!(50000.5);
        assert!(json_cmp(Some(&v), Ordering::Gt, Lit::Int(50000)));
        assert!(!json_cmp(Some(&v), Ordering::Le, Lit::Int(50000)));
        let v = serde_json::json!(5);
        assert!(json_eq(Some(&v), Lit::Float(5.0)));
        let big = serde_json::json!(u64::MAX);
        assert!(json_cmp(Some(&big), Ordering::Gt, Lit::Int(i64::MAX)));
    }

    #[test]
    fn strings_that_are_exactly_json_numbers_compare_as_numbers() {
        let numbers = [
            ("60000", Numeric::Int(60000)),
            (" 60000\t\n", Numeric::Int(60000)),
            ("-0", Numeric::Int(0)),
            ("-1.5", Numeric::Float(-1.5)),
            ("5e4", Numeric::Float(50000.0)),
            ("6E+4", Numeric::Float(60000.0)),
            ("18446744073709551615", Numeric::BigInt(u64::MAX)),
            ("1e400", Numeric::Float(f64::INFINITY)),
        ];
        for (text, expected) in numbers {
            assert_eq!(numeric_text(text), Some(expected), "{text:?}");
        }
        let not_numbers = [
            "",
            " ",
            "-",
            "+5",
            "05",
            "00",
            "1.",
            ".5",
            "1e",
            "1e+",
            "0x10",
            "NaN",
            "inf",
            "Infinity",
            "60,000",
            "1_000",
            "60000abc",
            "６００００",
            "1 000",
            "\u{a0}5",
            "--5",
        ];
        for text in not_numbers {
            assert_eq!(numeric_text(text), None, "{text:?}");
        }
        let amount = serde_json::json!("60000");
        assert!(json_cmp(Some(&amount), Ordering::Gt, Lit::Int(50000)));
        assert!(json_eq(Some(&amount), Lit::Float(60000.0)));
        assert!(json_ne(Some(&amount), Lit::Int(5)));
        assert!(
            !json_eq(Some(&amount), Lit::Str("6e4")),
            "string literals compare as text"
        );
        let words = serde_json::json!("lots");
        assert!(!json_cmp(Some(&words), Ordering::Gt, Lit::Int(0)));
        assert!(
            !json_ne(Some(&words), Lit::Int(0)),
            "not a number: another type"
        );
    }

    #[test]
    fn decimal_keys() {
        let mut buffer = [0u8; 20];
        assert_eq!(decimal(0, &mut buffer), "0");
        assert_eq!(decimal(1234, &mut buffer), "1234");
        assert_eq!(decimal(usize::MAX, &mut buffer), usize::MAX.to_string());
    }
}
