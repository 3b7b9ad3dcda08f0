//! What the tests that put `hooks mcp-proxy` in front of the reference MCP
//! servers from the npm registry (pinned in tests/mcp/package.json) share:
//! finding the servers, the approval resources, a proxy with an `rmcp`
//! client in front of it. Without `npm ci --prefix tests/mcp` (or Node)
//! [`peers`] prints SKIPPED and the tests pass without running.
#![allow(dead_code, unreachable_pub, unused_imports, deprecated)]

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use hooks::config::{AgentConfig, ConfigFormat};
use hooks::mcp_proxy::{McpProxy, McpProxyConfig};
use hooks::std_hooks::Database;
use hooks_testkit::feishu::FakeFeishu;
use rmcp::model::{
    CallToolRequestParams, CallToolResult, LoggingMessageNotificationParam,
    ProgressNotificationParam,
};
use rmcp::service::{NotificationContext, RunningService};
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde_json::{Value, json};

#[path = "approval_stack.rs"]
mod approval_stack;
pub use approval_stack::{APPROVER, CHAT, resources};

/// tests/mcp/node_modules, or why the tests skip.
pub fn peers() -> Option<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/node_modules");
    let found = dir
        .join("@modelcontextprotocol/server-everything/dist/index.js")
        .exists()
        && dir
            .join("@modelcontextprotocol/server-filesystem/dist/index.js")
            .exists()
        && hooks_testkit::programs::runs("node");
    if !found {
        println!(
            "SKIPPED: Node or tests/mcp/node_modules is missing (run `npm ci --prefix tests/mcp`)"
        );
        return None;
    }
    Some(dir)
}

pub fn server_command(peers: &std::path::Path, server: &str, args: &[&str]) -> Vec<String> {
    let script = peers.join(format!("@modelcontextprotocol/{server}/dist/index.js"));
    let mut command = vec!["node".to_owned(), script.display().to_string()];
    command.extend(args.iter().map(|arg| (*arg).to_owned()));
    command
}

/// What the test's MCP client heard: progress notifications and log messages.
#[derive(Clone, Default)]
pub struct Client {
    pub progress: Arc<Mutex<Vec<ProgressNotificationParam>>>,
    pub logs: Arc<Mutex<Vec<LoggingMessageNotificationParam>>>,
}

impl ClientHandler for Client {
    #[allow(deprecated)]
    async fn on_logging_message(
        &self,
        params: LoggingMessageNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.logs.lock().expect("lock").push(params);
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.progress.lock().expect("lock").push(params);
    }
}

pub struct Running {
    pub proxy: McpProxy,
    pub client: RunningService<RoleClient, Client>,
    pub heard: Client,
    pub database: Database,
    pub feishu: FakeFeishu,
    pub callback_url: String,
}

impl Running {
    pub async fn call(&self, tool: &str, args: Value) -> CallToolResult {
        let Value::Object(args) = args else {
            panic!("arguments are an object")
        };
        self.client
            .call_tool(CallToolRequestParams::new(tool.to_owned()).with_arguments(args))
            .await
            .expect("the proxy answers")
    }

    pub async fn audit(&self, expected: usize) -> Vec<hooks::std_hooks::AuditEntry> {
        let session = self.proxy.session_id().to_owned();
        for _ in 0..100 {
            let rows = self.database.audit_entries(&session).await.expect("audit");
            if rows.len() >= expected {
                return rows;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        self.database.audit_entries(&session).await.expect("audit")
    }
}

pub fn text(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|block| block.as_text())
        .map(|text| text.text.clone())
        .collect::<Vec<_>>()
        .join("\n")
}

pub async fn start_agent(agent: &str, settings: McpProxyConfig) -> Running {
    let (resources, database, feishu, callback_url) = resources().await;
    let config = AgentConfig::parse(agent, ConfigFormat::Yaml, "agent.yaml", None).expect("config");
    let proxy = McpProxy::start(config, settings, &resources)
        .await
        .expect("the proxy starts");
    let (client_side, proxy_side) = tokio::io::duplex(1 << 16);
    let serving = proxy.clone();
    tokio::spawn(async move { serving.serve(proxy_side).await });
    let heard = Client::default();
    let client = heard
        .clone()
        .serve(client_side)
        .await
        .expect("the client's handshake with the proxy");
    Running {
        proxy,
        client,
        heard,
        database,
        feishu,
        callback_url,
    }
}

pub fn everything(peers: &std::path::Path) -> McpProxyConfig {
    McpProxyConfig::from_value(&json!({
        "server": "everything",
        "command": server_command(peers, "server-everything", &["stdio"]),
        "env": {"PROXY_GIVEN": "from-config"},
        "user": "alice",
        "org": "acme",
        "max_restarts": 0,
    }))
    .expect("settings")
}

/// The reference "everything" server in streamable HTTP mode, on a port of
/// its own on this machine; killed when dropped.
pub struct HttpServer {
    pub child: tokio::process::Child,
    pub port: u16,
    pub url: String,
}

impl HttpServer {
    /// Starts the server (`PORT` is how it is told where to listen) and
    /// waits until it accepts connections.
    pub async fn start(peers: &std::path::Path) -> HttpServer {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|listener| listener.local_addr())
            .expect("a free port")
            .port();
        HttpServer::start_on(peers, port).await
    }

