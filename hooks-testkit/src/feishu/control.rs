//! The control endpoints of [`FakeFeishu`], so a test can drive a fake that
//! runs in another process: list what it received, press a button.

use std::sync::Arc;

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::Deserialize;
use serde_json::{Value, json};

use super::{CardClick, FakeFeishu, Shared};
use hooks_std::approval_gate::ApprovalDecision;

/// `GET /fake/sent`, `GET /fake/updates`, `POST /fake/click`.
pub(super) fn control_routes() -> Router<Arc<Shared>> {
    Router::new()
        .route("/fake/sent", get(sent))
        .route("/fake/updates", get(updates))
        .route("/fake/click", post(click))
}

/// A button press asked for by another process.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ClickRequest {
    callback_url: String,
    request_id: String,
    decision: String,
    operator: String,
    chat_id: String,
    event_id: Option<String>,
}

fn refused(status: StatusCode, error: impl ToString) -> Response {
    (status, Json(json!({ "error": error.to_string() }))).into_response()
}

async fn sent(State(shared): State<Arc<Shared>>) -> Response {
    let fake = match FakeFeishu::handle(shared) {
        Ok(fake) => fake,
        Err(error) => return refused(StatusCode::INTERNAL_SERVER_ERROR, error),
    };
    let cards: Vec<Value> = fake
        .sent_cards()
        .into_iter()
        .map(|card| {
            json!({
                "message_id": card.message_id,
                "chat_id": card.chat_id,
                "uuid": card.uuid,
                "card": card.card,
            })
        })
        .collect();
    Json(Value::Array(cards)).into_response()
}

async fn updates(State(shared): State<Arc<Shared>>) -> Response {
    let fake = match FakeFeishu::handle(shared) {
        Ok(fake) => fake,
        Err(error) => return refused(StatusCode::INTERNAL_SERVER_ERROR, error),
    };
    let updates: Vec<Value> = fake
        .card_updates()
        .into_iter()
        .map(|(message_id, card)| json!({ "message_id": message_id, "card": card }))
        .collect();
    Json(Value::Array(updates)).into_response()
}

async fn click(State(shared): State<Arc<Shared>>, Json(request): Json<ClickRequest>) -> Response {
    let Some(decision) = ApprovalDecision::parse(&request.decision) else {
        return refused(
            StatusCode::BAD_REQUEST,
            format!(
                "decision \"{}\" is neither approve nor reject",
                request.decision
            ),
        );
    };
    let fake = match FakeFeishu::handle(shared) {
        Ok(fake) => fake,
        Err(error) => return refused(StatusCode::INTERNAL_SERVER_ERROR, error),
    };
    let mut press = CardClick::new(
        &request.request_id,
        decision,
        &request.operator,
        &request.chat_id,
    );
    press.event_id = request.event_id;
    match fake.click(&request.callback_url, &press).await {
        Ok((status, body)) => Json(json!({ "status": status, "body": body })).into_response(),
        Err(error) => refused(StatusCode::BAD_REQUEST, error),
    }
}
