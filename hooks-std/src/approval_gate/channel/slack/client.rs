//! [`SlackChannel`]: the [`Channel`] talking to the Slack Web API.

use std::fmt;
use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{Value, json};

use super::blocks::{approval_message, escape_within, outcome_message};
use super::callback::{scoped_channel_id, verify_at};
use super::config::SlackConfig;
use crate::approval_gate::channel::chat_kit::http::{Answer, ChatHttp};
use crate::approval_gate::channel::chat_kit::rate_limit::{Announced, LongerWait, RateLimitPolicy};
use crate::approval_gate::channel::chat_kit::wire::{clip, snippet, unix_now};
use crate::approval_gate::channel::{
    Callback, CallbackError, CallbackReply, Channel, ChannelError, ChannelFuture, DecisionCallback,
    RawCallback, ToastKind,
};
use crate::approval_gate::{ConfirmationRequest, ConfirmationStatus};
use crate::text::escape_hidden;

/// The longest wait for a rate limit to reset before retrying; a call told
/// to wait longer fails instead.
pub const MAX_RATE_LIMIT_WAIT: Duration = Duration::from_secs(30);

/// The first backoff when a rate-limited response has no `Retry-After`; it
/// doubles on each retry.
pub const INITIAL_RATE_LIMIT_BACKOFF: Duration = Duration::from_secs(1);

/// The longest note (in characters, once escaped) told to a presser whose
/// press changed nothing; Slack advises keeping a message's `text` under 4000.
const EPHEMERAL_TEXT_LIMIT: usize = 3000;

/// How Slack announces when a rate limit resets (`Retry-After`), and how
/// the channel waits.
const RATE_LIMIT: RateLimitPolicy = RateLimitPolicy {
    header: "retry-after",
    announced: Announced::WholeSeconds,
    initial_backoff: INITIAL_RATE_LIMIT_BACKOFF,
    max_wait: MAX_RATE_LIMIT_WAIT,
    longer: LongerWait::Fail,
};

/// The Slack approval channel: posts approval messages to one channel as the
/// app's bot, updates them once decided or expired, verifies interactivity
/// requests, and tells a clicker whose press changed nothing why, in an
/// ephemeral message.
///
/// Web API calls authenticate with the bot token. A rate-limited call (HTTP
/// 429, or `ok: false` with `ratelimited`) waits `Retry-After` seconds
/// (and fails at once when Slack asks for longer than
/// [`MAX_RATE_LIMIT_WAIT`]), or backs off exponentially from
/// [`INITIAL_RATE_LIMIT_BACKOFF`], and is retried up to
/// `max_rate_limit_retries` times. Any other `ok: false` fails the call with
/// Slack's error name and what to do about it; a message that cannot be
/// posted blocks the gated call.
///
/// Its [`channel_id`](Channel::channel_id) is `{team_id}/{channel_id}`, so
/// the gate binds each request to the workspace *and* the channel: a press
/// reported from another workspace or channel is refused.
pub struct SlackChannel {
    config: SlackConfig,
    scoped_id: String,
    http: ChatHttp,
}

/// The stored reference of a posted message: `{channel}:{ts}`.
pub(crate) fn message_ref(channel: &str, ts: &str) -> String {
    format!("{channel}:{ts}")
}

/// The channel and `ts` of a stored message reference.
fn parse_message_ref(message_ref: &str) -> Option<(&str, &str)> {
    message_ref
        .split_once(':')
        .filter(|(channel, ts)| !channel.is_empty() && !ts.is_empty())
}

impl SlackChannel {
    /// The channel kind stored with requests.
    pub const KIND: &'static str = "slack";

    /// A channel with this config; fails if the config is invalid (see
    /// [`SlackConfig::validate`]). No request is made until the first message.
    pub fn new(config: SlackConfig) -> Result<Self, ChannelError> {
        config.validate()?;
        let http = ChatHttp::new(
            Self::KIND,
            "Slack",
            config.base(),
            config.limits,
            RATE_LIMIT,
        )?;
        Ok(SlackChannel {
            scoped_id: scoped_channel_id(&config.team_id, &config.channel_id),
            config,
            http,
        })
    }

    /// The channel's config.
    pub fn config(&self) -> &SlackConfig {
        &self.config
    }

    /// [`Channel::verify_callback`] as if the current time were
    /// `now_unix_secs` (for checking the timestamp window deterministically).
    pub fn verify_callback_at(
        &self,
        raw: RawCallback<'_>,
        now_unix_secs: i64,
    ) -> Result<Callback, CallbackError> {
        verify_at(&self.config, raw, now_unix_secs)
    }

    fn error(&self, message: impl Into<String>) -> ChannelError {
        ChannelError::new(Self::KIND, message)
    }

