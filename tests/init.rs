//! `hooks init <client>`, run as the binary: what it writes, what it keeps
//! of a user's own settings, and what it refuses. (The real clients run on
//! the files it writes in tests/claude_code.rs and tests/codex.rs.)

use std::path::Path;
use std::process::{Command, Output};

use serde_json::{Value, json};

fn init(args: &[&str], dir: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_hooks"))
        .arg("init")
        .args(args)
        .arg("--dir")
        .arg(dir)
        .output()
        .expect("hooks init runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn claude_code_settings_of_the_users_own_are_kept_and_the_changes_said() {
    let project = tempfile::tempdir().unwrap();
    let path = project.path().join(".claude/settings.json");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let mine = json!({"matcher": "Bash", "hooks": [{"type": "command", "command": "./lint.sh"}]});
    std::fs::write(
        &path,
        json!({"permissions": {"allow": ["Bash(ls:*)"]}, "hooks": {"PreToolUse": [mine]}})
            .to_string(),
    )
    .unwrap();

    let out = init(
        &["claude-code", "--url", "http://10.1.2.3:8377/hook"],
        project.path(),
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let said = text(&out.stdout);
    assert!(
        said.contains("PreToolUse: added; 1 hook group(s) of your own kept"),
        "{said}"
    );
    let written: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    assert_eq!(written["permissions"], json!({"allow": ["Bash(ls:*)"]}));
    let pre = written["hooks"]["PreToolUse"].as_array().unwrap();
    assert_eq!(pre.len(), 2, "{written}");
    assert_eq!(pre[1]["hooks"][0]["command"], "./lint.sh");
    assert_eq!(
        pre[0]["hooks"][0]["command"],
        "hooks hook-client --url http://10.1.2.3:8377/hook --timeout 170"
    );
    assert_eq!(pre[0]["hooks"][0]["onFailure"], "block");
    assert!(
        !std::fs::read_to_string(&path).unwrap().contains("TOKEN="),
        "no token value in the file"
    );

    // Again, on another URL: ours replaced, the user's still there once.
    let out = init(
        &["claude-code", "--url", "http://10.9.9.9:8377/hook"],
        project.path(),
    );
    assert!(out.status.success());
    assert!(
        text(&out.stdout).contains("PreToolUse: replaced the entry an earlier `hooks init` wrote"),
        "{}",
        text(&out.stdout)
    );
    let written: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    let pre = written["hooks"]["PreToolUse"].as_array().unwrap();
    assert_eq!(pre.len(), 2, "{written}");
    assert!(written.to_string().contains("10.9.9.9") && !written.to_string().contains("10.1.2.3"));

    // And again unchanged: nothing to write.
    let out = init(
        &["claude-code", "--url", "http://10.9.9.9:8377/hook"],
        project.path(),
    );
    assert!(
        text(&out.stdout).contains("already has these hooks"),
        "{}",
        text(&out.stdout)
    );
}

#[test]
fn a_dry_run_writes_nothing_and_a_broken_file_is_left_alone() {
    let project = tempfile::tempdir().unwrap();
    let out = init(&["claude-code", "--dry-run"], project.path());
    assert!(out.status.success());
    assert!(text(&out.stdout).contains("\"PreToolUse\""));
    assert!(text(&out.stdout).contains("would write"));
    assert!(!project.path().join(".claude").exists(), "nothing written");

    let path = project.path().join(".claude/settings.json");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    for broken in [
        "{\"hooks\": ",
        "[1, 2]",
        "{\"hooks\": {\"PreToolUse\": {}}}",
    ] {
        std::fs::write(&path, broken).unwrap();
        let out = init(&["claude-code"], project.path());
        assert_eq!(out.status.code(), Some(1), "{broken}");
        assert!(
            text(&out.stderr).contains("nothing was written"),
            "{}",
            text(&out.stderr)
        );
        assert_eq!(std::fs::read_to_string(&path).unwrap(), broken);
    }

    let out = init(&["claude-code", "--url", "ftp://x/hook"], project.path());
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn codex_hooks_fail_closed_in_the_command_itself() {
    let project = tempfile::tempdir().unwrap();
    let out = init(&["codex"], project.path());
    assert!(out.status.success(), "{}", text(&out.stderr));
    let written: Value =
        serde_json::from_slice(&std::fs::read(project.path().join(".codex/hooks.json")).unwrap())
            .unwrap();
    for event in ["PreToolUse", "PostToolUse", "SessionStart"] {
        let hook = &written["hooks"][event][0]["hooks"][0];
        let command = hook["command"].as_str().unwrap();
        assert!(
            command
                .starts_with("hooks hook-client --client codex --url http://127.0.0.1:8377/hook"),
            "{command}"
        );
        // Codex lets a call go ahead on any failed hook: the command turns
        // every failure of hook-client into exit 2 with a reason.
        assert!(command.contains("exit 2; }"), "{command}");
        assert!(hook["timeout"].as_u64().unwrap() >= 60);
    }
    assert!(written["hooks"].get("PostToolUseFailure").is_none());

    // Beside the hooks, Codex's settings turn off the code it runs before
    // each command outside the hooks.
    let config = std::fs::read_to_string(project.path().join(".codex/config.toml")).unwrap();
    assert!(
        config.contains("allow_login_shell = false")
            && config.contains("[features]\nshell_snapshot = false"),
        "{config}"
    );
    let said = text(&out.stdout);
    assert!(
        said.contains("features.shell_snapshot = false (added)"),
        "{said}"
    );

    let out = init(&["codex", "--http"], project.path());
    assert_eq!(out.status.code(), Some(2), "Codex runs command hooks only");
}

#[test]
fn codex_settings_of_the_users_own_are_kept_and_a_broken_file_changes_nothing() {
    let project = tempfile::tempdir().unwrap();
    let config = project.path().join(".codex/config.toml");
    std::fs::create_dir_all(config.parent().unwrap()).unwrap();
    let mine = "model = \"gpt-5.5\"\n\n[features]\nshell_snapshot = true # faster\n";
    std::fs::write(&config, mine).unwrap();
    let out = init(&["codex"], project.path());
    assert!(out.status.success(), "{}", text(&out.stderr));
    let said = text(&out.stdout);
    assert!(
        said.contains("features.shell_snapshot = false (was true)"),
        "{said}"
    );
    let written = std::fs::read_to_string(&config).unwrap();
    assert!(written.starts_with("model = \"gpt-5.5\"\n"), "{written}");
    assert!(written.contains("shell_snapshot = false"), "{written}");
    let again = init(&["codex"], project.path());
    assert!(
        text(&again.stdout).contains("already has these settings"),
        "{}",
        text(&again.stdout)
    );

    // A settings file Codex could not read either: nothing is written.
    let other = tempfile::tempdir().unwrap();
    let config = other.path().join(".codex/config.toml");
    std::fs::create_dir_all(config.parent().unwrap()).unwrap();
    std::fs::write(&config, "model = \n").unwrap();
    let out = init(&["codex"], other.path());
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("is not valid TOML")
            && text(&out.stderr).contains("nothing was written"),
        "{}",
        text(&out.stderr)
    );
    assert!(!other.path().join(".codex/hooks.json").exists());
    assert_eq!(std::fs::read_to_string(&config).unwrap(), "model = \n");
}
