//! [`FakeSlack`]: a fake Slack Web API server, test support.
//!
//! It serves `chat.postMessage`, `chat.update` and `chat.postEphemeral` on
//! `127.0.0.1` in their request and response shapes (bot token in the
//! `Authorization` header, or a `token` field; JSON or form bodies;
//! `{"ok": true, …}` or `{"ok": false, "error": …}` answers), records every
//! message, and can answer HTTP 429 with `Retry-After` or any `ok: false`
//! error on demand. It also plays the user's side: it builds `block_actions`
//! payloads from the buttons of the messages it received, signs them like
//! Slack, and posts them to an interactivity URL.
//!
//! Unlike [`FakeFeishu`](crate::feishu::FakeFeishu) it does
//! not deduplicate posts: Slack's `chat.postMessage` takes no idempotency
//! key, so every post is a new message, here as on Slack (which is why the
//! gate never re-sends a Slack message).
//!
//! ```
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! use hooks::std_hooks::approval_gate::channel::Channel;
//! use hooks::std_hooks::approval_gate::channel::slack::SlackChannel;
//! use hooks_testkit::slack::{FakeSlack, FakeSlackConfig};
//!
//! let fake = FakeSlack::start(FakeSlackConfig::default()).await.unwrap();
//! let channel = SlackChannel::new(fake.slack_config("C0APPROVALS")).unwrap();
//! assert_eq!(channel.channel_id(), "T0FAKE/C0APPROVALS");
//! assert!(fake.messages().is_empty());
//! # });
//! ```

use std::collections::HashMap;
use std::io;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::header::{AUTHORIZATION, CONTENT_TYPE, RETRY_AFTER};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use serde_json::{Value, json};
use tokio::sync::oneshot;
use uuid::Uuid;

use crate::unix_now;
use hooks_std::approval_gate::ApprovalDecision;
use hooks_std::approval_gate::channel::slack::{
    REASON_BLOCK_ID, SIGNATURE_HEADER, SlackConfig, TIMESTAMP_HEADER, action_id, button_value,
    signature,
};

/// Credentials and ids the fake expects and signs with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FakeSlackConfig {
    /// The bot token the Web API accepts.
    pub bot_token: String,
    /// The signing secret interactivity requests are signed with.
    pub signing_secret: String,
    /// The workspace id reported in payloads.
    pub team_id: String,
}

impl Default for FakeSlackConfig {
    /// Fixed test credentials.
    fn default() -> Self {
        FakeSlackConfig {
            bot_token: "xoxb-fake-bot-token".to_owned(),
            signing_secret: "fake-signing-secret".to_owned(),
            team_id: "T0FAKE".to_owned(),
        }
    }
}

/// A message the fake accepted through `chat.postMessage`.
#[derive(Debug, Clone, PartialEq)]
pub struct PostedMessage {
    /// The channel it was posted to.
    pub channel: String,
    /// The `ts` the fake assigned (the message's id within the channel).
    pub ts: String,
    /// The `text` fallback.
    pub text: String,
    /// The blocks (`Null` if none were sent).
    pub blocks: Value,
}

impl PostedMessage {
    /// The confirmation request the message's buttons carry, if it has any.
    pub fn request_id(&self) -> Option<String> {
        buttons(&self.blocks).into_iter().find_map(|button| {
            let value: Value = serde_json::from_str(button.get("value")?.as_str()?).ok()?;
            Some(value.get("request_id")?.as_str()?.to_owned())
        })
    }

    /// Whether the message has any button.
    pub fn has_buttons(&self) -> bool {
        !buttons(&self.blocks).is_empty()
    }
}

/// A `chat.update` the fake accepted.
#[derive(Debug, Clone, PartialEq)]
pub struct MessageUpdate {
    /// The channel of the updated message.
    pub channel: String,
    /// The `ts` of the updated message.
    pub ts: String,
    /// The new `text`.
    pub text: String,
    /// The new blocks (`Null` if none were sent).
    pub blocks: Value,
}

