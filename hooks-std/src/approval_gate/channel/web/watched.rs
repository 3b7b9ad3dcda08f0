//! [`WatchedChannel`]: another channel whose requests the page shows
//! read-only, to the operators configured for it.

use super::WebError;
use super::channel::WEB_CHANNEL_KIND;
use crate::approval_gate::ConfirmationRequest;

/// Another channel sharing the page's store (e.g. the gate's Feishu chat)
/// whose pending requests and decisions the page shows **read-only** to
/// `viewers`. Its requests are decided in that channel only: their approver
/// scope is that channel's identities, so the page offers no Approve or
/// Reject for them and its decide endpoints refuse them.
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WatchedChannel {
    /// The channel kind, e.g. `feishu` or `slack`.
    pub kind: String,
    /// The channel id its requests are stored with (a Feishu chat id, a
    /// Slack `{team_id}/{channel_id}`).
    pub channel_id: String,
    /// The web operator ids (as the page's authenticator names them) who
    /// may see its requests. Nobody else does; an empty list shows them to
    /// nobody.
    #[serde(default)]
    pub viewers: Vec<String>,
}

impl WatchedChannel {
    /// Fails if it names nothing or the page's own channel `own_id`.
    pub(crate) fn check(&self, own_id: &str) -> Result<(), WebError> {
        let error = |why| WebError::BadWatchedChannel {
            kind: self.kind.clone(),
            channel_id: self.channel_id.clone(),
            why,
        };
        if self.kind.trim().is_empty() || self.channel_id.trim().is_empty() {
            return Err(error(
                "`kind` and `channel_id` must be set (e.g. `feishu` and the chat id)",
            ));
        }
        if self.kind == WEB_CHANNEL_KIND && self.channel_id == own_id {
            return Err(error(
                "this is the page's own channel, whose requests it already shows (and \
                 decides); remove it from `watched_channels`",
            ));
        }
        Ok(())
    }

    /// Whether `request` is of this channel and `operator` may see it.
    pub(crate) fn shows(&self, operator: &str, request: &ConfirmationRequest) -> bool {
        request.channel_kind == self.kind
            && request.channel_id == self.channel_id
            && self.viewed_by(operator)
    }

    /// Whether `operator` may see this channel's requests.
    pub(crate) fn viewed_by(&self, operator: &str) -> bool {
        self.viewers.iter().any(|viewer| viewer == operator)
    }
}
