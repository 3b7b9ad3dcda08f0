//! What each operator may be compared with, and the test it becomes.

use std::ops::Range;

use super::Checker;
use crate::ast::{Check, Field, Literal, Number, Ordering, TextField};
use crate::error::WhenError;
use crate::syntax::Operator;

impl Checker<'_> {
    /// Checks an operator and its literal against the field's type and builds the check.
    pub(super) fn operator(
        &mut self,
        field: &Field,
        op: Operator,
        op_span: Range<usize>,
        literal: Literal,
        literal_span: Range<usize>,
    ) -> Option<Check> {
        let op_name = op.name();
        // Equality on a JSON field and `contains` on one take any literal;
        // orderings check their number themselves.
        let needs_string = match op {
            Operator::Order(_) => false,
            Operator::Eq | Operator::Ne | Operator::Contains => matches!(field, Field::Text(_)),
            Operator::StartsWith
            | Operator::EndsWith
            | Operator::Matches
            | Operator::MatchesRegex => true,
        };
        if needs_string && !matches!(literal, Literal::Str(_)) {
            let message = match field {
                Field::Text(text) => format!(
                    "`{}` is a string, so `{op_name}` needs a string, not {}",
                    text.name(),
                    literal_kind(&literal)
                ),
                Field::Json(_) => {
                    format!("`{op_name}` needs a string, not {}", literal_kind(&literal))
                }
            };
            self.error(WhenError::new(literal_span, message).with_help(format!(
                "quote the value, e.g. `{field} {op_name} \"{}\"`",
                literal_plain(&literal)
            )));
            return None;
        }
        if let (Field::Text(TextField::Surface), Operator::Eq | Operator::Ne, Literal::Str(value)) =
            (field, op, &literal)
            && !self.surface(value, literal_span.clone())
        {
            return None;
        }
        let text = match &literal {
            Literal::Str(text) => text.clone(),
            _ => String::new(),
        };
        Some(match op {
            Operator::Eq => Check::Eq(literal),
            Operator::Ne => Check::Ne(literal),
            Operator::Order(ordering) => {
                return self.compare(field, ordering, op_span, literal, literal_span);
            }
            Operator::StartsWith => Check::StartsWith(text),
            Operator::EndsWith => Check::EndsWith(text),
            Operator::Contains => Check::Contains(literal),
            Operator::Matches => Check::Matches(self.glob(&text, literal_span)?),
            Operator::MatchesRegex => Check::MatchesRegex(self.regex(text, literal_span)?),
        })
    }

    /// `< <= > >=` compare a JSON field with a number.
    fn compare(
        &mut self,
        field: &Field,
        ordering: Ordering,
        op_span: Range<usize>,
        literal: Literal,
        literal_span: Range<usize>,
    ) -> Option<Check> {
        let op_name = ordering.symbol();
        if let Field::Text(text) = field {
            self.error(
                WhenError::new(op_span, format!("`{op_name}` compares numbers, but `{}` is a string", text.name()))
                    .with_help("strings take ==, !=, starts_with, ends_with, contains, matches, matches_regex, in or exists"),
            );
            return None;
        }
        let number = match literal {
            Literal::Int(value) => Number::Int(value),
            Literal::Float(value) => Number::Float(value),
            other => {
                self.error(
                    WhenError::new(
                        literal_span,
                        format!(
                            "`{op_name}` compares numbers, but this is {}",
                            literal_kind(&other)
                        ),
                    )
                    .with_help(format!("write a number, e.g. `{field} {op_name} 100`")),
                );
                return None;
            }
        };
        Some(Check::Compare(ordering, number))
    }
}

/// How a literal's type reads in a message.
fn literal_kind(literal: &Literal) -> &'static str {
    match literal {
        Literal::Str(_) => "a string",
        Literal::Int(_) | Literal::Float(_) => "a number",
        Literal::Bool(_) => "a boolean",
    }
}

/// A literal's value as it would read inside quotes, for a suggested fix.
fn literal_plain(literal: &Literal) -> String {
    match literal {
        Literal::Str(text) => text.clone(),
        other => other.to_string(),
    }
}
