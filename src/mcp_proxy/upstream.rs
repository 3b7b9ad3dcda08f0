//! The upstream MCP server: spawned with a scrubbed environment, spoken to
//! as an MCP client, started again (per config) when it dies.

use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

#[allow(deprecated)]
use rmcp::model::{
    ClientConfig, Implementation, LoggingMessageNotificationParam, ProgressNotificationParam,
    ResourceUpdatedNotificationParam, ServerPeerInfo,
};
use rmcp::service::{NotificationContext, Peer, RunningService};
use rmcp::transport::TokioChildProcess;
use rmcp::{ClientHandler, RoleClient, RoleServer, ServiceExt};

use super::config::{ENV_ALLOWLIST, McpProxyConfig};
use super::error::McpProxyError;

/// How long the upstream may take to start and answer `initialize`.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(60);

/// The MCP client currently connected to the proxy, where the upstream's
/// notifications go.
#[derive(Clone, Default)]
pub(super) struct Downstream(Arc<Mutex<Option<Peer<RoleServer>>>>);

impl Downstream {
    pub(super) fn set(&self, peer: Peer<RoleServer>) {
        if let Ok(mut slot) = self.0.lock() {
            *slot = Some(peer);
        }
    }

    pub(super) fn peer(&self) -> Option<Peer<RoleServer>> {
        self.0.lock().ok().and_then(|slot| slot.clone())
    }
}

/// The proxy's client side toward the upstream: passes the upstream's
/// notifications (progress, log messages, list changes) on to the client.
#[derive(Clone)]
pub(super) struct Forward {
    downstream: Downstream,
}

impl ClientHandler for Forward {
    fn get_info(&self) -> ClientConfig {
        let mut info = ClientConfig::default();
        info.client_info = Implementation::new("hooks-mcp-proxy", env!("CARGO_PKG_VERSION"));
        info
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        if let Some(peer) = self.downstream.peer() {
            let _ = peer.notify_progress(params).await;
        }
    }

    // Logging is deprecated in the newest protocol revision; clients and
    // servers of earlier ones still use it.
    #[allow(deprecated)]
    async fn on_logging_message(
        &self,
        params: LoggingMessageNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        if let Some(peer) = self.downstream.peer() {
            let _ = peer.notify_logging_message(params).await;
        }
    }

    async fn on_resource_updated(
        &self,
        params: ResourceUpdatedNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        if let Some(peer) = self.downstream.peer() {
            let _ = peer.notify_resource_updated(params).await;
        }
    }

    async fn on_resource_list_changed(&self, _context: NotificationContext<RoleClient>) {
        if let Some(peer) = self.downstream.peer() {
            let _ = peer.notify_resource_list_changed().await;
        }
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        if let Some(peer) = self.downstream.peer() {
            let _ = peer.notify_tool_list_changed().await;
        }
    }

    async fn on_prompt_list_changed(&self, _context: NotificationContext<RoleClient>) {
        if let Some(peer) = self.downstream.peer() {
            let _ = peer.notify_prompt_list_changed().await;
        }
    }
}

/// One running upstream process and its MCP session.
struct Running {
    service: RunningService<RoleClient, Forward>,
    pid: Option<u32>,
}

/// The upstream server, started again when it died (up to the configured
/// number of restarts).
pub(super) struct Upstream {
    command: Vec<String>,
    env: Vec<(String, String)>,
    max_restarts: u32,
    forward: Forward,
    state: tokio::sync::Mutex<(Running, u32)>,
}

impl Upstream {
    /// Starts the upstream and completes the MCP handshake with it.
    pub(super) async fn start(
        config: &McpProxyConfig,
        downstream: Downstream,
    ) -> Result<Upstream, McpProxyError> {
        if config.command.is_empty() {
            return Err(McpProxyError::NoUpstream);
        }
        let env = scrubbed_env(config, |name| std::env::var(name).ok());
        let forward = Forward { downstream };
        let running = spawn(&config.command, &env, forward.clone()).await?;
        Ok(Upstream {
            command: config.command.clone(),
            env,
            max_restarts: config.max_restarts,
            forward,
            state: tokio::sync::Mutex::new((running, 0)),
        })
    }

    /// The upstream's MCP peer, the upstream started again first if it
    /// died and restarts remain. The error says why there is none.
    pub(super) async fn peer(&self) -> Result<Peer<RoleClient>, String> {
        let mut state = self.state.lock().await;
        let (running, restarts) = &mut *state;
        if !running.service.is_closed() && !running.service.peer().is_transport_closed() {
            return Ok(running.service.peer().clone());
        }
        if *restarts >= self.max_restarts {
            return Err(format!(
                "the upstream MCP server `{}` has stopped and was restarted {} time(s), the \
                 most its config allows (`mcp_proxy.max_restarts`)",
                self.command.join(" "),
                restarts
            ));
        }
        *restarts += 1;
        match spawn(&self.command, &self.env, self.forward.clone()).await {
            Ok(fresh) => {
                *running = fresh;
                Ok(running.service.peer().clone())
            }
            Err(error) => Err(format!("the upstream MCP server had stopped; {error}")),
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
    let service = match tokio::time::timeout(HANDSHAKE_TIMEOUT, forward.serve(transport)).await {
        Ok(Ok(service)) => service,
        Ok(Err(error)) => {
            return Err(McpProxyError::Initialize {
                command: shown,
                message: error.to_string(),
            });
        }
        Err(_) => {
            return Err(McpProxyError::Initialize {
                command: shown,
                message: format!("no answer within {}s", HANDSHAKE_TIMEOUT.as_secs()),
            });
        }
    };
    Ok(Running { service, pid })
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
