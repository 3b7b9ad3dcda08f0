//! Conformance with the real Claude Code: the unmodified native binary
//! (npm `@anthropic-ai/claude-code-linux-x64`, pinned in
//! tests/claude_code/package.json), run headless and offline against a
//! scripted fake Messages API (tests/claude_code/fake_messages_api.py), its
//! hooks pointed at `hooks hook-client` → `hooks serve` with the settings
//! `hooks init claude-code` writes (which docs/claude-code.md shows). The
//! assertions are on what the fake model
//! received in its `tool_result` blocks: what the model reads is what the
//! hooks decided.
//!
//! Without the binary (`npm ci --prefix tests/claude_code`), Node and the
//! reference MCP servers (`npm ci --prefix tests/mcp`), or Python 3, the
//! test prints SKIPPED and passes without running.

use std::path::{Path, PathBuf};
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

const TOKEN: &str = "conformance-token-51c2";

/// The private key the model must never read.
const KEY_BODY: &str = "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ";

#[pre_tool_use(priority = 5, when = tool_name == "Bash" && args.command contains "rm -rf")]
async fn no_rm_rf(_ctx: &HookContext) -> HookResult {
    HookResult::block("`rm -rf` is not allowed in this repository")
}

/// Withholds any result whose text holds a private key, on any tool: the
/// same hook under every surface, reading the text the model would read.
#[post_tool_use(priority = 10)]
async fn no_private_keys(ctx: &HookContext) -> HookResult {
    let seen = match ctx.output() {
        Some(output) => output.all_text(),
        None => ctx.tool_error().unwrap_or_default().to_owned(),
    };
    if seen.contains("PRIVATE KEY") {
        HookResult::block("the result holds a private key")
    } else {
        HookResult::allow()
    }
}

const AGENT: &str = r#"
agent: claude-code
hooks:
  class_hooks:
    - no_rm_rf
    - no_private_keys
    - name: result_truncate
      config: { max_chars: 40 }
    - audit_log
"#;

/// The native binary, or why the test skips.
fn claude() -> Option<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let binary =
        root.join("tests/claude_code/node_modules/@anthropic-ai/claude-code-linux-x64/claude");
    let mcp = root.join("tests/mcp/node_modules/@modelcontextprotocol");
    let missing = if !binary.exists() {
        Some("the Claude Code binary is missing (run `npm ci --prefix tests/claude_code`)")
    } else if !mcp.join("server-filesystem/dist/index.js").exists()
        || !mcp.join("server-everything/dist/index.js").exists()
    {
        Some("the reference MCP servers are missing (run `npm ci --prefix tests/mcp`)")
    } else if !programs::runs("python3") || !programs::runs("node") {
        Some("python3 or node is missing")
    } else {
        None
    };
    if let Some(why) = missing {
        println!("SKIPPED: {why}");
        return None;
    }
    Some(binary)
}

/// The two ways to point Claude Code at the server: `hook-client`
/// commands, and HTTP hooks (`hooks init claude-code --http`).
const HOOK_CLIENT: bool = false;
const HTTP: bool = true;

