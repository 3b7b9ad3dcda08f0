//! Who made a request, and what they may see.

use std::net::SocketAddr;

use std::convert::Infallible;

use axum::extract::{ConnectInfo, FromRequestParts};
use axum::http::request::Parts;
use axum::http::{HeaderMap, StatusCode};

use super::WebApprovals;
use super::auth::{AuthError, AuthRequest};
use super::channel::WEB_CHANNEL_KIND;
use super::session::{Signed, tokens_match};
use crate::approval_gate::channel::Channel;
use crate::approval_gate::{Approver, ConfirmationRequest, Listing, may_decide};
use crate::storage::StorageError;

/// The operator behind a request.
#[derive(Debug, Clone)]
pub(crate) struct Operator {
    pub(crate) signed: Signed,
    /// The user the directory maps the operator to; `None`: unknown, so
    /// they see nothing and decide nothing.
    pub(crate) approver: Option<Approver>,
}

/// Why a request has no operator.
#[derive(Debug, Clone)]
pub(crate) enum Refusal {
    /// No live session (token login).
    NotSignedIn,
    /// The authenticator refused it.
    Auth(AuthError),
    /// The directory could not be asked.
    Directory,
}

impl Refusal {
    pub(crate) fn status(&self) -> StatusCode {
        match self {
            Refusal::NotSignedIn => StatusCode::UNAUTHORIZED,
            Refusal::Auth(_) => StatusCode::FORBIDDEN,
            Refusal::Directory => StatusCode::SERVICE_UNAVAILABLE,
        }
    }

    pub(crate) fn message(&self) -> String {
        match self {
            Refusal::NotSignedIn => {
                "not signed in, or the session expired; sign in at the login page".to_owned()
            }
            Refusal::Auth(error) => error.to_string(),
            Refusal::Directory => {
                "your identity could not be checked (the approver directory failed); try again"
                    .to_owned()
            }
        }
    }
}

/// What identifies whoever sent a request: its headers and, if the server
/// recorded it, the peer address.
#[derive(Debug, Clone)]
pub(crate) struct Caller {
    pub(crate) headers: HeaderMap,
    pub(crate) peer: Option<SocketAddr>,
}

impl<S: Send + Sync> FromRequestParts<S> for Caller {
    type Rejection = Infallible;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        Ok(Caller {
            headers: parts.headers.clone(),
            peer: parts
                .extensions
                .get::<ConnectInfo<SocketAddr>>()
                .map(|info| info.0),
        })
    }
}

impl WebApprovals {
    /// The operator of a request: named by the authenticator (a trusted
    /// header), or by a live session.
    pub(crate) async fn operator(&self, caller: &Caller) -> Result<Operator, Refusal> {
        let (headers, peer) = (&caller.headers, caller.peer);
        let inner = &self.inner;
        let named = inner
            .auth
            .identify(AuthRequest { headers, peer })
            .map_err(Refusal::Auth)?;
        let signed = match named {
            Some(operator) => Signed {
                csrf: inner.sessions.header_csrf(&operator),
                operator,
            },
            None => inner.sessions.find(headers).ok_or(Refusal::NotSignedIn)?,
        };
        let approver = inner
            .approvals
            .directory()
            .resolve(WEB_CHANNEL_KIND, &signed.operator)
            .await
            .map_err(|error| {
                tracing::error!(%error, "approvals page: the approver directory failed");
                Refusal::Directory
            })?;
        Ok(Operator { signed, approver })
    }

    /// Whether `given` is the operator's CSRF token.
    pub(crate) fn csrf_ok(operator: &Operator, given: Option<&str>) -> bool {
        given.is_some_and(|given| tokens_match(given, &operator.signed.csrf))
    }

    /// Whether `request` belongs to this page's channel, so it is decided
    /// here (a watched channel's request is decided in that channel only).
    pub(crate) fn decides_here(&self, request: &ConfirmationRequest) -> bool {
        request.channel_kind == WEB_CHANNEL_KIND
            && request.channel_id == self.inner.channel.channel_id()
    }

    /// Whether `operator` may see `request`: it belongs to this channel and
    /// the operator is in its approver scope (so they may decide it), or it
    /// belongs to a channel the page watches for them (read-only). An
    /// unknown operator sees nothing; a directory failure hides it (fail
    /// closed).
    pub(crate) async fn visible(&self, operator: &Operator, request: &ConfirmationRequest) -> bool {
        let Some(approver) = &operator.approver else {
            return false;
        };
        if !self.decides_here(request) {
            return self
                .inner
                .config
                .watched_channels
                .iter()
                .any(|watched| watched.shows(&operator.signed.operator, request));
        }
        let directory = self.inner.approvals.directory();
        match may_decide(directory.as_ref(), request, approver).await {
            Ok(allowed) => allowed,
            Err(error) => {
                tracing::warn!(%error, request = %request.id, "approver directory failed; the request is hidden");
                false
            }
        }
    }

