//! `hooks mcp-proxy` over streamable HTTP on both sides: in front of the
//! reference "everything" server from the npm registry started in its
//! streamable HTTP mode (`--upstream-url`), and serving clients that each
//! have their own token (`mcp_proxy.clients`), driven by `rmcp`'s
//! streamable HTTP client. Without `npm ci --prefix tests/mcp` (or Node)
//! each test prints SKIPPED.
#![cfg(feature = "mcp")]

use std::collections::HashMap;
use std::time::Duration;

use hooks::config::{AgentConfig, ConfigFormat};
use hooks::mcp_proxy::{McpProxy, McpProxyConfig};
use hooks::prelude::*;
use hooks::std_hooks::Database;
use rmcp::model::{CallToolRequest, CallToolRequestParams, ClientRequest, ServerResult};
use rmcp::service::{PeerRequestOptions, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Value, json};

#[path = "support/mcp.rs"]
mod support;

use support::*;

/// Upper-cases what `echo` says: the upstream's echo proves the rewrite.
#[pre_tool_use(when = tool_name == "echo")]
async fn http_loud_echo(ctx: &HookContext) -> HookResult {
    let mut args = ctx.tool_args.clone();
    let message = args["message"].as_str().unwrap_or_default().to_uppercase();
    args["message"] = json!(message);
    HookResult::allow().with_args(args)
}

/// Sums are capped, and only for the connector this proxy names.
#[pre_tool_use(when = connector == "everything" && tool_name == "get-sum" && args.a > 1000)]
async fn http_no_big_sums(_ctx: &HookContext) -> HookResult {
    HookResult::block("sums over 1000 need a human")
}

const AGENT: &str = r#"
agent: mcp-http
hooks:
  class_hooks:
    - http_loud_echo
    - http_no_big_sums
    - audit_log
"#;

fn call(tool: &str, args: Value) -> CallToolRequestParams {
    CallToolRequestParams::new(tool.to_owned())
        .with_arguments(args.as_object().cloned().expect("object"))
}

#[tokio::test]
async fn an_upstream_at_a_url_is_listed_called_through_the_hooks_and_audited() {
    let Some(peers) = peers() else { return };
    let server = HttpServer::start(&peers).await;
    let running = start_agent(AGENT, everything_at(&server.url)).await;
    assert_eq!(running.proxy.upstream_pid().await, None);
    assert_eq!(
        running.proxy.upstream_name(),
        format!("http://127.0.0.1:{}/…", server.port)
    );

    let tools = running.client.list_all_tools().await.expect("tools/list");
    let names: Vec<&str> = tools.iter().map(|tool| tool.name.as_ref()).collect();
    assert!(
        names.contains(&"echo") && names.contains(&"get-sum"),
        "{names:?}"
    );

    let echoed = running.call("echo", json!({"message": "over http"})).await;
    assert_ne!(echoed.is_error, Some(true), "{echoed:?}");
    assert!(text(&echoed).contains("OVER HTTP"), "{echoed:?}");

    let blocked = running.call("get-sum", json!({"a": 5000, "b": 1})).await;
    assert_eq!(blocked.is_error, Some(true));
    assert_eq!(
        text(&blocked),
        "Blocked by hook `http_no_big_sums`: sums over 1000 need a human"
    );
    // The schema the upstream gave over HTTP is checked too.
    let unchecked = running.call("get-sum", json!({"a": "two", "b": 1})).await;
    assert_eq!(unchecked.is_error, Some(true));
    assert!(text(&unchecked).contains("args_schema"), "{unchecked:?}");

    let rows = running.audit(3).await;
    assert_eq!(rows.len(), 3, "{rows:?}");
    assert!(
        rows.iter()
            .all(|row| row.connector.as_deref() == Some("everything")),
        "{rows:?}"
    );
    assert_eq!(rows[0].outcome, "ok");
    assert_eq!(rows[1].blocked_by.as_deref(), Some("http_no_big_sums"));
}

