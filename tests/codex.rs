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

/// A call of Codex's shell tool running `command` (Codex's own wait for
/// its output, `yield_time_ms`, when it is given).
fn shell(command: &str, wait_ms: Option<u64>) -> Value {
    let mut arguments = json!({"cmd": command});
    if let Some(wait) = wait_ms {
        arguments["yield_time_ms"] = json!(wait);
    }
    json!({"name": "exec_command", "arguments": arguments})
}

/// One `codex exec` in `work`, the model running `commands` one per turn
/// through Codex's shell tool, with the hooks `hooks init codex` wrote for
/// the server at `url` (`program` naming the `hooks` binary).
async fn run_codex(codex: &Path, url: &str, program: &str, commands: &[&str], work: &Path) -> Run {
    let calls: Vec<Value> = commands.iter().map(|cmd| shell(cmd, None)).collect();
    run_calls(codex, url, program, &calls, work).await
}

/// [`run_codex`] with the model making `calls` (tool calls, one per turn).
async fn run_calls(codex: &Path, url: &str, program: &str, calls: &[Value], work: &Path) -> Run {
    run_configured(codex, url, program, calls, work, &[]).await
}

/// [`run_calls`] with Codex's settings overridden by `overrides` (`-c
/// key=value` each).
async fn run_configured(
    codex: &Path,
    url: &str,
    program: &str,
    calls: &[Value],
    work: &Path,
    overrides: &[&str],
) -> Run {
    let scratch = tempfile::tempdir().expect("dir");
    let (home, codex_home) = (scratch.path().join("home"), scratch.path().join("codex"));
    std::fs::create_dir_all(&home).expect("home");
    std::fs::create_dir_all(&codex_home).expect("codex home");

    let mut turns: Vec<Value> = calls
        .iter()
        .map(|call| json!({"tool_calls": [call]}))
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
        .args(["--dangerously-bypass-hook-trust", "--color", "never"])
        .args(overrides.iter().flat_map(|setting| ["-c", setting]))
        .arg("-C")
        .arg(work)
        .arg("Go through the steps.")
        .current_dir(work)
        .stdin(Stdio::null())
        .env_clear()
        .env("HOME", &home)
        .env("CODEX_HOME", &codex_home)
        .env("PATH", "/usr/local/bin:/usr/bin:/bin")
        // As a terminal's shell gives it. A bash with no SHLVL whose input
        // is a socket (as Codex's is) reads ~/.bashrc, whatever Codex's
        // settings: see docs/codex.md.
        .env("SHLVL", "1")
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
    let results = (1..=calls.len())
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
    /// The output the model received for each call, in order.
    results: Vec<Option<String>>,
    /// Every request the fake model received, as logged.
    requests: String,
    /// Codex's stderr (its transcript of the run, hook statuses included).
    stderr: String,
}

