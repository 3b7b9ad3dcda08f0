//! `hooks mcp-proxy`: the agent's hooks in front of any MCP server.
//!
//! [`McpProxy`] serves the Model Context Protocol to one client (Claude
//! Desktop, Claude Code, Cursor, an `rmcp` agent) and forwards to one
//! upstream server: a command it starts ([`McpProxyConfig::command`]), or
//! a streamable HTTP endpoint it connects to ([`McpProxyConfig::url`], its
//! bearer token read from the variable [`McpProxyConfig::bearer_token_env`]
//! names). Every `tools/call` runs through the agent's hooks, built from
//! the same config as any agent's:
//!
//! - the context: the tool's name as the upstream names it, the connector
//!   (`metadata.connector`) the server's configured name
//!   ([`McpProxyConfig::server`]), the agent id, the configured user and
//!   org (over HTTP, those of the client's token:
//!   [`McpProxyConfig::clients`]), the session as the conversation id and
//!   the request id as the tool call id;
//! - each upstream tool's `inputSchema` is registered with the
//!   `args_schema` guard (a schema the config gives wins); a tool whose
//!   schema the guard cannot compile is blocked;
//! - only a tool the upstream's last `tools/list` names, exactly, with a
//!   schema check registered, not hidden (in any casing) is called; any
//!   other name is refused before any hook and audited;
//! - a blocked call is answered with `isError: true` and the reason; the
//!   upstream receives the arguments as the hooks left them; post hooks see
//!   the whole result (plain text as a string, anything else as its MCP
//!   JSON with every block) and the client receives only what they left;
//!   an upstream tool error runs them too;
//! - an approval that waits sends progress notifications to a client that
//!   asked for progress; a client's cancellation cancels the call, and
//!   withdraws its pending approval request (its card redrawn as cancelled);
//! - the upstream dead, not answering within [`McpProxyConfig::call_timeout`]
//!   or answering nonsense: the call fails closed, with an error result. A
//!   dead upstream is started again on the next request, up to
//!   [`McpProxyConfig::max_restarts`] times.
//!
//! `resources/read`, `prompts/get` and `completion/complete` run through the
//! hooks as pseudo-tools of those names (`resources/read` with its URI
//! normalised in `metadata.uri`). `tools/list` (less
//! [`McpProxyConfig::hide_tools`]), the other lists and log levels pass
//! through, their errors with the proxy's own text, and so do the
//! upstream's notifications (progress only to the session it belongs to,
//! list changes to all). Each tool's annotations are in
//! `metadata.annotations`, believed when
//! [`McpProxyConfig::trust_annotations`] says so. `initialize` answers with
//! the upstream's capabilities and nothing of its text: the proxy's own
//! server info and [`McpProxyConfig::instructions`]. The upstream runs
//! with a scrubbed environment: [`ENV_ALLOWLIST`], what
//! [`McpProxyConfig::pass_env`] names, and [`McpProxyConfig::env`].
//!
//! ```no_run
//! use hooks::mcp_proxy::{McpProxy, McpProxyConfig};
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let (agent, mut settings) = McpProxyConfig::load("agent.yaml")?;
//! settings.command = vec!["npx".into(), "-y".into(), "@modelcontextprotocol/server-everything".into()];
//! let resources = hooks::std_hooks::offline_resources([] as [&str; 0]).await?;
//! let proxy = McpProxy::start(agent, settings, &resources).await?;
//! proxy.serve_stdio().await?;
//! # Ok(())
//! # }
//! ```
//!
#![doc = include_str!("../../docs/mcp-proxy.md")]

mod annotations;
mod answer;
mod approval_link;
mod call;
mod clients;
mod config;
mod error;
#[cfg(fuzzing)]
#[doc(hidden)]
pub mod fuzzing;
mod http;
mod input_request;
mod remote;
mod request_state;
mod resource_uri;
mod schema;
mod server;
mod tools;
mod upstream;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use rmcp::ServiceExt;
use rmcp::model::{Implementation, ServerConfig, ServerPeerInfo};
use rmcp::service::RoleServer;
use rmcp::transport::IntoTransport;

pub use config::{
    DEFAULT_CALL_TIMEOUT, DEFAULT_MAX_RESTARTS, ENV_ALLOWLIST, McpClient, McpProxyConfig, SECTION,
};
pub use error::McpProxyError;
pub use http::MCP_PATH;
use server::ProxyServer;
use upstream::{Downstream, Upstream};

use crate::Agent;
use crate::config::AgentConfig;
use crate::factory::Resources;

