//! How the hook server is set up.

use std::time::Duration;

/// The largest hook input accepted, in bytes, unless configured: a tool's
/// input and response, with room to spare (1 MiB).
pub const DEFAULT_MAX_BODY: usize = 1 << 20;

/// How long a call that passed its pre hooks waits for its post event
/// before it is recorded as abandoned, unless configured (30 minutes).
pub const DEFAULT_PENDING_TTL: Duration = Duration::from_secs(30 * 60);

/// The most calls that may wait for their post event at once, unless
/// configured.
pub const DEFAULT_MAX_IN_FLIGHT: usize = 1_000;

/// The most calls of one session that may wait for their post event at
/// once, unless configured: a session that never sends its post events
/// fills its own share, not the server's.
pub const DEFAULT_MAX_IN_FLIGHT_PER_SESSION: usize = 100;

/// The most requests answered at once, unless configured: the gate holds a
/// request while a person decides.
pub const DEFAULT_MAX_CONCURRENT: usize = 256;

/// The most requests of one session answered at once, unless configured:
/// a session that floods the server with held calls leaves the rest of the
/// slots to the other sessions.
pub const DEFAULT_MAX_CONCURRENT_PER_SESSION: usize = 32;

/// The hook server's settings.
#[derive(Clone)]
pub struct ServeConfig {
    /// The bearer token every request must carry (`Authorization: Bearer
    /// …`), compared in constant time. `None` accepts unauthenticated
    /// requests: allowed only on a loopback address (see
    /// [`serve`](super::serve)), and then only requests addressed to a
    /// loopback host name. [`router`](super::router) does not check the
    /// address it is mounted on: give it a token.
    pub token: Option<String>,
    /// The org every call is made in.
    pub org: String,
    /// The user a call is made by when no user header names one.
    pub user: String,
    /// A request header whose value names the user (set by a proxy that
    /// authenticates people, e.g. `X-Hooks-User`), if any.
    pub user_header: Option<String>,
    /// The peers (the proxies' addresses) whose [`user_header`](Self::user_header)
    /// is believed. A request carrying the header from any other peer, or
    /// from a peer whose address the server does not know, is blocked:
    /// the token every request carries is readable by the agent's own
    /// commands, so it cannot vouch for a user.
    pub user_header_from: Vec<std::net::IpAddr>,
    /// The largest request body accepted, in bytes.
    pub max_body: usize,
    /// How long a call may wait between its pre and its post event.
    pub pending_ttl: Duration,
    /// The most calls that may wait for their post event at once; a pre
    /// event beyond it is denied.
    pub max_in_flight: usize,
    /// The most calls of one session (the hook input's `session_id`) that
    /// may wait for their post event at once; a pre event beyond it is
    /// denied, and the other sessions keep the rest of
    /// [`max_in_flight`](Self::max_in_flight).
    pub max_in_flight_per_session: usize,
    /// The most pre events and session starts answered at once, and
    /// separately the most post events; one beyond is blocked (a post
    /// event's result replaced by the reason).
    pub max_concurrent: usize,
    /// The most requests of one session answered at once, in each of the
    /// two pools of [`max_concurrent`](Self::max_concurrent); one beyond
    /// is blocked.
    pub max_concurrent_per_session: usize,
    /// Answer `allow` for a call the hooks let through unchanged. Off by
    /// default: the server then says nothing, and the client's own
    /// permission rules still apply (`allow` would skip the client's own
    /// prompt for every call no hook blocks). A call a person approved, or
    /// whose input a hook rewrote, is answered `allow` either way.
    pub answer_allow: bool,
}

impl std::fmt::Debug for ServeConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServeConfig")
            .field("token", &self.token.as_ref().map(|_| "<redacted>"))
            .field("org", &self.org)
            .field("user", &self.user)
            .field("user_header", &self.user_header)
            .field("user_header_from", &self.user_header_from)
            .field("max_body", &self.max_body)
            .field("pending_ttl", &self.pending_ttl)
            .field("max_in_flight", &self.max_in_flight)
            .field("max_in_flight_per_session", &self.max_in_flight_per_session)
            .field("max_concurrent", &self.max_concurrent)
            .field(
                "max_concurrent_per_session",
                &self.max_concurrent_per_session,
            )
            .field("answer_allow", &self.answer_allow)
            .finish()
    }
}

impl ServeConfig {
    /// Settings that require `token` on every request.
    pub fn with_token(token: impl Into<String>) -> Self {
        ServeConfig {
            token: Some(token.into()),
            ..ServeConfig::unauthenticated()
        }
    }

    /// Settings that accept requests without a token (loopback only).
    pub fn unauthenticated() -> Self {
        ServeConfig {
            token: None,
            org: String::new(),
            user: String::new(),
            user_header: None,
            user_header_from: Vec::new(),
            max_body: DEFAULT_MAX_BODY,
            pending_ttl: DEFAULT_PENDING_TTL,
            max_in_flight: DEFAULT_MAX_IN_FLIGHT,
            max_in_flight_per_session: DEFAULT_MAX_IN_FLIGHT_PER_SESSION,
            max_concurrent: DEFAULT_MAX_CONCURRENT,
            max_concurrent_per_session: DEFAULT_MAX_CONCURRENT_PER_SESSION,
            answer_allow: false,
        }
    }

    /// The org every call is made in.
    pub fn org(mut self, org: impl Into<String>) -> Self {
        self.org = org.into();
        self
    }

    /// The user a call is made by when no user header names one.
    pub fn user(mut self, user: impl Into<String>) -> Self {
        self.user = user.into();
        self
    }

    /// Answer `allow` for calls the hooks let through unchanged
    /// (see [`answer_allow`](Self::answer_allow)).
    pub fn answer_allow(mut self) -> Self {
        self.answer_allow = true;
        self
    }

    /// The request header that names the user, believed only from the
    /// proxies at `from` (see [`user_header_from`](Self::user_header_from)).
    pub fn user_header(
        mut self,
        header: impl Into<String>,
        from: impl IntoIterator<Item = std::net::IpAddr>,
    ) -> Self {
        self.user_header = Some(header.into());
        self.user_header_from = from.into_iter().collect();
        self
    }
}
