//! The Codex CLI hooks `hooks init codex` writes (`hooks.json`): its tool
//! and session events pointed at `hooks hook-client --client codex`.
//!
//! Codex has no setting that makes a failed hook block: a hook that exits
//! with another code than 2, or cannot start, lets the call go ahead. So
//! the command itself turns any failure of `hook-client` (not found, killed,
//! an unexpected exit) into exit 2 with a reason, which blocks a pre event
//! and replaces a post event's result.

use serde_json::{Value, json};

use super::{Target, command_line, group};

/// The events, each with its hook's timeout (seconds) and whether it
/// takes a tool matcher.
const EVENTS: [(&str, u64, bool); 3] = [
    ("PreToolUse", 180, true),
    ("PostToolUse", 60, true),
    ("SessionStart", 60, false),
];

/// Where Codex reads a project's hooks (a trusted project only).
pub(super) const PROJECT_HOOKS: &str = ".codex/hooks.json";

/// The hook groups, by event, for `target`.
pub(super) fn groups(target: &Target) -> Vec<(&'static str, Value)> {
    EVENTS
        .iter()
        .map(|&(event, timeout, matcher)| {
            // Ten seconds under Codex's own timeout: a hook Codex kills lets
            // the call go ahead, a hook-client that gives up blocks it.
            let client = command_line(target, Some("codex"), timeout - 10);
            let command = format!(
                "{client} || {{ s=$?; [ \"$s\" -eq 2 ] && exit 2; echo \"hooks hook-client \
                 could not run (exit $s); the call is blocked\" >&2; exit 2; }}"
            );
            let hook = json!({"type": "command", "command": command, "timeout": timeout});
            (event, group(matcher, hook))
        })
        .collect()
}

/// Whether a hook entry was written by `hooks init` (a `hook-client`
/// command).
pub(super) fn is_ours(hook: &Value) -> bool {
    hook["command"]
        .as_str()
        .is_some_and(|command| command.contains(" hook-client "))
}
