//! `hooks init <client>`: writes (or, with `--dry-run`, prints) a client's
//! hook settings pointing at `hooks hook-client` → `hooks serve`, merged
//! into the settings already there.
//!
//! The merge keeps every setting and every hook of the user's own; only the
//! entries an earlier `hooks init` wrote are replaced. What changes is said,
//! event by event, before anything is written. The token never goes into
//! the file: the hooks read it from `HOOKS_SERVE_TOKEN` in the client's
//! environment. For Codex, the settings its hooks need go into the
//! `config.toml` beside `hooks.json` the same way (see [`codex`]).

mod claude_code;
mod codex;

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::options::{InitArgs, InitClient};
use crate::serve::codex::snapshot::codex_home;

/// The environment variable the token is read from.
const TOKEN_VARIABLE: &str = "HOOKS_SERVE_TOKEN";

/// What the hooks are pointed at.
pub(super) struct Target {
    /// The server's `/hook` endpoint.
    url: String,
    /// The `hooks` program as the hook command names it.
    program: String,
    /// HTTP hooks instead of `hook-client` commands (Claude Code).
    http: bool,
}

/// What the merge did to one event.
#[derive(Debug, PartialEq, Eq)]
struct Merged {
    event: &'static str,
    change: Change,
    /// Groups of the user's own, kept.
    kept: usize,
    /// Of those, the ones that also run `hook-client` (worth a look: an
    /// older setup mixed with the user's own hooks).
    also_forwarding: usize,
}

/// A settings file's change, event by event.
#[derive(Debug, PartialEq, Eq)]
enum Change {
    Added,
    Replaced,
    Unchanged,
}

