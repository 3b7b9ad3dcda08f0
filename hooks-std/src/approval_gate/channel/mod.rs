//! Channels: where the approval gate talks to people.
//!
//! A [`Channel`] owns the IM mechanics — sending the approval card, updating
//! it after a decision or expiry, verifying and decoding a callback — while
//! the gate owns the state machine. [`feishu`] was the first channel;
//! [`slack`] is the second, built on the same trait without any change to
//! the gate; [`web`] needs no platform at all (an approvals page and inline
//! streams served by the application itself). What channels share lives here: the rendering of what an
//! approver sees (every argument on a card that asks, cut to
//! [`ARGS_EXCERPT_CHARS`] on one that reports, hidden characters escaped
//! and flagged), the [`ApproverDirectory`](crate::approval_gate::ApproverDirectory)
//! that maps a platform identity to a user, and the card claims and reply
//! window of the gate itself. [`ChannelSettings`] picks a channel by name
//! from config, with its secrets read from environment variables.

#[cfg(any(feature = "feishu", feature = "slack"))]
mod chat_kit;
#[cfg(feature = "feishu")]
pub mod feishu;
mod offline;
// Feishu's cards use every helper; the other channels use some.
#[cfg_attr(not(feature = "feishu"), allow(dead_code))]
pub(crate) mod render;
mod settings;
#[cfg(feature = "slack")]
pub mod slack;
#[cfg(feature = "web")]
pub mod web;

#[cfg(any(feature = "feishu", feature = "slack"))]
pub use chat_kit::ChatLimits;
#[cfg(feature = "feishu")]
pub use feishu::FeishuSettings;
pub use offline::OfflineChannel;
pub use render::ARGS_EXCERPT_CHARS;
pub use settings::{ChannelSettings, NotInThisBuild};
#[cfg(feature = "slack")]
pub use slack::SlackSettings;
#[cfg(feature = "web")]
pub use web::{WebApprovals, WebChannel};

use std::future::Future;
use std::pin::Pin;

use crate::approval_gate::{ApprovalDecision, ConfirmationRequest};
use crate::text::is_hidden;

/// A boxed future returned by channel methods.
pub type ChannelFuture<'a, T> = Pin<Box<dyn Future<Output = Result<T, ChannelError>> + Send + 'a>>;

/// Talking to the platform failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{channel} channel: {message}")]
pub struct ChannelError {
    /// The channel kind, e.g. `feishu`.
    pub channel: &'static str,
    /// What went wrong and what to do about it.
    pub message: String,
}

impl ChannelError {
    /// An error of `channel`.
    pub fn new(channel: &'static str, message: impl Into<String>) -> Self {
        ChannelError {
            channel,
            message: message.into(),
        }
    }
}

/// A verified, decoded callback from the platform.
#[derive(Debug, Clone, PartialEq)]
pub enum Callback {
    /// The platform checks the endpoint: answer with the challenge.
    UrlVerification {
        /// The value to echo back.
        challenge: String,
    },
    /// Someone pressed a decision button.
    Decision(DecisionCallback),
}

/// A button press, as the platform reported it.
#[derive(Debug, Clone, PartialEq)]
pub struct DecisionCallback {
    /// The platform's delivery id, for dedup.
    pub event_id: String,
    /// The request the button belongs to.
    pub request_id: String,
    /// Approve or reject.
    pub decision: ApprovalDecision,
    /// The operator's platform identity (a Feishu open_id, a Slack user id).
    pub operator: String,
    /// Where the press happened (the chat or channel id).
    pub channel_id: String,
    /// The message the button was on, if the platform says.
    pub message_ref: Option<String>,
    /// The arguments' digest an Approve button carries when its card showed
    /// every argument (a card that had to cut them has no Approve); `None`
    /// for a Reject, or where the channel does not put it on the button.
    pub shown_digest: Option<String>,
    /// The reason the approver typed with the decision, if any (trimmed,
    /// at most [`MAX_DECISION_REASON_CHARS`] characters; empty is `None`).
    pub reason: Option<String>,
}

/// The longest decision reason kept from a callback, in characters; a
/// longer one is cut (on a character boundary) to this many, the last one
/// a `…`.
pub const MAX_DECISION_REASON_CHARS: usize = 500;

/// A reason typed by an approver, as a decision records it: trimmed, `None`
/// if empty, line breaks and tabs shown as spaces, every other hidden
/// character ([`is_hidden`]: controls, bidi overrides, zero-width
/// characters) written out as `\u{…}`, and cut to
/// [`MAX_DECISION_REASON_CHARS`] characters. The reason reaches the
/// refusal the model reads and the audit row, so it must show what was
/// typed and cannot pose as text the runtime wrote.
pub(crate) fn decision_reason(text: &str) -> Option<String> {
    let mut shown = String::with_capacity(text.len().min(4 * MAX_DECISION_REASON_CHARS));
    for c in text.trim().chars() {
        match c {
            '\n' | '\r' | '\t' => shown.push(' '),
            c if is_hidden(c) => shown.push_str(&format!("\\u{{{:04X}}}", u32::from(c))),
            c => shown.push(c),
        }
    }
    let shown = shown.trim();
    if shown.is_empty() {
        return None;
    }
    match shown.char_indices().nth(MAX_DECISION_REASON_CHARS) {
        None => Some(shown.to_owned()),
        Some(_) => {
            let cut = shown
                .char_indices()
                .nth(MAX_DECISION_REASON_CHARS - 1)
                .map_or(shown.len(), |(at, _)| at);
            Some(format!("{}…", &shown[..cut]))
        }
    }
}

