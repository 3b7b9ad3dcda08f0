//! The Claude Code settings `hooks init claude-code` writes: its four hook
//! events pointed at `hooks hook-client` (or at the server, as HTTP hooks),
//! every one failing closed.

use serde_json::{Value, json};

use super::{Target, command_line, group};

/// The events, each with its hook's timeout (seconds) and whether it
/// takes a tool matcher. A pre event may wait for a person's approval.
const EVENTS: [(&str, u64, bool); 4] = [
    ("PreToolUse", 180, true),
    ("PostToolUse", 60, true),
    ("PostToolUseFailure", 60, true),
    ("SessionStart", 60, false),
];

/// Where Claude Code reads a project's shared settings.
pub(super) const SETTINGS: &str = ".claude/settings.json";

/// The hook groups, by event, for `target`.
pub(super) fn groups(target: &Target) -> Vec<(&'static str, Value)> {
    EVENTS
        .iter()
        .map(|&(event, timeout, matcher)| {
            let hook = if target.http {
                json!({
                    "type": "http",
                    "url": target.url,
                    "timeout": timeout,
                    "onFailure": "block",
                    "headers": {"Authorization": format!("Bearer ${}", super::TOKEN_VARIABLE)},
                    "allowedEnvVars": [super::TOKEN_VARIABLE],
                })
            } else {
                json!({
                    "type": "command",
                    "timeout": timeout,
                    "onFailure": "block",
                    // Ten seconds under the client's own timeout, so that the
                    // client's answer is ours (a refusal), not a kill.
                    "command": command_line(target, None, timeout - 10),
                })
            };
            (event, group(matcher, hook))
        })
        .collect()
}

/// Whether a hook entry of a group was written by `hooks init` (a
/// `hook-client` command, or an HTTP hook carrying the server's token).
pub(super) fn is_ours(hook: &Value) -> bool {
    let command = hook["command"].as_str().unwrap_or_default();
    let header = hook["headers"]["Authorization"]
        .as_str()
        .unwrap_or_default();
    command.contains(" hook-client ")
        || (hook["type"] == "http" && header.contains(super::TOKEN_VARIABLE))
}
