//! [`FakeFeishu`]: a fake Feishu Open API server, test support.
//!
//! It serves the three endpoints the channel uses (tenant token, send
//! message, update message) on `127.0.0.1`, records every card, and can
//! play the user's side: it builds `card.action.trigger` callbacks from the
//! buttons of the cards it received, encrypts and signs them like Feishu,
//! and posts them to a callback URL. Failure controls simulate a bot
//! missing from the chat, rate limiting and token expiry.
//!
//! Like the real API, sends are deduplicated by the request body's `uuid`:
//! Feishu's "Send message" API (`POST /open-apis/im/v1/messages`) documents
//! `uuid` as a dedup key — requests carrying the same `uuid` send at most one
//! message within one hour. The fake answers a repeat within that hour with
//! the message already sent (same `message_id`) and posts nothing new; that
//! the repeat gets the first message's id is the fake's reading of the
//! documented guarantee, which the gate relies on only to store a reference.
//!
//! ```
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! use hooks::std_hooks::approval_gate::channel::Channel;
//! use hooks::std_hooks::approval_gate::channel::feishu::FeishuChannel;
//! use hooks_testkit::feishu::{FakeFeishu, FakeFeishuConfig};
//!
//! let fake = FakeFeishu::start(FakeFeishuConfig::default()).await.unwrap();
//! let channel = FeishuChannel::new(fake.feishu_config("oc_approvals")).unwrap();
//! assert_eq!(channel.channel_id(), "oc_approvals");
//! assert!(fake.sent_cards().is_empty());
//! # });
//! ```

use std::collections::{HashMap, HashSet};
use std::io;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{patch, post};
use serde_json::{Value, json};
use tokio::sync::oneshot;
use uuid::Uuid;

use control::control_routes;
use hooks_std::approval_gate::ApprovalDecision;
use hooks_std::approval_gate::channel::feishu::{
    FeishuConfig, NONCE_HEADER, REASON_INPUT_NAME, SIGNATURE_HEADER, TIMESTAMP_HEADER, encrypt,
    signature,
};

mod control;

/// Credentials the fake server expects and signs callbacks with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FakeFeishuConfig {
    /// The App ID the token endpoint accepts.
    pub app_id: String,
    /// The App Secret the token endpoint accepts.
    pub app_secret: String,
    /// The Encrypt Key callbacks are encrypted and signed with.
    pub encrypt_key: String,
    /// The Verification Token callbacks carry.
    pub verification_token: String,
}

impl Default for FakeFeishuConfig {
    /// Fixed test credentials.
    fn default() -> Self {
        FakeFeishuConfig {
            app_id: "cli_fake_app".to_owned(),
            app_secret: "fake-app-secret".to_owned(),
            encrypt_key: "fake-encrypt-key".to_owned(),
            verification_token: "fake-verification-token".to_owned(),
        }
    }
}

/// A card message the fake received.
#[derive(Debug, Clone, PartialEq)]
pub struct SentCard {
    /// The `om_...` id the fake assigned.
    pub message_id: String,
    /// The `receive_id` (a chat id).
    pub chat_id: String,
    /// The `msg_type` (always `interactive`: the fake refuses others).
    pub msg_type: String,
    /// The dedup `uuid`, if sent.
    pub uuid: Option<String>,
    /// The card, parsed from the `content` string.
    pub card: Value,
}

impl SentCard {
    /// The confirmation request the card's buttons carry, if it has any.
    pub fn request_id(&self) -> Option<&str> {
        fn find(value: &Value) -> Option<&str> {
            match value {
                Value::Object(map) => map
                    .get("request_id")
                    .and_then(Value::as_str)
                    .or_else(|| map.values().find_map(find)),
                Value::Array(items) => items.iter().find_map(find),
                _ => None,
            }
        }
        find(&self.card)
    }
}

/// A button press to simulate.
#[derive(Debug, Clone, PartialEq)]
pub struct CardClick {
    /// The request whose button is pressed.
    pub request_id: String,
    /// Which button.
    pub decision: ApprovalDecision,
    /// The presser's open_id.
    pub operator_open_id: String,
    /// The chat the press is reported from.
    pub chat_id: String,
    /// The message id reported; by default the message holding the button.
    pub message_id: Option<String>,
    /// The callback's event id; random by default.
    pub event_id: Option<String>,
    /// The reason typed with the decision (sent as the action's
    /// `form_value.reason`, as a card form submits it); none by default.
    /// Pressing a button that submits a form with a `reason` input always
    /// sends `form_value.reason` (empty when none is typed); a reason for a
    /// button without one is refused, as nothing could be typed.
    pub reason: Option<String>,
}

