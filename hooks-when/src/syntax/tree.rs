//! The syntax tree: what the text says, with spans, before any check.

use std::ops::Range;

use crate::ast::{Literal, Ordering, PathSegment};
use crate::error::WhenError;

/// What the syntax pass read: a tree (possibly with broken parts) and its errors.
pub(crate) struct Syntax {
    /// The expression; broken parts are [`Node::Broken`] and keep the tests read inside them.
    pub(crate) tree: Node,
    /// The grammar's errors, in the order they were found.
    pub(crate) errors: Vec<WhenError>,
}

/// A node of the syntax tree.
pub(crate) enum Node {
    /// `a || b || …` (two or more operands).
    Or(Vec<Node>),
    /// `a && b && …` (two or more operands).
    And(Vec<Node>),
    /// `!a`.
    Not(Box<Node>),
    /// One test of one field.
    Test(TestSyntax),
    /// A part that did not parse (its error is reported), with the parts read
    /// inside it before the mistake.
    Broken(Vec<Node>),
}

/// A test as written: a field path and what follows it.
pub(crate) struct TestSyntax {
    /// The field path, or `None` when the path itself is malformed (reported).
    pub(crate) field: Option<FieldPath>,
    /// The operator and its operand.
    pub(crate) operation: Operation,
    /// How many syntax errors had been found when the field was read: the
    /// check pass's errors for this test are reported between those and the
    /// next ones, so errors come out in reading order.
    pub(crate) errors_before: usize,
}

/// A field path as written: `args.items.0."content-type"`.
pub(crate) struct FieldPath {
    /// The first name (`args`).
    pub(crate) root: String,
    /// The span of the first name.
    pub(crate) root_span: Range<usize>,
    /// The keys and indexes after it.
    pub(crate) path: Vec<PathSegment>,
    /// The span of the whole path.
    pub(crate) span: Range<usize>,
}

/// What follows a field in a test.
pub(crate) enum Operation {
    /// Nothing: a bare field (`metadata.flag`).
    Bare,
    /// `exists`.
    Exists,
    /// `in [literal, …]`; the list may be empty (the check pass rejects it).
    In {
        /// The span of `in`.
        op_span: Range<usize>,
        /// The values.
        values: Vec<Literal>,
        /// From `[` to `]`.
        list_span: Range<usize>,
    },
    /// An operator with one literal: `== "x"`, `> 5`, `matches "a*"`.
    Binary {
        /// The operator.
        op: Operator,
        /// The span of the operator.
        op_span: Range<usize>,
        /// The literal.
        literal: Literal,
        /// The span of the literal.
        literal_span: Range<usize>,
    },
    /// A token that is not an operator follows the field. The check pass
    /// reports it, because the message names the field once it is known.
    MissingOperator {
        /// The span of the token found.
        span: Range<usize>,
        /// The token found, as an error message reads it.
        found: String,
    },
    /// Malformed after the field; the syntax pass has reported why.
    Broken,
}

/// An operator that takes one literal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Operator {
    Eq,
    Ne,
    Order(Ordering),
    StartsWith,
    EndsWith,
    Contains,
    Matches,
    MatchesRegex,
}

impl Operator {
    /// The keyword operators, by their word.
    pub(crate) fn from_word(word: &str) -> Option<Operator> {
        Some(match word {
            "starts_with" => Operator::StartsWith,
            "ends_with" => Operator::EndsWith,
            "contains" => Operator::Contains,
            "matches" => Operator::Matches,
            "matches_regex" => Operator::MatchesRegex,
            _ => return None,
        })
    }

    /// The operator as written.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Operator::Eq => "==",
            Operator::Ne => "!=",
            Operator::Order(ordering) => ordering.symbol(),
            Operator::StartsWith => "starts_with",
            Operator::EndsWith => "ends_with",
            Operator::Contains => "contains",
            Operator::Matches => "matches",
            Operator::MatchesRegex => "matches_regex",
        }
    }
}
