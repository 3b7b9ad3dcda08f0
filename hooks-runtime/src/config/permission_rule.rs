//! Claude Code's permission-rule syntax (a handler's `if`, e.g.
//! `Bash(git push *)`) translated into a `when` expression — where the
//! translation means exactly what the rule means, and refused otherwise.

/// The `when` expression for a permission rule.
///
/// - `Tool` → `tool_name == "Tool"`;
/// - `mcp__server` → every tool of that MCP server; `mcp__server__*` too;
/// - `Bash(…)` (`Bash(git push *)`, `Bash(npm run test:*)`) → every `Bash`
///   call: deliberately wider than Claude Code's match, which looks at each
///   subcommand of the line; no test on the text here would match as
///   widely, and a narrower one would let a guard be skipped.
///
/// Rules whose meaning depends on what this project cannot see the same way
/// (paths relative to a settings file or a working directory, gitignore
/// patterns, domains) are refused with what to write instead.
pub(super) fn rule_to_when(rule: &str) -> Result<String, String> {
    let rule = rule.trim();
    let (tool, specifier) = match rule.split_once('(') {
        None => (rule, None),
        Some((tool, rest)) => {
            let inner = rest.strip_suffix(')').ok_or_else(|| {
                format!("`if` {rule:?}: a rule is `Tool` or `Tool(specifier)`, with the `)` last")
            })?;
            (tool, Some(inner))
        }
    };
    if tool.is_empty()
        || !tool
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '*')
    {
        return Err(format!(
            "`if` {rule:?}: {tool:?} is not a tool name (letters, digits and `_`)"
        ));
    }
    let tool_test = tool_test(tool, rule)?;
    let Some(specifier) = specifier else {
        return Ok(tool_test);
    };
    if tool != "Bash" {
        return Err(format!(
            "`if` {rule:?}: only `Bash(…)` rules (and bare tool names) translate into a `when`; \
             {tool}(…) matches paths or domains the way Claude Code resolves them, which this \
             project does not repeat — write a `when` instead, e.g. \
             `tool_name == \"{tool}\" && args.file_path matches \"/srv/app/*\"`"
        ));
    }
    if specifier.is_empty() {
        return Err(format!("`if` {rule:?}: `Bash()` names no command"));
    }
    // Claude Code matches a Bash rule against each subcommand of the line,
    // after dropping `VAR=value` prefixes and some wrappers; a test on the
    // whole line (`args.command matches "git push *"`) misses
    // `true && git push`, `FOO=1 git push`, `g\it push`. A guard whose
    // condition misses is a guard that does not run, so the rule selects
    // every Bash call and the hook itself decides which commands it stops.
    Ok(tool_test)
}

/// The test on the tool's name.
fn tool_test(tool: &str, rule: &str) -> Result<String, String> {
    if let Some(server) = tool.strip_prefix("mcp__") {
        let whole = server.strip_suffix("__*");
        let server = whole.unwrap_or(server);
        // `mcp__server__*` is the only wildcard: a star anywhere else, or
        // after a tool name (`mcp__a__b__*`), would match nothing.
        if server.is_empty() || server.contains('*') || (whole.is_some() && server.contains("__")) {
            return Err(format!(
                "`if` {rule:?}: write `mcp__server`, `mcp__server__*` or `mcp__server__tool`"
            ));
        }
        if !server.contains("__") {
            // The whole server.
            return Ok(format!(
                "(tool_name == {} || tool_name starts_with {})",
                quote(&format!("mcp__{server}")),
                quote(&format!("mcp__{server}__"))
            ));
        }
    } else if tool.contains('*') {
        return Err(format!(
            "`if` {rule:?}: a tool name has no wildcards (except `mcp__server__*`)"
        ));
    }
    Ok(format!("tool_name == {}", quote(tool)))
}

/// A `when` string literal.
fn quote(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\0' => out.push_str("\\0"),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_that_translate() {
        for (rule, when) in [
            ("Bash", r#"tool_name == "Bash""#),
            // Every Bash call: Claude Code matches each subcommand, which
            // no test on the whole line here matches as widely.
            ("Bash(git push *)", r#"tool_name == "Bash""#),
            ("Bash(npm run test:*)", r#"tool_name == "Bash""#),
            ("Bash(ls)", r#"tool_name == "Bash""#),
            (
                "mcp__github",
                r#"(tool_name == "mcp__github" || tool_name starts_with "mcp__github__")"#,
            ),
            (
                "mcp__github__*",
                r#"(tool_name == "mcp__github" || tool_name starts_with "mcp__github__")"#,
            ),
            (
                "mcp__github__create_issue",
                r#"tool_name == "mcp__github__create_issue""#,
            ),
        ] {
            assert_eq!(rule_to_when(rule).as_deref(), Ok(when), "{rule}");
        }
    }

    #[test]
    fn rules_that_do_not_translate_say_what_to_write() {
        for (rule, says) in [
            ("Read(./.env)", "write a `when` instead"),
            ("WebFetch(domain:example.com)", "write a `when` instead"),
            ("Bash(ls", "the `)` last"),
            ("Bash()", "names no command"),
            ("Ba sh", "not a tool name"),
            ("Bash*", "no wildcards"),
            ("mcp__*", "mcp__server"),
            ("mcp__a__b__*", "mcp__server"),
            ("", "not a tool name"),
        ] {
            let error = rule_to_when(rule).unwrap_err();
            assert!(error.contains(says), "{rule}: {error}");
        }
    }
}