/// What every request of the proxy shares.
pub(crate) struct Shared {
    agent: Agent,
    settings: McpProxyConfig,
    upstream: Upstream,
    downstream: Downstream,
    /// What `initialize` answers: the upstream's, saying it is proxied.
    info: ServerConfig,
    /// The conversation id of every call.
    session: String,
    /// Tools whose `inputSchema` the guard cannot compile, with why.
    unusable_schemas: BTreeMap<String, String>,
    /// Tools whose arguments the guard checks, fixed at start.
    checked: tools::Checked,
    /// The approval machinery the agent's gate asks through, if any: a
    /// call the client cancels while it waits has its request withdrawn.
    approvals: Option<crate::std_hooks::approval_gate::Approvals>,
    /// Calls held for a client's retry (MCP 2026-07-28).
    held: input_request::HeldCalls,
    /// How many clients [`McpProxy::serve`] has served.
    served: AtomicU64,
    /// How many HTTP sessions every listener together has opened.
    http_sessions: AtomicU64,
}

/// The hooks between an MCP client and one upstream MCP server.
#[derive(Clone)]
pub struct McpProxy {
    shared: Arc<Shared>,
}

impl McpProxy {
    /// Starts the upstream ([`McpProxyConfig::command`]) or connects to it
    /// ([`McpProxyConfig::url`]), completes the MCP handshake with it, reads its tools, registers their schemas with
    /// the `args_schema` guard and builds the agent's hooks from `agent`
    /// with `resources`. Any failure stops here: nothing is served.
    pub async fn start(
        mut agent: AgentConfig,
        settings: McpProxyConfig,
        resources: &Resources,
    ) -> Result<McpProxy, McpProxyError> {
        // A config error is reported before any upstream is started.
        Agent::build(agent.clone(), resources)?;
        let downstream = Downstream::default();
        let started = Upstream::start(&settings, downstream.clone()).await?;
        let upstream = started.upstream;
        let upstream_info = upstream
            .info()
            .await
            .ok_or_else(|| McpProxyError::Initialize {
                command: upstream.shown(),
                message: "it answered without saying what it serves".to_owned(),
            })?;
        let tools: Vec<_> = started.tools.values().cloned().collect();
        let (unusable_schemas, checked) = schema::register(&mut agent, &tools);
        let agent = Agent::build(agent, resources)?;
        let info = proxied_info(upstream_info, &settings);
        let approvals = resources.get(crate::std_hooks::APPROVALS).cloned();
        Ok(McpProxy {
            shared: Arc::new(Shared {
                agent,
                upstream,
                downstream,
                info,
                session: session_id(),
                unusable_schemas,
                checked,
                approvals,
                held: input_request::HeldCalls::default(),
                served: AtomicU64::new(0),
                http_sessions: AtomicU64::new(0),
                settings,
            }),
        })
    }

    /// The agent whose hooks every call runs through.
    pub fn agent(&self) -> &Agent {
        &self.shared.agent
    }

    /// The settings the proxy runs with.
    pub fn settings(&self) -> &McpProxyConfig {
        &self.shared.settings
    }

    /// What the proxy answers to `initialize`.
    pub fn server_info(&self) -> &ServerConfig {
        &self.shared.info
    }

    /// Upstream tools whose `inputSchema` the `args_schema` guard cannot
    /// compile, with why; their calls are blocked.
    pub fn unusable_schemas(&self) -> &BTreeMap<String, String> {
        &self.shared.unusable_schemas
    }

    /// The conversation id of the calls of the first session served with
    /// [`serve`](Self::serve) or [`serve_stdio`](Self::serve_stdio) (their
    /// audit rows' `conversation_id`); each later one has this id and
    /// `-stdio-<n>`.
    pub fn session_id(&self) -> &str {
        &self.shared.session
    }

    /// The upstream as messages name it: its command, or its URL without
    /// the query.
    pub fn upstream_name(&self) -> String {
        self.shared.upstream.shown()
    }

    /// The process id of the upstream now running, if known (an upstream
    /// reached at a URL has none).
    pub async fn upstream_pid(&self) -> Option<u32> {
        self.shared.upstream.pid().await
    }

    /// Serves one MCP client on `transport` (a pair of async reader and
    /// writer, or any `rmcp` server transport) until it disconnects. Each
    /// client served so is a conversation of its own
    /// ([`session_id`](Self::session_id)): clients number their requests
    /// alike, and a call is known to the approval gate by its conversation
    /// and request id, so one client's call never finds another's approval.
    pub async fn serve<T, E, A>(&self, transport: T) -> Result<(), McpProxyError>
    where
        T: IntoTransport<RoleServer, E, A>,
        E: std::error::Error + Send + Sync + 'static,
    {
        let n = self.shared.served.fetch_add(1, Ordering::Relaxed) + 1;
        let session = match n {
            1 => self.shared.session.clone(),
            n => format!("{}-stdio-{n}", self.shared.session),
        };
        let session: Arc<str> = session.into();
        let server = ProxyServer {
            shared: self.shared.clone(),
            session: session.clone(),
        };
        let running = server
            .serve(transport)
            .await
            .map_err(|error| McpProxyError::Client(error.to_string()))?;
        let ended = running.waiting().await;
        input_request::release_session(&self.shared, &session).await;
        ended.map_err(|error| McpProxyError::Stopped(error.to_string()))?;
        Ok(())
    }

