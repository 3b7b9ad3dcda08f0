//! The web approvals page and the inline approval stream: a channel that
//! needs no external service.
//!
//! * [`WebChannel`] — the channel: a request's "card" is a row on the page
//!   and an event on the streams.
//! * [`WebApprovals`] — the axum `Router` a user mounts (e.g. at
//!   `/approvals`): the server-rendered page (pending requests the operator
//!   may decide, a request's detail, Approve / Reject with a reason, recent
//!   decisions, live over SSE), and the inline endpoints an application's
//!   chat UI uses per (agent, user): a JSON list, an SSE stream and a JSON
//!   decide endpoint. The event shapes are a contract, documented in
//!   `docs/approvals-web.md`.
//! * [`OperatorAuth`] — who is at the page: [`TokenAuth`] (tokens from
//!   config stored as Argon2 hashes, a login form, a session cookie) or
//!   [`TrustedHeaderAuth`] (an auth proxy's header, from the proxy only).
//!
//! * [`WatchedChannel`] — another channel of the same store (the gate's
//!   Feishu chat, say) whose requests and decisions the page shows live but
//!   read-only, to the operators configured for it; they are decided in
//!   that channel only.
//! * [`WebSettings`] — the channel and its page from the gate's config
//!   (`channel: web`).
//!
//! Decisions go through [`Approvals::handle_callback`], the path of every
//! channel's button press: the request must belong to this channel, the
//! operator (a `web` identity, mapped by the gate's
//! [`ApproverDirectory`](crate::approval_gate::ApproverDirectory)) must be in its
//! approver scope, the first decision wins and none lands after the
//! deadline. It records `decided_by` (the user) on a request of channel
//! kind `web`. An operator outside a request's scope neither sees it in any
//! list or stream nor can decide it: the server checks, whatever the page
//! shows. Every state-changing request carries a CSRF token.
//!
#![doc = include_str!("../../../../../docs/approvals-web.md")]

mod api;
mod auth;
mod channel;
mod decide;
mod page;
mod session;
mod settings;
mod signed;
mod templates;
mod throttle;
mod view;
mod watched;

use std::sync::Arc;
use std::time::Duration;

pub use auth::{
    AuthError, AuthFuture, AuthRequest, OperatorAuth, TokenAuth, TokenError, TrustedHeaderAuth,
};
pub use channel::{WEB_CHANNEL_KIND, WebChannel};
pub use settings::{TrustedHeaderSettings, WebSettings};
pub use watched::WatchedChannel;

use crate::approval_gate::Approvals;
use crate::approval_gate::channel::Channel;
use session::Sessions;

/// Settings of the approvals page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebConfig {
    /// The path the router is mounted at, e.g. `/approvals` (the default):
    /// the page's links, forms and cookie path start with it.
    pub base_path: String,
    /// How long a session lasts after login (default 8 hours).
    pub session_ttl: Duration,
    /// Mark cookies `Secure` (set it when the page is served over TLS,
    /// directly or behind a TLS-terminating proxy).
    pub secure_cookies: bool,
    /// How many recent decisions the page shows (default 20).
    pub recent_decisions: u32,
    /// The most pending requests one list reads (default 500).
    pub max_pending: u32,
    /// How long one event stream stays open (default 10 minutes); then it
    /// ends, the browser reconnects and the operator is checked again.
    pub stream_lifetime: Duration,
    /// Most event streams one operator may have open (default 8); more
    /// are refused with 429.
    pub max_streams_per_operator: usize,
    /// Most event streams open on the page in all (default 256); more are
    /// refused with 429.
    pub max_streams: usize,
    /// Other channels of the same store whose requests this page shows
    /// **read-only**, each to the operators it names (default none). Such
    /// a request is decided only in its own channel (its approver scope is
    /// that channel's identities): the page shows "decide in feishu" and
    /// its decide endpoints refuse it.
    pub watched_channels: Vec<WatchedChannel>,
}

impl Default for WebConfig {
    fn default() -> Self {
        WebConfig {
            base_path: "/approvals".to_owned(),
            session_ttl: Duration::from_secs(8 * 3600),
            secure_cookies: false,
            recent_decisions: 20,
            max_pending: 500,
            stream_lifetime: Duration::from_secs(600),
            max_streams_per_operator: 8,
            max_streams: 256,
            watched_channels: Vec::new(),
        }
    }
}

