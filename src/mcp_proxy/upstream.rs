//! The upstream MCP server: spawned with a scrubbed environment, spoken to
//! as an MCP client, started again (per config) when it dies.

use std::collections::HashMap;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

#[allow(deprecated)]
use rmcp::model::{
    ClientConfig, ClientRequest, Extensions, Implementation, LoggingMessageNotificationParam,
    PingRequest, PingRequestMethod, ProgressNotificationParam, ProgressToken,
    ResourceUpdatedNotificationParam, ServerPeerInfo,
};
use rmcp::service::{NotificationContext, Peer, RunningService};
use rmcp::transport::TokioChildProcess;
use rmcp::{ClientHandler, RoleClient, RoleServer, ServiceExt};

use super::config::{ENV_ALLOWLIST, McpProxyConfig};
use super::error::McpProxyError;
use super::remote;
use super::tools::{Catalog, Listed};

/// How long the upstream may take to start and answer `initialize`.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(60);

/// The token the proxy gave the upstream → the client that asked and its
/// token.
type Relays = HashMap<ProgressToken, (ProgressToken, Peer<RoleServer>)>;

/// A request a client session has in flight upstream: its number, the
/// session's conversation id and the session's peer.
type InFlight = Vec<(u64, Arc<str>, Peer<RoleServer>)>;

/// The MCP clients connected to the proxy, where the upstream's
/// notifications go, the progress tokens of calls in flight, and which
/// session each request in flight upstream came from.
#[derive(Clone, Default)]
pub(super) struct Downstream {
    peers: Arc<Mutex<Vec<Peer<RoleServer>>>>,
    /// The token the proxy gave the upstream → the client that asked and
    /// its token.
    tokens: Arc<Mutex<Relays>>,
    in_flight: Arc<Mutex<(u64, InFlight)>>,
}

impl Downstream {
    /// Adds a client that completed its handshake (and forgets those gone).
    pub(super) fn add(&self, peer: Peer<RoleServer>) {
        if let Ok(mut peers) = self.peers.lock() {
            peers.retain(|known| !known.is_transport_closed());
            peers.push(peer);
        }
    }

    /// The clients still connected.
    fn peers(&self) -> Vec<Peer<RoleServer>> {
        match self.peers.lock() {
            Ok(mut peers) => {
                peers.retain(|known| !known.is_transport_closed());
                peers.clone()
            }
            Err(_) => Vec::new(),
        }
    }

    /// Notes that `session` (its client `peer`) has a request in flight
    /// upstream, until the guard is dropped.
    pub(super) fn working(&self, session: Arc<str>, peer: Peer<RoleServer>) -> Working {
        let mut number = 0;
        if let Ok(mut in_flight) = self.in_flight.lock() {
            in_flight.0 += 1;
            number = in_flight.0;
            in_flight.1.push((number, session, peer));
        }
        Working {
            in_flight: self.in_flight.clone(),
            number,
        }
    }

    /// Where a notification that belongs to a request, but does not say
    /// which (a resource update), may go: the one session with requests in
    /// flight upstream, or with none in flight, the one client connected.
    /// With several candidates it goes to none: another session's
    /// notifications are not broadcast (a request without a session, which
    /// never connected, counts as a session of its own).
    fn requester(&self) -> Option<Peer<RoleServer>> {
        let in_flight = self.in_flight.lock().ok()?;
        if let Some((_, session, peer)) = in_flight.1.first() {
            return in_flight
                .1
                .iter()
                .all(|(_, other, _)| other == session)
                .then(|| peer.clone());
        }
        drop(in_flight);
        match self.peers().as_slice() {
            [only] => Some(only.clone()),
            _ => None,
        }
    }

    /// Passes the upstream's progress on `upstream` to `peer` as progress
    /// on `client`, until the guard is dropped.
    pub(super) fn relay_progress(
        &self,
        upstream: ProgressToken,
        client: ProgressToken,
        peer: Peer<RoleServer>,
    ) -> ProgressRelay {
        if let Ok(mut tokens) = self.tokens.lock() {
            tokens.insert(upstream.clone(), (client, peer));
        }
        ProgressRelay {
            tokens: self.tokens.clone(),
            upstream,
        }
    }

    fn client_token(&self, upstream: &ProgressToken) -> Option<(ProgressToken, Peer<RoleServer>)> {
        self.tokens.lock().ok()?.get(upstream).cloned()
    }
}

/// Relays one call's progress while it lives.
pub(super) struct ProgressRelay {
    tokens: Arc<Mutex<Relays>>,
    upstream: ProgressToken,
}