impl CardClick {
    /// A press of `decision` on `request_id`'s card by `operator_open_id` in
    /// `chat_id`, with the default message and event ids.
    pub fn new(
        request_id: impl Into<String>,
        decision: ApprovalDecision,
        operator_open_id: impl Into<String>,
        chat_id: impl Into<String>,
    ) -> Self {
        CardClick {
            request_id: request_id.into(),
            decision,
            operator_open_id: operator_open_id.into(),
            chat_id: chat_id.into(),
            message_id: None,
            event_id: None,
            reason: None,
        }
    }

    /// The same press, with `reason` typed in.
    pub fn with_reason(mut self, reason: impl Into<String>) -> Self {
        self.reason = Some(reason.into());
        self
    }
}

/// An encrypted, signed callback ready to post.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignedCallback {
    /// The exact body: `{"encrypt": "<base64>"}`.
    pub body: Vec<u8>,
    /// `X-Lark-Request-Timestamp` (Unix seconds).
    pub timestamp: String,
    /// `X-Lark-Request-Nonce`.
    pub nonce: String,
    /// `X-Lark-Signature`.
    pub signature: String,
}

impl SignedCallback {
    /// The three `X-Lark-*` headers plus `Content-Type`, for calling
    /// [`Channel::verify_callback`](hooks_std::approval_gate::channel::Channel::verify_callback)
    /// directly.
    pub fn headers(&self) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(
            axum::http::header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        for (name, value) in [
            (TIMESTAMP_HEADER, &self.timestamp),
            (NONCE_HEADER, &self.nonce),
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
pub(super) struct Shared {
    config: FakeFeishuConfig,
    state: Mutex<FakeState>,
}

#[derive(Debug)]
struct FakeState {
    valid_tokens: HashSet<String>,
    token_lifetime_secs: u64,
    token_requests: usize,
    message_requests: usize,
    fail_next_sends: usize,
    rate_limit_next: usize,
    rate_limit_reset: Option<u64>,
    reject_next_tokens: usize,
    sent: Vec<SentCard>,
    /// `uuid` → (message id, when first sent), for send dedup.
    sent_by_uuid: HashMap<String, (String, std::time::Instant)>,
    updates: Vec<(String, Value)>,
}

/// How long Feishu deduplicates sends with the same `uuid`.
const UUID_DEDUP_WINDOW: Duration = Duration::from_secs(3600);

impl Shared {
    fn state(&self) -> MutexGuard<'_, FakeState> {
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// A fake Feishu Open API server on `127.0.0.1` (random port), for tests
/// and examples. Stops when dropped.
///
/// Endpoints: `POST /open-apis/auth/v3/tenant_access_token/internal`
/// (checks app id and secret), `POST /open-apis/im/v1/messages` (checks the
/// bearer token, accepts only `receive_id_type=chat_id`, `interactive`
/// messages with a schema 2.0 card, at most 30 KB) and `PATCH
/// /open-apis/im/v1/messages/{id}` (known ids only, the new card must keep
/// `config.update_multi: true`). Issued tokens stay valid until
/// [`invalidate_tokens`](Self::invalidate_tokens). Control endpoints let
/// another process drive it (see [`start_on`](Self::start_on)):
/// `GET /fake/sent` and `GET /fake/updates` list the cards sent and
/// redrawn, and `POST /fake/click` presses a button.
#[derive(Debug)]
pub struct FakeFeishu {
    base_url: String,
    shared: Arc<Shared>,
    http: reqwest::Client,
    shutdown: Option<oneshot::Sender<()>>,
}

impl FakeFeishu {
    /// Starts the server on a random local port. Needs a Tokio runtime.
    pub async fn start(config: FakeFeishuConfig) -> io::Result<FakeFeishu> {
        Self::start_on(config, 0).await
    }

    /// Starts the server on `127.0.0.1:port` (`0`: a random port), e.g. a
    /// port agreed with processes that talk to it. Needs a Tokio runtime.
    ///
    /// A test in another process drives it through its control endpoints:
    /// `GET /fake/sent` (`[{message_id, chat_id, uuid, card}]`), `GET
    /// /fake/updates` (`[{message_id, card}]`) and `POST /fake/click` with
    /// `{callback_url, request_id, decision, operator, chat_id, event_id?}`,
    /// answered with `{status, body}` of the callback it delivered (as
    /// [`click`](Self::click)).
    pub async fn start_on(config: FakeFeishuConfig, port: u16) -> io::Result<FakeFeishu> {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await?;
        let address = listener.local_addr()?;
        let shared = Arc::new(Shared {
            config,
            state: Mutex::new(FakeState {
                valid_tokens: HashSet::new(),
                token_lifetime_secs: 7200,
                token_requests: 0,
                message_requests: 0,
                fail_next_sends: 0,
                rate_limit_next: 0,
                rate_limit_reset: Some(1),
                reject_next_tokens: 0,
                sent: Vec::new(),
                sent_by_uuid: HashMap::new(),
                updates: Vec::new(),
            }),
        });
        let app = Router::new()
            .route(
                "/open-apis/auth/v3/tenant_access_token/internal",
                post(token_endpoint),
            )
            .route("/open-apis/im/v1/messages", post(send_endpoint))
            .route(
                "/open-apis/im/v1/messages/{message_id}",
                patch(update_endpoint),
            )
            .merge(control_routes())
            .with_state(Arc::clone(&shared));
        let (shutdown, stopped) = oneshot::channel::<()>();
        tokio::spawn(async move {
            let serve = axum::serve(listener, app).with_graceful_shutdown(async move {
                let _ = stopped.await;
            });
            if let Err(error) = serve.await {
                tracing::warn!(%error, "fake feishu server stopped with an error");
            }
        });
        let http = http_client()?;
        Ok(FakeFeishu {
            base_url: format!("http://{address}"),
            shared,
            http,
            shutdown: Some(shutdown),
        })
    }

    /// The server's base URL (`http://127.0.0.1:<port>`), for
    /// [`FeishuConfig::base_url`].
    pub fn base_url(&self) -> &str {
        &self.base_url
    }

    /// Waits (polling every 10 ms, at most `timeout`) until `count` cards
    /// have arrived, and returns the `count`-th.
    pub async fn wait_for_card(&self, count: usize, timeout: Duration) -> Option<SentCard> {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            if let Some(card) = count
                .checked_sub(1)
                .and_then(|i| self.sent_cards().get(i).cloned())
            {
                return Some(card);
            }
            if tokio::time::Instant::now() >= deadline {
                return None;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    /// The credentials the fake expects.
    pub fn config(&self) -> &FakeFeishuConfig {
        &self.shared.config
    }

    /// A [`FeishuConfig`] pointing at this server with its credentials,
    /// posting to `chat_id`.
    pub fn feishu_config(&self, chat_id: &str) -> FeishuConfig {
        let config = &self.shared.config;
        let mut feishu = FeishuConfig::new(
            config.app_id.clone(),
            config.app_secret.clone(),
            chat_id,
            config.verification_token.clone(),
            config.encrypt_key.clone(),
        );
        feishu.base_url = self.base_url.clone();
        feishu
    }

    /// The next `n` sends are answered with code 230002 (the bot is not in
    /// the chat), HTTP 400.
    pub fn fail_next_sends(&self, n: usize) {
        self.shared.state().fail_next_sends = n;
    }

    /// The next `n` message calls (send or update) are rate limited: HTTP
    /// 429, code 99991400 and `x-ogw-ratelimit-reset` (1 s unless changed
    /// with [`set_rate_limit_reset`](Self::set_rate_limit_reset)).
    pub fn rate_limit_next(&self, n: usize) {
        self.shared.state().rate_limit_next = n;
    }

    /// The `x-ogw-ratelimit-reset` seconds sent when rate limiting, or
    /// `None` to send no such header.
    pub fn set_rate_limit_reset(&self, seconds: Option<u64>) {
        self.shared.state().rate_limit_reset = seconds;
    }

    /// Every token issued so far becomes invalid (message calls using one
    /// get code 99991663).
    pub fn invalidate_tokens(&self) {
        self.shared.state().valid_tokens.clear();
    }

    /// The next `n` message calls get code 99991663 whatever token they
    /// carry (a token that keeps being refused).
    pub fn reject_next_tokens(&self, n: usize) {
        self.shared.state().reject_next_tokens = n;
    }

    /// The `expire` (seconds) reported for tokens issued from now on
    /// (default 7200). The fake itself never expires tokens.
    pub fn set_token_lifetime(&self, seconds: u64) {
        self.shared.state().token_lifetime_secs = seconds;
    }

    /// How many token requests arrived (successful or not).
    pub fn token_requests(&self) -> usize {
        self.shared.state().token_requests
    }

    /// How many message calls (send or update) arrived, including refused ones.
    pub fn message_requests(&self) -> usize {
        self.shared.state().message_requests
    }

    /// The cards sent successfully, in order.
    pub fn sent_cards(&self) -> Vec<SentCard> {
        self.shared.state().sent.clone()
    }

    /// The successful card updates, in order: message id and new card.
    pub fn card_updates(&self) -> Vec<(String, Value)> {
        self.shared.state().updates.clone()
    }

    /// A schema 2.0 `card.action.trigger` callback payload (decrypted form)
    /// for `click`. Its `action.value` is copied from the button of a
    /// recorded card (sent or updated, latest first) whose callback value
    /// carries the click's request id and decision; it fails if no recorded
    /// card has such a button, or if the click carries a reason and the
    /// button does not submit a form with a `reason` input.
    pub fn card_action_event(&self, click: &CardClick) -> Result<Value, String> {
        let (message_id, button) = {
            let state = self.shared.state();
            let cards = state
                .sent
                .iter()
                .map(|sent| (&sent.message_id, &sent.card))
                .chain(state.updates.iter().map(|(id, card)| (id, card)));
            let mut found = None;
            for (message_id, card) in cards {
                if let Some(button) = find_button(card, &click.request_id, click.decision.as_str())
                {
                    found = Some((message_id.clone(), button));
                }
            }
            found.ok_or_else(|| {
                format!(
                    "no recorded card has a {} button for request {}",
                    click.decision.as_str(),
                    click.request_id
                )
            })?
        };
        let config = &self.shared.config;
        let event_id = click
            .event_id
            .clone()
            .unwrap_or_else(|| Uuid::new_v4().simple().to_string());
        let create_time = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|elapsed| elapsed.as_micros())
            .unwrap_or(0)
            .to_string();
        let mut action = json!({"value": button.value, "tag": "button"});
        // A button that submits the card's form sends what was typed into
        // it; a reason needs an input to be typed into.
        match (&click.reason, button.submits_reason) {
            (reason, true) => {
                action["form_value"] =
                    json!({ REASON_INPUT_NAME: reason.as_deref().unwrap_or("") });
            }
            (Some(_), false) => {
                return Err(format!(
                    "the {} button for request {} does not submit a form with a `{}` input, \
                     so no reason can be typed with it",
                    click.decision.as_str(),
                    click.request_id,
                    REASON_INPUT_NAME
                ));
            }
            (None, false) => {}
        }
        Ok(json!({
            "schema": "2.0",
            "header": {
                "event_id": event_id,
                "token": config.verification_token,
                "create_time": create_time,
                "event_type": "card.action.trigger",
                "tenant_key": "fake_tenant",
                "app_id": config.app_id,
            },
            "event": {
                "operator": {
                    "tenant_key": "fake_tenant",
                    "open_id": click.operator_open_id,
                    "union_id": format!("on_{}", click.operator_open_id),
                },
                "token": format!("c-{}", Uuid::new_v4().simple()),
                "action": action,
                "host": "im_message",
                "context": {
                    "open_message_id": click.message_id.clone().unwrap_or(message_id),
                    "open_chat_id": click.chat_id,
                },
            },
        }))
    }

    /// The decrypted form of a `url_verification` request for `challenge`.
    pub fn url_verification_payload(&self, challenge: &str) -> Value {
        json!({
            "challenge": challenge,
            "token": self.shared.config.verification_token,
            "type": "url_verification",
        })
    }

    /// Encrypts `payload` (random IV) and signs it with the current time.
    pub fn seal(&self, payload: &Value) -> SignedCallback {
        self.seal_at(payload, crate::unix_now())
    }

    /// Encrypts `payload` (random IV) and signs it with `timestamp_secs`.
    pub fn seal_at(&self, payload: &Value, timestamp_secs: i64) -> SignedCallback {
        let key = &self.shared.config.encrypt_key;
        let body =
            json!({"encrypt": encrypt(key, &payload.to_string(), *Uuid::new_v4().as_bytes())})
                .to_string()
                .into_bytes();
        let timestamp = timestamp_secs.to_string();
        let nonce = Uuid::new_v4().simple().to_string();
        let signature = signature(&timestamp, &nonce, key, &body);
        SignedCallback {
            body,
            timestamp,
            nonce,
            signature,
        }
    }

    /// POSTs `callback` to `callback_url` with its `X-Lark-*` headers, like
    /// Feishu does; returns the HTTP status and the body (JSON, or the text
    /// as a JSON string). If the request cannot be made at all the status is
    /// 0 and the body is the error text.
    pub async fn deliver(&self, callback_url: &str, callback: &SignedCallback) -> (u16, Value) {
        let request = self
            .http
            .post(callback_url)
            .headers(callback.headers())
            .body(callback.body.clone());
        exchange(request).await
    }

    /// Presses a button: [`deliver`](Self::deliver)s the
    /// [`seal`](Self::seal)ed [`card_action_event`](Self::card_action_event).
    /// Fails (without sending) if no recorded card has the button.
    pub async fn click(
        &self,
        callback_url: &str,
        click: &CardClick,
    ) -> Result<(u16, Value), String> {
        let event = self.card_action_event(click)?;
        Ok(self.deliver(callback_url, &self.seal(&event)).await)
    }

    /// Checks the callback URL like the developer console does: POSTs an
    /// encrypted `url_verification` without signature headers (Feishu does
    /// not sign it). A correct endpoint answers 200 with
    /// `{"challenge": challenge}`.
    pub async fn url_verification(&self, callback_url: &str, challenge: &str) -> (u16, Value) {
        let sealed = self.seal(&self.url_verification_payload(challenge));
        let request = self
            .http
            .post(callback_url)
            .header(axum::http::header::CONTENT_TYPE, "application/json")
            .body(sealed.body);
        exchange(request).await
    }
}

impl FakeFeishu {
    /// Another handle on the server behind `shared`, for its control
    /// endpoints: it reads the same records and clicks the same cards, and
    /// dropping it does not stop the server.
    pub(super) fn handle(shared: Arc<Shared>) -> io::Result<FakeFeishu> {
        let http = http_client()?;
        Ok(FakeFeishu {
            base_url: String::new(),
            shared,
            http,
            shutdown: None,
        })
    }
}

/// The client the fake delivers callbacks with (no proxy, 30 s timeout).
fn http_client() -> io::Result<reqwest::Client> {
    reqwest::Client::builder()
        .no_proxy()
        .timeout(Duration::from_secs(30))
        .build()
        .map_err(io::Error::other)
}

impl Drop for FakeFeishu {
    fn drop(&mut self) {
        if let Some(shutdown) = self.shutdown.take() {
            let _ = shutdown.send(());
        }
    }
}

async fn exchange(request: reqwest::RequestBuilder) -> (u16, Value) {
    let response = match request.send().await {
        Ok(response) => response,
        Err(error) => return (0, Value::String(error.to_string())),
    };
    let status = response.status().as_u16();
    match response.bytes().await {
        Ok(bytes) => {
            let body = serde_json::from_slice(&bytes)
                .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&bytes).into_owned()));
            (status, body)
        }
        Err(error) => (status, Value::String(error.to_string())),
    }
}

/// A decision button found in a recorded card.
struct PressedButton {
    /// Its callback value.
    value: Value,
    /// Whether pressing it submits a form that has an input named
    /// `reason` (so a typed reason can come with the press).
    submits_reason: bool,
}

/// The button in `card` (searched recursively) whose callback value is for
/// this request and decision.
fn find_button(card: &Value, request_id: &str, decision: &str) -> Option<PressedButton> {
    find_button_in(card, None, request_id, decision)
}

/// [`find_button`] below `value`, inside the form `form` if any.
fn find_button_in(
    value: &Value,
    form: Option<&Value>,
    request_id: &str,
    decision: &str,
) -> Option<PressedButton> {
    match value {
        Value::Object(object) => {
            let tag = object.get("tag").and_then(Value::as_str);
            let form = if tag == Some("form") {
                Some(value)
            } else {
                form
            };
            if tag == Some("button")
                && let Some(value) = callback_value(object, request_id, decision)
            {
                let submits =
                    object.get("form_action_type").and_then(Value::as_str) == Some("submit");
                return Some(PressedButton {
                    value,
                    submits_reason: submits && form.is_some_and(has_reason_input),
                });
            }
            object
                .values()
                .find_map(|child| find_button_in(child, form, request_id, decision))
        }
        Value::Array(items) => items
            .iter()
            .find_map(|child| find_button_in(child, form, request_id, decision)),
        _ => None,
    }
}

/// The button's callback value, if it is for this request and decision.
fn callback_value(
    button: &serde_json::Map<String, Value>,
    request_id: &str,
    decision: &str,
) -> Option<Value> {
    let behaviors = button.get("behaviors").and_then(Value::as_array);
    behaviors.into_iter().flatten().find_map(|behavior| {
        let value = behavior.get("value")?;
        (behavior.get("type").and_then(Value::as_str) == Some("callback")
            && value.get("request_id").and_then(Value::as_str) == Some(request_id)
            && value.get("decision").and_then(Value::as_str) == Some(decision))
        .then(|| value.clone())
    })
}

/// Whether `form` holds (at any depth) an input named `reason`.
fn has_reason_input(form: &Value) -> bool {
    match form {
        Value::Object(object) => {
            (object.get("tag").and_then(Value::as_str) == Some("input")
                && object.get("name").and_then(Value::as_str) == Some(REASON_INPUT_NAME))
                || object.values().any(has_reason_input)
        }
        Value::Array(items) => items.iter().any(has_reason_input),
        _ => false,
    }
}

fn api(status: StatusCode, code: i64, msg: &str, data: Option<Value>) -> Response {
    let mut body = json!({"code": code, "msg": msg});
    if let Some(data) = data {
        body["data"] = data;
    }
    (status, axum::Json(body)).into_response()
}

/// The message API's reply to a malformed request (code 230001).
fn invalid_request(msg: &str) -> Response {
    api(StatusCode::BAD_REQUEST, 230001, msg, None)
}

async fn token_endpoint(State(shared): State<Arc<Shared>>, body: Bytes) -> Response {
    let mut state = shared.state();
    state.token_requests += 1;
    let Ok(request) = serde_json::from_slice::<Value>(&body) else {
        return api(
            StatusCode::BAD_REQUEST,
            99992402,
            "field validation failed: body is not JSON",
            None,
        );
    };
    let app_id = request.get("app_id").and_then(Value::as_str);
    let app_secret = request.get("app_secret").and_then(Value::as_str);
    if app_id != Some(shared.config.app_id.as_str())
        || app_secret != Some(shared.config.app_secret.as_str())
    {
        return api(StatusCode::BAD_REQUEST, 10014, "app secret invalid", None);
    }
    let token = format!("t-{}", Uuid::new_v4().simple());
    state.valid_tokens.insert(token.clone());
    let body = json!({
        "code": 0,
        "msg": "ok",
        "tenant_access_token": token,
        "expire": state.token_lifetime_secs,
    });
    (StatusCode::OK, axum::Json(body)).into_response()
}

/// Counts the call and applies rate limiting and token checks.
fn gatekeep(state: &mut FakeState, headers: &HeaderMap) -> Option<Response> {
    state.message_requests += 1;
    if state.rate_limit_next > 0 {
        state.rate_limit_next -= 1;
        let mut response = api(
            StatusCode::TOO_MANY_REQUESTS,
            99991400,
            "request trigger frequency limit",
            None,
        );
        let headers = response.headers_mut();
        headers.insert("x-ogw-ratelimit-limit", HeaderValue::from_static("5"));
        if let Some(reset) = state.rate_limit_reset
            && let Ok(value) = HeaderValue::from_str(&reset.to_string())
        {
            headers.insert("x-ogw-ratelimit-reset", value);
        }
        return Some(response);
    }
    let token = headers
        .get(axum::http::header::AUTHORIZATION)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.strip_prefix("Bearer "));
    let Some(token) = token else {
        return Some(api(
            StatusCode::BAD_REQUEST,
            99991661,
            "Missing access token for authorization. Please make a request with token attached.",
            None,
        ));
    };
    if state.reject_next_tokens > 0 {
        state.reject_next_tokens -= 1;
        return Some(invalid_token());
    }
    if !state.valid_tokens.contains(token) {
        return Some(invalid_token());
    }
    None
}

fn invalid_token() -> Response {
    api(
        StatusCode::BAD_REQUEST,
        99991663,
        "Invalid access token for authorization. Please make a request with token attached.",
        None,
    )
}

/// The card in a `content` string, if it is a schema 2.0 card; else the
/// error code and message to answer with.
fn parse_card(content: Option<&Value>) -> Result<Value, (i64, &'static str)> {
    let Some(content) = content.and_then(Value::as_str) else {
        return Err((230001, "invalid request: content must be a string"));
    };
    if content.len() > 30 * 1024 {
        return Err((
            230025,
            "The length of the message content reaches its limit.",
        ));
    }
    let card: Value = serde_json::from_str(content)
        .map_err(|_| (230099, "Failed to create card content: content is not JSON"))?;
    if card.get("schema").and_then(Value::as_str) != Some("2.0") {
        return Err((
            230099,
            "Failed to create card content: the fake accepts only schema 2.0 cards",
        ));
    }
    Ok(card)
}

async fn send_endpoint(
    State(shared): State<Arc<Shared>>,
    Query(query): Query<HashMap<String, String>>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let mut state = shared.state();
    if let Some(refusal) = gatekeep(&mut state, &headers) {
        return refusal;
    }
    if query.get("receive_id_type").map(String::as_str) != Some("chat_id") {
        return invalid_request("invalid request: the fake supports only receive_id_type=chat_id");
    }
    let Ok(request) = serde_json::from_slice::<Value>(&body) else {
        return invalid_request("invalid request: body is not JSON");
    };
    let chat_id = request
        .get("receive_id")
        .and_then(Value::as_str)
        .unwrap_or("");
    let msg_type = request
        .get("msg_type")
        .and_then(Value::as_str)
        .unwrap_or("");
    if chat_id.is_empty() || msg_type != "interactive" {
        return invalid_request(
            "invalid request: receive_id is required and the fake accepts only msg_type interactive",
        );
    }
    let uuid = request
        .get("uuid")
        .and_then(Value::as_str)
        .map(str::to_owned);
    if uuid.as_ref().is_some_and(|uuid| uuid.chars().count() > 50) {
        return invalid_request("invalid request: uuid is longer than 50 characters");
    }
    let card = match parse_card(request.get("content")) {
        Ok(card) => card,
        Err((code, msg)) => return api(StatusCode::BAD_REQUEST, code, msg, None),
    };
    // Feishu sends at most one message per `uuid` within an hour: a repeat
    // gets the message already sent.
    if let Some(uuid) = &uuid
        && let Some((message_id, first)) = state.sent_by_uuid.get(uuid)
        && first.elapsed() < UUID_DEDUP_WINDOW
    {
        return message_sent(message_id, chat_id);
    }
    if state.fail_next_sends > 0 {
        state.fail_next_sends -= 1;
        return api(
            StatusCode::BAD_REQUEST,
            230002,
            "Bot/User can NOT be out of the chat.",
            None,
        );
    }
    let message_id = format!("om_{}", Uuid::new_v4().simple());
    if let Some(uuid) = &uuid {
        state.sent_by_uuid.insert(
            uuid.clone(),
            (message_id.clone(), std::time::Instant::now()),
        );
    }
    state.sent.push(SentCard {
        message_id: message_id.clone(),
        chat_id: chat_id.to_owned(),
        msg_type: msg_type.to_owned(),
        uuid,
        card,
    });
    message_sent(&message_id, chat_id)
}

/// The answer to a send: the message's id (a new one, or the one already
/// sent under the same `uuid`).
fn message_sent(message_id: &str, chat_id: &str) -> Response {
    api(
        StatusCode::OK,
        0,
        "success",
        Some(json!({
            "message_id": message_id,
            "msg_type": "interactive",
            "chat_id": chat_id,
        })),
    )
}

async fn update_endpoint(
    State(shared): State<Arc<Shared>>,
    Path(message_id): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let mut state = shared.state();
    if let Some(refusal) = gatekeep(&mut state, &headers) {
        return refusal;
    }
    if !state.sent.iter().any(|sent| sent.message_id == message_id) {
        return invalid_request("invalid request: message_id not found");
    }
    let Ok(request) = serde_json::from_slice::<Value>(&body) else {
        return invalid_request("invalid request: body is not JSON");
    };
    let card = match parse_card(request.get("content")) {
        Ok(card) => card,
        Err((code, msg)) => return api(StatusCode::BAD_REQUEST, code, msg, None),
    };
    if card.pointer("/config/update_multi") != Some(&Value::Bool(true)) {
        return api(
            StatusCode::BAD_REQUEST,
            230099,
            "Failed to update card: a shared card must keep config.update_multi true",
            None,
        );
    }
    state.updates.push((message_id, card));
    api(StatusCode::OK, 0, "ok", Some(json!({})))
}
