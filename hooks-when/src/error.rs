//! Errors of the `when` language, with byte spans that render as line and column.

use std::fmt;
use std::ops::Range;

/// One mistake in a `when` expression.
///
/// `span` is a byte range into the source text; [`WhenErrors`] renders it as a
/// line and column. The macros map the same span back onto the attribute's
/// tokens, so a compile error and a config error carry the same wording.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WhenError {
    /// Byte range of the offending text in the source.
    pub span: Range<usize>,
    /// What is wrong, in one sentence.
    pub message: String,
    /// What to do about it, when there is something useful to say.
    pub help: Option<String>,
}

impl WhenError {
    pub(crate) fn new(span: Range<usize>, message: impl Into<String>) -> Self {
        WhenError {
            span,
            message: message.into(),
            help: None,
        }
    }

    pub(crate) fn with_help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }
}

/// Every mistake found in one `when` expression, with the source they point into.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct WhenErrors {
    text: String,
    errors: Vec<WhenError>,
}

impl WhenErrors {
    pub(crate) fn new(source: &str, errors: Vec<WhenError>) -> Self {
        WhenErrors {
            text: source.to_owned(),
            errors,
        }
    }

    /// The individual mistakes, in source order.
    pub fn errors(&self) -> &[WhenError] {
        &self.errors
    }

    /// The expression text the errors point into.
    pub fn source_text(&self) -> &str {
        &self.text
    }

    /// 1-based line and column (in characters) of a byte offset in the source.
    pub fn line_column(&self, offset: usize) -> (usize, usize) {
        line_column(&self.text, offset)
    }
}

/// 1-based line and column (in characters) of byte `offset` within `source`.
pub fn line_column(source: &str, offset: usize) -> (usize, usize) {
    let offset = offset.min(source.len());
    let mut line = 1;
    let mut column = 1;
    for (index, ch) in source.char_indices() {
        if index >= offset {
            break;
        }
        if ch == '\n' {
            line += 1;
            column = 1;
        } else {
            column += 1;
        }
    }
    (line, column)
}

impl fmt::Display for WhenErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (index, error) in self.errors.iter().enumerate() {
            if index > 0 {
                writeln!(f)?;
            }
            let (line, column) = self.line_column(error.span.start);
            write!(f, "line {line}, column {column}: {}", error.message)?;
            if let Some(help) = &error.help {
                write!(f, "\n  help: {help}")?;
            }
        }
        Ok(())
    }
}