impl MessageUpdate {
    /// Whether the new message has any button.
    pub fn has_buttons(&self) -> bool {
        !buttons(&self.blocks).is_empty()
    }
}

/// A `chat.postEphemeral` the fake accepted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EphemeralMessage {
    /// The channel it was shown in.
    pub channel: String,
    /// The only user who sees it.
    pub user: String,
    /// Its text.
    pub text: String,
}

/// A button press to simulate.
#[derive(Debug, Clone, PartialEq)]
pub struct SlackClick {
    /// The request whose button is pressed.
    pub request_id: String,
    /// Which button.
    pub decision: ApprovalDecision,
    /// The presser's Slack user id.
    pub user_id: String,
    /// The channel reported; by default the channel of the message holding the button.
    pub channel_id: Option<String>,
    /// The workspace reported; by default the fake's.
    pub team_id: Option<String>,
    /// The `trigger_id`; random by default (each press gets its own).
    pub trigger_id: Option<String>,
    /// The reason typed with the decision (sent in the interaction's
    /// `state.values.reason.reason.value`, as an input block with block and
    /// action id `reason` reports it); none by default. A reason for a
    /// message without that input block is refused, as nothing could be
    /// typed.
    pub reason: Option<String>,
    /// The `ts` of the message whose button is pressed; by default the
    /// latest posted or updated message that has the button.
    pub message_ts: Option<String>,
}

impl SlackClick {
    /// A press of `decision` on `request_id`'s message by `user_id`, with
    /// the default channel, workspace and trigger id.
    pub fn new(
        request_id: impl Into<String>,
        decision: ApprovalDecision,
        user_id: impl Into<String>,
    ) -> Self {
        SlackClick {
            request_id: request_id.into(),
            decision,
            user_id: user_id.into(),
            channel_id: None,
            team_id: None,
            trigger_id: None,
            reason: None,
            message_ts: None,
        }
    }

    /// The same press, with `reason` typed in.
    pub fn with_reason(mut self, reason: impl Into<String>) -> Self {
        self.reason = Some(reason.into());
        self
    }

    /// The same press, on the message posted with `ts` (which must have the
    /// button).
    pub fn on_message(mut self, ts: impl Into<String>) -> Self {
        self.message_ts = Some(ts.into());
        self
    }

    /// The same press, reported from `channel_id`.
    pub fn in_channel(mut self, channel_id: impl Into<String>) -> Self {
        self.channel_id = Some(channel_id.into());
        self
    }

    /// The same press, reported from workspace `team_id`.
    pub fn in_team(mut self, team_id: impl Into<String>) -> Self {
        self.team_id = Some(team_id.into());
        self
    }
}

/// A signed interactivity request ready to post.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignedRequest {
    /// The exact body: `payload=<url-encoded JSON>`.
    pub body: Vec<u8>,
    /// `X-Slack-Request-Timestamp` (Unix seconds).
    pub timestamp: String,
    /// `X-Slack-Signature` (`v0=…`).
    pub signature: String,
}

impl SignedRequest {
    /// The two `X-Slack-*` headers plus `Content-Type`, for calling
    /// [`Channel::verify_callback`](hooks_std::approval_gate::channel::Channel::verify_callback)
    /// directly.
    pub fn headers(&self) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(
            CONTENT_TYPE,
            HeaderValue::from_static("application/x-www-form-urlencoded"),
        );
        for (name, value) in [
            (TIMESTAMP_HEADER, &self.timestamp),
            (SIGNATURE_HEADER, &self.signature),
        ] {
            if let Ok(value) = HeaderValue::from_str(value) {
                headers.insert(name, value);
            }
        }
        headers
    }
}

#[derive(Debug)]
struct Shared {
    config: FakeSlackConfig,
    state: Mutex<FakeState>,
}

#[derive(Debug, Default)]
struct FakeState {
    api_calls: usize,
    next_ts: u64,
    rate_limit_next: usize,
    retry_after: Option<u64>,
    fail_next: Vec<String>,
    messages: Vec<PostedMessage>,
    updates: Vec<MessageUpdate>,
    ephemerals: Vec<EphemeralMessage>,
    responses: Vec<Value>,
}

