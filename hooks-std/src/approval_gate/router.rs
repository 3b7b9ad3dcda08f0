//! The callback endpoint: an axum `Router` a user mounts in their own server.

use std::time::Duration;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use serde_json::{Value, json};

use super::approvals::Approvals;
use crate::approval_gate::channel::{Callback, CallbackError, CallbackReply, RawCallback};

/// Callback bodies are small; anything larger is refused unread.
const MAX_BODY: usize = 64 * 1024;

/// How long the work after a reply (a message update, an ephemeral note) may take.
const AFTER_REPLY_DEADLINE: Duration = Duration::from_secs(60);

impl Approvals {
    /// The channel's callback endpoint (`POST /`), to mount where the
    /// platform is configured to call, e.g.
    /// `Router::new().nest("/feishu/callback", approvals.router())` (Feishu's
    /// card callback URL) or `.nest("/slack/actions", …)` (Slack's
    /// Interactivity Request URL).
    ///
    /// Every request is verified by the channel (signature, timestamp window;
    /// for Feishu also the verification token and decryption) before anything
    /// is read from it; a refused request gets a 4xx with a JSON `error` and
    /// changes nothing. A verified press is answered within the platform's
    /// 3 seconds; whatever the channel does after answering
    /// ([`Channel::after_reply`](crate::approval_gate::channel::Channel::after_reply))
    /// runs in the background.
    pub fn router(&self) -> Router {
        Router::new()
            .route("/", post(callback))
            .layer(DefaultBodyLimit::max(MAX_BODY))
            .with_state(self.clone())
    }
}

async fn callback(State(approvals): State<Approvals>, headers: HeaderMap, body: Bytes) -> Response {
    let channel = approvals.channel().clone();
    let verified = channel.verify_callback(RawCallback {
        headers: &headers,
        body: &body,
    });
    let decision = match verified {
        Ok(Callback::UrlVerification { challenge }) => {
            return axum::Json(json!({ "challenge": challenge })).into_response();
        }
        Ok(Callback::Decision(decision)) => decision,
        Err(error) => return refuse(&error),
    };
    // Answers within the platform's reply window, and only what is true.
    let outcome = approvals.handle_callback(&decision).await;
    let reply = CallbackReply {
        kind: outcome.kind,
        message: &outcome.message,
        request: outcome.request.as_ref(),
    };
    let body = channel.callback_reply(reply);
    // The platform has its answer first; then, in the background, whatever
    // the channel does after answering (Slack: update the message or post
    // an ephemeral note).
    tokio::spawn(async move {
        let reply = CallbackReply {
            kind: outcome.kind,
            message: &outcome.message,
            request: outcome.request.as_ref(),
        };
        match tokio::time::timeout(AFTER_REPLY_DEADLINE, channel.after_reply(&decision, reply))
            .await
        {
            Ok(Ok(())) => {}
            Ok(Err(error)) => {
                tracing::warn!(%error, request = %decision.request_id, "could not follow up on an approval callback");
            }
            Err(_) => {
                tracing::warn!(request = %decision.request_id, "following up on an approval callback timed out");
            }
        }
    });
    if body == Value::Null {
        StatusCode::OK.into_response()
    } else {
        axum::Json(body).into_response()
    }
}

fn refuse(error: &CallbackError) -> Response {
    let status = match error {
        CallbackError::BadSignature | CallbackError::BadToken => StatusCode::UNAUTHORIZED,
        CallbackError::StaleTimestamp => StatusCode::UNAUTHORIZED,
        CallbackError::Decrypt(_) | CallbackError::Malformed(_) => StatusCode::BAD_REQUEST,
        CallbackError::Unsupported(_) => StatusCode::UNPROCESSABLE_ENTITY,
    };
    tracing::warn!(%error, "refused an approval callback");
    (status, axum::Json(json!({ "error": error.to_string() }))).into_response()
}
