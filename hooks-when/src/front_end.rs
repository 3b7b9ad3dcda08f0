//! The `when` front end: lexing, the syntax pass, the check pass, and one error report.

use crate::ast::Expr;
use crate::check::check;
use crate::error::{WhenError, WhenErrors};
use crate::lexer::tokenize;
use crate::point::HookPoint;
use crate::syntax::read;

/// Most errors reported for one expression; the rest are usually consequences.
const MAX_ERRORS: usize = 32;

/// Parses and checks a `when` expression for a hook at `point`.
///
/// Every mistake is reported, syntax and meaning alike, in reading order.
///
/// ```
/// use hooks_when::{parse, HookPoint};
///
/// let expr = parse(r#"tool_name starts_with "sql_" && !metadata.read_only"#, HookPoint::PreToolUse).unwrap();
/// assert_eq!(expr.to_string(), r#"tool_name starts_with "sql_" && !(metadata.read_only)"#);
///
/// let error = parse("tool_nme == \"x\"", HookPoint::PreToolUse).unwrap_err();
/// assert_eq!(error.to_string(), "line 1, column 1: unknown field `tool_nme`\n  help: did you mean `tool_name`?");
/// ```
pub fn parse(source: &str, point: HookPoint) -> Result<Expr, WhenErrors> {
    let (tokens, lex_errors) = tokenize(source);
    if !lex_errors.is_empty() {
        return Err(WhenErrors::new(source, lex_errors));
    }
    if tokens.is_empty() {
        let error = WhenError::new(0..source.len(), "empty `when` expression")
            .with_help("write a test such as `tool_name == \"sql_exec\"`, or leave `when` out to match every call");
        return Err(WhenErrors::new(source, vec![error]));
    }
    let syntax = read(source, &tokens);
    let checked = check(syntax.tree, source, point);
    let errors = report(syntax.errors, checked.errors);
    match checked.expr {
        Some(expr) if errors.is_empty() => Ok(expr),
        _ => Err(WhenErrors::new(source, errors)),
    }
}

/// Puts both passes' errors in reading order, keeps the first at each position
/// (a second one there is a consequence) and at most [`MAX_ERRORS`], sorted by position.
fn report(syntax: Vec<WhenError>, checks: Vec<(usize, WhenError)>) -> Vec<WhenError> {
    let mut checks = checks.into_iter().peekable();
    let mut reading_order = Vec::new();
    for (index, error) in syntax.into_iter().enumerate() {
        while let Some((_, check)) = checks.next_if(|(before, _)| *before <= index) {
            reading_order.push(check);
        }
        reading_order.push(error);
    }
    reading_order.extend(checks.map(|(_, check)| check));

    let mut errors: Vec<WhenError> = Vec::new();
    for error in reading_order {
        if errors.len() < MAX_ERRORS && !errors.iter().any(|e| e.span.start == error.span.start) {
            errors.push(error);
        }
    }
    errors.sort_by_key(|error| error.span.start);
    errors
}
