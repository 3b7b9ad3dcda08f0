//! The client side over streamable HTTP (`--listen`), one session per
//! client, behind bearer tokens (each naming its caller) unless on a
//! loopback address.

use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::extract::Request;
use axum::http::header::{HOST, ORIGIN};
use axum::http::{HeaderMap, Method, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use rmcp::RoleServer;
use rmcp::service::RequestContext;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};

use super::Shared;
use super::clients::{self, Caller, Tokens};
use super::error::McpProxyError;
use super::server::ProxyServer;
use crate::serve::auth::bearer;

/// The path MCP is served on.
pub const MCP_PATH: &str = "/mcp";

/// The header that names a streamable HTTP session.
const SESSION_HEADER: &str = "mcp-session-id";

/// Serves MCP over streamable HTTP on `listener` at [`MCP_PATH`] until the
/// listener fails. Each request must carry the token of a configured client
/// ([`McpProxyConfig::clients`](super::McpProxyConfig::clients)) or `token`,
/// and its calls are made by that token's user and org; a session answers
/// only requests with the token that opened it. Without any
/// token only a loopback address is served, and only requests addressed to
/// a loopback host name are answered; an empty token is refused. Requests
/// from a browser origin not allowed are refused.
pub(super) async fn serve(
    shared: Arc<Shared>,
    listener: tokio::net::TcpListener,
    token: Option<String>,
) -> Result<(), McpProxyError> {
    let address = listener
        .local_addr()
        .map_err(|error| McpProxyError::Stopped(error.to_string()))?;
    if token
        .as_deref()
        .is_some_and(|token| token.trim().is_empty())
    {
        return Err(McpProxyError::EmptyToken);
    }
    let configured = Caller {
        user: shared.settings.user.clone(),
        org: shared.settings.org.clone(),
    };
    let tokens = Tokens::new(
        &shared.settings.clients,
        token.as_deref(),
        configured,
        |name| std::env::var(name).ok(),
    )?;
    let mut config = StreamableHttpServerConfig::default();
    if !tokens.is_empty() {
        // The tokens guard the endpoint, whatever name a client uses for it.
        config = config.disable_allowed_hosts();
    } else if !address.ip().is_loopback() {
        return Err(McpProxyError::TokenRequired(address));
    }
    let factory_shared = shared.clone();
    let service = StreamableHttpService::new(
        move || {
            // Counted per proxy, not per listener: two listeners of one
            // proxy never name two sessions alike (the approval gate knows
            // a call by its session and request id).
            let n = factory_shared.http_sessions.fetch_add(1, Ordering::Relaxed) + 1;
            Ok(ProxyServer {
                shared: factory_shared.clone(),
                session: format!("{}-http-{n}", factory_shared.session).into(),
            })
        },
        Arc::new(LocalSessionManager::default()),
        config,
    );
    let mut router = Router::new().nest_service(MCP_PATH, service);
    if !tokens.is_empty() {
        let gate = Arc::new(TokenGate {
            tokens,
            sessions: Mutex::new(HashMap::new()),
        });
        router = router.layer(middleware::from_fn(move |request: Request, next: Next| {
            let gate = gate.clone();
            async move { gate.admit(request, next).await }
        }));
    }
    router = router.layer(middleware::from_fn(session_closed_ok));
    let origins: Arc<[String]> = shared.settings.allowed_origins.clone().into();
    router = router.layer(middleware::from_fn(move |request: Request, next: Next| {
        let origins = origins.clone();
        async move { require_origin(&origins, request, next).await }
    }));
    axum::serve(listener, router)
        .await
        .map_err(|error| McpProxyError::Stopped(error.to_string()))
}

/// How many sessions one client may hold at once: opening another forgets
/// its least recently used (whose next request is answered 404, as for a
/// session that ended; an MCP client then opens a new one).
const SESSIONS_PER_CLIENT: usize = 64;

/// A session unused this long is forgotten: longer than the SDK keeps an
/// idle session, so only sessions already gone are dropped.
const SESSION_IDLE: std::time::Duration = std::time::Duration::from_secs(3600);