impl Drop for ProgressRelay {
    fn drop(&mut self) {
        if let Ok(mut tokens) = self.tokens.lock() {
            tokens.remove(&self.upstream);
        }
    }
}

/// One session's request in flight upstream, while it lives.
pub(super) struct Working {
    in_flight: Arc<Mutex<(u64, InFlight)>>,
    number: u64,
}

impl Drop for Working {
    fn drop(&mut self) {
        if let Ok(mut in_flight) = self.in_flight.lock() {
            in_flight.1.retain(|(number, ..)| *number != self.number);
        }
    }
}

/// The proxy's client side toward the upstream: passes the upstream's
/// notifications on to the clients (progress and log messages only to the
/// session they belong to), and reads its tools again when they change.
#[derive(Clone)]
pub(super) struct Forward {
    downstream: Downstream,
    catalog: Arc<Catalog>,
}

impl ClientHandler for Forward {
    fn get_info(&self) -> ClientConfig {
        let mut info = ClientConfig::default();
        info.client_info = Implementation::new("hooks-mcp-proxy", env!("CARGO_PKG_VERSION"));
        info
    }

    /// Progress on a call the client asked progress of, under the client's
    /// token, without the server's free-text message (no hook sees it); any
    /// other progress (a token the proxy never gave) is dropped.
    async fn on_progress(
        &self,
        mut params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let Some((token, peer)) = self.downstream.client_token(&params.progress_token) else {
            return;
        };
        params.progress_token = token;
        params.message = None;
        let _ = peer.notify_progress(params).await;
    }

    /// The server's log messages go to the proxy's own log, not to the
    /// client: their text is the server's to choose and no hook sees it, so
    /// forwarding them would hand a client's model words past the hooks.
    // Logging is deprecated in the newest protocol revision; clients and
    // servers of earlier ones still use it.
    #[allow(deprecated)]
    async fn on_logging_message(
        &self,
        params: LoggingMessageNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        tracing::info!(
            level = ?params.level,
            logger = params.logger.as_deref().unwrap_or(""),
            data = %params.data,
            "upstream MCP server log message (not forwarded to the client)"
        );
    }

    async fn on_resource_updated(
        &self,
        params: ResourceUpdatedNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        if let Some(peer) = self.downstream.requester() {
            let _ = peer.notify_resource_updated(params).await;
        }
    }

    async fn on_resource_list_changed(&self, _context: NotificationContext<RoleClient>) {
        for peer in self.downstream.peers() {
            let _ = peer.notify_resource_list_changed().await;
        }
    }

    /// The proxy reads the tools again (calls wait meanwhile), then tells
    /// the clients.
    async fn on_tool_list_changed(&self, context: NotificationContext<RoleClient>) {
        // A list that cannot be read leaves none: calls are refused, each
        // with why, and the next request reads it again.
        let _ = self.catalog.refresh(&context.peer).await;
        for peer in self.downstream.peers() {
            let _ = peer.notify_tool_list_changed().await;
        }
    }

    async fn on_prompt_list_changed(&self, _context: NotificationContext<RoleClient>) {
        for peer in self.downstream.peers() {
            let _ = peer.notify_prompt_list_changed().await;
        }
    }
}

/// One running upstream process and its MCP session.
struct Running {
    service: RunningService<RoleClient, Forward>,
    pid: Option<u32>,
}

/// Where the upstream is: a command the proxy starts, or a streamable
/// HTTP endpoint it connects to.
enum Endpoint {
    /// A command spoken to over its stdio, with exactly this environment.
    Command {
        command: Vec<String>,
        env: Vec<(String, String)>,
    },
    /// A URL, with what is sent besides MCP.
    Url {
        url: String,
        credentials: remote::Credentials,
    },
}

impl Endpoint {
    /// `text` with the upstream's URL, wherever it appears, as
    /// [`shown`](Self::shown).
    fn scrubbed(&self, text: String) -> String {
        match self {
            Endpoint::Command { .. } => text,
            Endpoint::Url { url, .. } => remote::scrubbed(url, text),
        }
    }

    /// The upstream as messages name it (a URL without its query).
    fn shown(&self) -> String {
        match self {
            Endpoint::Command { command, .. } => command.join(" "),
            Endpoint::Url { url, .. } => remote::shown(url),
        }
    }

