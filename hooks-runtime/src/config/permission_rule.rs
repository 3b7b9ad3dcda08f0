//! Claude Code's permission-rule syntax (a handler's `if`, e.g.
//! `Bash(git push *)`) translated into a `when` expression — where the
//! translation means exactly what the rule means, and refused otherwise.

/// The `when` expression for a permission rule.
///
/// - `Tool` → `tool_name == "Tool"`;
/// - `mcp__server` → every tool of that MCP server; `mcp__server__*` too;
/// - `Bash(npm run test:*)` → the command starts with `npm run test`;
/// - `Bash(git push *)` → the command matches the glob (`*` is any text);
/// - `Bash(ls)` → the command is exactly `ls`.
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
    let command = if let Some(prefix) = specifier.strip_suffix(":*") {
        format!("args.command starts_with {}", quote(prefix))
    } else if specifier.contains('*') {
        format!("args.command matches {}", quote(&glob_of(specifier)))
    } else {
        format!("args.command == {}", quote(specifier))
    };
    Ok(format!("{tool_test} && {command}"))
}

/// The test on the tool's name.
fn tool_test(tool: &str, rule: &str) -> Result<String, String> {
    if let Some(server) = tool.strip_prefix("mcp__") {
        let server = server.strip_suffix("__*").unwrap_or(server);
        if server.is_empty() || server.contains('*') {
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

/// A Claude Code command pattern (only `*` is special) as a glob: the other
/// glob metacharacters are escaped.
fn glob_of(pattern: &str) -> String {
    let mut glob = String::with_capacity(pattern.len());
    for c in pattern.chars() {
        if matches!(c, '?' | '[' | ']' | '\\') {
            glob.push('\\');
        }
        glob.push(c);
    }
    glob
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
            (
                "Bash(git push *)",
                r#"tool_name == "Bash" && args.command matches "git push *""#,
            ),
            (
                "Bash(npm run test:*)",
                r#"tool_name == "Bash" && args.command starts_with "npm run test""#,
            ),
            ("Bash(ls)", r#"tool_name == "Bash" && args.command == "ls""#),
            (
                "Bash(echo \"[x]?\" *)",
                r#"tool_name == "Bash" && args.command matches "echo \"\\[x\\]\\?\" *""#,
            ),
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
            ("", "not a tool name"),
        ] {
            let error = rule_to_when(rule).unwrap_err();
            assert!(error.contains(says), "{rule}: {error}");
        }
    }
}