/// Runs `hooks init`.
pub(super) fn run(options: InitArgs, out: &mut dyn Write, err: &mut dyn Write) -> io::Result<u8> {
    if !(options.url.starts_with("http://") || options.url.starts_with("https://")) {
        writeln!(
            err,
            "hooks init: --url must be the server's http:// or https:// /hook endpoint, not {:?}",
            options.url
        )?;
        return Ok(2);
    }
    let target = Target {
        url: options.url.clone(),
        program: options.program.clone(),
        http: options.http,
    };
    let (path, groups, is_ours, name): (_, _, fn(&Value) -> bool, _) = match options.client {
        InitClient::ClaudeCode => (
            options.settings.clone().unwrap_or_else(|| {
                options
                    .dir
                    .clone()
                    .unwrap_or_else(|| PathBuf::from("."))
                    .join(claude_code::SETTINGS)
            }),
            claude_code::groups(&target),
            claude_code::is_ours,
            "Claude Code",
        ),
        InitClient::Codex if options.http => {
            writeln!(
                err,
                "hooks init: Codex runs command hooks only; --http is for Claude Code"
            )?;
            return Ok(2);
        }
        InitClient::Codex => {
            let path = match (&options.settings, &options.dir) {
                (Some(settings), _) => settings.clone(),
                (None, Some(dir)) => dir.join(codex::PROJECT_HOOKS),
                (None, None) => match codex_home() {
                    Some(home) => home.join("hooks.json"),
                    None => {
                        writeln!(
                            err,
                            "hooks init: neither CODEX_HOME nor HOME is set; name the file \
                             with --settings"
                        )?;
                        return Ok(2);
                    }
                },
            };
            (path, codex::groups(&target), codex::is_ours, "Codex")
        }
    };
    let existing = match read_settings(&path) {
        Ok(existing) => existing,
        Err(problem) => {
            writeln!(err, "hooks init: {problem}; nothing was written")?;
            return Ok(1);
        }
    };
    let had_file = existing.is_some();
    let mut settings = existing.unwrap_or_default();
    let report = match merge(&mut settings, groups, is_ours) {
        Ok(report) => report,
        Err(problem) => {
            writeln!(
                err,
                "hooks init: {}: {problem}; nothing was written",
                path.display()
            )?;
            return Ok(1);
        }
    };
    // Codex's settings beside its hooks, worked out before anything is
    // written.
    let config = if options.client == InitClient::Codex {
        let file = codex::config_file(&path);
        let planned = read_text(&file).and_then(|before| {
            codex::config(before.as_deref())
                .map(|(text, changes)| (text, changes, before.is_some()))
                .map_err(|problem| format!("{}: {problem}", file.display()))
        });
        match planned {
            Ok((text, changes, had_file)) => Some((file, text, changes, had_file)),
            Err(problem) => {
                writeln!(err, "hooks init: {problem}; nothing was written")?;
                return Ok(1);
            }
        }
    } else {
        None
    };
    if let Some((file, text, changes, had_file)) = &config {
        if options.dry_run && !changes.is_empty() {
            writeln!(out, "{text}")?;
        }
        let verb = match (options.dry_run, changes.is_empty(), had_file) {
            (_, true, _) => "already has these settings; nothing to change in",
            (true, false, _) => "would write",
            (false, false, true) => "updated",
            (false, false, false) => "wrote",
        };
        writeln!(out, "hooks init: {verb} {} (Codex)", file.display())?;
        for (key, before) in changes {
            match before {
                Some(before) => writeln!(out, "  {key} = false (was {before})")?,
                None => writeln!(out, "  {key} = false (added)")?,
            }
        }
        if !changes.is_empty() {
            writeln!(
                out,
                "  (Codex runs the login shell's profile and its shell snapshot before each \
                 shell command, outside the hooks.)"
            )?;
        }
        if !options.dry_run && !changes.is_empty() {
            if let Some(parent) = file.parent().filter(|p| !p.as_os_str().is_empty()) {
                std::fs::create_dir_all(parent)?;
            }
            if let Err(error) = std::fs::write(file, text) {
                writeln!(err, "hooks init: cannot write {}: {error}", file.display())?;
                return Ok(1);
            }
        }
    }
    let text = format!("{}\n", pretty(&Value::Object(settings)));
    let unchanged = report
        .iter()
        .all(|merged| merged.change == Change::Unchanged);
    if options.dry_run {
        writeln!(out, "{text}")?;
    }
    let verb = match (options.dry_run, unchanged, had_file) {
        (_, true, true) => "already has these hooks; nothing to change in",
        (true, _, _) => "would write",
        (false, _, true) => "updated",
        (false, _, false) => "wrote",
    };
    writeln!(out, "hooks init: {verb} {} ({name})", path.display())?;
    for Merged {
        event,
        change,
        kept,
        also_forwarding,
    } in &report
    {
        let what = match change {
            Change::Added => "added",
            Change::Replaced => "replaced the entry an earlier `hooks init` wrote",
            Change::Unchanged => "unchanged",
        };
        write!(out, "  {event}: {what}")?;
        if *kept > 0 {
            write!(
                out,
                "; {kept} hook group(s) of your own kept beside it (they run too)"
            )?;
        }
        if *also_forwarding > 0 {
            write!(
                out,
                "; {also_forwarding} of them also run hook-client: check that they are \
                 meant to (an older setup is not replaced when mixed with hooks of yours)"
            )?;
        }
        writeln!(out)?;
    }
    if !options.dry_run && !unchanged {
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent)?;
        }
        if let Err(error) = std::fs::write(&path, &text) {
            writeln!(err, "hooks init: cannot write {}: {error}", path.display())?;
            return Ok(1);
        }
    }
    writeln!(
        out,
        "Set {TOKEN_VARIABLE} in the environment {name} starts in (the same value as \
         `hooks serve`'s); it is never written into the file."
    )?;
    if options.client == InitClient::Codex
        && let Some(warning) = codex::rules_warning(&path, codex_home())
    {
        writeln!(out, "{warning}")?;
    }
    Ok(0)
}

/// The text at `path`: `None` when there is no file.
fn read_text(path: &Path) -> Result<Option<String>, String> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(Some(text)),
        Err(error) if error.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(error) => Err(format!("cannot read {}: {error}", path.display())),
    }
}

