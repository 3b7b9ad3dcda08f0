//! Dead-guard checks: a `when` that reads `args.comand` of a tool whose
//! arguments are known never to have `comand` compiles, and never fires.
//!
//! A factory declares a tool's argument schema with
//! [`Built::with_args_schema`](crate::factory::Built::with_args_schema) (the
//! standard schema guard declares each schema of its config); the runtime
//! knows no hook by name. Once the registry is built, every `args.…` path in
//! the `when` of a pre or post hook is checked, for each tool the `when`
//! restricts the call to (`tool_name == "x"`, `tool_name in [...]`, joined
//! with `&&`/`||`: see [`hooks_when::ArgsUse`]), against each schema declared
//! for that tool:
//!
//! - a path no valid arguments can have is a config error, with a
//!   did-you-mean when a listed property is close;
//! - a path the check cannot decide is a [`ConfigWarning`](super::ConfigWarning): the `when` is
//!   not restricted to named tools, no schema is declared for the tool, or
//!   the schema allows properties it does not list (`additionalProperties`
//!   absent or not `false`, `patternProperties`) or uses keywords the check
//!   does not evaluate (`$ref`, `allOf`/`anyOf`/`oneOf`, `if`, …).

mod schema_path;

use std::collections::HashMap;

use serde_json::Value;

use crate::hook::Hook;
use crate::registry::HookRegistry;
use schema_path::{PathVerdict, check_path, shown_path};

/// A tool's argument schema, as a built hook declared it.
pub(super) struct DeclaredSchema {
    pub(super) tool: String,
    pub(super) schema: Value,
    /// The hook (factory name) that declared it.
    pub(super) declared_by: String,
}

/// What the check found, per hook name: errors stop the build.
#[derive(Default)]
pub(super) struct Findings {
    pub(super) errors: Vec<(String, String)>,
    pub(super) warnings: Vec<(String, String)>,
}

/// Checks every `args.…` path in the `when` of `registry`'s pre and post
/// hooks against the declared schemas.
pub(super) fn check(registry: &HookRegistry, schemas: &[DeclaredSchema]) -> Findings {
    let mut by_tool: HashMap<&str, Vec<&DeclaredSchema>> = HashMap::new();
    for declared in schemas {
        by_tool.entry(&declared.tool).or_default().push(declared);
    }
    let hooks = registry
        .pre_tool_use()
        .iter()
        .map(|hook| (crate::HookPoint::PreToolUse, hook.as_ref() as &dyn Hook))
        .chain(
            registry
                .post_tool_use()
                .iter()
                .map(|hook| (crate::HookPoint::PostToolUse, hook.as_ref() as &dyn Hook)),
        );
    let mut findings = Findings::default();
    for (point, hook) in hooks {
        let Some(source) = hook.when_source() else {
            continue;
        };
        let name = hook.name();
        // A command hook with a matcher shows `<when> [matcher: …]`: its
        // `when` is the part before. A condition that still does not parse
        // is said to be unchecked, never skipped in silence.
        let when = source
            .rsplit_once(" [matcher: ")
            .map_or(source, |(when, _)| when);
        let Ok(expr) = hooks_when::parse(when, point) else {
            if source.contains("args") {
                findings.warnings.push((
                    name.to_owned(),
                    "its condition is not a plain `when` expression, so the `args` paths it \
                     reads are not checked"
                        .to_owned(),
                ));
            }
            continue;
        };
        for read in expr.args_uses() {
            let path = shown_path(read.path);
            let Some(tools) = read.tools else {
                findings.warnings.push((
                    name.to_owned(),
                    format!(
                        "`{path}` is not checked: the `when` is not restricted to named tools \
                         (`tool_name == \"…\"` or `tool_name in [...]`), so no tool's schema applies"
                    ),
                ));
                continue;
            };
            if tools.is_empty() {
                findings.errors.push((
                    name.to_owned(),
                    format!(
                        "the `when` reads `{path}` under tests on `tool_name` that no one tool \
                         can pass together, so this test never matches"
                    ),
                ));
                continue;
            }
            for tool in tools {
                let tool_shown = crate::printable::shown(tool, 60);
                let Some(declared) = by_tool.get(tool) else {
                    findings.warnings.push((
                        name.to_owned(),
                        format!(
                            "`{path}` is not checked for tool `{tool_shown}`: no hook declares a \
                             JSON Schema for its arguments"
                        ),
                    ));
                    continue;
                };
                for declared in declared {
                    match check_path(&declared.schema, read.path) {
                        PathVerdict::Exists => {}
                        PathVerdict::CannotExist { why, suggestion } => {
                            let hint = suggestion
                                .map(|s| format!("; did you mean `{s}`?"))
                                .unwrap_or_default();
                            findings.errors.push((
                                name.to_owned(),
                                format!(
                                    "the `when` reads `{path}`, which tool `{tool_shown}` never \
                                     has: {why} (schema declared by hook \"{}\"), so this test \
                                     never matches{hint}",
                                    declared.declared_by
                                ),
                            ));
                        }
                        PathVerdict::NotCheckable { why } => findings.warnings.push((
                            name.to_owned(),
                            format!(
                                "`{path}` is not checked for tool `{tool_shown}`: {why} \
                                 (schema declared by hook \"{}\")",
                                declared.declared_by
                            ),
                        )),
                    }
                }
            }
        }
    }
    findings
}