    /// One Web API method call with a JSON body, retried while rate
    /// limited. `Ok` holds the response of an `ok: true` answer.
    async fn call(&self, what: &str, method: &str, body: &Value) -> Result<Value, ChannelError> {
        let url = format!("{}/{method}", self.config.base());
        let request = |http: &reqwest::Client| http.post(&url).bearer_auth(&self.config.bot_token);
        let rate_limited = |status: StatusCode, answer: Option<&Value>| {
            status == StatusCode::TOO_MANY_REQUESTS || error_name(answer) == Some("ratelimited")
        };
        let Answer {
            status,
            bytes,
            object,
        } = self
            .http
            .send_json(request, body, rate_limited)
            .await
            .map_err(|message| self.error(format!("{what} failed: {message}")))?;
        let Some(answer) = object else {
            return Err(self.error(format!(
                "{what} failed: HTTP {} with a body that is not a JSON object ({}); check \
                 that base_url points at the Slack Web API",
                status.as_u16(),
                snippet(&bytes)
            )));
        };
        match answer.get("ok").and_then(Value::as_bool) {
            Some(true) if status.is_success() => Ok(answer),
            Some(true) => Err(self.error(format!(
                "{what} failed: HTTP {} although the answer says ok; check that base_url \
                 points at the Slack Web API",
                status.as_u16()
            ))),
            Some(false) => {
                let name = error_name(Some(&answer)).unwrap_or("unknown_error");
                Err(self.error(format!(
                    "{what} failed: Slack answered `{}` (HTTP {}); {}",
                    clip(name),
                    status.as_u16(),
                    hint(name, &self.config.channel_id)
                )))
            }
            None => Err(self.error(format!(
                "{what} failed: HTTP {} without an `ok` field ({}); check that base_url \
                 points at the Slack Web API",
                status.as_u16(),
                snippet(&bytes)
            ))),
        }
    }

    /// Replaces the message of a decided or expired `request` with its
    /// outcome (`clicker` is the deciding Slack user, when known), or that of
    /// a still pending one with its progress.
    async fn update_message(
        &self,
        request: &ConfirmationRequest,
        message_ref: Option<&str>,
        clicker: Option<&str>,
    ) -> Result<(), ChannelError> {
        let what = format!("updating the approval message of request {}", request.id);
        let Some((channel, ts)) = message_ref.and_then(parse_message_ref) else {
            return Err(self.error(format!(
                "{what} failed: the request has no message reference, so its message was never \
                 posted; nothing to update"
            )));
        };
        // A request still pending (an approval counted towards a quorum)
        // keeps its buttons and shows the progress.
        let mut body = if request.status.is_terminal() {
            outcome_message(request, clicker)
        } else {
            approval_message(request)
        };
        body["channel"] = json!(channel);
        body["ts"] = json!(ts);
        self.call(&what, "chat.update", &body).await?;
        Ok(())
    }

    /// Tells `user` in `channel`, and only them, why their press changed nothing.
    async fn post_ephemeral(
        &self,
        channel: &str,
        user: &str,
        text: &str,
    ) -> Result<(), ChannelError> {
        let what = format!("telling {user} why their press changed nothing");
        // The note can name values from the request (who may approve): shown
        // like the message shows them, hidden characters escaped, and within
        // what Slack takes.
        let shown = escape_hidden(text).text;
        let body = json!({
            "channel": channel,
            "user": user,
            "text": escape_within(&shown, EPHEMERAL_TEXT_LIMIT),
        });
        self.call(&what, "chat.postEphemeral", &body).await?;
        Ok(())
    }
}

/// What to do about a Web API error name.
fn hint(error: &str, channel_id: &str) -> String {
    match error {
        "invalid_auth" | "not_authed" | "token_revoked" | "token_expired" | "account_inactive" => {
            "the bot token was refused: check that the environment variable holds the app's \
             current Bot User OAuth Token (xoxb-…) and that the app is still installed"
                .to_owned()
        }
        "missing_scope" | "no_permission" => {
            "add the chat:write scope to the app and reinstall it to the workspace".to_owned()
        }
        "channel_not_found" => format!(
            "channel {channel_id} does not exist or the bot cannot see it: check channel_id \
             (the C… id, not the name) and invite the bot to it"
        ),
        "not_in_channel" => format!("invite the bot to channel {channel_id} (/invite @your-app)"),
        "is_archived" => format!("channel {channel_id} is archived: configure another channel_id"),
        "user_not_in_channel" => "the person who pressed is not in the channel".to_owned(),
        "message_not_found" | "cant_update_message" | "edit_window_closed" => {
            "the approval message was deleted or can no longer be edited; nothing to update"
                .to_owned()
        }
        "invalid_blocks" | "invalid_blocks_format" | "msg_too_long" | "invalid_arguments" => {
            "Slack refused the message; this is a bug in the message builder, please report it \
             with the message above"
                .to_owned()
        }
        "fatal_error" | "internal_error" | "service_unavailable" | "request_timeout" => {
            "Slack had a problem of its own; try again later".to_owned()
        }
        _ => "look the error up in the Slack Web API method's documentation".to_owned(),
    }
}

