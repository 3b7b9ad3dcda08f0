//! The callback endpoint: an axum `Router` a user mounts in their own server.

use axum::Router;
use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use serde_json::json;

use super::approvals::Approvals;
use crate::gate::channel::{Callback, CallbackError, CallbackReply, RawCallback};

/// Callback bodies are small; anything larger is refused unread.
const MAX_BODY: usize = 64 * 1024;

impl Approvals {
    /// The channel's callback endpoint (`POST /`), to mount where the
    /// platform is configured to call, e.g.
    /// `Router::new().nest("/feishu/callback", approvals.router())`.
    ///
    /// Every request is verified by the channel (signature, timestamp window,
    /// verification token, decryption) before anything is read from it; a
    /// refused request gets a 4xx with a JSON `error` and changes nothing.
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
    axum::Json(channel.callback_reply(reply)).into_response()
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