impl Run {
    /// Call `n`'s output (from 1), which the model must have had.
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

/// Codex hands the model a command's output while it still runs, when it
/// outlives its wait (`yield_time_ms`), and lets later polls
/// (`write_stdin`) read more and type into it, with no hook event between:
/// the post event comes at its exit. Every command runs under `hooks
/// run-buffered`, so that event sees all the output the model will read,
/// and nothing can be typed into a command.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_command_that_outlives_its_wait_is_checked_whole() {
    let Some(codex) = codex() else {
        return;
    };
    let url = start_server().await;
    let work = work();
    let poll = |chars: &str| {
        json!({"name": "write_stdin", "arguments":
            {"session_id": "{{SESSION_ID}}", "chars": chars, "yield_time_ms": 10000}})
    };
    let typed = work.path().join("typed");
    let typed_line = format!("touch {}\n", typed.display());
    // Outside the workspace and /tmp, which the sandbox lets Codex write.
    let outside = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("codex-sandbox-probe-{}", std::process::id()));
    let tty = json!({"name": "exec_command", "arguments":
        {"cmd": "bash -i", "tty": true, "yield_time_ms": 500}});
    let calls = [
        // 1, 2: the key, then a wait past Codex's; the model polls.
        shell("cat id_rsa; sleep 3", Some(250)),
        poll(""),
        // 3, 4: the key written straight into the output Codex reads.
        shell("cat id_rsa > /proc/$PPID/fd/1; sleep 3", Some(250)),
        poll(""),
        // 5, 6: a shell waiting for commands, then one typed into it.
        shell("bash", Some(250)),
        poll(&typed_line),
        // 7, 8: the same in a terminal.
        tty,
        poll(&typed_line),
        // 9: a write outside the workspace, which Codex's sandbox refuses.
        shell(&format!("touch {}", outside.display()), None),
        // 10, 11: the key written into the output of the sandbox's process
        // 1, which holds Codex's pipe.
        shell("cat id_rsa > /proc/1/fd/1; sleep 3", Some(250)),
        poll(""),
        // 12: Codex's own patch form, which it applies itself.
        json!({"name": "exec_command", "arguments": {"cmd":
            "apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: patched.txt\n+hi\n*** End Patch\nEOF\n"}}),
        // 13: a server left running, which still holds the output.
        shell("(sleep 20; echo late) & echo started", Some(5000)),
    ];
    let hooks_binary = env!("CARGO_BIN_EXE_hooks");
    let run = run_calls(&codex, &url, hooks_binary, &calls, work.path()).await;

    assert!(
        !run.requests.contains(KEY_BODY),
        "the key reached the model: {}",
        run.requests
    );
    for n in [1, 3] {
        let text = run.result(n);
        assert!(
            text.contains("Process running with session ID"),
            "{n}: {text}"
        );
    }
    let text = run.result(2);
    assert!(text.contains("the result holds a private key"), "{text}");
    // `hooks run-buffered` is not dumpable: its output is closed to the
    // command (the error is cut by `result_truncate`).
    let text = run.result(4);
    assert!(text.contains("/fd/1: Permiss"), "{text}");
    // A shell with no input ends at once; nothing typed runs.
    let text = run.result(5);
    assert!(text.contains("Process exited"), "{text}");
    assert!(!typed.exists(), "a typed command ran: {}", run.requests);
    let text = run.result(7);
    assert!(text.contains("hooks run-buffered: not run in a"), "{text}");
    // Landlock closes process 1's descriptors to the command.
    let text = run.result(11);
    assert!(text.contains("/fd/1: Permiss"), "{text}");
    assert!(
        work.path().join("patched.txt").exists(),
        "{}",
        run.result(12)
    );
    // The server's start comes back within the call's wait (its later
    // output is dropped), cut by `result_truncate` as every result is.
    let text = run.result(13);
    assert!(text.starts_with("started\n"), "{text}");
    // The command runs in Codex's sandbox as it would have (unless the
    // build directory is somewhere the sandbox lets Codex write).
    if !outside.starts_with(std::env::temp_dir()) {
        assert!(!outside.exists(), "{}", run.result(9));
    }
}

/// Codex runs code before each shell command, outside `hooks run-buffered`
/// and before any hook: its shell snapshot (a file it sources, which a
/// command can append to) and a login shell's profile. A command that
/// appends `cat id_rsa; sleep 3` to either would hand the key to the model
/// at the next command's wait. `hooks init codex` turns both off; a session
/// that has a snapshot all the same gets no shell command run.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn code_codex_runs_before_a_command_cannot_read_out_a_key() {
    let Some(codex) = codex() else {
        return;
    };
    let url = start_server().await;
    let hooks_binary = env!("CARGO_BIN_EXE_hooks");
    let poison = "for f in \"$CODEX_HOME\"/shell_snapshots/*.sh; do [ -f \"$f\" ] && \
                  printf 'cat %s/id_rsa; sleep 3\\n' \"$PWD\" >> \"$f\" && echo \"poisoned $f\"; done; \
                  for p in .bash_profile .bash_login .profile .bashrc; do \
                  printf 'cat %s/id_rsa; sleep 3\\n' \"$PWD\" >> \"$HOME/$p\"; done; \
                  echo \"home is $CODEX_HOME\"";
    let calls = [
        shell(poison, None),
        shell("echo second", Some(250)),
        json!({"name": "write_stdin", "arguments":
            {"session_id": "{{SESSION_ID}}", "chars": "", "yield_time_ms": 5000}}),
    ];

    // With the settings `hooks init codex` wrote: no snapshot, no profile.
    let work = work();
    let run = run_calls(&codex, &url, hooks_binary, &calls, work.path()).await;
    assert!(
        !run.requests.contains(KEY_BODY),
        "the key reached the model: {}",
        run.requests
    );
    let text = run.result(1);
    assert!(
        text.contains("home is /") && !text.contains("poisoned"),
        "{text}"
    );
    let text = run.result(2);
    assert!(text.contains("second"), "{text}");

    // With the snapshot turned back on (a profile, a `-c`): no shell
    // command runs once the snapshot is there.
    let work = self::work();
    let run = run_configured(
        &codex,
        &url,
        hooks_binary,
        &calls,
        work.path(),
        &["features.shell_snapshot=true"],
    )
    .await;
    assert!(
        !run.requests.contains(KEY_BODY),
        "the key reached the model: {}",
        run.requests
    );
    let text = run.result(2);
    assert!(
        text.contains("shell snapshot is on") && !text.contains("Process exited"),
        "{text}"
    );
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