    /// Starts (or connects to) the upstream and completes the MCP
    /// handshake with it.
    async fn connect(&self, forward: Forward) -> Result<Running, McpProxyError> {
        match self {
            Endpoint::Command { command, env } => spawn(command, env, forward).await,
            Endpoint::Url { url, credentials } => {
                let shown = remote::shown(url);
                let transport = remote::transport(url, credentials);
                let service = handshake(forward.serve(transport))
                    .await
                    .map_err(|message| McpProxyError::Connect {
                        url: shown,
                        message: remote::scrubbed(url, message),
                    })?;
                Ok(Running { service, pid: None })
            }
        }
    }
}

/// The upstream server, started again (or connected to again) when it died,
/// up to the configured number of restarts.
pub(super) struct Upstream {
    endpoint: Endpoint,
    max_restarts: u32,
    forward: Forward,
    state: tokio::sync::Mutex<(Running, u32)>,
    /// A request found the upstream gone (its transport failed) while the
    /// session still looked open: the next request starts it again.
    lost: std::sync::atomic::AtomicBool,
}

/// The upstream's tools, as [`Upstream::start`] read them.
pub(super) struct Started {
    pub(super) upstream: Upstream,
    pub(super) tools: Arc<Listed>,
}

impl Upstream {
    /// Starts the upstream, completes the MCP handshake with it and reads
    /// its tools.
    pub(super) async fn start(
        config: &McpProxyConfig,
        downstream: Downstream,
    ) -> Result<Started, McpProxyError> {
        let endpoint = if !config.url.is_empty() {
            remote::check_url(&config.url)?;
            let credentials = remote::Credentials::read(config, |name| std::env::var(name).ok())?;
            Endpoint::Url {
                url: config.url.clone(),
                credentials,
            }
        } else if !config.command.is_empty() {
            Endpoint::Command {
                command: config.command.clone(),
                env: scrubbed_env(config, |name| std::env::var(name).ok()),
            }
        } else {
            return Err(McpProxyError::NoUpstream);
        };
        let forward = Forward {
            downstream,
            catalog: Arc::new(Catalog::default()),
        };
        let running = endpoint.connect(forward.clone()).await?;
        let tools = forward
            .catalog
            .refresh(running.service.peer())
            .await
            .map_err(|error| McpProxyError::ListTools(endpoint.scrubbed(error)))?;
        let upstream = Upstream {
            endpoint,
            max_restarts: config.max_restarts,
            forward,
            state: tokio::sync::Mutex::new((running, 0)),
            lost: std::sync::atomic::AtomicBool::new(false),
        };
        Ok(Started { upstream, tools })
    }

    /// A request's failure as text the client and the audit log may see
    /// (the upstream's URL shown without its query); a transport failure
    /// (the upstream gone while its session still looked open) also marks
    /// the upstream lost: the next request starts it again, per the restart
    /// policy. An upstream reached over HTTP says it is gone only this way.
    pub(super) fn failure(&self, error: &rmcp::service::ServiceError) -> String {
        if matches!(
            error,
            rmcp::service::ServiceError::TransportSend(_)
                | rmcp::service::ServiceError::TransportClosed
        ) {
            self.lost.store(true, std::sync::atomic::Ordering::SeqCst);
        }
        self.endpoint.scrubbed(error.to_string())
    }

    /// The upstream as messages name it: its command, or its URL.
    pub(super) fn shown(&self) -> String {
        self.endpoint.shown()
    }

    /// The tools the upstream listed last.
    pub(super) fn catalog(&self) -> &Catalog {
        &self.forward.catalog
    }

