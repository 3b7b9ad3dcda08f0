//! What a checked expression reads of `args`, and for which tools: the
//! facts a config check needs to compare `args.…` paths with a tool's
//! declared arguments (its JSON Schema).
//!
//! The analysis is deliberately shallow and only ever errs towards
//! "not restricted":
//!
//! - `tool_name == "x"` restricts to `x`; `tool_name in ["x", "y"]` to
//!   `x` and `y` (other literals in the list never match a name).
//! - `a && b` is restricted to what every restricted operand allows (the
//!   intersection); unrestricted operands do not widen it.
//! - `a || b` is restricted only when every branch is (the union).
//! - Everything else — `!`, `!=`, `starts_with`, `matches`, `connector`,
//!   `action`, metadata — does not restrict.
//!
//! An `args` path is read for the tools that the conjunctions around it
//! restrict to: in `tool_name == "a" && args.x > 1 || args.y`, `args.x` is
//! read for `a` only, and `args.y` for any tool.

use std::collections::BTreeSet;

use crate::ast::{Check, Expr, Field, JsonRoot, Literal, PathSegment, TextField};

/// One `args.…` path read by an expression.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArgsUse<'e> {
    /// The path below `args` (`[Key("command")]` for `args.command`).
    pub path: &'e [PathSegment],
    /// The tools the path is read for: `Some` when the expression around
    /// it restricts the tool name (see the module docs), `None` when it may
    /// be read for any tool.
    pub tools: Option<BTreeSet<&'e str>>,
}

impl Expr {
    /// The tool names this expression can match, when it restricts them
    /// (`tool_name == "x"`, `tool_name in [...]`, combined with `&&` and
    /// `||`); `None` when any tool may match.
    pub fn tool_names(&self) -> Option<BTreeSet<&str>> {
        match self {
            Expr::Test(test) => match (&test.field, &test.check) {
                (Field::Text(TextField::ToolName), Check::Eq(Literal::Str(name))) => {
                    Some(BTreeSet::from([name.as_str()]))
                }
                (Field::Text(TextField::ToolName), Check::In(literals)) => Some(
                    literals
                        .iter()
                        .filter_map(|literal| match literal {
                            Literal::Str(name) => Some(name.as_str()),
                            _ => None,
                        })
                        .collect(),
                ),
                _ => None,
            },
            Expr::And(items) => items
                .iter()
                .filter_map(Expr::tool_names)
                .reduce(|all, next| all.intersection(&next).copied().collect()),
            Expr::Or(items) => {
                items
                    .iter()
                    .map(Expr::tool_names)
                    .try_fold(BTreeSet::new(), |mut all, next| {
                        all.extend(next?);
                        Some(all)
                    })
            }
            Expr::Not(_) => None,
        }
    }

    /// Every `args.…` path this expression reads, in source order, each
    /// with the tools it is read for.
    pub fn args_uses(&self) -> Vec<ArgsUse<'_>> {
        let mut uses = Vec::new();
        collect(self, None, &mut uses);
        uses
    }
}

fn collect<'e>(expr: &'e Expr, tools: Option<BTreeSet<&'e str>>, uses: &mut Vec<ArgsUse<'e>>) {
    match expr {
        Expr::Test(test) => {
            if let Field::Json(field) = &test.field
                && field.root == JsonRoot::Args
            {
                uses.push(ArgsUse {
                    path: &field.path,
                    tools,
                });
            }
        }
        Expr::And(items) => {
            let tools = narrow(tools, expr.tool_names());
            for item in items {
                collect(item, tools.clone(), uses);
            }
        }
        Expr::Or(items) => {
            for item in items {
                collect(item, tools.clone(), uses);
            }
        }
        Expr::Not(inner) => collect(inner, tools, uses),
    }
}

fn narrow<'e>(
    outer: Option<BTreeSet<&'e str>>,
    inner: Option<BTreeSet<&'e str>>,
) -> Option<BTreeSet<&'e str>> {
    match (outer, inner) {
        (Some(outer), Some(inner)) => Some(outer.intersection(&inner).copied().collect()),
        (outer, None) => outer,
        (None, inner) => inner,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{HookPoint, parse};

    fn uses(source: &str) -> Vec<(String, Option<Vec<String>>)> {
        let expr = parse(source, HookPoint::PreToolUse).expect("valid");
        expr.args_uses()
            .into_iter()
            .map(|use_| {
                let path = use_
                    .path
                    .iter()
                    .map(|segment| match segment {
                        PathSegment::Key(key) => key.clone(),
                        PathSegment::Index(index) => index.to_string(),
                    })
                    .collect::<Vec<_>>()
                    .join(".");
                let tools = use_
                    .tools
                    .map(|tools| tools.into_iter().map(str::to_owned).collect());
                (path, tools)
            })
            .collect()
    }

    fn tools(names: &[&str]) -> Option<Vec<String>> {
        Some(names.iter().map(|name| (*name).to_owned()).collect())
    }

    #[test]
    fn conjunctions_restrict_the_paths_inside_them() {
        assert_eq!(
            uses(r#"tool_name == "a" && args.x > 1 || args.y exists"#),
            vec![("x".to_owned(), tools(&["a"])), ("y".to_owned(), None)]
        );
        assert_eq!(
            uses(r#"tool_name in ["a", "b"] && (args.p.0 == 1 || !(args.q exists))"#),
            vec![
                ("p.0".to_owned(), tools(&["a", "b"])),
                ("q".to_owned(), tools(&["a", "b"]))
            ]
        );
        assert_eq!(
            uses(r#"tool_name in ["a", "b"] && tool_name == "b" && args.x exists"#),
            vec![("x".to_owned(), tools(&["b"]))]
        );
    }

    #[test]
    fn what_does_not_restrict_is_not_guessed() {
        for source in [
            r#"tool_name != "a" && args.x exists"#,
            r#"!(tool_name == "a") && args.x exists"#,
            r#"tool_name starts_with "a" && args.x exists"#,
            r#"(tool_name == "a" || user_id == "u") && args.x exists"#,
            r#"connector == "oa" && args.x exists"#,
        ] {
            assert_eq!(uses(source), vec![("x".to_owned(), None)], "{source}");
        }
    }

    #[test]
    fn disjunctions_of_names_restrict_to_their_union() {
        let expr = parse(
            r#"(tool_name == "a" || tool_name in ["b", "c"]) && args.x exists"#,
            HookPoint::PreToolUse,
        )
        .expect("valid");
        assert_eq!(expr.tool_names(), Some(BTreeSet::from(["a", "b", "c"])));
        assert_eq!(
            uses(r#"(tool_name == "a" || tool_name in ["b", "c"]) && args.x exists"#),
            vec![("x".to_owned(), tools(&["a", "b", "c"]))]
        );
    }
}
