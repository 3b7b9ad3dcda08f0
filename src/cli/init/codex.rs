//! The Codex CLI hooks `hooks init codex` writes (`hooks.json`): its tool
//! and session events pointed at `hooks hook-client --client codex`.
//!
//! Codex has no setting that makes a failed hook block: a hook that exits
//! with another code than 2, or cannot start, lets the call go ahead. So
//! the command itself turns any failure of `hook-client` (not found, killed,
//! an unexpected exit) into exit 2 with a reason, which blocks a pre event
//! and replaces a post event's result.
//!
//! Beside the hooks, in Codex's `config.toml` in the same folder, it turns
//! off what Codex runs before each shell command outside the hooks: the
//! shell snapshot and the login shell (see `docs/codex.md`).

use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use toml_edit::{DocumentMut, Item, TableLike};

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

/// Codex settings the hooks need, each `false`: the tables it is in, its
/// key. Codex runs a login shell's profile and its shell snapshot before
/// each shell command, outside `hooks run-buffered`, and a command can
/// change either.
const CONFIG: [(&[&str], &str); 2] = [
    (&[], "allow_login_shell"),
    (&["features"], "shell_snapshot"),
];

/// The Codex settings file beside `hooks_file`.
pub(super) fn config_file(hooks_file: &Path) -> PathBuf {
    hooks_file.with_file_name("config.toml")
}

/// A setting [`config`] changed: its dotted key and its value before, if
/// it had one.
pub(super) type ConfigChange = (String, Option<String>);

/// `text` (the settings file, if there is one) with the settings the hooks
/// need, the rest of it as it was: the new text, and what changed.
pub(super) fn config(text: Option<&str>) -> Result<(String, Vec<ConfigChange>), String> {
    let mut document: DocumentMut = text
        .unwrap_or_default()
        .parse()
        .map_err(|error| format!("is not valid TOML ({error})"))?;
    let mut changes = Vec::new();
    for (tables, key) in CONFIG {
        let mut table: &mut dyn TableLike = document.as_table_mut();
        for &name in tables {
            if !table.contains_key(name) {
                table.insert(name, toml_edit::table());
            }
            table = table
                .get_mut(name)
                .and_then(Item::as_table_like_mut)
                .ok_or_else(|| format!("its `{name}` is not a table"))?;
        }
        if table.get(key).and_then(Item::as_bool) == Some(false) {
            continue;
        }
        let before = table.get(key).map(|item| match item.as_value() {
            Some(value) => {
                let mut value = value.clone();
                value.decor_mut().clear();
                value.to_string()
            }
            None => "a table".to_owned(),
        });
        table.insert(key, toml_edit::value(false));
        let dotted = tables.iter().chain([&key]).copied().collect::<Vec<_>>();
        changes.push((dotted.join("."), before));
    }
    Ok((document.to_string(), changes))
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
    fn the_snapshot_and_login_shell_are_turned_off_and_the_rest_kept() {
        let (text, changes) = config(None).expect("an empty file");
        assert_eq!(
            changes,
            [
                ("allow_login_shell".to_owned(), None),
                ("features.shell_snapshot".to_owned(), None)
            ]
        );
        let parsed: toml_edit::DocumentMut = text.parse().expect("TOML");
        assert_eq!(parsed["allow_login_shell"].as_bool(), Some(false));
        assert_eq!(parsed["features"]["shell_snapshot"].as_bool(), Some(false));

        let mine = "# my settings\nmodel = \"gpt-5.5\" # the model\nallow_login_shell = true\n\n\
                    [features]\nplugins = false\n\n[mcp_servers.db]\ncommand = \"db-mcp\"\n";
        let (text, changes) = config(Some(mine)).expect("merged");
        assert_eq!(
            changes,
            [
                ("allow_login_shell".to_owned(), Some("true".to_owned())),
                ("features.shell_snapshot".to_owned(), None)
            ]
        );
        assert!(
            text.starts_with("# my settings\nmodel = \"gpt-5.5\" # the model\n"),
            "{text}"
        );
        let parsed: toml_edit::DocumentMut = text.parse().expect("TOML");
        assert_eq!(parsed["features"]["plugins"].as_bool(), Some(false));
        assert_eq!(
            parsed["mcp_servers"]["db"]["command"].as_str(),
            Some("db-mcp")
        );
        // Again: nothing changes.
        assert_eq!(
            config(Some(&text)).expect("again"),
            (text.clone(), Vec::new())
        );

        // Dotted and inline forms are kept as they are written.
        let (text, changes) =
            config(Some("features = { shell_snapshot = true }\n")).expect("inline");
        assert_eq!(
            changes[1],
            (
                "features.shell_snapshot".to_owned(),
                Some("true".to_owned())
            )
        );
        assert!(
            text.contains("features = { shell_snapshot = false }"),
            "{text}"
        );
        let (text, _) = config(Some("features.shell_snapshot = true\n")).expect("dotted");
        assert!(text.contains("features.shell_snapshot = false"), "{text}");

        for bad in ["features = 3\n", "model = \n", "[features]\n[features]\n"] {
            assert!(config(Some(bad)).is_err(), "{bad:?}");
        }
    }

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