    /// The upstream's MCP peer, the upstream started again first if it
    /// died and restarts remain. The error says why there is none.
    pub(super) async fn peer(&self) -> Result<Peer<RoleClient>, String> {
        let mut state = self.state.lock().await;
        let (running, restarts) = &mut *state;
        let lost = self.lost.swap(false, std::sync::atomic::Ordering::SeqCst);
        // Dropped before it decided (the request's task ended), this call
        // leaves the suspicion for the next one.
        let mut suspicion = Suspicion {
            lost: &self.lost,
            keep: lost,
        };
        let open = !running.service.is_closed() && !running.service.peer().is_transport_closed();
        // A request that failed in transport does not prove the session
        // dead: one request refused by an HTTP layer (too large, rate
        // limited) or a request still running on a session replaced since
        // fails the same way. The session is kept if it still answers a ping.
        if open && (!lost || answers_ping(running.service.peer()).await) {
            suspicion.keep = false;
            let peer = running.service.peer().clone();
            // A list that could not be read is read again before anything
            // else is sent.
            if self.forward.catalog.current().await.is_none() {
                self.forward.catalog.refresh(&peer).await.map_err(|error| {
                    format!(
                        "the upstream MCP server did not list its tools: {}",
                        self.endpoint.scrubbed(error)
                    )
                })?;
            }
            return Ok(peer);
        }
        // What the dead upstream listed is no longer known to hold.
        self.forward.catalog.forget().await;
        if *restarts >= self.max_restarts {
            // Stays lost: every later request is refused too.
            self.lost.store(lost, std::sync::atomic::Ordering::SeqCst);
            return Err(format!(
                "the upstream MCP server `{}` has stopped and was restarted {} time(s), the \
                 most its config allows (`mcp_proxy.max_restarts`)",
                self.endpoint.shown(),
                restarts
            ));
        }
        // Counted once the attempt is over: an attempt dropped half-way
        // (its request's task ended) does not use a restart up.
        suspicion.keep = true;
        let attempt = self.endpoint.connect(self.forward.clone()).await;
        *restarts += 1;
        suspicion.keep = false;
        match attempt {
            Ok(fresh) => {
                *running = fresh;
                let peer = running.service.peer().clone();
                self.forward.catalog.refresh(&peer).await.map_err(|error| {
                    format!(
                        "the upstream MCP server started again but did not list its tools: {}",
                        self.endpoint.scrubbed(error)
                    )
                })?;
                Ok(peer)
            }
            Err(error) => {
                // The next request tries again (while restarts remain).
                self.lost.store(true, std::sync::atomic::Ordering::SeqCst);
                Err(format!("the upstream MCP server had stopped; {error}"))
            }
        }
    }

    /// The process id of the upstream now running, if known.
    pub(super) async fn pid(&self) -> Option<u32> {
        self.state.lock().await.0.pid
    }

    /// The upstream's `initialize` answer.
    pub(super) async fn info(&self) -> Option<ServerPeerInfo> {
        let state = self.state.lock().await;
        state
            .0
            .service
            .peer()
            .peer_info()
            .map(|info| (*info).clone())
    }
}

/// Sets `lost` again when dropped while `keep` holds: a check of the
/// upstream (a ping, a restart) cut short leaves the next request to do it.
struct Suspicion<'a> {
    lost: &'a std::sync::atomic::AtomicBool,
    keep: bool,
}

impl Drop for Suspicion<'_> {
    fn drop(&mut self) {
        if self.keep {
            self.lost.store(true, std::sync::atomic::Ordering::SeqCst);
        }
    }
}

/// How long a session suspected lost has to answer a ping.
const PING_TIMEOUT: Duration = Duration::from_secs(5);

/// Whether the upstream answers a `ping` on `peer` within [`PING_TIMEOUT`].
async fn answers_ping(peer: &Peer<RoleClient>) -> bool {
    let ping = ClientRequest::PingRequest(PingRequest {
        method: PingRequestMethod,
        extensions: Extensions::default(),
    });
    // Any answer, an error included, shows the session alive.
    matches!(
        tokio::time::timeout(PING_TIMEOUT, peer.send_request(ping)).await,
        Ok(Ok(_) | Err(rmcp::service::ServiceError::McpError(_)))
    )
}

/// Spawns `command` with exactly `env` and speaks MCP to it over its stdio;
/// its stderr is the proxy's.
async fn spawn(
    command: &[String],
    env: &[(String, String)],
    forward: Forward,
) -> Result<Running, McpProxyError> {
    let shown = command.join(" ");
    let (program, args) = command.split_first().ok_or(McpProxyError::NoUpstream)?;
    let mut process = tokio::process::Command::new(program);
    process
        .args(args)
        .env_clear()
        .envs(env.iter().map(|(name, value)| (name, value)))
        .kill_on_drop(true);
    let (transport, _stderr) = TokioChildProcess::builder(process)
        .stderr(Stdio::inherit())
        .spawn()
        .map_err(|source| McpProxyError::Spawn {
            command: shown.clone(),
            source,
        })?;
    let pid = transport.id();
    let service = handshake(forward.serve(transport))
        .await
        .map_err(|message| McpProxyError::Initialize {
            command: shown,
            message,
        })?;
    Ok(Running { service, pid })
}

/// Completes the MCP handshake `serving` does, within [`HANDSHAKE_TIMEOUT`];
/// the error says what went wrong.
async fn handshake<E: std::fmt::Display>(
    serving: impl std::future::Future<Output = Result<RunningService<RoleClient, Forward>, E>>,
) -> Result<RunningService<RoleClient, Forward>, String> {
    match tokio::time::timeout(HANDSHAKE_TIMEOUT, serving).await {
        Ok(Ok(service)) => Ok(service),
        Ok(Err(error)) => Err(error.to_string()),
        Err(_) => Err(format!("no answer within {}s", HANDSHAKE_TIMEOUT.as_secs())),
    }
}