/// Runs `hooks init claude-code` for `project`: the settings file the run
/// uses, unchanged, with the `hooks` binary and the server's URL of this
/// run.
fn init_settings(http: bool, hooks: &Path, project: &Path, url: &str) {
    let mut init = std::process::Command::new(hooks);
    init.args(["init", "claude-code", "--url", url, "--dir"])
        .arg(project)
        .arg("--program")
        .arg(hooks);
    if http {
        init.arg("--http");
    }
    let out = init.output().expect("hooks init runs");
    assert!(
        out.status.success(),
        "hooks init: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The settings docs/claude-code.md shows after `mark`.
fn documented_settings(mark: &str) -> Value {
    let page = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/claude-code.md"))
        .expect("docs/claude-code.md");
    let after = page
        .split(mark)
        .nth(1)
        .unwrap_or_else(|| panic!("the page marks the settings: {mark}"));
    let block = after
        .split("```json")
        .nth(1)
        .and_then(|rest| rest.split("```").next())
        .expect("a JSON block follows the mark");
    serde_json::from_str(block).expect("the documented settings are JSON")
}

/// What the page shows is what `hooks init claude-code` writes with its
/// defaults, in both forms (no Claude Code needed).
#[test]
fn the_documented_settings_are_what_hooks_init_writes() {
    let hooks_binary = Path::new(env!("CARGO_BIN_EXE_hooks"));
    for (http, mark) in [
        (HOOK_CLIENT, "<!-- hooks init claude-code -->"),
        (HTTP, "<!-- hooks init claude-code --http -->"),
    ] {
        let project = tempfile::tempdir().expect("dir");
        let mut init = std::process::Command::new(hooks_binary);
        init.args(["init", "claude-code", "--dir"])
            .arg(project.path());
        if http {
            init.arg("--http");
        }
        assert!(init.output().expect("hooks init runs").status.success());
        let written: Value = serde_json::from_slice(
            &std::fs::read(project.path().join(".claude/settings.json")).expect("written"),
        )
        .expect("JSON");
        assert_eq!(written, documented_settings(mark), "{mark}");
    }
}

/// Every `tool_result` the fake model received, by `tool_use_id`: its text
/// and whether it was an error.
fn tool_results(log: &Path) -> std::collections::BTreeMap<String, (String, bool)> {
    let mut results = std::collections::BTreeMap::new();
    let text = std::fs::read_to_string(log).unwrap_or_default();
    for line in text.lines() {
        let Ok(request) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        let messages = request["body"]["messages"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        for message in messages {
            let Some(blocks) = message["content"].as_array() else {
                continue;
            };
            for block in blocks {
                if block["type"] != "tool_result" {
                    continue;
                }
                let content = match &block["content"] {
                    Value::String(text) => text.clone(),
                    Value::Array(parts) => parts
                        .iter()
                        .filter_map(|part| part["text"].as_str())
                        .collect::<Vec<_>>()
                        .join("\n"),
                    other => other.to_string(),
                };
                let id = block["tool_use_id"].as_str().unwrap_or_default().to_owned();
                results.insert(id, (content, block["is_error"] == json!(true)));
            }
        }
    }
    results
}

/// A `hooks serve` for the suite's agent, on a port of its own: its URL and
/// its database.
async fn start_server() -> (String, hooks::std_hooks::Database) {
    let config = AgentConfig::parse(AGENT, ConfigFormat::Yaml, "agent.yaml", None).expect("config");
    start_server_for(config).await
}

/// A `hooks serve` for `config`.
async fn start_server_for(config: AgentConfig) -> (String, hooks::std_hooks::Database) {
    let (resources, database, _feishu, _callback) = approval_stack::resources().await;
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
    (url, database)
}

/// One headless run of Claude Code in a scratch project (whose settings
/// `hooks init` wrote),
/// the model making `calls` one per turn: the `tool_result` the model got
/// for each call, in order, and Claude Code's JSON output.
struct Run {
    /// Each call's `tool_result`, if the model was sent one.
    results: Vec<Option<(String, bool)>>,
    /// Claude Code's JSON output.
    output: Value,
    /// Every request the fake model received, as logged.
    requests: String,
}

impl Run {
    /// Call `n`'s `tool_result` (from 1), which the model must have had.
    fn result(&self, n: usize) -> &(String, bool) {
        self.results[n - 1]
            .as_ref()
            .unwrap_or_else(|| panic!("no tool_result for call {n}: {}", self.output))
    }
}

async fn run_claude(claude: &Path, calls: &[(&str, Value)], project: &Path, extra: &[&str]) -> Run {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let scratch = tempfile::tempdir().expect("dir");
    let home = scratch.path().join("home");
    std::fs::create_dir_all(&home).expect("home");
    assert!(
        project.join(".claude/settings.json").exists(),
        "`hooks init` wrote the project's settings"
    );
    let servers = root.join("tests/mcp/node_modules/@modelcontextprotocol");
    let mcp_config = json!({"mcpServers": {
        "files": {"command": "node", "args": [
            servers.join("server-filesystem/dist/index.js").display().to_string(),
            project.display().to_string()]},
        "everything": {"command": "node", "args": [
            servers.join("server-everything/dist/index.js").display().to_string()]},
    }});
    let mcp_path = scratch.path().join("mcp.json");
    std::fs::write(&mcp_path, mcp_config.to_string()).expect("mcp.json");

    let mut turns: Vec<Value> = calls
        .iter()
        .map(|(name, input)| json!({"tool_use": [{"name": name, "input": input}]}))
        .collect();
    turns.push(json!({"text": "All done."}));
    let script = scratch.path().join("script.json");
    std::fs::write(&script, Value::Array(turns).to_string()).expect("script");
    let log = scratch.path().join("api.jsonl");
    let (mut api, port) =
        fake_model::start("tests/claude_code/fake_messages_api.py", &script, &log).await;

    let run = tokio::process::Command::new(claude)
        .args(["-p", "Go through the steps.", "--output-format", "json"])
        .args(["--permission-mode", "bypassPermissions", "--mcp-config"])
        .arg(&mcp_path)
        .args(extra)
        .current_dir(project)
        .env_clear()
        .env("HOME", &home)
        .env(
            "PATH",
            "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
        )
        .env("ANTHROPIC_BASE_URL", format!("http://127.0.0.1:{port}"))
        .env("ANTHROPIC_API_KEY", "sk-fake")
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        .env("DISABLE_TELEMETRY", "1")
        .env("IS_SANDBOX", "1")
        .env("HOOKS_SERVE_TOKEN", TOKEN)
        .kill_on_drop(true)
        .output();
    let out = tokio::time::timeout(Duration::from_secs(240), run)
        .await
        .expect("Claude Code finishes within 4 minutes")
        .expect("Claude Code runs");
    let _ = api.kill().await;
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let by_id = tool_results(&log);
    let results = (1..=calls.len())
        .map(|n| by_id.get(&format!("toolu_fake_{n}")).cloned())
        .collect();
    let output = serde_json::from_str(&stdout).unwrap_or(Value::String(stdout));
    let requests = std::fs::read_to_string(&log).unwrap_or_default();
    Run {
        results,
        output,
        requests,
    }
}

/// The project's files: a long one and a private key.
fn project() -> tempfile::TempDir {
    let project = tempfile::tempdir().expect("dir");
    let long: String = (1..=20)
        .map(|n| format!("line {n:02} of the file\n"))
        .collect();
    std::fs::write(project.path().join("long.txt"), &long).expect("long.txt");
    let key = format!(
        "-----BEGIN OPENSSH PRIVATE KEY-----\n{KEY_BODY}\n-----END OPENSSH PRIVATE KEY-----\n"
    );
    std::fs::write(project.path().join("id_rsa"), &key).expect("id_rsa");
    project
}

/// The model's calls, one per turn, over the project at `dir`.
fn calls(dir: &str) -> Vec<(&'static str, Value)> {
    vec![
        (
            "Bash",
            json!({"command": "rm -rf ./build", "description": "clean"}),
        ),
        (
            "Bash",
            json!({"command": "seq 1 100", "description": "count"}),
        ),
        ("Read", json!({"file_path": format!("{dir}/long.txt")})),
        ("Read", json!({"file_path": format!("{dir}/id_rsa")})),
        (
            "Bash",
            json!({"command": "cat id_rsa", "description": "show the key"}),
        ),
        (
            "mcp__files__read_text_file",
            json!({"path": format!("{dir}/long.txt")}),
        ),
        (
            "mcp__files__read_text_file",
            json!({"path": format!("{dir}/id_rsa")}),
        ),
        ("mcp__everything__echo", json!({"message": "m".repeat(100)})),
    ]
}

/// What the model must have read for each of [`calls`].
fn check_results(form: &str, run: &Run) {
    // The key never reached the model, in any request.
    assert!(
        !run.requests.contains(KEY_BODY),
        "{form}: the key reached the model"
    );
    // 1. A pre block: the tool did not run, the model reads why.
    let (text, error) = run.result(1);
    assert!(
        *error && text.contains("`rm -rf` is not allowed"),
        "{form}: {text}"
    );

    // 2. Bash, cut to 40 characters of the 291 the model would have read.
    let (text, _) = run.result(2);
    assert!(text.starts_with("1\n2\n3\n"), "{form}: {text}");
    assert!(
        text.contains("[truncated: showing 40 of 291 characters]"),
        "{form}: {text}"
    );
    assert!(!text.contains("\n99\n"), "{form}: {text}");

    // 3. Read, cut in the file's text (Claude Code numbers the lines).
    let (text, _) = run.result(3);
    assert!(text.contains("line 01 of the file"), "{form}: {text}");
    assert!(
        text.contains("[truncated: showing 40 of 400 characters]"),
        "{form}: {text}"
    );
    assert!(!text.contains("line 20"), "{form}: {text}");

    // 4, 5, 7. The key, read with Read, Bash and an MCP tool: withheld.
    for n in [4, 5, 7] {
        let (text, _) = run.result(n);
        assert!(
            !text.contains(KEY_BODY),
            "{form}: call {n}: the key reached the model: {text}"
        );
        assert!(
            text.contains("the result holds a private key"),
            "{form}: call {n}: {text}"
        );
    }

    // 6. An MCP tool with structured content: its text cut alike.
    let (text, _) = run.result(6);
    assert!(text.contains("line 01"), "{form}: {text}");
    assert!(text.contains("[truncated: showing 40 of"), "{form}: {text}");
    assert!(!text.contains("line 20"), "{form}: {text}");

    // 8. An MCP tool answering content blocks: rewritten.
    let (text, _) = run.result(8);
    assert!(
        text.contains("[truncated: showing 40 of 106 characters]"),
        "{form}: {text}"
    );
    assert!(!text.contains(&"m".repeat(50)), "{form}: {text}");
}

/// Both documented settings — `hook-client` and HTTP hooks — in the real
/// Claude Code: what the model reads is what the hooks decided, and the
/// audit log says what it was sent.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_code_reads_what_the_hooks_decided() {
    let Some(claude) = claude() else {
        return;
    };
    let hooks_binary = Path::new(env!("CARGO_BIN_EXE_hooks"));
    let (url, database) = start_server().await;
    for (form, mark) in [("hook-client", HOOK_CLIENT), ("HTTP hooks", HTTP)] {
        let project = project();
        let dir = project.path().display().to_string();
        init_settings(mark, hooks_binary, project.path(), &url);
        let calls = calls(&dir);
        let run = run_claude(&claude, &calls, project.path(), &[]).await;
        check_results(form, &run);

        let session = run.output["session_id"]
            .as_str()
            .expect("Claude Code's JSON names the session")
            .to_owned();
        let mut rows = Vec::new();
        for _ in 0..100 {
            rows = database.audit_entries(&session).await.expect("audit");
            if rows.len() >= calls.len() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let sent = |id: &str| {
            rows.iter()
                .find(|row| row.tool_call_id == id)
                .and_then(|row| row.sent.clone())
        };
        assert_eq!(sent("toolu_fake_1"), None, "{form}: the tool did not run");
        assert_eq!(sent("toolu_fake_2").as_deref(), Some("rewritten"), "{form}");
        assert_eq!(sent("toolu_fake_4").as_deref(), Some("withheld"), "{form}");
        let connector = rows
            .iter()
            .find(|row| row.tool_call_id == "toolu_fake_8")
            .and_then(|row| row.connector.clone());
        assert_eq!(connector.as_deref(), Some("everything"), "{form}");
    }
}

/// A key read through `Grep` (not one of Claude Code's default tools) is
/// withheld in Grep's own shape, which keeps its `mode`.
///
/// Not covered, because Claude Code does not allow it: a failed tool's
/// error (`PostToolUseFailure`). Claude Code 2.1.337 reads neither a
/// replacement nor `continue: false` for it, and sends the error to the
/// model whatever the hooks answer (`cat id_rsa; exit 1` was tried).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_code_withholds_a_key_read_with_grep() {
    let Some(claude) = claude() else {
        return;
    };
    let hooks_binary = Path::new(env!("CARGO_BIN_EXE_hooks"));
    let (url, _database) = start_server().await;
    let project = project();
    init_settings(HOOK_CLIENT, hooks_binary, project.path(), &url);
    let dir = project.path().display().to_string();
    let calls = [
        (
            "Grep",
            json!({"pattern": ".", "path": format!("{dir}/id_rsa"), "output_mode": "content"}),
        ),
        (
            "Grep",
            json!({"pattern": "line 0[1-3]", "path": format!("{dir}/long.txt"), "output_mode": "content"}),
        ),
    ];
    let tools = ["--tools", "Bash,Read,Grep"];
    let run = run_claude(&claude, &calls, project.path(), &tools).await;
    assert!(
        !run.requests.contains(KEY_BODY),
        "the key reached the model"
    );
    let (text, _) = run.result(1);
    assert!(text.contains("the result holds a private key"), "{text}");
    let (text, _) = run.result(2);
    assert!(
        text.contains("line 01 of the file"),
        "the session went on: {text}"
    );
}

/// The server down: with the documented settings a pre event is blocked in
/// both forms (no tool runs, so there is no result to keep back).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_the_server_down_calls_are_blocked() {
    let Some(claude) = claude() else {
        return;
    };
    let hooks_binary = Path::new(env!("CARGO_BIN_EXE_hooks"));
    // Nothing listens on a port just released.
    let closed = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        listener.local_addr().expect("addr")
    };
    let url = format!("http://{closed}/hook");
    for (form, mark) in [("hook-client", HOOK_CLIENT), ("HTTP hooks", HTTP)] {
        let project = project();
        let marker = project.path().join("ran");
        let calls = [(
            "Bash",
            json!({"command": format!("touch {}; echo ran", marker.display()), "description": "mark"}),
        )];
        init_settings(mark, hooks_binary, project.path(), &url);
        let run = run_claude(&claude, &calls, project.path(), &[]).await;
        assert!(!marker.exists(), "{form}: the tool never ran");
        if let Some((text, error)) = &run.results[0] {
            assert!(*error, "{form}: the call is blocked: {text}");
        }
    }
}