impl Shared {
    fn state(&self) -> MutexGuard<'_, FakeState> {
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// A fake Slack Web API server on `127.0.0.1` (random port), for tests and
/// examples. Stops when dropped.
///
/// Methods: `POST /api/chat.postMessage` (`channel` and `text` or `blocks`
/// required), `POST /api/chat.update` (known `channel` + `ts` only, else
/// `message_not_found`) and `POST /api/chat.postEphemeral` (`channel`,
/// `user`, `text` or `blocks`). Every call needs the bot token, else
/// `not_authed` / `invalid_auth`. `response_url`s in the payloads it builds
/// point at `POST /response/{trigger}`, which records what is posted there.
#[derive(Debug)]
pub struct FakeSlack {
    origin: String,
    shared: Arc<Shared>,
    http: reqwest::Client,
    shutdown: Option<oneshot::Sender<()>>,
}

impl FakeSlack {
    /// Starts the server on a random local port. Needs a Tokio runtime.
    pub async fn start(config: FakeSlackConfig) -> io::Result<FakeSlack> {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let address = listener.local_addr()?;
        let shared = Arc::new(Shared {
            config,
            state: Mutex::new(FakeState {
                retry_after: Some(1),
                ..FakeState::default()
            }),
        });
        let app = Router::new()
            .route("/api/{method}", post(api_endpoint))
            .route("/response/{trigger}", post(response_endpoint))
            .with_state(Arc::clone(&shared));
        let (shutdown, stopped) = oneshot::channel::<()>();
        tokio::spawn(async move {
            let serve = axum::serve(listener, app).with_graceful_shutdown(async move {
                let _ = stopped.await;
            });
            if let Err(error) = serve.await {
                tracing::warn!(%error, "fake slack server stopped with an error");
            }
        });
        let http = reqwest::Client::builder()
            .no_proxy()
            .timeout(Duration::from_secs(30))
            .build()
            .map_err(io::Error::other)?;
        Ok(FakeSlack {
            origin: format!("http://{address}"),
            shared,
            http,
            shutdown: Some(shutdown),
        })
    }

    /// The Web API base URL (`http://127.0.0.1:<port>/api`), for
    /// [`SlackConfig::base_url`].
    pub fn base_url(&self) -> String {
        format!("{}/api", self.origin)
    }

    /// The credentials the fake expects.
    pub fn config(&self) -> &FakeSlackConfig {
        &self.shared.config
    }

    /// A [`SlackConfig`] pointing at this server with its credentials,
    /// posting to `channel_id` in the fake's workspace.
    pub fn slack_config(&self, channel_id: &str) -> SlackConfig {
        let config = &self.shared.config;
        let mut slack = SlackConfig::new(
            config.bot_token.clone(),
            config.signing_secret.clone(),
            channel_id,
            config.team_id.clone(),
        );
        slack.base_url = self.base_url();
        slack
    }

    /// The next `n` Web API calls are rate limited: HTTP 429 with
    /// `Retry-After` (1 s unless changed with
    /// [`set_retry_after`](Self::set_retry_after)) and
    /// `{"ok": false, "error": "ratelimited"}`.
    pub fn rate_limit_next(&self, n: usize) {
        self.shared.state().rate_limit_next = n;
    }

    /// The `Retry-After` seconds sent when rate limiting, or `None` for no header.
    pub fn set_retry_after(&self, seconds: Option<u64>) {
        self.shared.state().retry_after = seconds;
    }

    /// The next `n` Web API calls (after authentication) are answered
    /// `{"ok": false, "error": error}`, HTTP 200, as Slack does.
    pub fn fail_next(&self, n: usize, error: &str) {
        let mut state = self.shared.state();
        state.fail_next = vec![error.to_owned(); n];
    }

    /// How many Web API calls arrived, including refused ones.
    pub fn api_calls(&self) -> usize {
        self.shared.state().api_calls
    }

    /// The messages posted, in order.
    pub fn messages(&self) -> Vec<PostedMessage> {
        self.shared.state().messages.clone()
    }