/// A callback was refused. Nothing changes; the router answers with a 4xx.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CallbackError {
    /// The signature is missing or wrong.
    #[error("the callback signature is missing or does not match")]
    BadSignature,
    /// The timestamp is missing, malformed or outside the accepted window.
    #[error("the callback timestamp is missing or outside the accepted window")]
    StaleTimestamp,
    /// The verification token is missing or wrong.
    #[error("the callback's verification token is missing or wrong")]
    BadToken,
    /// The body could not be decrypted.
    #[error("the callback body could not be decrypted: {0}")]
    Decrypt(String),
    /// The body is not a callback this channel understands.
    #[error("the callback body is malformed: {0}")]
    Malformed(String),
    /// A callback format this channel refuses (e.g. Feishu's legacy card callback).
    #[error("unsupported callback format: {0}")]
    Unsupported(String),
}

/// Headers and body of an incoming callback, exactly as received.
#[derive(Debug, Clone, Copy)]
pub struct RawCallback<'a> {
    /// Looks up a header by (case-insensitive) name.
    pub headers: &'a axum::http::HeaderMap,
    /// The raw body bytes (signatures cover these exact bytes).
    pub body: &'a [u8],
}

/// How a callback reply should look to the person who pressed the button.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToastKind {
    /// Their decision was recorded.
    Success,
    /// Nothing changed, for an expected reason (already decided, expired).
    Info,
    /// Nothing changed because something is wrong (not allowed, unknown request).
    Error,
}

/// What the callback router answers a decision callback with.
#[derive(Debug, Clone, Copy)]
pub struct CallbackReply<'a> {
    /// The toast's tone.
    pub kind: ToastKind,
    /// The toast's text.
    pub message: &'a str,
    /// The request as it now stands, when known: the card is redrawn from it
    /// (a decided request gets a card without buttons).
    pub request: Option<&'a ConfirmationRequest>,
}

/// An IM platform adapter for the approval gate.
pub trait Channel: Send + Sync {
    /// The kind stored with requests, e.g. `feishu`.
    fn kind(&self) -> &'static str;

    /// This instance's id stored with requests (e.g. the Feishu chat id); a
    /// decision arriving from another channel id is refused.
    fn channel_id(&self) -> &str;

    /// Sends the approval card for `request`; returns the platform's message
    /// reference (stored so the card can be updated later).
    fn send_card<'a>(&'a self, request: &'a ConfirmationRequest) -> ChannelFuture<'a, String>;

    /// How long the platform deduplicates a re-sent card of the same request
    /// (the request id as the platform's idempotency key), or `None` if it
    /// does not. With a window, a card whose sender died before storing its
    /// reference is sent again (same key) after the claim's lease, within the
    /// window: the platform answers with the card already posted. Without
    /// one (the default), such a card is never re-sent: at most one card per
    /// request, and the request stays decidable from that card (if it reached
    /// the chat) until its deadline.
    fn send_dedup_window(&self) -> Option<std::time::Duration> {
        None
    }

    /// Whether a decision counts only from the card this channel sent: the
    /// callback's [`DecisionCallback::message_ref`] must equal the stored
    /// [`ConfirmationRequest::message_ref`], and an Approve must carry the
    /// digest of the arguments the card showed in full
    /// ([`DecisionCallback::shown_digest`]). True for chat platforms, where
    /// another message in the same chat (even one the same bot posted, say
    /// through an agent's own chat tool) can carry a look-alike button. The
    /// default is false (the web page binds its decisions itself).
    fn binds_clicks_to_card(&self) -> bool {
        false
    }

    /// Replaces the card of a decided, expired or cancelled `request` with one
    /// showing the outcome and no buttons.
    fn update_card<'a>(&'a self, request: &'a ConfirmationRequest) -> ChannelFuture<'a, ()>;

    /// Verifies (signature, timestamp, token) and decodes a callback.
    fn verify_callback(&self, raw: RawCallback<'_>) -> Result<Callback, CallbackError>;

    /// The JSON body answering a decision callback (for Feishu: a toast and
    /// the redrawn card). Must be cheap: the platform waits at most 3 s.
    /// `Null` answers with an empty `200 OK` (Slack's acknowledgement).
    fn callback_reply(&self, reply: CallbackReply<'_>) -> serde_json::Value;

    /// The built-in [`WebChannel`](web::WebChannel), if this is one (its
    /// page shares its event hub); `None` for every other channel.
    #[cfg(feature = "web")]
    fn as_web(&self) -> Option<&web::WebChannel> {
        None
    }

    /// What to do once the callback has been answered, in the background:
    /// for Slack, redraw the message with the outcome (`chat.update`) or tell
    /// the clicker why nothing changed (an ephemeral message). Best effort:
    /// the decision stands whether or not this succeeds. The default does
    /// nothing (Feishu's reply already carries the redrawn card).
    fn after_reply<'a>(
        &'a self,
        callback: &'a DecisionCallback,
        reply: CallbackReply<'a>,
    ) -> ChannelFuture<'a, ()> {
        let _ = (callback, reply);
        Box::pin(async { Ok(()) })
    }
}