/// A policy written as Python functions (a persistent hook process behind
/// `hooks serve`), in the real Claude Code: its deny is the reason the
/// model reads, and its rewrite of Bash's output is the output the model
/// reads; the secret never reaches the model.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_code_reads_what_a_python_policy_decided() {
    let Some(claude) = claude() else {
        return;
    };
    let policy_dir = tempfile::tempdir().expect("dir");
    std::fs::write(
        policy_dir.path().join("policy.py"),
        r#"
import re

SECRET = re.compile(r"TOKEN-[A-Za-z0-9]+")


def pre(call):
    if "curl " in call["tool_input"].get("command", ""):
        return {"hookSpecificOutput": {
            "permissionDecision": "deny",
            "permissionDecisionReason": "no network from this repository (python policy)",
        }}


def post(call):
    response = call.get("tool_response")
    if isinstance(response, dict) and SECRET.search(response.get("stdout", "")):
        cleaned = dict(response, stdout=SECRET.sub("TOKEN-[redacted]", response["stdout"]))
        return {"hookSpecificOutput": {"hookEventName": "PostToolUse", "updatedToolOutput": cleaned}}
"#,
    )
    .expect("the policy");
    let agent = r#"
agent: claude-code
hooks:
  commands:
    - name: python_pre
      event: PreToolUse
      matcher: Bash
      python: "policy:pre"
      timeout: 20s
    - name: python_post
      event: PostToolUse
      matcher: Bash
      python: "policy:post"
      timeout: 20s
