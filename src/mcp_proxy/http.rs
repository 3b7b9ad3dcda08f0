//! The client side over streamable HTTP (`--listen`), one session per
//! client, behind a bearer token unless on a loopback address.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use axum::Router;
use axum::extract::Request;
use axum::http::StatusCode;
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};

use super::Shared;
use super::error::McpProxyError;
use super::server::ProxyServer;
use crate::serve::auth::authorized;

/// The path MCP is served on.
pub const MCP_PATH: &str = "/mcp";

/// Serves MCP over streamable HTTP on `listener` at [`MCP_PATH`] until the
/// listener fails. Without a token only a loopback address is served, and
/// only requests addressed to a loopback host name are answered.
pub(super) async fn serve(
    shared: Arc<Shared>,
    listener: tokio::net::TcpListener,
    token: Option<String>,
) -> Result<(), McpProxyError> {
    let address = listener
        .local_addr()
        .map_err(|error| McpProxyError::Stopped(error.to_string()))?;
    let mut config = StreamableHttpServerConfig::default();
    match &token {
        // The token guards the endpoint, whatever name a client uses for it.
        Some(_) => config = config.disable_allowed_hosts(),
        None if !address.ip().is_loopback() => {
            return Err(McpProxyError::TokenRequired(address));
        }
        None => {}
    }
    let sessions = AtomicU64::new(0);
    let factory_shared = shared.clone();
    let service = StreamableHttpService::new(
        move || {
            let n = sessions.fetch_add(1, Ordering::Relaxed) + 1;
            Ok(ProxyServer {
                shared: factory_shared.clone(),
                session: format!("{}-http-{n}", factory_shared.session).into(),
            })
        },
        Arc::new(LocalSessionManager::default()),
        config,
    );
    let mut router = Router::new().nest_service(MCP_PATH, service);
    if let Some(token) = token {
        let token: Arc<str> = token.into();
        router = router.layer(middleware::from_fn(move |request: Request, next: Next| {
            let token = token.clone();
            async move { require_token(&token, request, next).await }
        }));
    }
    axum::serve(listener, router)
        .await
        .map_err(|error| McpProxyError::Stopped(error.to_string()))
}

async fn require_token(token: &str, request: Request, next: Next) -> Response {
    if authorized(request.headers(), token) {
        next.run(request).await
    } else {
        (
            StatusCode::UNAUTHORIZED,
            "missing or wrong bearer token: send `Authorization: Bearer <token>` with the proxy's \
             token",
        )
            .into_response()
    }
}
