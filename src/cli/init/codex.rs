//! The Codex CLI hooks `hooks init codex` writes (`hooks.json`): its tool
//! and session events pointed at `hooks hook-client --client codex`.
//!
//! Codex has no setting that makes a failed hook block: a hook that exits
//! with another code than 2, or cannot start, lets the call go ahead. So
//! the command itself turns any failure of `hook-client` (not found, killed,
//! an unexpected exit) into exit 2 with a reason, which blocks a pre event
//! and replaces a post event's result.

use std::path::{Path, PathBuf};

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

/// A warning when Codex command rules (`rules/*.rules`) sit beside the
/// hooks file or in `home`: Codex checks them against the command it runs,
/// which under these hooks is `hooks run-buffered` around the model's, so
/// a `prefix_rule` for the model's command no longer matches.
pub(super) fn rules_warning(hooks_file: &Path, home: Option<PathBuf>) -> Option<String> {
    let mut folders: Vec<PathBuf> = hooks_file
        .parent()
        .map(|parent| parent.join("rules"))
        .into_iter()
        .chain(home.map(|home| home.join("rules")))
        .collect();
    folders.dedup();
    let found: Vec<String> = folders
        .iter()
        .filter(|folder| {
            std::fs::read_dir(folder).is_ok_and(|entries| {
                entries
                    .flatten()
                    .any(|entry| entry.path().extension().is_some_and(|ext| ext == "rules"))
            })
        })
        .map(|folder| folder.display().to_string())
        .collect();
    (!found.is_empty()).then(|| {
        format!(
            "warning: Codex command rules are in {}. With these hooks Codex runs each shell \
             command as `hooks run-buffered` around the model's command and checks its rules \
             against that, so a `prefix_rule` for the model's command (forbidden, prompt or \
             allow) no longer matches. Move such rules into the hooks (a #[pre_tool_use] hook \
             on tool `Bash`).",
            found.join(", ")
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_beside_the_hooks_are_pointed_out() {
        let home = tempfile::tempdir().expect("dir");
        let hooks = home.path().join("hooks.json");
        assert_eq!(rules_warning(&hooks, Some(home.path().to_owned())), None);
        std::fs::create_dir_all(home.path().join("rules")).expect("rules");
        std::fs::write(home.path().join("rules/notes.txt"), "").expect("file");
        assert_eq!(rules_warning(&hooks, None), None);
        std::fs::write(
            home.path().join("rules/default.rules"),
            "prefix_rule(pattern=[\"rm\"], decision=\"forbidden\")\n",
        )
        .expect("rules");
        let warning = rules_warning(&hooks, Some(home.path().to_owned())).expect("a warning");
        assert!(warning.contains("no longer matches"), "{warning}");
        let folder = home.path().join("rules").display().to_string();
        assert!(warning.contains(&folder), "{warning}");
    }
}