"#;
    let config = AgentConfig::parse(
        agent,
        ConfigFormat::Yaml,
        "agent.yaml",
        Some(policy_dir.path()),
    )
    .expect("config");
    let (url, _database) = start_server_for(config).await;
    let hooks_binary = Path::new(env!("CARGO_BIN_EXE_hooks"));
    let project = project();
    init_settings(HOOK_CLIENT, hooks_binary, project.path(), &url);
    let marker = project.path().join("fetched");
    let calls = [
        (
            "Bash",
            json!({"command": format!("curl -s http://127.0.0.1:9/; touch {}", marker.display()),
                   "description": "fetch"}),
        ),
        (
            "Bash",
            json!({"command": "echo TOKEN-$((6*7))abc ok", "description": "show"}),
        ),
        (
            "Bash",
            json!({"command": "echo plain", "description": "plain"}),
        ),
    ];
    let run = run_claude(&claude, &calls, project.path(), &[]).await;
    assert!(!marker.exists(), "the denied command never ran");
    let (text, error) = run.result(1);
    assert!(
        *error && text.contains("no network from this repository (python policy)"),
        "{text}"
    );
    let (text, _) = run.result(2);
    assert!(text.contains("TOKEN-[redacted] ok"), "{text}");
    assert!(
        !run.requests.contains("TOKEN-42abc"),
        "the secret reached the model"
    );
    let (text, _) = run.result(3);
    assert!(text.contains("plain"), "{text}");
}