/// The endpoint's tokens, and which token opened each session (its index
/// among the tokens) and when it last used it.
struct TokenGate {
    tokens: Tokens,
    sessions: Mutex<HashMap<String, (usize, std::time::Instant)>>,
}

impl TokenGate {
    /// Lets a request in when its bearer token is known and, in a session,
    /// the session is one this very token opened (another token of the
    /// same user and org is another client: a laptop and a CI job do not
    /// share sessions); the caller goes with the request (its calls' user
    /// and org). Anything else is refused: a session id the gate did not
    /// see opened (or has forgotten) is no session for any token.
    async fn admit(&self, mut request: Request, next: Next) -> Response {
        let Some((token, caller, digest)) = bearer(request.headers())
            .and_then(|given| Some((self.tokens.caller(given)?, clients::digest(given))))
            .map(|((token, caller), digest)| (token, caller.clone(), digest))
        else {
            return (
                StatusCode::UNAUTHORIZED,
                "missing or wrong bearer token: send `Authorization: Bearer <token>` with a token \
                 the proxy knows",
            )
                .into_response();
        };
        let session = request
            .headers()
            .get(SESSION_HEADER)
            .and_then(|value| value.to_str().ok())
            .map(str::to_owned);
        if let Some(id) = &session {
            let mut sessions = self.sessions();
            match sessions.get_mut(id) {
                Some((owner, used)) if *owner == token => *used = std::time::Instant::now(),
                _ => {
                    return (
                        StatusCode::NOT_FOUND,
                        "no such session for this token: each client uses the sessions it \
                         opened (open a new one with `initialize`)",
                    )
                        .into_response();
                }
            }
        }
        let closing = request.method() == Method::DELETE;
        request.extensions_mut().insert(caller);
        request.extensions_mut().insert(TokenDigest(digest));
        let response = next.run(request).await;
        match session {
            None => {
                let opened = response
                    .headers()
                    .get(SESSION_HEADER)
                    .and_then(|value| value.to_str().ok());
                if let Some(id) = opened {
                    self.opened(id.to_owned(), token);
                }
            }
            Some(id) if closing && response.status().is_success() => {
                self.sessions().remove(&id);
            }
            Some(_) => {}
        }
        response
    }

    /// Records session `id` as opened by `token`, forgetting sessions idle
    /// past [`SESSION_IDLE`] and the token's least recently used past
    /// [`SESSIONS_PER_CLIENT`]: a client that never closes its sessions
    /// cannot grow the table without end.
    fn opened(&self, id: String, token: usize) {
        let mut sessions = self.sessions();
        sessions.retain(|_, (_, used)| used.elapsed() < SESSION_IDLE);
        let mut own: Vec<(std::time::Instant, String)> = sessions
            .iter()
            .filter(|(_, (owner, _))| *owner == token)
            .map(|(id, (_, used))| (*used, id.clone()))
            .collect();
        if own.len() >= SESSIONS_PER_CLIENT {
            own.sort();
            for (_, oldest) in own.iter().take(own.len() + 1 - SESSIONS_PER_CLIENT) {
                sessions.remove(oldest);
            }
        }
        sessions.insert(id, (token, std::time::Instant::now()));
    }

