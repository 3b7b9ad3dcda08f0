//! Guards on a connector that a surface never gives a call: `hooks check`
//! and `hooks mcp-proxy` say so, since such a guard compiles and never
//! fires.

use std::sync::LazyLock;

use regex::Regex;

use crate::{Hook, HookRegistry};

/// `connector == "…"` (either side) in a `when`.
static CONNECTOR_TEST: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"connector\s*==\s*"([^"\\]*)"|"([^"\\]*)"\s*==\s*connector"#)
        .expect("a valid pattern")
});

/// One line per hook whose `when` tests for a connector that never comes:
/// `mcp` anywhere (Claude Code's `mcp__<server>__<tool>` has the server as
/// connector under `hooks serve`, and `hooks mcp-proxy` names the server),
/// and, when `server` is given (`hooks mcp-proxy`), any other connector
/// than that server.
pub(super) fn never_matching(registry: &HookRegistry, server: Option<&str>) -> Vec<String> {
    let hooks = registry
        .pre_tool_use()
        .iter()
        .map(|hook| hook.as_ref() as &dyn Hook)
        .chain(
            registry
                .post_tool_use()
                .iter()
                .map(|hook| hook.as_ref() as &dyn Hook),
        );
    let mut warnings = Vec::new();
    for hook in hooks {
        let Some(when) = hook.when_source() else {
            continue;
        };
        for found in CONNECTOR_TEST.captures_iter(when) {
            let Some(named) = found.get(1).or_else(|| found.get(2)).map(|m| m.as_str()) else {
                continue;
            };
            match server {
                Some(server) if named != server => warnings.push(format!(
                    "hook `{}` tests `connector == \"{named}\"`, but every call through this \
                     proxy has connector `{server}` (the server's name): the test never matches",
                    hook.name()
                )),
                None if named == "mcp" => warnings.push(format!(
                    "hook `{}` tests `connector == \"mcp\"`, which no call has: an MCP tool's \
                     connector is its server's name (`github` for Claude Code's \
                     `mcp__github__create_issue` under `hooks serve`, the `--name` of \
                     `hooks mcp-proxy`)",
                    hook.name()
                )),
                _ => {}
            }
        }
    }
    warnings
}