#[tokio::test]
async fn an_upstream_at_a_url_killed_mid_session_fails_calls_closed_and_is_reconnected_per_config()
{
    let Some(peers) = peers() else { return };
    for restarts in [0, 1] {
        let mut server = HttpServer::start(&peers).await;
        let mut settings = everything_at(&server.url);
        settings.max_restarts = restarts;
        let running = start_agent(AGENT, settings).await;
        let first = running.call("echo", json!({"message": "before"})).await;
        assert_ne!(first.is_error, Some(true), "{first:?}");

        server.kill().await;
        let after = running.call("echo", json!({"message": "after"})).await;
        assert_eq!(after.is_error, Some(true), "fails closed: {after:?}");
        assert!(
            text(&after).contains("the upstream MCP server `everything`"),
            "the reason names the server: {after:?}"
        );
        let rows = running.audit(2).await;
        assert_eq!(
            rows.last().map(|row| row.outcome.as_str()),
            Some("tool_error"),
            "{rows:?}"
        );

        // The server comes back at the same address.
        let _back = HttpServer::start_on(&peers, server.port).await;
        let later = running.call("echo", json!({"message": "later"})).await;
        if restarts == 0 {
            assert_eq!(later.is_error, Some(true), "no reconnect: {later:?}");
            assert!(text(&later).contains("max_restarts"), "{later:?}");
        } else {
            assert_ne!(later.is_error, Some(true), "reconnected: {later:?}");
            assert!(text(&later).contains("LATER"), "{later:?}");
        }
    }
}