    fn sessions(&self) -> std::sync::MutexGuard<'_, HashMap<String, (usize, std::time::Instant)>> {
        self.sessions
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// Who the request carrying `context` was made by, when it came through
/// the HTTP endpoint with a token; `None` otherwise (stdio, or a loopback
/// endpoint without tokens).
pub(super) fn caller(context: &RequestContext<RoleServer>) -> Option<&Caller> {
    context
        .extensions
        .get::<axum::http::request::Parts>()?
        .extensions
        .get::<Caller>()
}

/// The SHA-256 digest (hex) of the token the request carrying `context`
/// came with, when it came through the HTTP endpoint with one: the same
/// token on any listener of the proxy, and no other.
pub(super) fn token_of(context: &RequestContext<RoleServer>) -> Option<String> {
    context
        .extensions
        .get::<axum::http::request::Parts>()?
        .extensions
        .get::<TokenDigest>()
        .map(|token| token.0.iter().map(|byte| format!("{byte:02x}")).collect())
}

/// Whether the request carrying `context` came through the HTTP endpoint.
pub(super) fn over_http(context: &RequestContext<RoleServer>) -> bool {
    context
        .extensions
        .get::<axum::http::request::Parts>()
        .is_some()
}

/// The digest of the token a request came with.
#[derive(Clone, Copy)]
struct TokenDigest([u8; 32]);

/// Answers a `DELETE` that closed its session with 200 rather than the 202
/// of the HTTP service beneath: nothing is left to happen later, and the
/// MCP SDKs read any answer but 200 and 204 as a failed termination (the
/// Python SDK logs "Session termination failed: 202").
async fn session_closed_ok(request: Request, next: Next) -> Response {
    let closing = request.method() == Method::DELETE;
    let mut response = next.run(request).await;
    if closing && response.status() == StatusCode::ACCEPTED {
        *response.status_mut() = StatusCode::OK;
    }
    response
}

/// Refuses a request whose `Origin` is present and neither configured
/// ([`McpProxyConfig::allowed_origins`](super::McpProxyConfig::allowed_origins))
/// nor a loopback origin of the very host and port the request names: a
/// page a browser loaded from elsewhere (a rebound DNS name included)
/// cannot drive the proxy.
async fn require_origin(allowed: &[String], request: Request, next: Next) -> Response {
    if origin_allowed(request.headers(), allowed) {
        next.run(request).await
    } else {
        (
            StatusCode::FORBIDDEN,
            "the request's Origin is not allowed: add it to `mcp_proxy.allowed_origins` if this \
             browser page may use the proxy",
        )
            .into_response()
    }
}

/// Whether a request with these headers may be answered, as far as its
/// `Origin` goes.
fn origin_allowed(headers: &HeaderMap, allowed: &[String]) -> bool {
    let Some(origin) = headers.get(ORIGIN) else {
        return true;
    };
    let Ok(origin) = origin.to_str() else {
        return false;
    };
    if allowed
        .iter()
        .any(|known| known.trim_end_matches('/').eq_ignore_ascii_case(origin))
    {
        return true;
    }
    let Some(authority) = origin
        .strip_prefix("http://")
        .or_else(|| origin.strip_prefix("https://"))
    else {
        return false;
    };
    let host = headers.get(HOST).and_then(|host| host.to_str().ok());
    host.is_some_and(|host| host.eq_ignore_ascii_case(authority)) && loopback(authority)
}

/// Whether `host[:port]` names a loopback host.
fn loopback(authority: &str) -> bool {
    let host = match authority.strip_prefix('[') {
        Some(rest) => rest.split(']').next().unwrap_or_default(),
        None => authority.split(':').next().unwrap_or_default(),
    };
    host.eq_ignore_ascii_case("localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(origin: Option<&str>, host: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(HOST, host.parse().expect("host"));
        if let Some(origin) = origin {
            headers.insert(ORIGIN, origin.parse().expect("origin"));
        }
        headers
    }

    #[test]
    fn only_configured_or_same_host_loopback_origins_pass() {
        let allowed = ["https://app.example".to_owned()];
        for (origin, host, ok) in [
            (None, "127.0.0.1:8080", true),
            (Some("http://127.0.0.1:8080"), "127.0.0.1:8080", true),
            (Some("http://localhost:8080"), "localhost:8080", true),
            (Some("http://[::1]:8080"), "[::1]:8080", true),
            (Some("https://app.example"), "127.0.0.1:8080", true),
            // A rebound name: the Host is what the page named.
            (Some("http://evil.example:8080"), "evil.example:8080", false),
            (Some("http://evil.example"), "127.0.0.1:8080", false),
            // Another local page, another port.
            (Some("http://localhost:3000"), "127.0.0.1:8080", false),
            (Some("http://127.0.0.1:3000"), "127.0.0.1:8080", false),
            (Some("null"), "127.0.0.1:8080", false),
        ] {
            assert_eq!(
                origin_allowed(&headers(origin, host), &allowed),
                ok,
                "{origin:?} on {host}"
            );
        }
    }
}
