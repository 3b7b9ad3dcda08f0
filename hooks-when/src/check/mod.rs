//! The check pass: a syntax tree to a checked [`Expr`], or the reasons it is not one.
//!
//! Everything that depends on meaning rather than shape is decided here:
//! which fields exist and at which hook point ([`field`]), what each operator
//! may be compared with and how literals are turned into tests
//! ([`operator`]), which surface names exist ([`surface`]), and the
//! compilation of globs and regular expressions ([`pattern`]).

mod field;
mod operator;
mod pattern;
mod surface;

use std::ops::Range;

use crate::ast::{Check, Expr, Field, Literal, Test, TextField};
use crate::error::WhenError;
use crate::point::HookPoint;
use crate::syntax::{Node, Operation, TestSyntax};

/// What the check pass found: the expression when every part is sound, and
/// each error with the number of syntax errors that precede it in reading order.
pub(crate) struct Checked {
    /// The checked expression; `None` when any part is broken or fails a check.
    pub(crate) expr: Option<Expr>,
    /// The errors, each after that many syntax errors, in reading order.
    pub(crate) errors: Vec<(usize, WhenError)>,
}

/// Checks a syntax tree read from `source` for a hook at `point`.
pub(crate) fn check(tree: Node, source: &str, point: HookPoint) -> Checked {
    let mut checker = Checker {
        source,
        point,
        errors: Vec::new(),
        errors_before: 0,
    };
    let expr = checker.node(tree);
    Checked {
        expr,
        errors: checker.errors,
    }
}

struct Checker<'a> {
    source: &'a str,
    point: HookPoint,
    errors: Vec<(usize, WhenError)>,
    /// The syntax errors before the test being checked.
    errors_before: usize,
}

impl Checker<'_> {
    fn error(&mut self, error: WhenError) {
        self.errors.push((self.errors_before, error));
    }

    /// Checks every part, even after one failed, so each mistake is reported.
    fn node(&mut self, node: Node) -> Option<Expr> {
        match node {
            Node::Or(items) => self.all(items).map(Expr::Or),
            Node::And(items) => self.all(items).map(Expr::And),
            Node::Not(inner) => self.node(*inner).map(|expr| Expr::Not(Box::new(expr))),
            Node::Test(test) => self.test(test).map(Expr::Test),
            Node::Broken(parts) => {
                for part in parts {
                    self.node(part);
                }
                None
            }
        }
    }

    fn all(&mut self, items: Vec<Node>) -> Option<Vec<Expr>> {
        let mut checked = Vec::with_capacity(items.len());
        let mut ok = true;
        for item in items {
            match self.node(item) {
                Some(expr) => checked.push(expr),
                None => ok = false,
            }
        }
        ok.then_some(checked)
    }

    fn test(&mut self, test: TestSyntax) -> Option<Test> {
        self.errors_before = test.errors_before;
        let field = test.field.and_then(|path| self.field(path));
        let check = match test.operation {
            Operation::Broken => return None,
            Operation::MissingOperator { span, found } => {
                let name = field
                    .as_ref()
                    .map_or_else(|| "the field".to_owned(), |(f, _)| format!("`{f}`"));
                self.error(
                    WhenError::new(span, format!("expected an operator after {name}, found {found}"))
                        .with_help("write e.g. `tool_name == \"sql_exec\"`, `args.amount > 100` or `metadata.flag`"),
                );
                return None;
            }
            Operation::Bare => {
                let (field, field_span) = field?;
                self.bare(&field, field_span)?;
                return Some(Test {
                    field,
                    check: Check::IsTrue,
                });
            }
            Operation::Exists => Check::Exists,
            Operation::In {
                op_span,
                values,
                list_span,
            } => {
                if values.is_empty() {
                    self.error(
                        WhenError::new(list_span, "`in []` can never be true")
                            .with_help("list at least one value"),
                    );
                    return None;
                }
                let (field, _) = field.as_ref()?;
                self.list(field, &values, op_span)?;
                Check::In(values)
            }
            Operation::Binary {
                op,
                op_span,
                literal,
                literal_span,
            } => {
                let (field, _) = field.as_ref()?;
                self.operator(field, op, op_span, literal, literal_span)?
            }
        };
        let (field, _) = field?;
        Some(Test { field, check })
    }

    /// A bare field is a boolean test, which only JSON fields can be.
    fn bare(&mut self, field: &Field, field_span: Range<usize>) -> Option<()> {
        if let Field::Text(text) = field {
            self.error(
                WhenError::new(
                    field_span,
                    format!("`{}` is a string, not a boolean", text.name()),
                )
                .with_help(format!(
                    "test it, e.g. `{0} == \"…\"` or `{0} exists`",
                    text.name()
                )),
            );
            return None;
        }
        Some(())
    }

    /// A string field takes a list of strings, and `surface` only known names.
    fn list(&mut self, field: &Field, values: &[Literal], op_span: Range<usize>) -> Option<()> {
        let Field::Text(text) = field else {
            return Some(());
        };
        if values
            .iter()
            .any(|literal| !matches!(literal, Literal::Str(_)))
        {
            self.error(
                WhenError::new(
                    op_span,
                    format!(
                        "`{}` is a string, so `in` needs a list of strings",
                        text.name()
                    ),
                )
                .with_help(format!(
                    "quote the values, e.g. `{} in [\"a\", \"b\"]`",
                    text.name()
                )),
            );
            return None;
        }
        if *text == TextField::Surface {
            for literal in values {
                if let Literal::Str(value) = literal
                    && !self.surface(value, op_span.clone())
                {
                    return None;
                }
            }
        }
        Some(())
    }
}