    /// The message updates, in order.
    pub fn updates(&self) -> Vec<MessageUpdate> {
        self.shared.state().updates.clone()
    }

    /// The ephemeral messages, in order.
    pub fn ephemerals(&self) -> Vec<EphemeralMessage> {
        self.shared.state().ephemerals.clone()
    }

    /// What was posted to `response_url`s, in order.
    pub fn responses(&self) -> Vec<Value> {
        self.shared.state().responses.clone()
    }

    /// Waits (polling every 10 ms, at most `timeout`) until `count`
    /// messages have been posted, and returns the `count`-th.
    pub async fn wait_for_message(&self, count: usize, timeout: Duration) -> Option<PostedMessage> {
        self.wait(timeout, |state| {
            count
                .checked_sub(1)
                .and_then(|i| state.messages.get(i).cloned())
        })
        .await
    }

    /// Waits until `count` updates have arrived, and returns the `count`-th.
    pub async fn wait_for_update(&self, count: usize, timeout: Duration) -> Option<MessageUpdate> {
        self.wait(timeout, |state| {
            count
                .checked_sub(1)
                .and_then(|i| state.updates.get(i).cloned())
        })
        .await
    }

    /// Waits until `count` ephemeral messages have arrived, and returns the `count`-th.
    pub async fn wait_for_ephemeral(
        &self,
        count: usize,
        timeout: Duration,
    ) -> Option<EphemeralMessage> {
        self.wait(timeout, |state| {
            count
                .checked_sub(1)
                .and_then(|i| state.ephemerals.get(i).cloned())
        })
        .await
    }

