//! [`FeishuChannel`]: the [`Channel`] talking to the Feishu / Lark Open API.

use std::fmt;
use std::time::Duration;

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use tokio::sync::Mutex;
use tokio::time::Instant;

use super::callback::verify_at;
use super::card::{approval_card, outcome_card};
use super::config::FeishuConfig;
use crate::approval_gate::ConfirmationRequest;
use crate::approval_gate::channel::chat_kit::http::{Answer, ChatHttp};
use crate::approval_gate::channel::chat_kit::rate_limit::{Announced, LongerWait, RateLimitPolicy};
use crate::approval_gate::channel::chat_kit::wire::{snippet, unix_now};
use crate::approval_gate::channel::{
    Callback, CallbackError, CallbackReply, Channel, ChannelError, ChannelFuture, RawCallback,
    ToastKind,
};

/// A cached tenant_access_token is replaced when less than this much of its
/// lifetime remains.
pub const TOKEN_REFRESH_MARGIN: Duration = Duration::from_secs(3 * 60);

/// The longest wait for a rate limit to reset before retrying.
pub const MAX_RATE_LIMIT_WAIT: Duration = Duration::from_secs(30);

/// The first backoff when a rate-limited response says nothing about when
/// the limit resets; it doubles on each retry.
pub const INITIAL_RATE_LIMIT_BACKOFF: Duration = Duration::from_millis(500);

/// API codes meaning "the tenant_access_token is missing, invalid or
/// expired": the cached token is dropped and the call retried once.
pub const TOKEN_ERROR_CODES: [i64; 4] = [99991661, 99991663, 99991665, 99991671];

/// The API code of a rate-limited call.
pub const RATE_LIMIT_CODE: i64 = 99991400;

/// How Feishu announces when a rate limit resets, and how the channel waits.
const RATE_LIMIT: RateLimitPolicy = RateLimitPolicy {
    header: "x-ogw-ratelimit-reset",
    announced: Announced::Seconds,
    initial_backoff: INITIAL_RATE_LIMIT_BACKOFF,
    max_wait: MAX_RATE_LIMIT_WAIT,
    longer: LongerWait::Cap,
};

/// The Feishu (or Lark) approval channel: posts approval cards to one group
/// chat with the app's bot, updates them once decided, and verifies card
/// callbacks.
///
/// Open API calls authenticate with a tenant_access_token, fetched on first
/// use and cached until less than [`TOKEN_REFRESH_MARGIN`] of its lifetime
/// remains. A call answered with a token error ([`TOKEN_ERROR_CODES`]) drops
/// the cached token, fetches a new one and is retried once. A rate-limited
/// call (HTTP 429 or code [`RATE_LIMIT_CODE`]) waits for
/// `x-ogw-ratelimit-reset` seconds (at most [`MAX_RATE_LIMIT_WAIT`]), or
/// backs off exponentially from [`INITIAL_RATE_LIMIT_BACKOFF`], and is
/// retried up to `max_rate_limit_retries` times.
pub struct FeishuChannel {
    config: FeishuConfig,
    http: ChatHttp,
    token: Mutex<Option<CachedToken>>,
}

#[derive(Clone)]
struct CachedToken {
    value: String,
    expires_at: Instant,
}

/// Why a single Open API exchange failed.
enum CallError {
    /// The API answered with a non-zero code.
    Api { status: u16, code: i64, msg: String },
    /// Anything else, already described.
    Other(String),
}

impl FeishuChannel {
    /// The channel kind stored with requests.
    pub const KIND: &'static str = "feishu";

    /// A channel with this config; fails if the config is invalid (see
    /// [`FeishuConfig::validate`]). No request is made until the first card.
    pub fn new(config: FeishuConfig) -> Result<Self, ChannelError> {
        config.validate()?;
        let http = ChatHttp::new(
            Self::KIND,
            "Feishu",
            config.base(),
            config.limits,
            RATE_LIMIT,
        )?;
        Ok(FeishuChannel {
            config,
            http,
            token: Mutex::new(None),
        })
    }