    /// The channels whose requests `operator` may see: this page's (to
    /// decide), then the watched ones naming them (read-only).
    /// An operator the directory does not know sees nothing: no channel.
    fn channels_of<'a>(&'a self, operator: &'a Operator) -> Vec<(&'a str, &'a str)> {
        let inner = &self.inner;
        let mut channels = Vec::new();
        if operator.approver.is_some() {
            channels.push((WEB_CHANNEL_KIND, inner.channel.channel_id()));
            channels.extend(
                inner
                    .config
                    .watched_channels
                    .iter()
                    .filter(|watched| watched.viewed_by(&operator.signed.operator))
                    .map(|watched| (watched.kind.as_str(), watched.channel_id.as_str())),
            );
        }
        channels
    }

    /// The pending requests `operator` may see (their own channel's first
    /// in scope, and those of channels watched for them), oldest first, at
    /// most [`WebConfig::max_pending`](super::WebConfig::max_pending); only
    /// those of `filter`'s (agent, user) if given.
    pub(crate) async fn pending_for(
        &self,
        operator: &Operator,
        filter: Option<&Conversation>,
    ) -> Result<Vec<ConfirmationRequest>, StorageError> {
        // This page's own channel first, so however many requests the
        // watched channels hold, they never push out the ones the operator
        // can decide: those get the room first, watched ones the rest.
        let wanted = self.inner.config.max_pending.max(1) as usize;
        let mut shown = Vec::new();
        for (kind, id) in self.channels_of(operator) {
            let room = wanted - shown.len();
            if room == 0 {
                break;
            }
            shown.extend(self.pending_in(operator, filter, kind, id, room).await?);
        }
        shown.sort_by(|a, b| (a.created_at_ms, &a.id).cmp(&(b.created_at_ms, &b.id)));
        Ok(shown)
    }

    /// At most `wanted` pending requests of one channel `operator` may see,
    /// reading the store a page at a time past those they may not (so
    /// requests out of their scope, however many, never hide theirs).
    async fn pending_in(
        &self,
        operator: &Operator,
        filter: Option<&Conversation>,
        kind: &str,
        channel_id: &str,
        wanted: usize,
    ) -> Result<Vec<ConfirmationRequest>, StorageError> {
        let wanted = u32::try_from(wanted).unwrap_or(u32::MAX).max(1);
        let store = self.inner.approvals.store();
        let mut shown = Vec::new();
        let mut after: Option<(i64, String)> = None;
        loop {
            let from = after.as_ref().map(|(at, id)| (*at, id.as_str()));
            let page = store
                .list(
                    kind,
                    channel_id,
                    Listing::Pending {
                        after: from,
                        limit: wanted,
                    },
                )
                .await?;
            let more = page.len() == wanted as usize;
            after = page
                .last()
                .map(|last| (last.created_at_ms, last.id.clone()));
            for request in page {
                if filter.is_none_or(|filter| filter.matches(&request))
                    && self.visible(operator, &request).await
                {
                    shown.push(request);
                    if shown.len() == wanted as usize {
                        return Ok(shown);
                    }
                }
            }
            if !more {
                return Ok(shown);
            }
        }
    }

    /// The requests `operator` may see that were decided most recently.
    pub(crate) async fn recent_for(
        &self,
        operator: &Operator,
    ) -> Result<Vec<ConfirmationRequest>, StorageError> {
        let inner = &self.inner;
        let wanted = inner.config.recent_decisions as usize;
        let mut shown = Vec::new();
        for (kind, id) in self.channels_of(operator) {
            let recent = inner
                .approvals
                .store()
                .list(
                    kind,
                    id,
                    Listing::RecentlyFinal {
                        limit: inner.config.recent_decisions.saturating_mul(5),
                    },
                )
                .await?;
            let mut taken = 0;
            for request in recent {
                if taken == wanted {
                    break;
                }
                if self.visible(operator, &request).await {
                    shown.push(request);
                    taken += 1;
                }
            }
        }
        shown.sort_by(|a, b| (b.decided_at_ms, &b.id).cmp(&(a.decided_at_ms, &a.id)));
        shown.truncate(wanted);
        Ok(shown)
    }
}

/// One (agent, user) pair: the inline stream's filter.
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Conversation {
    pub(crate) agent: String,
    pub(crate) user: String,
}

impl Conversation {
    pub(crate) fn matches(&self, request: &ConfirmationRequest) -> bool {
        request.agent_id == self.agent && request.initiator_user_id == self.user
    }
}