/// The upstream's environment: the allowlisted variables and those
/// `pass_env` names, taken from the proxy's environment (`lookup`), then
/// the config's `env` on top.
pub(super) fn scrubbed_env(
    config: &McpProxyConfig,
    lookup: impl Fn(&str) -> Option<String>,
) -> Vec<(String, String)> {
    let mut env = std::collections::BTreeMap::new();
    let inherited = ENV_ALLOWLIST
        .iter()
        .copied()
        .chain(config.pass_env.iter().map(String::as_str));
    for name in inherited {
        if let Some(value) = lookup(name) {
            env.insert(name.to_owned(), value);
        }
    }
    for (name, value) in &config.env {
        env.insert(name.clone(), value.clone());
    }
    env.into_iter().collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn the_upstream_inherits_the_allowlist_and_what_config_names_only() {
        let config = McpProxyConfig::from_value(&json!({
            "command": ["server"],
            "pass_env": ["GITHUB_TOKEN"],
            "env": {"PATH": "/opt/bin", "MODE": "ro"},
        }))
        .expect("config");
        let outside = |name: &str| match name {
            "PATH" => Some("/usr/bin".to_owned()),
            "HOME" => Some("/home/a".to_owned()),
            "GITHUB_TOKEN" => Some("ghp_x".to_owned()),
            "AWS_SECRET_ACCESS_KEY" | "LD_PRELOAD" => Some("leak".to_owned()),
            _ => None,
        };
        let env = scrubbed_env(&config, outside);
        assert_eq!(
            env,
            [
                ("GITHUB_TOKEN".to_owned(), "ghp_x".to_owned()),
                ("HOME".to_owned(), "/home/a".to_owned()),
                ("MODE".to_owned(), "ro".to_owned()),
                ("PATH".to_owned(), "/opt/bin".to_owned()),
            ]
        );
    }

    #[test]
    fn a_misspelt_or_nameless_section_is_refused() {
        let error = McpProxyConfig::from_value(&json!({"comand": ["x"]})).expect_err("typo");
        assert!(error.to_string().contains("comand"), "{error}");
        let error = McpProxyConfig::from_value(&json!({"server": " "})).expect_err("blank");
        assert!(error.to_string().contains("server"), "{error}");
        let error =
            McpProxyConfig::from_value(&json!({"call_timeout": "soon"})).expect_err("duration");
        assert!(error.to_string().contains("soon"), "{error}");
    }

    /// The reference server from the npm registry, or `None` (SKIPPED)
    /// without `npm ci --prefix tests/mcp`.
    fn everything_server() -> Option<Vec<String>> {
        let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/mcp/node_modules/@modelcontextprotocol/server-everything/dist/index.js");
        let node = std::process::Command::new("node").arg("--version").output();
        if !script.exists() || node.is_err() {
            println!("SKIPPED: Node or tests/mcp/node_modules is missing");
            return None;
        }
        Some(vec![
            "node".to_owned(),
            script.display().to_string(),
            "stdio".to_owned(),
        ])
    }

    #[tokio::test]
    async fn a_failed_request_on_a_session_that_still_answers_costs_no_restart() {
        let Some(command) = everything_server() else {
            return;
        };
        let config = McpProxyConfig::from_value(&json!({
            "command": command,
            "max_restarts": 0,
        }))
        .expect("config");
        let upstream = Upstream::start(&config, Downstream::default())
            .await
            .expect("starts")
            .upstream;
        let pid = upstream.pid().await;
        // What a request on a replaced session, or one refused by an HTTP
        // layer in front of the server, reports.
        upstream.failure(&rmcp::service::ServiceError::TransportClosed);
        let peer = upstream
            .peer()
            .await
            .expect("the session still answers: no restart is needed or spent");
        assert_eq!(upstream.pid().await, pid, "the same process serves");
        assert!(answers_ping(&peer).await);

        // A server that is really gone is still found out.
        let killed = std::process::Command::new("kill")
            .arg("-9")
            .arg(pid.expect("a pid").to_string())
            .status()
            .expect("kill");
        assert!(killed.success());
        upstream.failure(&rmcp::service::ServiceError::TransportClosed);
        let error = upstream.peer().await.expect_err("gone, no restarts left");
        assert!(error.contains("max_restarts"), "{error}");
    }
}
