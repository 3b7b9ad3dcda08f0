//! Globs and regular expressions are compiled once, when the expression is checked.

use std::ops::Range;

use super::Checker;
use crate::ast::Pattern;
use crate::error::WhenError;
use crate::glob::Glob;

impl Checker<'_> {
    /// Compiles the glob of a `matches` test, pointing at the offending character when it can.
    pub(super) fn glob(&mut self, text: &str, literal_span: Range<usize>) -> Option<Glob> {
        match Glob::new(text) {
            Ok(glob) => Some(glob),
            Err(error) => {
                let span = self.offset_in_literal(literal_span, text, error.offset);
                self.error(
                    WhenError::new(span, format!("invalid glob pattern: {}", error.message))
                        .with_help("globs support *, ?, [abc], [a-z], [!abc] and \\ escapes; use matches_regex for more"),
                );
                None
            }
        }
    }

    /// Compiles the regular expression of a `matches_regex` test.
    pub(super) fn regex(&mut self, text: String, literal_span: Range<usize>) -> Option<Pattern> {
        match regex::Regex::new(&text) {
            Ok(regex) => Some(Pattern::new(text, regex)),
            Err(error) => {
                self.error(
                    WhenError::new(literal_span, format!("invalid regular expression: {}", regex_reason(&error)))
                        .with_help("the syntax is that of the `regex` crate: https://docs.rs/regex/latest/regex/#syntax"),
                );
                None
            }
        }
    }

    /// The span of byte `offset` of a string literal's value, when the literal
    /// has no escapes (otherwise the whole literal, since bytes no longer line up).
    fn offset_in_literal(
        &self,
        literal_span: Range<usize>,
        value: &str,
        offset: usize,
    ) -> Range<usize> {
        let raw = &self.source[literal_span.clone()];
        if raw.len() == value.len() + 2 && raw.starts_with('"') && &raw[1..raw.len() - 1] == value {
            let start = literal_span.start + 1 + offset;
            let width = value[offset..].chars().next().map_or(0, char::len_utf8);
            start..start + width.max(1)
        } else {
            literal_span
        }
    }
}

/// The one-line reason of a `regex` syntax error (its full text draws a caret diagram).
fn regex_reason(error: &regex::Error) -> String {
    let text = error.to_string();
    text.lines()
        .rev()
        .find_map(|line| line.trim().strip_prefix("error: "))
        .map_or_else(
            || text.lines().last().unwrap_or("").trim().to_owned(),
            str::to_owned,
        )
}
