//! `hooks mcp-proxy` benchmark: what the proxy adds to a `tools/call` of
//! a trivial tool (the reference server's `echo`), against the same server
//! called straight, in the same run, alternating call by call. Four
//! stacks: no hooks (the proxy's own carrying); the audit log alone, on
//! an in-memory SQLite database (what `hooks mcp-proxy` uses without
//! `--database`) and on a SQLite file (each row committed, and so synced,
//! before the call answers); and the standard stack minus the approval
//! gate (read-only guard, rate limit, truncation, audit log, and the
//! `args_schema` guard the proxy adds from the upstream's schemas) on a
//! SQLite file.
//!
//! Needs Node and `npm ci --prefix tests/mcp`. Run with
//! `cargo run --release --features mcp --example bench_mcp_proxy`; it prints
//! one line per stack:
//! `mcp-proxy: <stack>, <N> calls: direct p50 <A> ms, proxied p50 <B> ms, added p50 <C> ms, added p99 <D> ms`.
//! Target, audit only: added p50 at most 0.1 ms, added p99 under 1 ms
//! (see docs/performance.md for what a SQLite file's sync costs).

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use hooks::config::{AgentConfig, ConfigFormat};
use hooks::factory::Resources;
use hooks::mcp_proxy::{McpProxy, McpProxyConfig};
use hooks::std_hooks::{DATABASE, Database, ORG_MODES, OrgModeSource, StaticOrgModes};
use rmcp::RoleClient;
use rmcp::model::CallToolRequestParams;
use rmcp::service::{RunningService, ServiceExt};
use serde_json::json;

const CALLS: usize = 1_000;
const WARM_UP: usize = 50;

/// No hooks at all: what carrying a call through the proxy costs.
const NO_HOOKS: &str = "agent: bench\nhooks: {}\n";

/// The audit log alone.
const AUDIT_ONLY: &str = r#"
agent: bench
hooks:
  class_hooks:
    - audit_log
"#;

/// The standard stack minus the approval gate.
const STANDARD: &str = r#"
agent: bench
hooks:
  class_hooks:
    - readonly_guard
    - name: connector_rate_limit
      config: { per_user_per_minute: 1000000 }
    - name: result_truncate
      config: { max_chars: 10000 }
    - audit_log
"#;

/// One `echo` call's round trip, in milliseconds.
async fn one_call(client: &RunningService<RoleClient, ()>, i: usize) -> f64 {
    let params = CallToolRequestParams::new("echo").with_arguments(
        json!({"message": format!("call {i}")})
            .as_object()
            .cloned()
            .expect("object"),
    );
    let started = Instant::now();
    let result = client
        .call_tool(params)
        .await
        .expect("the call is answered");
    let taken = started.elapsed().as_secs_f64() * 1000.0;
    assert_ne!(result.is_error, Some(true), "{result:?}");
    taken
}

/// Milliseconds per call, direct and proxied, each sorted. The two kinds
/// alternate call by call, so a pause of the machine (a timer turn, another
/// process) falls on both alike instead of on whichever ran at the time.
async fn timings(
    direct: &RunningService<RoleClient, ()>,
    proxied: &RunningService<RoleClient, ()>,
    calls: usize,
) -> (Vec<f64>, Vec<f64>) {
    let (mut direct_ms, mut proxied_ms) = (Vec::with_capacity(calls), Vec::with_capacity(calls));
    for i in 0..calls {
        direct_ms.push(one_call(direct, i).await);
        proxied_ms.push(one_call(proxied, i).await);
    }
    direct_ms.sort_by(f64::total_cmp);
    proxied_ms.sort_by(f64::total_cmp);
    (direct_ms, proxied_ms)
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    let rank = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[rank.min(sorted.len() - 1)]
}

/// A proxy with `agent`'s hooks in front of `command`, its database a
/// SQLite file in `dir` (or in memory, as `hooks mcp-proxy` keeps it
/// without `--database`), and a client talking to it in this process.
async fn through_proxy(
    agent: &str,
    command: &[String],
    dir: Option<&std::path::Path>,
) -> (McpProxy, RunningService<RoleClient, ()>) {
    let url = match dir {
        Some(dir) => {
            let file = dir.join(format!("bench-{}.db", agent.len()));
            format!("sqlite://{}?mode=rwc", file.display())
        }
        None => "sqlite::memory:".to_owned(),
    };
    let database = Database::connect(&url).await.expect("the SQLite file");
    let modes: Arc<dyn OrgModeSource> = Arc::new(StaticOrgModes::with_read_only([] as [&str; 0]));
    let resources = Resources::new()
        .with(DATABASE, database)
        .with(ORG_MODES, modes);
    let config = AgentConfig::parse(agent, ConfigFormat::Yaml, "bench.yaml", None).expect("config");
    let mut settings = McpProxyConfig::default();
    settings.server = "everything".to_owned();
    settings.command = command.to_vec();
    let proxy = McpProxy::start(config, settings, &resources)
        .await
        .expect("the proxy starts");
    let (client_side, proxy_side) = tokio::io::duplex(1 << 16);
    let serving = proxy.clone();
    tokio::spawn(async move { serving.serve(proxy_side).await });
    let client = ().serve(client_side).await.expect("proxied handshake");
    (proxy, client)
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let peers = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/node_modules");
    let script = peers.join("@modelcontextprotocol/server-everything/dist/index.js");
    if !script.exists() {
        println!("SKIPPED: run `npm ci --prefix tests/mcp` first (needs Node)");
        return;
    }
    let command = [
        "node".to_owned(),
        script.display().to_string(),
        "stdio".to_owned(),
    ];
    let dir = tempfile::tempdir().expect("a directory for the databases");

    let mut upstream = tokio::process::Command::new(&command[0]);
    upstream
        .args(&command[1..])
        .stderr(std::process::Stdio::null());
    let direct =
        ().serve(rmcp::transport::TokioChildProcess::new(upstream).expect("spawn"))
            .await
            .expect("direct handshake");

    let file = Some(dir.path());
    let stacks = [
        ("no hooks", NO_HOOKS, None),
        ("audit only, in memory", AUDIT_ONLY, None),
        ("audit only, SQLite file", AUDIT_ONLY, file),
        ("standard stack, SQLite file", STANDARD, file),
    ];
    for (stack, agent, dir) in stacks {
        let (_proxy, proxied) = through_proxy(agent, &command, dir).await;
        timings(&direct, &proxied, WARM_UP).await;
        let (direct_ms, proxied_ms) = timings(&direct, &proxied, CALLS).await;
        // Let the audit writer finish before the next stack.
        tokio::time::sleep(Duration::from_millis(300)).await;
        let p = |sorted: &[f64], at: f64| percentile(sorted, at);
        println!(
            "{stack}: direct p99 {:.3} ms, proxied p99 {:.3} ms",
            p(&direct_ms, 0.99),
            p(&proxied_ms, 0.99)
        );
        println!(
            "mcp-proxy: {stack}, {CALLS} calls: direct p50 {:.3} ms, proxied p50 {:.3} ms, \
             added p50 {:.3} ms, added p99 {:.3} ms",
            p(&direct_ms, 0.5),
            p(&proxied_ms, 0.5),
            p(&proxied_ms, 0.5) - p(&direct_ms, 0.5),
            p(&proxied_ms, 0.99) - p(&direct_ms, 0.99),
        );
        drop(proxied);
    }
}
