//! The inline endpoints (an application's chat UI uses them per (agent,
//! user)) and the page's own stream: a JSON list, an SSE stream, a JSON
//! decide endpoint. Shapes: docs/approvals-web.md.

use std::collections::{BTreeSet, VecDeque};
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::Json;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::http::Uri;
use axum::http::header::CACHE_CONTROL;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use futures_util::stream::{self, Stream};
use serde::Deserialize;
use serde_json::json;
use tokio::sync::broadcast::Receiver;
use tokio::sync::broadcast::error::RecvError;

use super::WebApprovals;
use super::signed::{Caller, Conversation, Operator, Refusal};
use super::throttle::StreamSlot;
use crate::approval_gate::{ApprovalDecision, ConfirmationRequest};

/// The header a JSON decide request carries its CSRF token in.
pub(crate) const CSRF_HEADER: &str = "x-csrf-token";

/// The longest JSON decide body read.
pub(crate) const MAX_DECIDE_BODY: usize = 16 * 1024;

/// `{"error": …}` with `status`.
pub(crate) fn error(status: StatusCode, message: impl Into<String>) -> Response {
    (status, Json(json!({ "error": message.into() }))).into_response()
}

/// The operator of an API request, or its refusal as JSON.
async fn api_operator(web: &WebApprovals, caller: &Caller) -> Result<Operator, Response> {
    web.operator(caller)
        .await
        .map_err(|refusal: Refusal| error(refusal.status(), refusal.message()))
}

/// The (agent, user) filter of a query: both or neither.
fn conversation(query: Option<&str>) -> Result<Option<Conversation>, &'static str> {
    let Some(query) = query.filter(|query| !query.is_empty()) else {
        return Ok(None);
    };
    serde_urlencoded::from_str::<Conversation>(query)
        .map(Some)
        .map_err(|_| "the query must give both `agent` and `user` (or neither), and nothing else")
}

/// The operator of a list or stream request and its (agent, user) filter.
async fn reader(
    web: &WebApprovals,
    caller: &Caller,
    uri: &Uri,
) -> Result<(Operator, Option<Conversation>), Response> {
    let operator = api_operator(web, caller).await?;
    let filter = conversation(uri.query()).map_err(|why| error(StatusCode::BAD_REQUEST, why))?;
    Ok((operator, filter))
}

/// `GET /api/requests[?agent=…&user=…]`: the pending requests the operator
/// may decide, and the CSRF token their decisions need.
pub(crate) async fn list(State(web): State<WebApprovals>, caller: Caller, uri: Uri) -> Response {
    let (operator, filter) = match reader(&web, &caller, &uri).await {
        Ok(reader) => reader,
        Err(refused) => return refused,
    };
    match web.pending_for(&operator, filter.as_ref()).await {
        Ok(pending) => {
            let pending = web.summaries(&pending);
            let mut response = Json(json!({
                "operator": operator.signed.operator,
                "csrf_token": operator.signed.csrf,
                "pending": pending,
            }))
            .into_response();
            no_store(&mut response);
            response
        }
        Err(failure) => {
            tracing::error!(%failure, "approvals page: could not list requests");
            error(
                StatusCode::SERVICE_UNAVAILABLE,
                "the requests could not be read (the database is unavailable); try again",
            )
        }
    }
}

/// `GET /api/requests/{id}`: one request the operator may see, in the
/// detail form (arguments cut only past 20,000 characters, with the
/// `args_digest` a decision on cut arguments sends).
pub(crate) async fn one(
    State(web): State<WebApprovals>,
    Path(id): Path<String>,
    caller: Caller,
) -> Response {
    let operator = match api_operator(&web, &caller).await {
        Ok(operator) => operator,
        Err(refused) => return refused,
    };
    let found = match web.inner.approvals.store().get(&id).await {
        Ok(found) => found,
        Err(failure) => {
            tracing::error!(%failure, "approvals page: could not read a request");
            return error(
                StatusCode::SERVICE_UNAVAILABLE,
                "the request could not be read (the database is unavailable); try again",
            );
        }
    };
    let mut visible = None;
    if let Some(found) = found
        && web.visible(&operator, &found).await
    {
        visible = Some(found);
    }
    let Some(found) = visible else {
        return error(StatusCode::NOT_FOUND, "no such request for you to see");
    };
    let mut response = Json(json!({ "request": web.detail(&found) })).into_response();
    no_store(&mut response);
    response
}

/// A JSON decide body.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct DecideBody {
    decision: String,
    #[serde(default)]
    reason: Option<String>,
    /// The `args_digest` of the request as the client showed it (required
    /// when the list cut its arguments).
    #[serde(default)]
    args_digest: Option<String>,
}