#[tokio::test]
async fn a_call_in_flight_when_the_upstream_at_a_url_dies_fails_closed() {
    let Some(peers) = peers() else { return };
    let mut server = HttpServer::start(&peers).await;
    let running = std::sync::Arc::new(start_agent(AGENT, everything_at(&server.url)).await);
    let caller = running.clone();
    let started = std::time::Instant::now();
    let call = tokio::spawn(async move {
        caller
            .call(
                "trigger-long-running-operation",
                json!({"duration": 30, "steps": 30}),
            )
            .await
    });
    // The server is running the call once its progress arrives.
    for _ in 0..200 {
        if !running.heard.progress.lock().expect("lock").is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(!running.heard.progress.lock().expect("lock").is_empty());
    server.kill().await;
    let result = call.await.expect("task");
    println!(
        "the call failed {:.1} s after it started: {}",
        started.elapsed().as_secs_f64(),
        text(&result)
    );
    assert_eq!(result.is_error, Some(true), "fails closed: {result:?}");
    assert!(
        text(&result).contains("the upstream MCP server `everything`"),
        "{result:?}"
    );
    assert!(
        !text(&result).contains("call_timeout"),
        "it fails when the server dies, not at the call's timeout: {result:?}"
    );
    let rows = running.audit(1).await;
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(rows[0].outcome, "tool_error");
}

#[test]
fn the_cli_refuses_an_upstream_url_that_does_not_answer_or_is_not_http() {
    let dir = tempfile::tempdir().expect("dir");
    let config = dir.path().join("agent.yaml");
    std::fs::write(&config, "agent: x\nhooks:\n  class_hooks: [audit_log]\n").expect("write");
    let config = config.to_str().expect("path");
    // A port nothing listens on.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("port")
        .port();
    let silent = format!("http://127.0.0.1:{port}/mcp?key=s3cret");
    let (code, err) = cli(&["--config", config, "--upstream-url", &silent]);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains(&format!(
            "the upstream MCP server at http://127.0.0.1:{port}/… did not complete the MCP \
             handshake"
        )),
        "{err}"
    );
    assert!(err.contains("not serving"), "{err}");
    assert!(!err.contains("s3cret"), "the query is not shown: {err}");

    for (url, why) in [
        ("file:///etc/passwd", "is not an http or https URL"),
        ("127.0.0.1:3001", "is not a URL"),
        (
            "https://bob:hunter2@mcp.example/mcp",
            "carries a user name or password",
        ),
    ] {
        let (code, err) = cli(&["--config", config, "--upstream-url", url]);
        assert_eq!(code, 1, "{url}: {err}");
        assert!(err.contains(why), "{url}: {err}");
        assert!(!err.contains("hunter2"), "{err}");
    }

    let (code, err) = cli(&[
        "--config",
        config,
        "--upstream-url",
        "http://127.0.0.1:1/mcp",
        "--",
        "node",
        "server.js",
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("'--upstream-url <URL>' cannot be used with '[UPSTREAM_COMMAND]...'"),
        "{err}"
    );

    let both = dir.path().join("both.yaml");
    std::fs::write(
        &both,
        "agent: x\nmcp_proxy:\n  url: http://127.0.0.1:1/mcp\n  command: [node, server.js]\n",
    )
    .expect("write");
    let (code, err) = cli(&["--config", both.to_str().expect("path")]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("both `command` and `url`"), "{err}");
}

#[tokio::test]
async fn the_cli_proxies_an_upstream_at_a_url_for_a_real_client_over_stdio() {
    let Some(peers) = peers() else { return };
    let server = HttpServer::start(&peers).await;
    let dir = tempfile::tempdir().expect("dir");
    let config = dir.path().join("agent.yaml");
    std::fs::write(
        &config,
        "agent: desktop\nhooks:\n  class_hooks: [audit_log]\nmcp_proxy:\n  server: everything\n",
    )
    .expect("write");
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_hooks"));
    command
        .arg("mcp-proxy")
        .arg("--config")
        .arg(&config)
        .args(["--upstream-url", &server.url]);
    let transport = rmcp::transport::TokioChildProcess::new(command).expect("spawn hooks");
    let client = ().serve(transport).await.expect("handshake through the proxy");
    let echoed = client
        .call_tool(call("echo", json!({"message": "from the cli"})))
        .await
        .expect("answer");
    assert_ne!(echoed.is_error, Some(true), "{echoed:?}");
    assert!(text(&echoed).contains("from the cli"), "{echoed:?}");
    client.cancel().await.expect("close");
}

/// A proxy in front of the stdio "everything" server, serving streamable
/// HTTP to the clients its config names; its URL, and the database its
/// audit rows are in.
async fn http_proxy(clients: Value) -> Option<(McpProxy, String, Database)> {
    http_proxy_of(AGENT, clients).await
}

/// [`http_proxy`] with the hooks of `agent`.
async fn http_proxy_of(agent: &str, clients: Value) -> Option<(McpProxy, String, Database)> {
    let peers = peers()?;
    let (resources, database, ..) = resources().await;
    let agent = AgentConfig::parse(agent, ConfigFormat::Yaml, "agent.yaml", None).expect("config");
    let mut settings = everything_settings(&peers);
    settings["clients"] = clients;
    let settings = McpProxyConfig::from_value(&settings).expect("settings");
    let proxy = McpProxy::start(agent, settings, &resources)
        .await
        .expect("the proxy starts");
    let url = serve_http(&proxy, None).await;
    Some((proxy, url, database))
}

/// The stdio settings of the everything server as config JSON.
fn everything_settings(peers: &std::path::Path) -> Value {
    json!({
        "server": "everything",
        "command": server_command(peers, "server-everything", &["stdio"]),
        "user": "configured-user",
        "org": "configured-org",
        "max_restarts": 0,
    })
}

/// An `rmcp` client of the proxy at `url` over streamable HTTP, sending
/// `token` and `headers`; what it hears is recorded.
async fn http_client(
    url: &str,
    token: &str,
    headers: &[(&'static str, &'static str)],
) -> (RunningService<RoleClient, Client>, Client) {
    let headers: HashMap<_, _> = headers
        .iter()
        .map(|(name, value)| {
            (
                axum::http::HeaderName::from_static(name),
                axum::http::HeaderValue::from_static(value),
            )
        })
        .collect();
    // rmcp's HTTP client has no TLS crypto provider of its own (the proxy
    // installs one only for an upstream at a URL).
    let _ = rustls::crypto::ring::default_provider().install_default();
    let config = StreamableHttpClientTransportConfig::with_uri(url.to_owned())
        .auth_header(token.to_owned())
        .custom_headers(headers);
    let heard = Client::default();
    let client = heard
        .clone()
        .serve(StreamableHttpClientTransport::from_config(config))
        .await
        .expect("the client's handshake with the proxy");
    (client, heard)
}

/// The audit rows of the proxy's HTTP sessions (their conversation ids
/// are the proxy's session id and `-http-<n>`), once `expected` are there.
async fn http_rows(
    proxy: &McpProxy,
    database: &Database,
    sessions: usize,
    expected: usize,
) -> Vec<hooks::std_hooks::AuditEntry> {
    let mut rows = Vec::new();
    for _ in 0..100 {
        rows.clear();
        for n in 1..=sessions {
            let conversation = format!("{}-http-{n}", proxy.session_id());
            rows.extend(database.audit_entries(&conversation).await.expect("audit"));
        }
        if rows.len() >= expected {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    rows
}

const ALICE_TOKEN: &str = "alice-4f0c2b7e9d1a43c8b5e6f7a8091b2c3d";
const BOB_TOKEN: &str = "bob-8e1d3c5a7f9b40e2a4c6d8f0b2e4a6c8";

/// Both tokens are known by their SHA-256 digest only.
fn two_clients() -> Value {
    json!([
        {"token_sha256": hex_sha256(ALICE_TOKEN), "user": "alice", "org": "acme"},
        {"token_sha256": hex_sha256(BOB_TOKEN), "user": "bob", "org": "globex"},
    ])
}

#[tokio::test]
async fn each_http_client_calls_as_the_user_and_org_of_its_own_token() {
    let Some((proxy, url, database)) = http_proxy(two_clients()).await else {
        return;
    };
    let (alice, _) = http_client(&url, ALICE_TOKEN, &[]).await;
    let (bob, _) = http_client(&url, BOB_TOKEN, &[]).await;
    for client in [&alice, &bob] {
        let result = client
            .call_tool(call("get-sum", json!({"a": 1, "b": 2})))
            .await
            .expect("answer");
        assert_ne!(result.is_error, Some(true), "{result:?}");
    }
    let rows = http_rows(&proxy, &database, 2, 2).await;
    let mut who: Vec<(String, String)> = rows
        .iter()
        .map(|row| (row.user_id.clone(), row.org_id.clone()))
        .collect();
    who.sort();
    assert_eq!(
        who,
        [
            ("alice".to_owned(), "acme".to_owned()),
            ("bob".to_owned(), "globex".to_owned())
        ]
    );
}

#[tokio::test]
async fn a_per_user_rate_limit_counts_each_http_clients_calls_apart() {
    let agent = "agent: mcp-http\nhooks:\n  class_hooks:\n    - name: connector_rate_limit\n      \
                 config: { per_user_per_minute: 1 }\n    - audit_log\n";
    let Some((_proxy, url, _database)) = http_proxy_of(agent, two_clients()).await else {
        return;
    };
    let (alice, _) = http_client(&url, ALICE_TOKEN, &[]).await;
    let (bob, _) = http_client(&url, BOB_TOKEN, &[]).await;
    let sum = || call("get-sum", json!({"a": 1, "b": 2}));
    let first = alice.call_tool(sum()).await.expect("answer");
    assert_ne!(first.is_error, Some(true), "{first:?}");
    let second = alice.call_tool(sum()).await.expect("answer");
    assert_eq!(
        second.is_error,
        Some(true),
        "Alice's second call: {second:?}"
    );
    assert!(text(&second).contains("connector_rate_limit"), "{second:?}");
    // Bob has his own quota: Alice's calls did not use it up.
    let bobs = bob.call_tool(sum()).await.expect("answer");
    assert_ne!(bobs.is_error, Some(true), "Bob's first call: {bobs:?}");
}

#[tokio::test]
async fn notifications_reach_only_the_http_session_they_belong_to() {
    let Some((_proxy, url, _database)) = http_proxy(two_clients()).await else {
        return;
    };
    let (alice, alice_heard) = http_client(&url, ALICE_TOKEN, &[]).await;
    let (bob, bob_heard) = http_client(&url, BOB_TOKEN, &[]).await;
    // Both sessions have a call in flight upstream at once.
    let long = |client: &RunningService<RoleClient, Client>, steps: u64| {
        let params = call(
            "trigger-long-running-operation",
            json!({"duration": 2, "steps": steps}),
        );
        let peer = client.peer().clone();
        async move {
            let handle = peer
                .send_cancellable_request(
                    ClientRequest::CallToolRequest(CallToolRequest::new(params)),
                    PeerRequestOptions::no_options(),
                )
                .await
                .expect("sent");
            let token = handle.progress_token.clone();
            let answer = handle.await_response().await.expect("answer");
            assert!(
                matches!(answer, ServerResult::CallToolResult(_)),
                "{answer:?}"
            );
            token
        }
    };
    let (alice_token, bob_token) = tokio::join!(long(&alice, 4), long(&bob, 3));
    let alice_progress = alice_heard.progress.lock().expect("lock").clone();
    let bob_progress = bob_heard.progress.lock().expect("lock").clone();
    let steps = |progress: &[rmcp::model::ProgressNotificationParam]| -> Vec<f64> {
        progress.iter().map(|note| note.progress).collect()
    };
    assert_eq!(
        steps(&alice_progress),
        [1.0, 2.0, 3.0, 4.0],
        "{alice_progress:?}"
    );
    assert_eq!(steps(&bob_progress), [1.0, 2.0, 3.0], "{bob_progress:?}");
    assert!(
        alice_progress
            .iter()
            .all(|note| note.progress_token == alice_token && note.total == Some(4.0)),
        "only Alice's call's progress reaches Alice: {alice_progress:?}"
    );
    assert!(
        bob_progress
            .iter()
            .all(|note| note.progress_token == bob_token && note.total == Some(3.0)),
        "only Bob's call's progress reaches Bob: {bob_progress:?}"
    );
    // The server's log messages reach neither session.
    assert!(alice_heard.logs.lock().expect("lock").is_empty());
    assert!(bob_heard.logs.lock().expect("lock").is_empty());
}