    /// The channel's config.
    pub fn config(&self) -> &FeishuConfig {
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

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.config.base())
    }

    /// A valid tenant_access_token, from the cache or freshly fetched.
    async fn tenant_token(&self) -> Result<String, ChannelError> {
        let mut cached = self.token.lock().await;
        if let Some(token) = cached.as_ref()
            && token.expires_at > Instant::now() + TOKEN_REFRESH_MARGIN
        {
            return Ok(token.value.clone());
        }
        let fresh = self.fetch_token().await?;
        let value = fresh.value.clone();
        *cached = Some(fresh);
        Ok(value)
    }

    /// Forgets `stale` if it is still the cached token.
    async fn drop_token(&self, stale: &str) {
        let mut cached = self.token.lock().await;
        if cached.as_ref().is_some_and(|token| token.value == stale) {
            *cached = None;
        }
    }

    async fn fetch_token(&self) -> Result<CachedToken, ChannelError> {
        const WHAT: &str = "getting a tenant_access_token";
        let url = self.url("/open-apis/auth/v3/tenant_access_token/internal");
        let body = json!({"app_id": self.config.app_id, "app_secret": self.config.app_secret});
        let requested_at = Instant::now();
        let response = self
            .exchange(Method::POST, &url, None, &body)
            .await
            .map_err(|error| self.describe(WHAT, error, false))?;
        let value = response
            .get("tenant_access_token")
            .and_then(Value::as_str)
            .filter(|token| !token.is_empty())
            .ok_or_else(|| {
                self.error(format!(
                    "{WHAT} failed: the response has no tenant_access_token; check that base_url points at the Open API host"
                ))
            })?;
        let expire = response
            .get("expire")
            .and_then(Value::as_u64)
            .ok_or_else(|| {
                self.error(format!(
                    "{WHAT} failed: the response has no numeric `expire`; check that base_url points at the Open API host"
                ))
            })?;
        Ok(CachedToken {
            value: value.to_owned(),
            expires_at: requested_at + Duration::from_secs(expire.min(365 * 24 * 3600)),
        })
    }

    /// An authenticated Open API call, retried once with a fresh token if
    /// the token is refused.
    async fn call(
        &self,
        what: &str,
        method: Method,
        url: &str,
        body: &Value,
    ) -> Result<Value, ChannelError> {
        let token = self.tenant_token().await?;
        match self.exchange(method.clone(), url, Some(&token), body).await {
            Err(CallError::Api { code, .. }) if TOKEN_ERROR_CODES.contains(&code) => {
                tracing::debug!(
                    code,
                    "feishu: tenant_access_token refused, fetching a new one"
                );
                self.drop_token(&token).await;
                let token = self.tenant_token().await?;
                self.exchange(method, url, Some(&token), body)
                    .await
                    .map_err(|error| self.describe(what, error, true))
            }
            result => result.map_err(|error| self.describe(what, error, false)),
        }
    }

    /// One Open API exchange, retried while rate limited. `Ok` holds the
    /// response body of a successful (code 0) answer.
    async fn exchange(
        &self,
        method: Method,
        url: &str,
        token: Option<&str>,
        body: &Value,
    ) -> Result<Value, CallError> {
        let request = |http: &reqwest::Client| {
            let request = http.request(method.clone(), url);
            match token {
                Some(token) => request.bearer_auth(token),
                None => request,
            }
        };
        let rate_limited = |status: StatusCode, answer: Option<&Value>| {
            status == StatusCode::TOO_MANY_REQUESTS || api_code(answer) == Some(RATE_LIMIT_CODE)
        };
        let Answer {
            status,
            bytes,
            object,
        } = self
            .http
            .send_json(request, body, rate_limited)
            .await
            .map_err(CallError::Other)?;
        let Some(answer) = object else {
            return Err(CallError::Other(format!(
                "HTTP {} with a body that is not a JSON object ({}); check that base_url points at the Open API host",
                status.as_u16(),
                snippet(&bytes)
            )));
        };
        match api_code(Some(&answer)) {
            Some(0) if status.is_success() => Ok(answer),
            Some(0) => Err(CallError::Other(format!(
                "HTTP {} although the API code is 0 ({}); check that base_url points at the Open API host",
                status.as_u16(),
                snippet(&bytes)
            ))),
            Some(code) => Err(CallError::Api {
                status: status.as_u16(),
                code,
                msg: answer
                    .get("msg")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_owned(),
            }),
            None => Err(CallError::Other(format!(
                "HTTP {} without an API `code` ({}); check that base_url points at the Open API host",
                status.as_u16(),
                snippet(&bytes)
            ))),
        }
    }

    fn describe(&self, what: &str, error: CallError, after_refresh: bool) -> ChannelError {
        match error {
            CallError::Other(message) => self.error(format!("{what} failed: {message}")),
            CallError::Api { status, code, msg } => {
                let hint = if after_refresh && TOKEN_ERROR_CODES.contains(&code) {
                    "the token was refused even right after fetching a new one: check that the app \
                     is enabled and its current version is published"
                        .to_owned()
                } else {
                    hint(code, &self.config.chat_id)
                };
                self.error(format!(
                    "{what} failed: Feishu API error code {code} (HTTP {status}): \"{msg}\"; {hint}"
                ))
            }
        }
    }
}

