//! The block reasons the guard writes, sized and escaped for a reader.
//!
//! A reason reaches the LLM, the trace and the audit log. The values and
//! keys in it are the model's own, so they are capped (a 1 MB string must not
//! come back as a 1 MB reason) and invisible or control characters are shown
//! escaped, so what a person reads in a log is what the arguments held.

use std::fmt::{self, Write as _};

use jsonschema::ValidationError;

use crate::text::is_hidden;

/// At most this many validator errors are listed in one block reason; the
/// reason says when there were more.
pub const MAX_REPORTED_ERRORS: usize = 10;

/// Each listed error (and each tool name) is cut to this many characters.
pub const MAX_ERROR_CHARS: usize = 200;

/// An error's JSON pointer is cut to this many characters.
const MAX_PATH_CHARS: usize = 100;

/// Why the arguments of `tool` were refused: each error as `pointer: message`.
pub(crate) fn mismatch_reason<'a>(
    tool: &str,
    errors: impl Iterator<Item = ValidationError<'a>>,
) -> String {
    let mut listed = Vec::with_capacity(MAX_REPORTED_ERRORS);
    let mut more = false;
    for error in errors {
        if listed.len() == MAX_REPORTED_ERRORS {
            more = true;
            break;
        }
        let path = match error.instance_path().as_str() {
            "" => "(root)".to_owned(),
            pointer => shown(pointer, MAX_PATH_CHARS),
        };
        listed.push(format!("{path}: {}", error_message(&error)));
    }
    let mut reason = format!(
        "Arguments of tool {} do not match its JSON Schema: {}",
        shown_name(tool),
        listed.join("; ")
    );
    if more {
        reason.push_str(&format!(
            "; more errors not shown (the first {MAX_REPORTED_ERRORS} are listed)"
        ));
    }
    reason
}

/// The validator's message for one error, capped. The message quotes the
/// offending value first, so when the whole message does not fit, the value
/// is replaced by a placeholder and the explanation (what was expected) is
/// kept.
fn error_message(error: &ValidationError<'_>) -> String {
    let (message, cut) = capped(error, MAX_ERROR_CHARS);
    if !cut {
        return message;
    }
    shown(error.masked_with(TOO_LONG), MAX_ERROR_CHARS)
}

/// What stands for a value too long to quote in a reason.
const TOO_LONG: &str = "the value (too long to show)";

/// Why a tool without a schema was refused under `require_schema`.
pub(crate) fn missing_schema_reason(tool: &str) -> String {
    format!(
        "Tool {} has no JSON Schema for its arguments, and `args_schema` requires one \
         (require_schema: true); declare a schema for it under `schemas`",
        shown_name(tool)
    )
}

/// Why arguments nested too deep were refused before validation.
pub(crate) fn too_deep_reason(tool: &str, max_depth: usize) -> String {
    format!(
        "Arguments of tool {} nest arrays and objects more than {max_depth} levels deep, \
         so they were not validated (max_depth: {max_depth}); flatten them",
        shown_name(tool)
    )
}

/// A tool name as it appears in a reason: quoted, escaped and capped.
fn shown_name(tool: &str) -> String {
    format!("\"{}\"", shown(tool, MAX_ERROR_CHARS))
}

/// `item` formatted with hidden characters ([`is_hidden`]: controls, bidi
/// and zero-width characters, …) escaped as `\u202E` (`\u{E0041}` beyond
/// the Basic Multilingual Plane), cut after `max_chars` characters. Formatting stops at the cut, so
/// a huge value is never formatted whole.
fn shown(item: impl fmt::Display, max_chars: usize) -> String {
    let (mut text, cut) = capped(item, max_chars);
    if cut {
        text.push_str(&format!("…[cut at {max_chars} characters]"));
    }
    text
}

/// `item` formatted with hidden characters escaped, at most `max_chars`
/// characters of it, and whether it was longer.
fn capped(item: impl fmt::Display, max_chars: usize) -> (String, bool) {
    let mut capped = Capped {
        text: String::new(),
        room: max_chars,
        cut: false,
    };
    // An error here only means the cut was reached.
    let _ = write!(capped, "{item}");
    (capped.text, capped.cut)
}

/// A `fmt::Write` sink that escapes hidden characters and refuses more text
/// once it holds its quota of characters.
struct Capped {
    text: String,
    room: usize,
    cut: bool,
}

impl fmt::Write for Capped {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        for c in s.chars() {
            if self.room == 0 {
                self.cut = true;
                return Err(fmt::Error);
            }
            self.room -= 1;
            if is_hidden(c) && u32::from(c) > 0xFFFF {
                write!(self.text, "\\u{{{:X}}}", u32::from(c))?;
            } else if is_hidden(c) {
                write!(self.text, "\\u{:04X}", u32::from(c))?;
            } else {
                self.text.push(c);
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::shown;

    #[test]
    fn long_text_is_cut_and_hidden_characters_are_escaped() {
        assert_eq!(shown("abc", 3), "abc");
        assert_eq!(shown("abcd", 3), "abc…[cut at 3 characters]");
        assert_eq!(shown("pay\u{202E}ee\n", 20), "pay\\u202Eee\\u000A");
        assert_eq!(shown("tag\u{E0041}", 20), "tag\\u{E0041}");
    }
}