    /// Serves MCP over streamable HTTP on `listener`, at [`MCP_PATH`], to
    /// any number of clients, each session with its own conversation id
    /// (this proxy's [`session_id`](Self::session_id) and `-http-<n>`),
    /// until the listener fails. Every request must carry `Authorization:
    /// Bearer <token>` with the token of one of
    /// [`McpProxyConfig::clients`] (its calls made by that client's user
    /// and org) or `token` (its calls made by [`McpProxyConfig::user`] and
    /// [`McpProxyConfig::org`]); an empty `token` is refused
    /// ([`McpProxyError::EmptyToken`]). A session answers only the token
    /// that opened it. Without any token, only a loopback address is
    /// served, and only to requests that name a loopback host. A request
    /// whose `Origin` is neither in [`McpProxyConfig::allowed_origins`] nor
    /// a loopback origin of the host it names is refused (403).
    pub async fn serve_http(
        &self,
        listener: tokio::net::TcpListener,
        token: Option<String>,
    ) -> Result<(), McpProxyError> {
        http::serve(self.shared.clone(), listener, token).await
    }

    /// Serves the MCP client on this process's stdin and stdout until it
    /// disconnects (how Claude Desktop, Claude Code and Cursor start a
    /// server).
    pub async fn serve_stdio(&self) -> Result<(), McpProxyError> {
        self.serve(rmcp::transport::stdio()).await
    }
}

/// What the proxy answers to `initialize`: the upstream's capabilities, and
/// nothing of its free text. Clients put `instructions` into the model's
/// system prompt and show the server's name and title, and no hook reads
/// them, so the server info is the proxy's own (named after
/// [`McpProxyConfig::server`]) and the instructions are the config's
/// ([`McpProxyConfig::instructions`]), if any. The upstream's own are only
/// logged.
fn proxied_info(info: ServerPeerInfo, settings: &McpProxyConfig) -> ServerConfig {
    let server = &settings.server;
    if let Some(upstream) = &info.server_info {
        tracing::info!(
            server = %server,
            name = %upstream.name,
            version = %upstream.version,
            "the upstream MCP server introduced itself (not passed on to the client)"
        );
    }
    if let Some(instructions) = &info.instructions {
        tracing::info!(
            server = %server,
            instructions = %instructions,
            "the upstream MCP server sent instructions; the client gets `mcp_proxy.instructions` instead"
        );
    }
    let version = env!("CARGO_PKG_VERSION");
    let mut proxy = Implementation::new(format!("hooks-mcp-proxy/{server}"), version);
    proxy.title = Some(format!("{server} (through hooks mcp-proxy)"));
    proxy.description = Some(format!(
        "hooks mcp-proxy {version} in front of the MCP server `{server}`: every tool call runs \
         through the agent's hooks"
    ));
    let mut answer = ServerConfig::new(mediated(info.capabilities)).with_server_info(proxy);
    answer.instructions = Some(settings.instructions.clone()).filter(|text| !text.is_empty());
    answer
}

/// The upstream's capabilities the proxy passes on: the kinds of request it
/// mediates (tools, resources, prompts, completions, logging) with their
/// flags, and nothing free-form. `experimental` and `extensions` (tasks,
/// skills, apps: nothing the proxy runs through the hooks) are dropped, and
/// so is resource subscription, which the proxy does not pass on.
fn mediated(mut capabilities: rmcp::model::ServerCapabilities) -> rmcp::model::ServerCapabilities {
    if capabilities.experimental.is_some() || capabilities.extensions.is_some() {
        tracing::info!(
            experimental = ?capabilities.experimental,
            extensions = ?capabilities.extensions,
            "the upstream MCP server declares capabilities the proxy does not pass on"
        );
    }
    capabilities.experimental = None;
    capabilities.extensions = None;
    capabilities.logging = capabilities.logging.map(|_| Default::default());
    capabilities.completions = capabilities.completions.map(|_| Default::default());
    if let Some(resources) = &mut capabilities.resources {
        resources.subscribe = None;
    }
    capabilities
}

/// A conversation id for one proxy process's session.
fn session_id() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|elapsed| elapsed.as_nanos())
        .unwrap_or_default();
    format!("mcp-{}-{nanos:x}", std::process::id())
}
