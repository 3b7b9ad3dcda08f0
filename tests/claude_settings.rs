//! A Claude Code settings file as an agent config: `if` conditions
//! (permission rules), `onFailure`, and `PostToolUseFailure` handlers load
//! and run; what cannot be translated is refused with what to write.

use hooks::config::AgentConfig;
use hooks::{HookContext, HookRegistry};
use serde_json::{Value, json};

/// Writes `settings` as `<project>/.claude/settings.json`.
fn settings_file(settings: &Value) -> (tempfile::TempDir, std::path::PathBuf) {
    let project = tempfile::tempdir().expect("dir");
    let claude = project.path().join(".claude");
    std::fs::create_dir(&claude).expect("mkdir");
    let path = claude.join("settings.json");
    std::fs::write(&path, serde_json::to_vec_pretty(settings).expect("json")).expect("write");
    (project, path)
}

async fn registry(path: &std::path::Path) -> HookRegistry {
    let resources = hooks::std_hooks::offline_resources([] as [&str; 0])
        .await
        .expect("resources");
    AgentConfig::load(path)
        .and_then(|config| config.build_registry(&resources))
        .unwrap_or_else(|errors| panic!("{errors}"))
}

async fn bash(
    registry: &HookRegistry,
    id: &str,
    command: &str,
    fails: bool,
) -> hooks::ToolCallReport {
    let ctx = HookContext::tool_call("Bash", json!({"command": command})).with_tool_call_id(id);
    registry
        .run_tool_call(ctx, async |_: &Value| {
            if fails {
                Err("exit status 128: fatal: not a git repository".to_owned())
            } else {
                Ok(json!("done"))
            }
        })
        .await
}

#[tokio::test]
async fn if_conditions_on_failure_and_tool_failure_handlers_run() {
    let (project, path) = settings_file(&json!({
        "hooks": {
            "PreToolUse": [{"matcher": "Bash", "hooks": [
                {"type": "command", "if": "Bash(git push *)",
                 "command": "echo 'pushes go through review' >&2; exit 2",
                 "statusMessage": "checking pushes"},
                {"type": "command", "if": "Bash(ls:*)", "onFailure": "allow",
                 "command": "exit 1"},
                {"type": "command", "if": "Bash(make:*)", "onFailure": "block",
                 "command": "exit 1"}
            ]}],
            "PostToolUseFailure": [{"matcher": "Bash", "hooks": [
                {"type": "command", "command": "cat > failure.json"}
            ]}]
        }
    }));
    let registry = registry(&path).await;

    let push = bash(&registry, "t1", "git push origin main", false).await;
    assert!(!push.tool_ran);
    assert!(
        push.observation
            .to_string()
            .contains("pushes go through review")
    );
    let status = bash(&registry, "t2", "git status", false).await;
    assert!(
        status.tool_ran,
        "the push rule does not match: its hook does not run"
    );

    let ls = bash(&registry, "t3", "ls -la", false).await;
    assert!(ls.tool_ran, "onFailure: allow is fail_open");
    let make = bash(&registry, "t4", "make deploy", false).await;
    assert!(!make.tool_ran, "onFailure: block is fail_closed");

    // The failure handler runs after a failed tool only, with the failure input.
    let recorded = project.path().join("failure.json");
    bash(&registry, "t5", "git status", false).await;
    assert!(!recorded.exists(), "not after a success");
    bash(&registry, "t6", "git status", true).await;
    let input: Value =
        serde_json::from_slice(&std::fs::read(&recorded).expect("the hook ran")).expect("json");
    assert_eq!(input["hook_event_name"], "PostToolUseFailure");
    assert_eq!(
        input["error"],
        "exit status 128: fatal: not a git repository"
    );
    assert_eq!(input["is_interrupt"], false);
    assert_eq!(input["tool_use_id"], "t6");
    assert!(input.get("tool_response").is_none(), "{input}");
    assert_eq!(
        registry.post_tool_use().len(),
        1,
        "one post hook: the failure handler"
    );
}

#[tokio::test]
async fn rules_that_cannot_be_translated_and_unknown_events_are_refused() {
    let (_project, path) = settings_file(&json!({
        "hooks": {
            "PreToolUse": [{"hooks": [
                {"type": "command", "if": "Read(./.env)", "command": "true"},
                {"type": "command", "onFailure": "maybe", "command": "true"},
                {"type": "http", "url": "http://127.0.0.1:9/hook"}
            ]}],
            "Stop": [{"hooks": [{"type": "command", "command": "true"}]}]
        }
    }));
    let errors = AgentConfig::load(&path).expect_err("refused").to_string();
    for part in [
        "hooks.PreToolUse[0].hooks[0]",
        "write a `when` instead",
        "hooks.PreToolUse[0].hooks[1]",
        "maybe",
        "hooks.PreToolUse[0].hooks[2]",
        "the `http` type is not supported yet",
        "the Stop event is not supported",
    ] {
        assert!(errors.contains(part), "{part:?} missing from\n{errors}");
    }
}