    /// Starts the server on `port` (again, after it was killed).
    pub async fn start_on(peers: &std::path::Path, port: u16) -> HttpServer {
        let command = server_command(peers, "server-everything", &["streamableHttp"]);
        let child = tokio::process::Command::new(&command[0])
            .args(&command[1..])
            .env("PORT", port.to_string())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("node starts");
        for _ in 0..200 {
            if tokio::net::TcpStream::connect(("127.0.0.1", port))
                .await
                .is_ok()
            {
                return HttpServer {
                    child,
                    port,
                    url: format!("http://127.0.0.1:{port}/mcp"),
                };
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("the everything server did not listen on {port} within 10 s");
    }

    /// Kills the server and waits until it is gone.
    pub async fn kill(&mut self) {
        self.child.kill().await.expect("kill");
        for _ in 0..200 {
            if tokio::net::TcpStream::connect(("127.0.0.1", self.port))
                .await
                .is_err()
            {
                return;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

/// The proxy's settings for the everything server at `url`.
pub fn everything_at(url: &str) -> McpProxyConfig {
    McpProxyConfig::from_value(&json!({
        "server": "everything",
        "url": url,
        "user": "alice",
        "org": "acme",
        "max_restarts": 0,
    }))
    .expect("settings")
}

/// One JSON-RPC message over streamable HTTP, as a client without an SDK
/// sends it; the answer (JSON or the first SSE event's data) and the session.
pub async fn post_mcp(
    http: &reqwest::Client,
    url: &str,
    token: Option<&str>,
    session: Option<&str>,
    body: Value,
) -> (u16, Option<String>, Value) {
    post_mcp_with(http, url, token, session, &[], body).await
}

/// [`post_mcp`] with more `headers`.
pub async fn post_mcp_with(
    http: &reqwest::Client,
    url: &str,
    token: Option<&str>,
    session: Option<&str>,
    headers: &[(&str, &str)],
    body: Value,
) -> (u16, Option<String>, Value) {
    let mut request = http
        .post(url)
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .body(body.to_string());
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    if let Some(session) = session {
        request = request.header("mcp-session-id", session);
    }
    let response = request.send().await.expect("the proxy answers");
    let status = response.status().as_u16();
    let session = response
        .headers()
        .get("mcp-session-id")
        .and_then(|value| value.to_str().ok())
        .map(str::to_owned);
    let text = response.text().await.expect("body");
    let json = text
        .lines()
        .filter_map(|line| line.strip_prefix("data:"))
        .map(str::trim)
        .find(|data| data.starts_with('{'))
        .map(str::to_owned)
        .unwrap_or(text);
    (
        status,
        session,
        serde_json::from_str(&json).unwrap_or(Value::String(json)),
    )
}

/// Runs `hooks mcp-proxy ARGS` and returns its exit code and stderr.
pub fn cli(args: &[&str]) -> (i32, String) {
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_hooks"))
        .arg("mcp-proxy")
        .args(args)
        .stdin(std::process::Stdio::null())
        .output()
        .expect("hooks runs");
    assert!(
        output.stdout.is_empty(),
        "stdout is the MCP channel: nothing else is printed there"
    );
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// Serves `proxy` over streamable HTTP on a port of its own on this
/// machine, behind `token` (and the config's clients); its MCP URL.
pub async fn serve_http(proxy: &McpProxy, token: Option<&str>) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let url = format!(
        "http://{}{}",
        listener.local_addr().expect("addr"),
        hooks::mcp_proxy::MCP_PATH
    );
    let serving = proxy.clone();
    let token = token.map(str::to_owned);
    tokio::spawn(async move { serving.serve_http(listener, token).await });
    url
}

/// SHA-256 in hex, as `sha256sum` prints it.
pub fn hex_sha256(text: &str) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(text.as_bytes())
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect()
}

/// Serves `proxy` to each connection on a loopback port, as
/// tests/mcp/stdio_relay.py's clients reach it; the port.
pub async fn relay_to(proxy: &McpProxy) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let port = listener.local_addr().expect("addr").port().to_string();
    let relayed = proxy.clone();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let proxy = relayed.clone();
            tokio::spawn(async move { proxy.serve(stream).await });
        }
    });
    port
}

/// An agent with the documented policy on tool annotations, for the
/// hostile server (tests/mcp/hostile-server.mjs): a call its hints call
/// destructive, or (the server not trusted) of any tool outside the
/// config's own read list `lookup`, is refused with "would ask a person
/// first".
pub const ANNOTATION_POLICY_AGENT: &str = r#"
agent: mcp-annotations
hooks:
  commands:
    - name: ask_first
      event: PreToolUse
      when: >-
        connector == "hostile" && metadata.annotations exists && (
          metadata.annotations.destructiveHint
          || !metadata.annotations_trusted && !(tool_name in ["lookup"])
        )
      command: ["sh", "-c", "cat >/dev/null; echo 'would ask a person first' >&2; exit 2"]
  class_hooks:
    - audit_log
"#;