/// The page could not be set up.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WebError {
    /// The approval machinery talks through another channel.
    #[error(
        "the approvals page serves the web channel \"{expected}\", but the approval machinery \
         talks through the {kind} channel \"{id}\"; start the `Approvals` with this `WebChannel`"
    )]
    OtherChannel {
        /// The web channel's id.
        expected: String,
        /// The machinery's channel kind.
        kind: String,
        /// The machinery's channel id.
        id: String,
    },
    /// The approval machinery was started with another `WebChannel` of the
    /// same id, so the page would not see its requests as they come.
    #[error(
        "the approval machinery talks through another `WebChannel` \"{id}\" than the one \
         given to the page; give both the same channel (or a clone of it)"
    )]
    OtherHub {
        /// The channel id.
        id: String,
    },
    /// The base path is not a plain absolute path.
    #[error(
        "`base_path` {0:?} must start with `/`, not end with `/` (unless it is `/`), hold \
         only letters, digits and `-_./`, and have no empty, `.` or `..` segment"
    )]
    BadBasePath(String),
    /// A watched channel is unusable: empty, or the page's own channel.
    #[error("watched channel {kind}/{channel_id:?}: {why}")]
    BadWatchedChannel {
        /// Its kind.
        kind: String,
        /// Its id.
        channel_id: String,
        /// What to fix.
        why: &'static str,
    },
    /// The page's templates did not load (a bug in this crate).
    #[error("the approvals page templates did not load: {0}")]
    Templates(String),
}

/// The approvals page and inline streams of one [`WebChannel`]: build it,
/// then mount [`router`](Self::router). Cheap to clone.
#[derive(Clone)]
pub struct WebApprovals {
    inner: Arc<Inner>,
}

struct Inner {
    approvals: Approvals,
    channel: WebChannel,
    auth: Arc<dyn OperatorAuth>,
    sessions: Sessions,
    config: WebConfig,
    templates: templates::Templates,
    logins: throttle::LoginThrottle,
    streams: throttle::StreamSlots,
}

impl WebApprovals {
    /// Checks `config` for a page of web channel `channel_id`: a plain base
    /// path, usable watched channels.
    pub(crate) fn check_config(config: &WebConfig, channel_id: &str) -> Result<(), WebError> {
        let base = &config.base_path;
        let plain = base.starts_with('/')
            && (base == "/" || !base.ends_with('/'))
            && base
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_./".contains(c))
            // `//host` would make every redirect home leave the site.
            && (base == "/"
                || base
                    .split('/')
                    .skip(1)
                    .all(|segment| !matches!(segment, "" | "." | "..")));
        if !plain {
            return Err(WebError::BadBasePath(config.base_path.clone()));
        }
        for watched in &config.watched_channels {
            watched.check(channel_id)?;
        }
        Ok(())
    }

    /// The page for `channel`, deciding through `approvals` (which must
    /// have been started with that channel), with operators authenticated
    /// by `auth`.
    pub fn new(
        approvals: Approvals,
        channel: WebChannel,
        auth: Arc<dyn OperatorAuth>,
        mut config: WebConfig,
    ) -> Result<Self, WebError> {
        let running = approvals.channel();
        if running.kind() != WEB_CHANNEL_KIND || running.channel_id() != channel.channel_id() {
            return Err(WebError::OtherChannel {
                expected: channel.channel_id().to_owned(),
                kind: running.kind().to_owned(),
                id: running.channel_id().to_owned(),
            });
        }
        if !running
            .as_web()
            .is_some_and(|running| running.same_hub(&channel))
        {
            return Err(WebError::OtherHub {
                id: channel.channel_id().to_owned(),
            });
        }
        Self::check_config(&config, channel.channel_id())?;
        if config.base_path == "/" {
            config.base_path.clear();
        }
        Ok(WebApprovals {
            inner: Arc::new(Inner {
                approvals,
                channel,
                auth,
                sessions: Sessions::new(config.session_ttl),
                logins: throttle::LoginThrottle::new(),
                streams: throttle::StreamSlots::new(
                    config.max_streams_per_operator,
                    config.max_streams,
                ),
                config,
                templates: templates::Templates::load().map_err(WebError::Templates)?,
            }),
        })
    }
}