/// `POST /api/requests/{id}/decide` with `{"decision": "approve"|"reject",
/// "reason": …}` and the CSRF token in `X-CSRF-Token`.
pub(crate) async fn decide(
    State(web): State<WebApprovals>,
    Path(id): Path<String>,
    caller: Caller,
    body: Bytes,
) -> Response {
    let operator = match api_operator(&web, &caller).await {
        Ok(operator) => operator,
        Err(refused) => return refused,
    };
    let given = caller
        .headers
        .get(CSRF_HEADER)
        .and_then(|value| value.to_str().ok());
    if !WebApprovals::csrf_ok(&operator, given) {
        return error(
            StatusCode::FORBIDDEN,
            "the CSRF token is missing or wrong; send the `csrf_token` of `GET api/requests` \
             in the `X-CSRF-Token` header",
        );
    }
    let parsed: DecideBody = match serde_json::from_slice(&body) {
        Ok(parsed) => parsed,
        Err(why) => {
            return error(
                StatusCode::BAD_REQUEST,
                format!(
                    "the body must be {{\"decision\": \"approve\"|\"reject\", \"reason\": \"…\"}}: {why}"
                ),
            );
        }
    };
    let Some(decision) = ApprovalDecision::parse(&parsed.decision) else {
        return error(
            StatusCode::BAD_REQUEST,
            "`decision` must be \"approve\" or \"reject\"",
        );
    };
    let reply = web
        .decide(
            &operator,
            &id,
            decision,
            parsed.reason.as_deref(),
            parsed.args_digest.as_deref(),
        )
        .await;
    (reply.status, Json(&reply)).into_response()
}

/// `GET /api/stream[?agent=…&user=…]`: Server-Sent Events — `snapshot`
/// first (and again after falling behind), then `request` for each new
/// request and `decided` for each one leaving `pending`, only those the
/// operator may decide (and of that (agent, user), if given); a new
/// `snapshot` whenever the store's list differs from what was sent (checked
/// every [`RESYNC`]: other processes' requests and decisions); `signed_out`
/// and the end of the stream when the session expires or the directory no
/// longer maps the operator to the same user; the stream simply ends after
/// [`WebConfig::stream_lifetime`](super::WebConfig::stream_lifetime) (the
/// client reconnects). Beyond the open-stream limits: 429.
pub(crate) async fn stream(State(web): State<WebApprovals>, caller: Caller, uri: Uri) -> Response {
    let (operator, filter) = match reader(&web, &caller, &uri).await {
        Ok(reader) => reader,
        Err(refused) => return refused,
    };
    let Some(slot) = web.inner.streams.take(&operator.signed.operator) else {
        return error(
            StatusCode::TOO_MANY_REQUESTS,
            "too many event streams are open (for you, or on this page); close other tabs \
             of the approvals page and try again",
        );
    };
    // Subscribed before the snapshot is read, so nothing falls between.
    let events = web.inner.channel.subscribe();
    let ends = tokio::time::Instant::now() + web.inner.config.stream_lifetime;
    let state = Streaming {
        web,
        operator,
        _slot: slot,
        ends,
        filter,
        caller,
        events,
        snapshot_due: true,
        queued: VecDeque::new(),
        ended: false,
        shown: BTreeSet::new(),
        resync: resync_interval(),
    };
    let mut response = Sse::new(events_of(state))
        .keep_alive(KeepAlive::new().interval(Duration::from_secs(15)))
        .into_response();
    no_store(&mut response);
    response
}

/// How often a stream compares the store's pending list with what it last
/// sent: requests and decisions of other processes show within this.
const RESYNC: Duration = Duration::from_secs(2);

fn resync_interval() -> tokio::time::Interval {
    let mut interval = tokio::time::interval_at(tokio::time::Instant::now() + RESYNC, RESYNC);
    interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    interval
}

struct Streaming {
    web: WebApprovals,
    operator: Operator,
    /// This stream's place under the open-stream limits.
    _slot: StreamSlot,
    /// When the stream ends (its lifetime), so the client reconnects and
    /// is checked again.
    ends: tokio::time::Instant,
    filter: Option<Conversation>,
    caller: Caller,
    events: Receiver<Arc<ConfirmationRequest>>,
    snapshot_due: bool,
    /// Events found together (a resync's decisions and its snapshot),
    /// sent one by one before anything else.
    queued: VecDeque<Event>,
    ended: bool,
    /// The ids of the pending requests the client was last told of.
    shown: BTreeSet<String>,
    /// When to compare the store's list with `shown`.
    resync: tokio::time::Interval,
}

