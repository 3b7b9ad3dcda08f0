//! `hooks hook-client` → `hooks serve` benchmark: what a Claude Code hook
//! through the server costs per tool call, against the cheapest command hook
//! there is, in one run.
//!
//! Each round spawns, as Claude Code does for a command hook, a compiled
//! no-op (this program in `noop` mode: it reads its input and exits 0) and
//! `hook-client` (this program in `hook-client` mode, which is the `hooks`
//! command line) for a `PreToolUse` event, then both again for the call's
//! `PostToolUse` event; the four alternate, so a pause of the machine falls
//! on all alike. The server runs the standard stack minus the approval gate
//! (read-only guard, rate limit, truncation of the Bash result, audit log
//! on an in-memory SQLite).
//!
//! Run with `cargo run --release --features serve --example bench_serve`; it prints one
//! line: `serve: <N> calls: no-op command p50 … p99 … ms; hook-client pre
//! added p50 … p99 … ms, post added p50 … p99 … ms`.

use std::io::Read;
use std::process::{ExitCode, Stdio};
use std::time::Instant;

use hooks::config::{AgentConfig, ConfigFormat};
use hooks::serve::{ServeConfig, serve};
use serde_json::{Value, json};
use tokio::io::AsyncWriteExt;

const CALLS: usize = 300;
const WARM_UP: usize = 20;
const TOKEN: &str = "bench-token";

const AGENT: &str = r#"
agent: bench
hooks:
  class_hooks:
    - readonly_guard
    - name: connector_rate_limit
      config: { per_user_per_minute: 1000000 }
    - name: result_truncate
      config: { max_chars: 200 }
    - audit_log
"#;

/// A Claude Code hook input for call `id` at `event`.
fn input(event: &str, id: usize) -> Vec<u8> {
    let mut value = json!({
        "session_id": "bench-session",
        "transcript_path": "/tmp/bench.jsonl",
        "cwd": "/tmp",
        "permission_mode": "default",
        "hook_event_name": event,
        "tool_name": "Bash",
        "tool_input": {"command": format!("seq 1 {id}"), "description": "count"},
        "tool_use_id": format!("toolu_bench_{id}"),
    });
    if event == "PostToolUse" {
        let stdout: String = (1..=200).map(|n| format!("{n}\n")).collect();
        value["tool_response"] =
            json!({"stdout": stdout, "stderr": "", "interrupted": false, "isImage": false});
    }
    serde_json::to_vec(&value).expect("json")
}

/// Spawns this program with `args` and `stdin`, as a client runs a command
/// hook, and returns the milliseconds until it exited (and its stdout).
async fn spawn(args: &[&str], stdin: &[u8]) -> (f64, Value) {
    let started = Instant::now();
    let mut child = tokio::process::Command::new(std::env::current_exe().expect("this program"))
        .args(args)
        .env("HOOKS_SERVE_TOKEN", TOKEN)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let mut pipe = child.stdin.take().expect("stdin");
    pipe.write_all(stdin).await.expect("write");
    drop(pipe);
    let out = child.wait_with_output().await.expect("exits");
    let taken = started.elapsed().as_secs_f64() * 1000.0;
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let answer = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    (taken, answer)
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    let rank = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[rank.min(sorted.len() - 1)]
}

/// Milliseconds per spawn: the no-op, hook-client's pre and post events.
async fn rounds(url: &str, first: usize, count: usize) -> [Vec<f64>; 3] {
    let client = ["hook-client", "--url", url, "--timeout", "10"];
    let mut times: [Vec<f64>; 3] = Default::default();
    for id in first..first + count {
        let pre = input("PreToolUse", id);
        let post = input("PostToolUse", id);
        times[0].push(spawn(&["noop"], &pre).await.0);
        let (taken, answer) = spawn(&client, &pre).await;
        assert_eq!(answer, json!({}), "the pre event is let through");
        times[1].push(taken);
        times[0].push(spawn(&["noop"], &post).await.0);
        let (taken, answer) = spawn(&client, &post).await;
        assert!(
            answer["hookSpecificOutput"]["updatedToolOutput"]["stdout"]
                .as_str()
                .is_some_and(|out| out.contains("truncated")),
            "the post event's result is cut: {answer}"
        );
        times[2].push(taken);
    }
    for list in &mut times {
        list.sort_by(f64::total_cmp);
    }
    times
}

fn main() -> ExitCode {
    match std::env::args().nth(1).as_deref() {
        Some("noop") => {
            let mut input = Vec::new();
            let _ = std::io::stdin().read_to_end(&mut input);
            return ExitCode::SUCCESS;
        }
        Some("hook-client") => return hooks::cli::run(),
        _ => {}
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(bench());
    ExitCode::SUCCESS
}

async fn bench() {
    let resources = hooks::std_hooks::offline_resources([] as [&str; 0])
        .await
        .expect("resources");
    let config = AgentConfig::parse(AGENT, ConfigFormat::Yaml, "bench.yaml", None).expect("config");
    let agent = hooks::Agent::build(config, &resources).expect("agent");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let url = format!("http://{}/hook", listener.local_addr().expect("addr"));
    tokio::spawn(serve(listener, agent, ServeConfig::with_token(TOKEN)));

    rounds(&url, 0, WARM_UP).await;
    let [noop, pre, post] = rounds(&url, WARM_UP, CALLS).await;
    let added = |times: &[f64], p: f64| percentile(times, p) - percentile(&noop, p);
    println!(
        "serve: {CALLS} calls: no-op command p50 {:.2} p99 {:.2} ms; hook-client pre added p50 \
         {:.2} p99 {:.2} ms ({:.2}x), post added p50 {:.2} p99 {:.2} ms ({:.2}x)",
        percentile(&noop, 0.5),
        percentile(&noop, 0.99),
        added(&pre, 0.5),
        added(&pre, 0.99),
        percentile(&pre, 0.5) / percentile(&noop, 0.5),
        added(&post, 0.5),
        added(&post, 0.99),
        percentile(&post, 0.5) / percentile(&noop, 0.5),
    );
}
