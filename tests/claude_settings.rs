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
            "PreToolUse": [
                {"matcher": "Bash", "hooks": [
                    // The rule selects every Bash call (Claude Code matches
                    // each subcommand, wider than any test on the line):
                    // the script decides.
                    {"type": "command", "if": "Bash(git push *)",
                     "command": "if grep -q 'git push'; then echo 'pushes go through review' >&2; exit 2; fi",
                     "statusMessage": "checking pushes"}]},
                {"matcher": "Lint", "hooks": [{"type": "command", "onFailure": "allow", "command": "exit 1"}]},
                {"matcher": "Make", "hooks": [{"type": "command", "onFailure": "block", "command": "exit 1"}]}
            ],
            "PostToolUseFailure": [{"matcher": "Bash", "hooks": [
                {"type": "command", "command": "cat > failure.json"}
            ]}]
        }
    }));
    let registry = registry(&path).await;

    for sneaky in [
        "git push origin main",
        "true && git push -f origin main",
        "FOO=1 git push",
    ] {
        let push = bash(&registry, "t1", sneaky, false).await;
        assert!(!push.tool_ran, "{sneaky}");
        assert!(
            push.observation
                .to_string()
                .contains("pushes go through review")
        );
    }
    let status = bash(&registry, "t2", "git status", false).await;
    assert!(status.tool_ran, "the script lets other commands through");

    let tool = async |_: &Value| Ok::<_, String>(json!("ok"));
    let call = |name: &str| HookContext::tool_call(name, json!({})).with_tool_call_id("t3");
    let lint = registry.run_tool_call(call("Lint"), tool).await;
    assert!(lint.tool_ran, "onFailure: allow is fail_open");
    let make = registry.run_tool_call(call("Make"), tool).await;
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
                {"type": "command", "onFailure": "maybe", "command": "true"}
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
        "the Stop event is not supported",
    ] {
        assert!(errors.contains(part), "{part:?} missing from\n{errors}");
    }

    // A header naming a variable its handler does not allow is refused when
    // the agent is built: no secret is read from a variable nobody listed.
    let (_project, path) = settings_file(&json!({
        "hooks": {"PreToolUse": [{"hooks": [
            {"type": "http", "url": "http://127.0.0.1:9/hook",
             "headers": {"Authorization": "Bearer $HOME"}}
        ]}]}
    }));
    let resources = hooks::std_hooks::offline_resources([] as [&str; 0])
        .await
        .expect("resources");
    let errors = AgentConfig::load(&path)
        .and_then(|config| config.build_registry(&resources))
        .expect_err("refused")
        .to_string();
    assert!(
        errors.contains("hooks.PreToolUse[0].hooks[0]")
            && errors
                .contains("names $HOME, which `allowed_env_vars` (`allowedEnvVars`) does not list"),
        "{errors}"
    );
}

/// A policy server for the `http` handlers: denies `rm`, rewrites `git
/// push --force`, fails on `crash`, and checks the token it was sent.
async fn policy_server() -> (String, tokio::task::JoinHandle<()>) {
    use axum::http::{HeaderMap, StatusCode};
    use axum::routing::post;
    async fn decide(
        headers: HeaderMap,
        axum::Json(input): axum::Json<Value>,
    ) -> axum::response::Response {
        use axum::response::IntoResponse;
        if headers.get("authorization").and_then(|v| v.to_str().ok())
            != Some("Bearer policy-token-1")
        {
            return (StatusCode::UNAUTHORIZED, "no token").into_response();
        }
        let command = input["tool_input"]["command"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        let answer = if command.starts_with("rm ") {
            json!({"hookSpecificOutput": {"hookEventName": "PreToolUse",
                   "permissionDecision": "deny", "permissionDecisionReason": "no deleting here"}})
        } else if command.contains("--force") {
            json!({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow",
                   "updatedInput": {"command": command.replace(" --force", "")}}})
        } else if command.starts_with("crash") {
            return (
                StatusCode::INTERNAL_SERVER_ERROR,
                "policy store unavailable",
            )
                .into_response();
        } else if command.starts_with("plain") {
            // A page, not a hook answer: not an "allow".
            return (StatusCode::OK, "ok").into_response();
        } else {
            json!({})
        };
        axum::Json(answer).into_response()
    }
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let url = format!("http://{}/hook", listener.local_addr().expect("addr"));
    let app = axum::Router::new().route("/hook", post(decide));
    (
        url,
        tokio::spawn(async move { axum::serve(listener, app).await.expect("serve") }),
    )
}

#[tokio::test]
async fn http_handlers_post_the_input_and_fail_closed() {
    let (url, _server) = policy_server().await;
    // SAFETY: this test binary sets this variable only here, before any
    // hook reads the environment.
    unsafe { std::env::set_var("HOOKS_TEST_POLICY_TOKEN", "policy-token-1") };
    let closed = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        format!("http://{}/hook", listener.local_addr().expect("addr"))
    };
    let (_project, path) = settings_file(&json!({
        "hooks": {"PreToolUse": [
            {"matcher": "Bash", "hooks": [
                {"type": "http", "url": url, "timeout": 5,
                 "headers": {"Authorization": "Bearer ${HOOKS_TEST_POLICY_TOKEN}"},
                 "allowedEnvVars": ["HOOKS_TEST_POLICY_TOKEN"]}]},
            {"matcher": "Deploy", "hooks": [{"type": "http", "url": closed, "timeout": 5}]},
            {"matcher": "Lint", "hooks": [{"type": "http", "url": closed, "timeout": 5, "onFailure": "allow"}]}
        ]}
    }));
    let registry = registry(&path).await;

    let rm = bash(&registry, "h1", "rm -rf build", false).await;
    assert!(!rm.tool_ran);
    assert!(
        rm.observation.to_string().contains("no deleting here"),
        "{}",
        rm.observation
    );
    let push = bash(&registry, "h2", "git push --force origin main", false).await;
    assert!(push.tool_ran);
    assert_eq!(push.args, json!({"command": "git push origin main"}));
    let crash = bash(&registry, "h3", "crash now", false).await;
    assert!(!crash.tool_ran, "a 500 fails closed");
    assert!(
        crash.observation.to_string().contains("HTTP 500"),
        "{}",
        crash.observation
    );
    let plain = bash(&registry, "h4", "plain text please", false).await;
    assert!(
        !plain.tool_ran,
        "a 2xx answer that is not a JSON object fails closed"
    );
    let fine = bash(&registry, "h4", "ls", false).await;
    assert!(fine.tool_ran);

    let call = |tool: &str| HookContext::tool_call(tool, json!({})).with_tool_call_id("h5");
    let tool = async |_: &Value| Ok::<_, String>(json!("ok"));
    let deploy = registry.run_tool_call(call("Deploy"), tool).await;
    assert!(
        !deploy.tool_ran,
        "an endpoint that cannot be reached fails closed"
    );
    assert!(
        deploy
            .observation
            .to_string()
            .contains("could not be reached"),
        "{}",
        deploy.observation
    );
    let lint = registry.run_tool_call(call("Lint"), tool).await;
    assert!(lint.tool_ran, "onFailure: allow");
}