/// The settings at `path`: `None` when there is no file.
fn read_settings(path: &Path) -> Result<Option<Map<String, Value>>, String> {
    let Some(text) = read_text(path)? else {
        return Ok(None);
    };
    if text.trim().is_empty() {
        return Ok(None);
    }
    match serde_json::from_str(&text) {
        Ok(Value::Object(settings)) => Ok(Some(settings)),
        Ok(_) => Err(format!(
            "{} is not a JSON object; fix or move it, then run `hooks init` again",
            path.display()
        )),
        Err(error) => Err(format!(
            "{} is not valid JSON ({error}); fix or move it, then run `hooks init` again",
            path.display()
        )),
    }
}

/// Puts `groups` under `settings.hooks`, replacing the groups `is_ours`
/// recognises and keeping the others: per event, the change and how many
/// groups of the user's own were kept.
fn merge(
    settings: &mut Map<String, Value>,
    groups: Vec<(&'static str, Value)>,
    is_ours: fn(&Value) -> bool,
) -> Result<Vec<Merged>, String> {
    let hooks = settings
        .entry("hooks")
        .or_insert_with(|| Value::Object(Map::new()));
    let Value::Object(hooks) = hooks else {
        return Err("its `hooks` is not an object".to_owned());
    };
    let mut report = Vec::new();
    for (event, group) in groups {
        let entries = hooks
            .entry(event)
            .or_insert_with(|| Value::Array(Vec::new()));
        let Value::Array(entries) = entries else {
            return Err(format!("its `hooks.{event}` is not a list"));
        };
        // Ours: the shape `hooks init` writes — the same matcher, one hook,
        // a hook-client one. A group of the user's that also runs
        // hook-client (another matcher, beside hooks of their own) is
        // theirs: kept, and pointed out.
        let ours = |entry: &Value| {
            entry.get("matcher") == group.get("matcher")
                && entry["hooks"]
                    .as_array()
                    .is_some_and(|hooks| hooks.len() == 1 && is_ours(&hooks[0]))
        };
        let before: Vec<Value> = entries.iter().filter(|e| ours(e)).cloned().collect();
        let change = if before.is_empty() {
            Change::Added
        } else if before == [group.clone()] {
            Change::Unchanged
        } else {
            Change::Replaced
        };
        entries.retain(|entry| !ours(entry));
        let kept = entries.len();
        let also_forwarding = entries
            .iter()
            .filter(|entry| {
                entry["hooks"]
                    .as_array()
                    .is_some_and(|hooks| hooks.iter().any(is_ours))
            })
            .count();
        entries.insert(0, group);
        report.push(Merged {
            event,
            change,
            kept,
            also_forwarding,
        });
    }
    Ok(report)
}

/// One hook group: `hook` for every tool (`matcher: "*"`) when the event
/// takes a matcher, for the whole event otherwise.
fn group(matcher: bool, hook: Value) -> Value {
    if matcher {
        serde_json::json!({"matcher": "*", "hooks": [hook]})
    } else {
        serde_json::json!({"hooks": [hook]})
    }
}

/// The hook command line: `program hook-client [--client CLIENT] --url
/// URL --timeout N`, each word quoted for the shell when it needs it.
fn command_line(target: &Target, client: Option<&str>, timeout: u64) -> String {
    let mut words = vec![target.program.as_str(), "hook-client"];
    if let Some(client) = client {
        words.extend(["--client", client]);
    }
    let timeout = timeout.to_string();
    words.extend(["--url", target.url.as_str(), "--timeout", timeout.as_str()]);
    words
        .into_iter()
        .map(shell_word)
        .collect::<Vec<_>>()
        .join(" ")
}

/// `word` as one shell word.
fn shell_word(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-:=@%+,".contains(c));
    if plain {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

/// JSON with two-space indentation.
fn pretty(value: &Value) -> String {
    serde_json::to_string_pretty(value).unwrap_or_else(|_| value.to_string())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn target() -> Target {
        Target {
            url: "http://127.0.0.1:8377/hook".to_owned(),
            program: "hooks".to_owned(),
            http: false,
        }
    }

    #[test]
    fn the_users_hooks_and_settings_are_kept_and_ours_replaced() {
        let mine =
            json!({"matcher": "Bash", "hooks": [{"type": "command", "command": "./lint.sh"}]});
        let stale = json!({"matcher": "*", "hooks": [{"type": "command",
            "command": "hooks hook-client --url http://10.0.0.1:8377/hook --timeout 50"}]});
        let mut settings = json!({
            "model": "opus",
            "hooks": {"PreToolUse": [mine.clone()], "PostToolUse": [stale]},
        });
        let Value::Object(map) = &mut settings else {
            unreachable!()
        };
        let report = merge(map, claude_code::groups(&target()), claude_code::is_ours).unwrap();
        assert_eq!(
            (report[0].event, &report[0].change, report[0].kept),
            ("PreToolUse", &Change::Added, 1)
        );
        assert_eq!(
            (report[1].event, &report[1].change, report[1].kept),
            ("PostToolUse", &Change::Replaced, 0)
        );
        assert_eq!(settings["model"], "opus");
        let pre = settings["hooks"]["PreToolUse"].as_array().unwrap();
        assert_eq!(pre.len(), 2);
        assert_eq!(pre[1], mine);
        let post = settings["hooks"]["PostToolUse"].as_array().unwrap();
        assert_eq!(post.len(), 1);
        assert!(
            post[0]["hooks"][0]["command"]
                .as_str()
                .unwrap()
                .contains("127.0.0.1:8377")
        );

        // Run again: nothing changes.
        let Value::Object(map) = &mut settings else {
            unreachable!()
        };
        let again = merge(map, claude_code::groups(&target()), claude_code::is_ours).unwrap();
        assert!(
            again
                .iter()
                .all(|merged| merged.change == Change::Unchanged)
        );
    }

    #[test]
    fn a_users_own_hook_client_groups_are_kept_and_pointed_out() {
        let other_server = json!({"matcher": "Bash", "hooks": [{"type": "command",
            "command": "/usr/bin/hooks hook-client --url https://policy.example/hook --timeout 50"}]});
        let mixed = json!({"matcher": "*", "hooks": [
            {"type": "command", "command": "hooks hook-client --url http://10.0.0.9/hook --timeout 50"},
            {"type": "command", "command": "./lint.sh"}]});
        let mut settings = json!({"hooks": {"PostToolUse": [other_server.clone(), mixed.clone()]}});
        let Value::Object(map) = &mut settings else {
            unreachable!()
        };
        let report = merge(map, claude_code::groups(&target()), claude_code::is_ours).unwrap();
        let post = &report[1];
        assert_eq!(
            (
                post.change == Change::Added,
                post.kept,
                post.also_forwarding
            ),
            (true, 2, 2)
        );
        let kept = settings["hooks"]["PostToolUse"].as_array().unwrap();
        assert_eq!(kept.len(), 3);
        assert!(kept.contains(&other_server) && kept.contains(&mixed));
    }

    #[test]
    fn settings_of_the_wrong_shape_are_refused() {
        for bad in [json!({"hooks": []}), json!({"hooks": {"PreToolUse": {}}})] {
            let Value::Object(mut map) = bad else {
                unreachable!()
            };
            assert!(
                merge(
                    &mut map,
                    claude_code::groups(&target()),
                    claude_code::is_ours
                )
                .is_err()
            );
        }
    }

    #[test]
    fn the_program_and_url_are_quoted_for_the_shell() {
        let target = Target {
            url: "http://127.0.0.1:8377/hook".to_owned(),
            program: "/opt/my tools/hooks".to_owned(),
            http: false,
        };
        assert_eq!(
            command_line(&target, None, 50),
            "'/opt/my tools/hooks' hook-client --url http://127.0.0.1:8377/hook --timeout 50"
        );
        assert_eq!(shell_word("it's"), r"'it'\''s'");
        // A program path holding the subcommand's name stays one word.
        let target = Target {
            program: "/opt/x hook-client y/hooks".to_owned(),
            ..target
        };
        assert_eq!(
            command_line(&target, Some("codex"), 50),
            "'/opt/x hook-client y/hooks' hook-client --client codex --url \
             http://127.0.0.1:8377/hook --timeout 50"
        );
    }
}
