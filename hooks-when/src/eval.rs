//! Evaluation of a parsed expression against a hook's context.

use serde_json::{Map, Value};

use crate::ast::{Check, Expr, Field, Literal, Number, PathSegment, Test, TextField};
use crate::rt::{self, Lit, Seg};

/// What a `when` expression is evaluated against: the hook context.
///
/// `hooks-runtime` implements it for `HookContext`; tests can implement it for
/// anything. Missing values are `None`, and a missing value makes its test false.
pub trait Subject {
    /// A string field; `None` when absent (the runtime treats empty strings as absent).
    fn text(&self, field: TextField) -> Option<&str>;
    /// The engine's metadata for this call.
    fn metadata(&self) -> &Map<String, Value>;
    /// The tool arguments (usually an object).
    fn args(&self) -> &Value;
    /// The tool's result, in post hooks after a successful call.
    fn result(&self) -> Option<&Value>;
}

impl Expr {
    /// Evaluates the expression, left to right with short-circuit `&&` and `||`.
    pub fn eval<S: Subject + ?Sized>(&self, subject: &S) -> bool {
        match self {
            Expr::Or(items) => items.iter().any(|item| item.eval(subject)),
            Expr::And(items) => items.iter().all(|item| item.eval(subject)),
            Expr::Not(inner) => !inner.eval(subject),
            Expr::Test(test) => test.eval(subject),
        }
    }
}

impl Literal {
    fn as_lit(&self) -> Lit<'_> {
        match self {
            Literal::Str(text) => Lit::Str(text),
            Literal::Int(value) => Lit::Int(*value),
            Literal::Float(value) => Lit::Float(*value),
            Literal::Bool(value) => Lit::Bool(*value),
        }
    }

    fn as_str(&self) -> Option<&str> {
        match self {
            Literal::Str(text) => Some(text),
            _ => None,
        }
    }
}

impl Number {
    fn as_lit(self) -> Lit<'static> {
        match self {
            Number::Int(value) => Lit::Int(value),
            Number::Float(value) => Lit::Float(value),
        }
    }
}

impl PathSegment {
    fn as_seg(&self) -> Seg<'_> {
        match self {
            PathSegment::Key(key) => Seg::Key(key),
            PathSegment::Index(index) => Seg::Index(*index),
        }
    }
}

impl Test {
    fn eval<S: Subject + ?Sized>(&self, subject: &S) -> bool {
        match &self.field {
            Field::Text(field) => {
                let value = rt::text(subject, *field);
                match &self.check {
                    Check::Eq(literal) => literal.as_str().is_some_and(|s| rt::text_eq(value, s)),
                    Check::Ne(literal) => literal.as_str().is_some_and(|s| rt::text_ne(value, s)),
                    Check::StartsWith(prefix) => rt::text_starts_with(value, prefix),
                    Check::EndsWith(suffix) => rt::text_ends_with(value, suffix),
                    Check::Contains(literal) => literal
                        .as_str()
                        .is_some_and(|s| rt::text_contains(value, s)),
                    Check::Matches(glob) => rt::text_glob(value, glob.source()),
                    Check::MatchesRegex(pattern) => rt::text_regex(value, pattern.regex()),
                    Check::In(items) => {
                        rt::text_in(value, items.iter().filter_map(Literal::as_str))
                    }
                    Check::Exists => rt::text_exists(value),
                    // The parser rejects these on string fields.
                    Check::Compare(..) | Check::IsTrue => false,
                }
            }
            Field::Json(field) => {
                let value = rt::json_at(
                    subject,
                    field.root,
                    field.path.iter().map(PathSegment::as_seg),
                );
                match &self.check {
                    Check::Eq(literal) => rt::json_eq(value, literal.as_lit()),
                    Check::Ne(literal) => rt::json_ne(value, literal.as_lit()),
                    Check::StartsWith(prefix) => rt::text_starts_with(rt::json_str(value), prefix),
                    Check::EndsWith(suffix) => rt::text_ends_with(rt::json_str(value), suffix),
                    Check::Contains(literal) => rt::json_contains(value, literal.as_lit()),
                    Check::Matches(glob) => rt::text_glob(rt::json_str(value), glob.source()),
                    Check::MatchesRegex(pattern) => {
                        rt::text_regex(rt::json_str(value), pattern.regex())
                    }
                    Check::Compare(ordering, number) => {
                        rt::json_cmp(value, *ordering, number.as_lit())
                    }
                    Check::In(items) => rt::json_in(value, items.iter().map(Literal::as_lit)),
                    Check::Exists => rt::json_exists(value),
                    Check::IsTrue => rt::json_true(value),
                }
            }
        }
    }
}