/// What to do about an API error code.
fn hint(code: i64, chat_id: &str) -> String {
    match code {
        10003 | 10013 | 10014 | 10015 => {
            "check app_id and app_secret against the app's Credentials page".to_owned()
        }
        99991672 => "grant the app the im:message (or im:message:send_as_bot) scope and publish a new version".to_owned(),
        230001 => format!(
            "a request parameter was refused: check that chat_id \"{chat_id}\" is a valid oc_... chat id and, for an update, that the card message exists"
        ),
        230002 => format!("add the app's bot to chat {chat_id}"),
        230006 => "enable the Bot ability of the app and publish a new version".to_owned(),
        230013 => "make the app available to the chat's members in the admin console".to_owned(),
        230011 | 230110 => "the card message was recalled or deleted; nothing to update".to_owned(),
        230031 => "the card is older than 14 days and can no longer be updated".to_owned(),
        232009 => format!("chat {chat_id} was dissolved: configure another chat_id"),
        230020 | 11232 | 11233 => "the chat is rate limited: slow down approval traffic".to_owned(),
        230025 | 230099 => {
            "Feishu refused the card; this is a bug in the card builder, please report it with the message above".to_owned()
        }
        _ => "look the code up in the Feishu Open API error code reference".to_owned(),
    }
}

/// The API `code` of an answer.
fn api_code(answer: Option<&Value>) -> Option<i64> {
    answer
        .and_then(|answer| answer.get("code"))
        .and_then(Value::as_i64)
}

/// `text` percent-encoded for use as one URL path segment.
fn path_segment(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'_' | b'.' | b'~') {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

/// Card content as the API wants it: the card JSON serialized to a string.
fn card_content(card: &Value) -> String {
    card.to_string()
}

impl Channel for FeishuChannel {
    fn kind(&self) -> &'static str {
        Self::KIND
    }

    fn channel_id(&self) -> &str {
        &self.config.chat_id
    }

    /// Yes: a click counts only from the card sent (the card's message id, against the click's `open_message_id`).
    fn binds_clicks_to_card(&self) -> bool {
        true
    }

    /// Posts [`approval_card`] to the chat; the request id is the message's
    /// dedup `uuid` (when at most 50 characters), so a retried send within
    /// an hour does not post a second card.
    fn send_card<'a>(&'a self, request: &'a ConfirmationRequest) -> ChannelFuture<'a, String> {
        Box::pin(async move {
            let what = format!(
                "sending the approval card for request {} to chat {}",
                request.id, self.config.chat_id
            );
            let mut body = json!({
                "receive_id": self.config.chat_id,
                "msg_type": "interactive",
                "content": card_content(&approval_card(request)),
            });
            if !request.id.is_empty() && request.id.len() <= 50 {
                body["uuid"] = Value::String(request.id.clone());
            }
            let url = self.url("/open-apis/im/v1/messages?receive_id_type=chat_id");
            let response = self.call(&what, Method::POST, &url, &body).await?;
            response
                .get("data")
                .and_then(|data| data.get("message_id"))
                .and_then(Value::as_str)
                .filter(|id| !id.is_empty())
                .map(str::to_owned)
                .ok_or_else(|| {
                    self.error(format!(
                        "{what} failed: the response has no data.message_id; check that base_url points at the Open API host"
                    ))
                })
        })
    }

    /// One hour: Feishu sends at most one message per `uuid` within an hour
    /// ("Send message" API, request body field `uuid`).
    fn send_dedup_window(&self) -> Option<std::time::Duration> {
        Some(std::time::Duration::from_secs(3600))
    }

    /// PATCHes the card message to [`outcome_card`].
    fn update_card<'a>(&'a self, request: &'a ConfirmationRequest) -> ChannelFuture<'a, ()> {
        Box::pin(async move {
            let what = format!("updating the card of request {}", request.id);
            let Some(message_id) = request.message_ref.as_deref().filter(|id| !id.is_empty())
            else {
                return Err(self.error(format!(
                    "{what} failed: the request has no message_ref, so its card was never sent; nothing to update"
                )));
            };
            let url = self.url(&format!(
                "/open-apis/im/v1/messages/{}",
                path_segment(message_id)
            ));
            let body = json!({"content": card_content(&outcome_card(request))});
            self.call(&what, Method::PATCH, &url, &body).await?;
            Ok(())
        })
    }

    fn verify_callback(&self, raw: RawCallback<'_>) -> Result<Callback, CallbackError> {
        verify_at(&self.config, raw, unix_now())
    }

    /// `{"toast": {...}}`, plus `{"card": {"type": "raw", "data": ...}}`
    /// redrawn from the request when it is known: the approval card while it
    /// is pending, the outcome card once it is not.
    fn callback_reply(&self, reply: CallbackReply<'_>) -> Value {
        let kind = match reply.kind {
            ToastKind::Success => "success",
            ToastKind::Info => "info",
            ToastKind::Error => "error",
        };
        let mut body = json!({"toast": {"type": kind, "content": reply.message}});
        if let Some(request) = reply.request {
            let card = if request.status.is_terminal() {
                outcome_card(request)
            } else {
                approval_card(request)
            };
            body["card"] = json!({"type": "raw", "data": card});
        }
        body
    }
}

impl fmt::Debug for FeishuChannel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FeishuChannel")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn path_segments_are_encoded() {
        assert_eq!(path_segment("om_abc-1"), "om_abc-1");
        assert_eq!(path_segment("a/b?c"), "a%2Fb%3Fc");
    }
}