    async fn wait<T>(
        &self,
        timeout: Duration,
        found: impl Fn(&FakeState) -> Option<T>,
    ) -> Option<T> {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            if let Some(found) = found(&self.shared.state()) {
                return Some(found);
            }
            if tokio::time::Instant::now() >= deadline {
                return None;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    /// A `block_actions` payload for `click`. The pressed button (its
    /// `action_id` and `value`) is copied from the latest posted or updated
    /// message that has it; fails if none has.
    pub fn block_actions_payload(&self, click: &SlackClick) -> Result<Value, String> {
        let wanted = action_id(&click.request_id, click.decision);
        let (channel, ts, button, has_reason_input) = {
            let state = self.shared.state();
            let posted = state
                .messages
                .iter()
                .map(|message| (&message.channel, &message.ts, &message.blocks));
            let updated = state
                .updates
                .iter()
                .map(|update| (&update.channel, &update.ts, &update.blocks));
            posted
                .chain(updated)
                .filter(|(_, ts, _)| click.message_ts.as_ref().is_none_or(|wanted| wanted == *ts))
                .filter_map(|(channel, ts, blocks)| {
                    buttons(blocks)
                        .into_iter()
                        .find(|button| {
                            button.get("action_id").and_then(Value::as_str) == Some(wanted.as_str())
                        })
                        .map(|button| {
                            (
                                channel.clone(),
                                ts.clone(),
                                button,
                                has_reason_input(blocks),
                            )
                        })
                })
                .next_back()
                .ok_or_else(|| {
                    format!(
                        "no recorded message has a {} button for request {}",
                        click.decision.as_str(),
                        click.request_id
                    )
                })?
        };
        let config = &self.shared.config;
        let team = click
            .team_id
            .clone()
            .unwrap_or_else(|| config.team_id.clone());
        let channel = click.channel_id.clone().unwrap_or(channel);
        let trigger = click
            .trigger_id
            .clone()
            .unwrap_or_else(|| format!("{}.{}", unix_now(), Uuid::new_v4().simple()));
        let action_ts = format!(
            "{}.{:06}",
            unix_now(),
            self.shared.state().next_ts % 1_000_000
        );
        // Slack reports every input block of the message in the state, an
        // untouched one with a null value; a reason needs an input to be
        // typed into.
        let state = match (&click.reason, has_reason_input) {
            (reason, true) => json!({"values": {REASON_BLOCK_ID: {REASON_BLOCK_ID: {
                "type": "plain_text_input", "value": reason
            }}}}),
            (Some(_), false) => {
                return Err(format!(
                    "the message with the {} button for request {} has no `{}` input block, \
                     so no reason can be typed with it",
                    click.decision.as_str(),
                    click.request_id,
                    REASON_BLOCK_ID
                ));
            }
            (None, false) => json!({"values": {}}),
        };
        Ok(json!({
            "type": "block_actions",
            "state": state,
            "user": {"id": click.user_id, "username": click.user_id.to_lowercase(), "team_id": team},
            "api_app_id": "A0FAKEAPP",
            "token": "deprecated-verification-token",
            "container": {"type": "message", "message_ts": ts, "channel_id": channel, "is_ephemeral": false},
            "trigger_id": trigger,
            "team": {"id": team, "domain": "fake"},
            "enterprise": null,
            "is_enterprise_install": false,
            "channel": {"id": channel, "name": "approvals"},
            "message": {"type": "message", "ts": ts},
            "response_url": format!("{}/response/{}", self.origin, Uuid::new_v4().simple()),
            "actions": [{
                "type": "button",
                "block_id": button.get("block_id").cloned().unwrap_or(Value::Null),
                "action_id": wanted,
                "text": button.get("text").cloned().unwrap_or(Value::Null),
                "value": button.get("value").cloned().unwrap_or_else(|| json!(button_value(&click.request_id, click.decision))),
                "style": button.get("style").cloned().unwrap_or(Value::Null),
                "action_ts": action_ts,
            }],
        }))
    }

    /// `payload` as Slack sends it (`payload=<url-encoded JSON>`), signed now.
    pub fn sign(&self, payload: &Value) -> SignedRequest {
        self.sign_at(payload, unix_now())
    }

    /// `payload` as Slack sends it, signed as if sent at `timestamp_secs`.
    pub fn sign_at(&self, payload: &Value, timestamp_secs: i64) -> SignedRequest {
        let body = serde_urlencoded::to_string([("payload", payload.to_string())])
            .unwrap_or_default()
            .into_bytes();
        self.sign_body_at(body, timestamp_secs)
    }

    /// Any `body` bytes, signed as if sent at `timestamp_secs`.
    pub fn sign_body_at(&self, body: Vec<u8>, timestamp_secs: i64) -> SignedRequest {
        let timestamp = timestamp_secs.to_string();
        let signature = signature(&self.shared.config.signing_secret, &timestamp, &body);
        SignedRequest {
            body,
            timestamp,
            signature,
        }
    }

    /// POSTs `request` to `url` with its headers, like Slack does; returns
    /// the HTTP status and the body text. If the request cannot be made at
    /// all the status is 0 and the body is the error text.
    pub async fn deliver(&self, url: &str, request: &SignedRequest) -> (u16, String) {
        let sent = self
            .http
            .post(url)
            .headers(request.headers())
            .body(request.body.clone())
            .send()
            .await;
        match sent {
            Ok(response) => {
                let status = response.status().as_u16();
                (status, response.text().await.unwrap_or_default())
            }
            Err(error) => (0, error.to_string()),
        }
    }

    /// Presses a button: [`deliver`](Self::deliver)s the [`sign`](Self::sign)ed
    /// [`block_actions_payload`](Self::block_actions_payload). Fails
    /// (without sending) if no recorded message has the button.
    pub async fn click(&self, url: &str, click: &SlackClick) -> Result<(u16, String), String> {
        let payload = self.block_actions_payload(click)?;
        Ok(self.deliver(url, &self.sign(&payload)).await)
    }
}

impl Drop for FakeSlack {
    fn drop(&mut self) {
        if let Some(shutdown) = self.shutdown.take() {
            let _ = shutdown.send(());
        }
    }
}

/// All `button` elements in `blocks`.
fn buttons(blocks: &Value) -> Vec<Value> {
    let mut found = Vec::new();
    fn walk(value: &Value, found: &mut Vec<Value>) {
        match value {
            Value::Object(object) => {
                if object.get("type").and_then(Value::as_str) == Some("button") {
                    found.push(value.clone());
                }
                object.values().for_each(|child| walk(child, found));
            }
            Value::Array(items) => items.iter().for_each(|child| walk(child, found)),
            _ => {}
        }
    }
    walk(blocks, &mut found);
    found
}

/// Whether `blocks` hold the reason input: an `input` block with block id
/// `reason` whose `plain_text_input` has action id `reason`.
fn has_reason_input(blocks: &Value) -> bool {
    blocks.as_array().into_iter().flatten().any(|block| {
        block["type"] == "input"
            && block["block_id"] == REASON_BLOCK_ID
            && block["element"]["type"] == "plain_text_input"
            && block["element"]["action_id"] == REASON_BLOCK_ID
    })
}

/// Slack's size limits on what a message holds, as the Web API enforces
/// them: a header's text 150 characters, a section's or context element's
/// text 3000, a button's `value` 2000 and `action_id` 255, an input's
/// plain-text label 2000 (and it must have an element), at most 50 blocks,
/// the `text` fallback 40000 (`msg_too_long`), and the text of all blocks
/// together about 13,200 characters (`msg_blocks_too_long`: not
/// documented, seen by Slack's users; the fake counts every string in the
/// blocks and refuses above 13,000).
fn over_limits(text: &str, blocks: &Value) -> Option<&'static str> {
    if text.chars().count() > 40_000 {
        return Some("msg_too_long");
    }
    if blocks.as_array().is_some_and(|blocks| blocks.len() > 50) {
        return Some("invalid_blocks");
    }
    if strings_chars(blocks) > 13_000 {
        return Some("msg_blocks_too_long");
    }
    let chars = |value: &Value| value.as_str().map_or(0, |text| text.chars().count());
    for block in blocks.as_array().into_iter().flatten() {
        let too_long = match block["type"].as_str() {
            Some("header") => chars(&block["text"]["text"]) > 150,
            Some("section") => chars(&block["text"]["text"]) > 3000,
            Some("context") => block["elements"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|element| chars(&element["text"]) > 3000),
            // An input needs a plain-text label (at most 2000 characters)
            // and an element.
            Some("input") => {
                block["label"]["type"] != "plain_text"
                    || !(1..=2000).contains(&chars(&block["label"]["text"]))
                    || !block["element"].is_object()
            }
            Some("actions") => block["elements"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|element| {
                    chars(&element["value"]) > 2000 || chars(&element["action_id"]) > 255
                }),
            _ => false,
        };
        if too_long {
            return Some("invalid_blocks");
        }
    }
    None
}

/// The characters of every string in `value`.
fn strings_chars(value: &Value) -> usize {
    match value {
        Value::String(text) => text.chars().count(),
        Value::Array(items) => items.iter().map(strings_chars).sum(),
        Value::Object(object) => object.values().map(strings_chars).sum(),
        _ => 0,
    }
}

fn answer(status: StatusCode, body: Value) -> Response {
    (status, axum::Json(body)).into_response()
}

fn failure(error: &str) -> Response {
    answer(StatusCode::OK, json!({"ok": false, "error": error}))
}

/// The request's arguments: a JSON object, or a form whose `blocks` (and
/// `attachments`) fields hold JSON text.
fn arguments(headers: &HeaderMap, body: &[u8]) -> Option<HashMap<String, Value>> {
    let content_type = headers
        .get(CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .unwrap_or("");
    if content_type.starts_with("application/json") {
        let Value::Object(map) = serde_json::from_slice(body).ok()? else {
            return None;
        };
        Some(map.into_iter().collect())
    } else if content_type.starts_with("application/x-www-form-urlencoded") {
        let fields: Vec<(String, String)> = serde_urlencoded::from_bytes(body).ok()?;
        Some(
            fields
                .into_iter()
                .map(|(name, text)| {
                    let value = match name.as_str() {
                        "blocks" | "attachments" => serde_json::from_str(&text).ok()?,
                        _ => Value::String(text),
                    };
                    Some((name, value))
                })
                .collect::<Option<_>>()?,
        )
    } else {
        None
    }
}

fn text_arg<'a>(args: &'a HashMap<String, Value>, name: &str) -> &'a str {
    args.get(name).and_then(Value::as_str).unwrap_or("")
}

async fn api_endpoint(
    State(shared): State<Arc<Shared>>,
    Path(method): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let mut state = shared.state();
    state.api_calls += 1;
    if state.rate_limit_next > 0 {
        state.rate_limit_next -= 1;
        let mut response = answer(
            StatusCode::TOO_MANY_REQUESTS,
            json!({"ok": false, "error": "ratelimited"}),
        );
        if let Some(after) = state.retry_after
            && let Ok(value) = HeaderValue::from_str(&after.to_string())
        {
            response.headers_mut().insert(RETRY_AFTER, value);
        }
        return response;
    }
    let Some(args) = arguments(&headers, &body) else {
        return failure("invalid_form_data");
    };
    let token = headers
        .get(AUTHORIZATION)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.strip_prefix("Bearer "))
        .map(str::to_owned)
        .or_else(|| args.get("token").and_then(Value::as_str).map(str::to_owned));
    match token {
        None => return failure("not_authed"),
        Some(token) if token != shared.config.bot_token => return failure("invalid_auth"),
        Some(_) => {}
    }
    if let Some(error) = state.fail_next.pop() {
        return failure(&error);
    }
    let channel = text_arg(&args, "channel").to_owned();
    let text = text_arg(&args, "text").to_owned();
    let blocks = args.get("blocks").cloned().unwrap_or(Value::Null);
    if !(blocks.is_null() || blocks.is_array()) {
        return failure("invalid_blocks_format");
    }
    if channel.is_empty() {
        return failure("channel_not_found");
    }
    if text.is_empty() && blocks.is_null() {
        return failure("no_text");
    }
    if let Some(error) = over_limits(&text, &blocks) {
        return failure(error);
    }
    match method.as_str() {
        "chat.postMessage" => {
            state.next_ts += 1;
            let ts = format!("{}.{:06}", unix_now(), state.next_ts % 1_000_000);
            state.messages.push(PostedMessage {
                channel: channel.clone(),
                ts: ts.clone(),
                text: text.clone(),
                blocks: blocks.clone(),
            });
            answer(
                StatusCode::OK,
                json!({
                    "ok": true,
                    "channel": channel,
                    "ts": ts,
                    "message": {"type": "message", "text": text, "blocks": blocks,
                                "bot_id": "B0FAKE", "ts": ts},
                }),
            )
        }
        "chat.update" => {
            let ts = text_arg(&args, "ts").to_owned();
            let known = state
                .messages
                .iter()
                .any(|message| message.channel == channel && message.ts == ts);
            if !known {
                return failure("message_not_found");
            }
            state.updates.push(MessageUpdate {
                channel: channel.clone(),
                ts: ts.clone(),
                text: text.clone(),
                blocks: blocks.clone(),
            });
            answer(
                StatusCode::OK,
                json!({"ok": true, "channel": channel, "ts": ts, "text": text,
                       "message": {"text": text, "blocks": blocks}}),
            )
        }
        "chat.postEphemeral" => {
            let user = text_arg(&args, "user").to_owned();
            if user.is_empty() {
                return failure("user_not_found");
            }
            state.next_ts += 1;
            let ts = format!("{}.{:06}", unix_now(), state.next_ts % 1_000_000);
            state.ephemerals.push(EphemeralMessage {
                channel,
                user,
                text,
            });
            answer(StatusCode::OK, json!({"ok": true, "message_ts": ts}))
        }
        _ => answer(
            StatusCode::NOT_FOUND,
            json!({"ok": false, "error": "unknown_method"}),
        ),
    }
}

async fn response_endpoint(
    State(shared): State<Arc<Shared>>,
    Path(_trigger): Path<String>,
    body: Bytes,
) -> Response {
    let value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    shared.state().responses.push(value);
    (StatusCode::OK, "ok").into_response()
}
