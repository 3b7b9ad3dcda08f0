//! `hooks serve`: this crate's hooks behind an HTTP endpoint that speaks
//! Claude Code's hook protocol, so Claude Code (and every agent that calls
//! hooks the same way) gets durable approvals, one audit log, shared rate
//! limits and the read-only guard.
//!
//! The endpoint, `POST /hook`, takes a hook input (`PreToolUse`,
//! `PostToolUse`, `PostToolUseFailure`, `SessionStart`) and answers in the
//! hook output format:
//!
//! - `PreToolUse` runs the pre phase — the approval gate really waits for a
//!   person — and answers `permissionDecision: "deny"` with the reason, or
//!   `"allow"` (with `updatedInput` when a hook rewrote the input). The call
//!   is then held, keyed by `tool_use_id`, for its post event.
//! - `PostToolUse` / `PostToolUseFailure` run the post phase on
//!   `tool_response` / `error` and answer `decision: "block"` with the
//!   reason when a hook withholds the result, `updatedToolOutput`
//!   (`updatedMCPToolOutput` for `mcp__` tools) when one rewrote it. The
//!   observers (the audit log) see the whole call once, pre and post
//!   together; a call whose post event never comes is recorded as abandoned
//!   after [`ServeConfig::pending_ttl`].
//! - `SessionStart` answers `additionalContext` from the session-start
//!   hooks, or `continue: false` when one stops the session.
//!
//! `session_id` becomes the conversation id, `tool_use_id` the tool call id;
//! `cwd`, `permission_mode`, the client's `agent_id`/`agent_type` and
//! `source` are kept as the call's metadata (`metadata.cwd`, …). Requests
//! carry a bearer token (compared in constant time); bodies over
//! [`ServeConfig::max_body`] are refused; a malformed input is a 4xx and runs
//! nothing.
//!
//! ```no_run
//! use hooks::prelude::*;
//! use hooks::serve::{ServeConfig, serve};
//!
//! #[pre_tool_use(when = tool_name == "Bash" && args.command contains "rm -rf")]
//! async fn no_rm_rf(_ctx: &HookContext) -> HookResult {
//!     HookResult::block("`rm -rf` is not allowed")
//! }
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let config = hooks::config::AgentConfig::from_value(
//!     &serde_json::json!({"agent": "claude-code", "hooks": {"class_hooks": ["no_rm_rf"]}}),
//!     "inline",
//!     None,
//! )?;
//! let resources = hooks::std_hooks::offline_resources([] as [&str; 0]).await?;
//! let agent = Agent::build(config, &resources)?;
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:8377").await?;
//! serve(listener, agent, ServeConfig::with_token("s3cret").org("acme").user("dev")).await?;
//! # Ok(())
//! # }
//! ```
//!
#![doc = include_str!("../../docs/claude-code.md")]

mod answer;
pub(crate) mod auth;
pub mod client;
pub(crate) mod codex;
mod config;
#[cfg(fuzzing)]
#[doc(hidden)]
pub mod fuzzing;
mod handler;
mod in_flight;
mod input;
mod slots;

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::routing::post;

pub use config::{
    DEFAULT_MAX_BODY, DEFAULT_MAX_CONCURRENT, DEFAULT_MAX_CONCURRENT_PER_SESSION,
    DEFAULT_MAX_IN_FLIGHT, DEFAULT_MAX_IN_FLIGHT_PER_SESSION, DEFAULT_PENDING_TTL, ServeConfig,
};
use handler::Server;
use in_flight::InFlight;

use crate::Agent;

/// Why the server did not start or stopped.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// No token, on an address other hosts can reach.
    #[error(
        "refusing to serve without a token on {0}, which is not a loopback address: set a token \
         (HOOKS_SERVE_TOKEN for the CLI) or listen on 127.0.0.1"
    )]
    TokenRequired(std::net::SocketAddr),
    /// The listener failed.
    #[error("the hook server failed: {0}")]
    Io(#[from] std::io::Error),
}

/// The endpoint as an axum `Router` (`POST /hook`), to mount in an
/// application of your own. Calls waiting for their post event past the TTL
/// are recorded as abandoned when a later request arrives; [`serve`] also
/// sweeps them every few seconds.
pub fn router(agent: Agent, config: ServeConfig) -> Router {
    router_and_server(agent, config).0
}

fn router_and_server(agent: Agent, config: ServeConfig) -> (Router, Arc<Server>) {
    let server = Arc::new(Server {
        in_flight: InFlight::new(
            config.pending_ttl,
            config.max_in_flight,
            config.max_in_flight_per_session,
        ),
        slots: slots::Slots::new(config.max_concurrent, config.max_concurrent_per_session),
        agent,
        config,
    });
    // The handler reads the body itself, after the token, with the cap.
    let router = Router::new()
        .route("/hook", post(handler::hook))
        .layer(DefaultBodyLimit::disable())
        .with_state(server.clone());
    (router, server)
}

/// Serves the endpoint on `listener` until the listener fails. Without a
/// token, only a loopback address is served.
pub async fn serve(
    listener: tokio::net::TcpListener,
    agent: Agent,
    config: ServeConfig,
) -> Result<(), ServeError> {
    let address = listener.local_addr()?;
    if config.token.is_none() && !address.ip().is_loopback() {
        return Err(ServeError::TokenRequired(address));
    }
    let (router, server) = router_and_server(agent, config);
    let sweeper = tokio::spawn(async move {
        let mut tick = tokio::time::interval(Duration::from_secs(5));
        loop {
            tick.tick().await;
            server.in_flight.sweep();
        }
    });
    let served = axum::serve(
        listener,
        router.into_make_service_with_connect_info::<std::net::SocketAddr>(),
    )
    .await;
    sweeper.abort();
    Ok(served?)
}
