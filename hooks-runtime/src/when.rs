//! `when` expressions parsed at run time (for hooks declared in config), and
//! the errors the `when` language reports.
//!
#![doc = include_str!("../../docs/when.md")]

use hooks_when::Expr;
pub use hooks_when::{WhenError, WhenErrors};

use crate::context::{HookContext, HookPoint};

/// A checked `when` expression for hooks at one point, with its source text.
///
/// Attribute hooks compile their `when` into a plain fn at build time; hooks
/// built from config parse theirs with this type. Both go through the same
/// parser, so they accept and reject exactly the same text.
///
/// ```
/// use hooks::{HookContext, HookPoint, when::When};
/// use serde_json::json;
///
/// let when = When::parse(r#"tool_name starts_with "sql_""#, HookPoint::PreToolUse).unwrap();
/// assert!(when.matches(&HookContext::tool_call("sql_exec", json!({}))));
/// assert!(When::parse("tool_nme == \"x\"", HookPoint::PreToolUse).is_err());
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct When {
    source: String,
    expr: Expr,
}

impl When {
    /// Parses and checks `source` for a hook at `point`.
    pub fn parse(source: &str, point: HookPoint) -> Result<When, WhenErrors> {
        let expr = hooks_when::parse(source, point)?;
        Ok(When {
            source: source.to_owned(),
            expr,
        })
    }

    /// True when the call matches.
    pub fn matches(&self, ctx: &HookContext) -> bool {
        self.expr.eval(ctx)
    }

    /// The text it was parsed from.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// The checked syntax tree.
    pub fn expr(&self) -> &Expr {
        &self.expr
    }
}