/// The Web API's `error` name in an answer.
fn error_name(answer: Option<&Value>) -> Option<&str> {
    answer
        .and_then(|answer| answer.get("error"))
        .and_then(Value::as_str)
}

impl Channel for SlackChannel {
    fn kind(&self) -> &'static str {
        Self::KIND
    }

    /// `{team_id}/{channel_id}`.
    fn channel_id(&self) -> &str {
        &self.scoped_id
    }

    /// Yes: a click counts only from the card sent (`{channel}:{ts}` of the posted message, against the click's `container.message_ts`).
    fn binds_clicks_to_card(&self) -> bool {
        true
    }

    /// Posts [`approval_message`] to the channel with `chat.postMessage`;
    /// the reference is `{channel}:{ts}` of the posted message.
    ///
    /// `chat.postMessage` has no idempotency key, so the channel keeps the
    /// default [`send_dedup_window`](Channel::send_dedup_window) of `None`:
    /// a message whose sender died before storing its reference is never
    /// posted again (at most one message per request; an approver can still
    /// decide from it until the request's deadline).
    fn send_card<'a>(&'a self, request: &'a ConfirmationRequest) -> ChannelFuture<'a, String> {
        Box::pin(async move {
            let what = format!(
                "posting the approval message for request {} to channel {}",
                request.id, self.config.channel_id
            );
            let mut body = approval_message(request);
            body["channel"] = json!(self.config.channel_id);
            body["unfurl_links"] = json!(false);
            body["unfurl_media"] = json!(false);
            let response = self.call(&what, "chat.postMessage", &body).await?;
            let ts = response
                .get("ts")
                .and_then(Value::as_str)
                .filter(|ts| !ts.is_empty())
                .ok_or_else(|| {
                    self.error(format!(
                        "{what} failed: the answer has no `ts`; check that base_url points at \
                         the Slack Web API"
                    ))
                })?;
            let channel = response
                .get("channel")
                .and_then(Value::as_str)
                .filter(|channel| !channel.is_empty())
                .unwrap_or(&self.config.channel_id);
            Ok(message_ref(channel, ts))
        })
    }

    /// Replaces the message with [`outcome_message`] (`chat.update`).
    fn update_card<'a>(&'a self, request: &'a ConfirmationRequest) -> ChannelFuture<'a, ()> {
        Box::pin(self.update_message(request, request.message_ref.as_deref(), None))
    }

    fn verify_callback(&self, raw: RawCallback<'_>) -> Result<Callback, CallbackError> {
        verify_at(&self.config, raw, unix_now())
    }

    /// `Null`: Slack gets an empty `200 OK` at once; what the clicker sees
    /// follows in [`after_reply`](Channel::after_reply).
    fn callback_reply(&self, _: CallbackReply<'_>) -> Value {
        Value::Null
    }

    /// A request of this channel that this press decided, or found expired
    /// or cancelled, gets its message replaced by the outcome (naming the
    /// clicker when their press decided it). A press that decided nothing
    /// gets an ephemeral message, seen only by the clicker, saying why.
    fn after_reply<'a>(
        &'a self,
        callback: &'a DecisionCallback,
        reply: CallbackReply<'a>,
    ) -> ChannelFuture<'a, ()> {
        Box::pin(async move {
            let mut result = Ok(());
            // A decision this press made, or an expiry it found: redraw. A
            // request decided earlier was redrawn by the press that decided
            // it (naming that clicker), so it is left alone.
            let redraw = |request: &ConfirmationRequest| match request.status {
                ConfirmationStatus::Approved | ConfirmationStatus::Rejected => {
                    reply.kind == ToastKind::Success
                }
                ConfirmationStatus::Expired | ConfirmationStatus::Cancelled => true,
                // An approval counted towards a quorum: show the progress.
                ConfirmationStatus::Pending => reply.kind == ToastKind::Success,
            };
            if let Some(request) = reply.request
                && redraw(request)
                && request.channel_kind == Self::KIND
                && request.channel_id == self.scoped_id
            {
                let clicker =
                    (reply.kind == ToastKind::Success).then_some(callback.operator.as_str());
                let message_ref = request
                    .message_ref
                    .as_deref()
                    .or(callback.message_ref.as_deref());
                result = self.update_message(request, message_ref, clicker).await;
            }
            if reply.kind != ToastKind::Success {
                let channel = callback
                    .channel_id
                    .split_once('/')
                    .map_or(callback.channel_id.as_str(), |(_, channel)| channel);
                self.post_ephemeral(channel, &callback.operator, reply.message)
                    .await?;
            }
            result
        })
    }
}

impl fmt::Debug for SlackChannel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SlackChannel")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn message_refs_round_trip() {
        let reference = message_ref("C1", "1700000000.000100");
        assert_eq!(
            parse_message_ref(&reference),
            Some(("C1", "1700000000.000100"))
        );
        assert_eq!(parse_message_ref("nonsense"), None);
        assert_eq!(parse_message_ref(":1"), None);
    }
}