fn events_of(state: Streaming) -> impl Stream<Item = Result<Event, Infallible>> + Send {
    stream::unfold(state, |mut state| async move {
        if state.ended {
            return None;
        }
        loop {
            if let Some(event) = state.queued.pop_front() {
                return Some((Ok(event), state));
            }
            if state.snapshot_due {
                state.snapshot_due = false;
                let event = match state.read_pending().await {
                    Some(pending) => snapshot(&mut state, &pending),
                    None => {
                        state.ended = true;
                        json_event(
                            "unavailable",
                            &json!({ "error": "the requests could not be read; reconnect" }),
                        )
                    }
                };
                return Some((Ok(event), state));
            }
            let received = tokio::select! {
                received = state.events.recv() => Some(received),
                _ = state.resync.tick() => None,
                // Its lifetime is over: end it; the client reconnects.
                () = tokio::time::sleep_until(state.ends) => return None,
            };
            // A session that expired (or signed out), an operator the
            // directory no longer maps to the same user, or a directory
            // failure ends the stream (fail closed).
            let still = match state.web.operator(&state.caller).await {
                Ok(now) => {
                    now.approver.is_some()
                        && now.approver == state.operator.approver
                        && now.signed.operator == state.operator.signed.operator
                }
                Err(_) => false,
            };
            if !still {
                state.ended = true;
                return Some((Ok(json_event("signed_out", &json!({}))), state));
            }
            let request = match received {
                Some(Ok(request)) => request,
                Some(Err(RecvError::Lagged(_))) => {
                    state.snapshot_due = true;
                    continue;
                }
                Some(Err(RecvError::Closed)) => return None,
                // Another process (an agent's gate, a replica) may have
                // added or decided requests: resend the list if it changed.
                None => match state.read_pending().await {
                    Some(pending) if ids(&pending) != state.shown => {
                        state.announce_departures(&pending).await;
                        let event = snapshot(&mut state, &pending);
                        state.queued.push_back(event);
                        continue;
                    }
                    _ => continue,
                },
            };
            if state
                .filter
                .as_ref()
                .is_some_and(|filter| !filter.matches(&request))
                || !state.web.visible(&state.operator, &request).await
            {
                continue;
            }
            let name = if request.status.is_terminal() {
                state.shown.remove(&request.id);
                "decided"
            } else {
                state.shown.insert(request.id.clone());
                "request"
            };
            return Some((Ok(json_event(name, &state.web.summary(&request))), state));
        }
    })
}

impl Streaming {
    /// Queues a `decided` event for each request the client was shown
    /// that `pending` no longer holds and that is now final (decided by
    /// another process, or in a watched channel), if the operator may
    /// still see it.
    async fn announce_departures(&mut self, pending: &[ConfirmationRequest]) {
        let now = ids(pending);
        let gone: Vec<String> = self.shown.difference(&now).cloned().collect();
        for id in gone {
            let found = match self.web.inner.approvals.store().get(&id).await {
                Ok(found) => found,
                Err(failure) => {
                    tracing::warn!(%failure, "approvals stream: could not read a request");
                    continue;
                }
            };
            if let Some(request) = found.filter(|request| request.status.is_terminal())
                && self.web.visible(&self.operator, &request).await
            {
                let event = json_event("decided", &self.web.summary(&request));
                self.queued.push_back(event);
            }
        }
    }

    /// The pending requests this stream shows, or `None` (logged) if the
    /// store cannot be read.
    async fn read_pending(&self) -> Option<Vec<ConfirmationRequest>> {
        match self
            .web
            .pending_for(&self.operator, self.filter.as_ref())
            .await
        {
            Ok(pending) => Some(pending),
            Err(failure) => {
                tracing::warn!(%failure, "approvals stream: could not read the pending requests");
                None
            }
        }
    }
}

fn ids(pending: &[ConfirmationRequest]) -> BTreeSet<String> {
    pending.iter().map(|request| request.id.clone()).collect()
}

/// The `snapshot` event of `pending`, remembered as what the stream shows.
fn snapshot(state: &mut Streaming, pending: &[ConfirmationRequest]) -> Event {
    state.shown = ids(pending);
    let pending = state.web.summaries(pending);
    json_event("snapshot", &json!({ "pending": pending }))
}

fn json_event(name: &str, data: &impl serde::Serialize) -> Event {
    let data = serde_json::to_string(data).unwrap_or_else(|_| "{}".to_owned());
    Event::default().event(name).data(data)
}

fn no_store(response: &mut Response) {
    response.headers_mut().insert(
        CACHE_CONTROL,
        axum::http::HeaderValue::from_static("no-store"),
    );
}
