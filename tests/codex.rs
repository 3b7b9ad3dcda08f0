//! Conformance with the real Codex CLI: the unmodified native binary (npm
//! `@openai/codex`, its `0.171.0-linux-x64` build pinned in
//! tests/codex/package.json), run with `codex exec` offline against a
//! scripted fake Responses API (tests/codex/fake_responses_api.py), its
//! hooks the `hooks.json` that `hooks init codex` writes, pointed at
//! `hooks hook-client --client codex` → `hooks serve`. The assertions are on
//! what the fake model received as each call's output: what the model
//! reads is what the hooks decided.
//!
//! Without the binary (`npm ci --prefix tests/codex`) or Python 3, the test
//! prints SKIPPED and passes without running.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use hooks::config::{AgentConfig, ConfigFormat};
use hooks::prelude::*;
use hooks::serve::{ServeConfig, serve};
use hooks_testkit::programs;
use serde_json::{Value, json};

#[path = "support/approval_stack.rs"]
mod approval_stack;
#[path = "support/fake_model.rs"]
mod fake_model;

const TOKEN: &str = "codex-conformance-7f3e";

/// The private key the model must never read.
const KEY_BODY: &str = "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ";

#[pre_tool_use(priority = 5, when = tool_name == "Bash" && args.command contains "rm -rf")]
async fn codex_no_rm_rf(_ctx: &HookContext) -> HookResult {
    HookResult::block("`rm -rf` is not allowed in this repository")
}

/// Withholds any result whose text holds a private key.
#[post_tool_use(priority = 10)]
async fn codex_no_private_keys(ctx: &HookContext) -> HookResult {
    let seen = ctx
        .output()
        .map(|output| output.all_text())
        .unwrap_or_default();
    if seen.contains("PRIVATE KEY") {
        HookResult::block("the result holds a private key")
    } else {
        HookResult::allow()
    }
}

const AGENT: &str = r#"
agent: codex
hooks:
  class_hooks:
    - codex_no_rm_rf
    - codex_no_private_keys
    - name: result_truncate
      config: { max_chars: 40 }
    - audit_log
"#;

/// The native binary, or why the test skips.
fn codex() -> Option<PathBuf> {
    let binary = Path::new(env!("CARGO_MANIFEST_DIR")).join(
        "tests/codex/node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex",
    );
    let missing = if !binary.exists() {
        Some("the Codex binary is missing (run `npm ci --prefix tests/codex`)")
    } else if !programs::runs("python3") || !programs::runs("bash") {
        Some("python3 or bash is missing")
    } else {
        None
    };
    if let Some(why) = missing {
        println!("SKIPPED: {why}");
        return None;
    }
    Some(binary)
}

/// A `hooks serve` for the suite's agent: its URL.
async fn start_server() -> String {
    let config = AgentConfig::parse(AGENT, ConfigFormat::Yaml, "agent.yaml", None).expect("config");
    let (resources, _database, _feishu, _callback) = approval_stack::resources().await;
    let agent = Agent::build(config, &resources).expect("agent");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let url = format!("http://{}/hook", listener.local_addr().expect("addr"));
    tokio::spawn(serve(
        listener,
        agent,
        ServeConfig::with_token(TOKEN).org("acme").user("dev"),
    ));
    url
}

/// The work directory's files: a long one and a private key.
fn work() -> tempfile::TempDir {
    let work = tempfile::tempdir().expect("dir");
    let long: String = (1..=20)
        .map(|n| format!("line {n:02} of the file\n"))
        .collect();
    std::fs::write(work.path().join("long.txt"), long).expect("long.txt");
    let key = format!(
        "-----BEGIN OPENSSH PRIVATE KEY-----\n{KEY_BODY}\n-----END OPENSSH PRIVATE KEY-----\n"
    );
    std::fs::write(work.path().join("id_rsa"), key).expect("id_rsa");
    work
}

/// One `codex exec` in `work`, the model running `commands` one per turn
/// through Codex's shell tool, with the hooks `hooks init codex` wrote for
/// the server at `url` (`program` naming the `hooks` binary).
async fn run_codex(codex: &Path, url: &str, program: &str, commands: &[&str], work: &Path) -> Run {
    let scratch = tempfile::tempdir().expect("dir");
    let (home, codex_home) = (scratch.path().join("home"), scratch.path().join("codex"));
    std::fs::create_dir_all(&home).expect("home");
    std::fs::create_dir_all(&codex_home).expect("codex home");

    let mut turns: Vec<Value> = commands
        .iter()
        .map(|cmd| json!({"tool_calls": [{"name": "exec_command", "arguments": {"cmd": cmd}}]}))
        .collect();
    turns.push(json!({"text": "All done."}));
    let script = scratch.path().join("script.json");
    std::fs::write(&script, Value::Array(turns).to_string()).expect("script");
    let log = scratch.path().join("api.jsonl");
    let (mut api, port) =
        fake_model::start("tests/codex/fake_responses_api.py", &script, &log).await;

    // Offline: a provider on the fake, and nothing that reaches out
    // (analytics, the plugin catalogue).
    std::fs::write(
        codex_home.join("config.toml"),
        format!(
            r#"model = "gpt-5.5"
model_provider = "fake"
approval_policy = "never"
sandbox_mode = "workspace-write"
check_for_update_on_startup = false

[model_providers.fake]
name = "Fake"
base_url = "http://127.0.0.1:{port}/v1"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0

[analytics]
enabled = false

[features]
plugins = false
"#
        ),
    )
    .expect("config.toml");
    let init = std::process::Command::new(env!("CARGO_BIN_EXE_hooks"))
        .args([
            "init",
            "codex",
            "--url",
            url,
            "--program",
            program,
            "--settings",
        ])
        .arg(codex_home.join("hooks.json"))
        .output()
        .expect("hooks init runs");
    assert!(
        init.status.success(),
        "hooks init: {}",
        String::from_utf8_lossy(&init.stderr)
    );

    let run = tokio::process::Command::new(codex)
        .args([
            "exec",
            "--strict-config",
            "--skip-git-repo-check",
            "--ephemeral",
        ])
        // Hooks Codex has not been told to trust do not run at all.
        .args(["--dangerously-bypass-hook-trust", "--color", "never", "-C"])
        .arg(work)
        .arg("Go through the steps.")
        .current_dir(work)
        .stdin(Stdio::null())
        .env_clear()
        .env("HOME", &home)
        .env("CODEX_HOME", &codex_home)
        .env("PATH", "/usr/local/bin:/usr/bin:/bin")
        .env("HOOKS_SERVE_TOKEN", TOKEN)
        .kill_on_drop(true)
        .output();
    // Codex waits for an unreachable model forever: the run is bounded.
    let out = tokio::time::timeout(Duration::from_secs(180), run)
        .await
        .expect("Codex finishes within 3 minutes")
        .expect("Codex runs");
    let _ = api.kill().await;
    assert!(
        out.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let requests = std::fs::read_to_string(&log).unwrap_or_default();
    let outputs = outputs(&requests);
    let results = (1..=commands.len())
        .map(|n| outputs.get(&format!("call_fake_{n}")).cloned())
        .collect();
    Run {
        results,
        requests,
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// One run of Codex.
struct Run {
    /// The output the model received for each command, in order.
    results: Vec<Option<String>>,
    /// Every request the fake model received, as logged.
    requests: String,
    /// Codex's stderr (its transcript of the run, hook statuses included).
    stderr: String,
}

impl Run {
    /// Command `n`'s output (from 1), which the model must have had.
    fn result(&self, n: usize) -> String {
        self.results[n - 1]
            .clone()
            .unwrap_or_else(|| panic!("no output for call {n}: {}\n{}", self.requests, self.stderr))
    }
}

/// The output of every tool call the fake model received, by `call_id`.
fn outputs(requests: &str) -> std::collections::BTreeMap<String, String> {
    let mut outputs = std::collections::BTreeMap::new();
    for line in requests.lines() {
        let Ok(request) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        for item in request["body"]["input"].as_array().into_iter().flatten() {
            if item["type"] != "function_call_output" {
                continue;
            }
            let text = match &item["output"] {
                Value::String(text) => text.clone(),
                other => other.to_string(),
            };
            if let Some(id) = item["call_id"].as_str() {
                outputs.insert(id.to_owned(), text);
            }
        }
    }
    outputs
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn codex_reads_what_the_hooks_decided() {
    let Some(codex) = codex() else {
        return;
    };
    let url = start_server().await;
    let work = work();
    let marker = work.path().join("removed");
    let remove = format!("rm -rf ./build; touch {}", marker.display());
    let commands = [remove.as_str(), "cat id_rsa", "cat long.txt", "echo plain"];
    let hooks_binary = env!("CARGO_BIN_EXE_hooks");
    let run = run_codex(&codex, &url, hooks_binary, &commands, work.path()).await;
    let result = |n: usize| run.result(n);

    assert!(
        !run.requests.contains(KEY_BODY),
        "the key reached the model"
    );
    // 1. A pre block: the command did not run, the model reads why.
    assert!(!marker.exists(), "the blocked command never ran");
    let text = result(1);
    assert!(
        text.contains("`rm -rf` is not allowed in this repository"),
        "{text}"
    );
    // 2. A withheld result: the model reads why, and nothing of the key.
    let text = result(2);
    assert!(text.contains("the result holds a private key"), "{text}");
    // 3. A rewritten (truncated) result is the whole result the model reads.
    let text = result(3);
    assert!(text.starts_with("line 01 of the file"), "{text}");
    assert!(text.contains("[truncated"), "{text}");
    assert!(!text.contains("line 20"), "{text}");
    // 4. A result no hook touched reaches the model as Codex gives it.
    let text = result(4);
    assert!(text.contains("plain"), "{text}");
}

/// A hook server that answers session starts and fails every tool event
/// (HTTP 500): its URL.
async fn failing_server() -> String {
    use axum::http::StatusCode;
    let app = axum::Router::new().route(
        "/hook",
        axum::routing::post(|body: String| async move {
            if body.contains("\"SessionStart\"") {
                (StatusCode::OK, "{}")
            } else {
                (
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "{\"error\": \"the database is down\"}",
                )
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let url = format!("http://{}/hook", listener.local_addr().expect("addr"));
    tokio::spawn(async move { axum::serve(listener, app).await });
    url
}

/// A server that fails, or a `hooks` program that is not there: Codex
/// would let the call go ahead on a failed hook; the command `hooks init
/// codex` writes blocks it, and the model reads why.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_the_server_failing_or_the_client_missing_calls_are_blocked() {
    let Some(codex) = codex() else {
        return;
    };
    let url = failing_server().await;
    let hooks_binary = env!("CARGO_BIN_EXE_hooks");
    for (form, program, why) in [
        ("server failing", hooks_binary, "HTTP 500"),
        ("client missing", "/nonexistent/hooks", "could not run"),
    ] {
        let work = work();
        let marker = work.path().join("ran");
        let command = format!("touch {}; echo ran", marker.display());
        let run = run_codex(&codex, &url, program, &[command.as_str()], work.path()).await;
        assert!(!marker.exists(), "{form}: the command never ran");
        let text = run.result(1);
        assert!(
            text.contains("the call is blocked") && text.contains(why),
            "{form}: {text}"
        );
    }
}

/// A server that cannot be reached stops the session at its start: no
/// model call is made, so no tool runs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_the_server_down_the_session_does_not_start() {
    let Some(codex) = codex() else {
        return;
    };
    let closed = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        listener.local_addr().expect("addr")
    };
    let url = format!("http://{closed}/hook");
    let work = work();
    let marker = work.path().join("ran");
    let command = format!("touch {}; echo ran", marker.display());
    let hooks_binary = env!("CARGO_BIN_EXE_hooks");
    let run = run_codex(&codex, &url, hooks_binary, &[command.as_str()], work.path()).await;
    assert!(!marker.exists(), "the command never ran");
    assert!(
        run.requests.is_empty(),
        "the model was never called: {}",
        run.requests
    );
    assert!(
        run.stderr.contains("hook: SessionStart Stopped"),
        "{}",
        run.stderr
    );
}
