//! One hook request: authenticated, read, run through the agent's hooks,
//! answered in the client's output format.

use std::sync::Arc;

use std::time::Duration;

use axum::Json;
use std::net::{IpAddr, SocketAddr};

use axum::body::Body;
use axum::extract::State;
use axum::extract::{ConnectInfo, Request};
use axum::http::header::{CONTENT_TYPE, HOST};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use super::answer;
use super::auth::authorized;
use super::config::ServeConfig;
use super::in_flight::{InFlight, Refused};
use super::input::{self, Event, HookInput, ToolCall};
use super::slots::Slots;
use crate::output::OutputForm;
use crate::std_hooks::text::escape_hidden;
use crate::{Agent, HookContext, Observation, PreToolUse, ToolOutcome};
use futures_util::StreamExt as _;

/// What every request shares.
pub(super) struct Server {
    pub(super) agent: Agent,
    pub(super) config: ServeConfig,
    pub(super) in_flight: InFlight,
    /// Requests being answered at once (the gate holds some for minutes).
    pub(super) slots: Slots,
}

/// How long a request's body may take to arrive.
const BODY_DEADLINE: Duration = Duration::from_secs(30);

/// `POST /hook`: one hook input in, one hook output out.
///
/// Only a request that is not the client's (no token, the wrong one, not
/// JSON, or from a page a browser loaded) gets a 4xx. Everything after that
/// is answered 200, with a block when the input cannot be read: a client
/// takes a non-2xx answer as "go ahead", and the model can make an input
/// unreadable (arguments over the size cap, nested too deep for the parser).
/// A post event that cannot be checked, for whatever reason, is answered
/// with the reason in place of its result: a block alone would leave the
/// result in front of the model.
///
/// A request takes one of the answering slots only once it is admitted and
/// its body is read and understood, so a peer that sends nothing, or
/// slowly, holds none; and one session may hold at most
/// [`ServeConfig::max_concurrent_per_session`] of them. Bodies are read
/// at most twice the slots at once, and one peer address reads at most
/// half the slots at once.
pub(super) async fn hook(State(server): State<Arc<Server>>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let headers = parts.headers;
    if let Err((status, message)) = server.admit(&headers) {
        return refuse(status, message);
    }
    // The peer's address, when the server was started with it
    // ([`serve`](super::serve) is; a router mounted elsewhere may not be).
    let peer = parts
        .extensions
        .get::<ConnectInfo<SocketAddr>>()
        .map(|info| info.0.ip());
    let reading = match server.slots.read(peer, BODY_DEADLINE).await {
        Ok(reading) => reading,
        Err(reason) => return Json(answer::unreadable(&reason, None, None)).into_response(),
    };
    let body = match read_body(body, server.config.max_body).await {
        Ok(body) => body,
        Err((problem, start)) => {
            let reason = format!("{problem}; the call is blocked");
            let (event, tool) = (input::sniff_event(&start), input::sniff_tool(&start));
            return Json(answer::unreadable(&reason, event, tool.as_deref())).into_response();
        }
    };
    drop(reading);
    let input = match HookInput::parse(&body) {
        Ok(input) => input,
        Err(problem) => {
            let reason = format!("{problem}; the call is blocked");
            let (event, tool) = (input::sniff_event(&body), input::sniff_tool(&body));
            return Json(answer::unreadable(&reason, event, tool.as_deref())).into_response();
        }
    };
    let user = match server.user(&headers, peer) {
        Ok(user) => user,
        Err(problem) => return Json(refused(&input, &problem)).into_response(),
    };
    let _slot = match server.slots.take(&input) {
        Ok(slot) => slot,
        Err(problem) => return Json(refused(&input, &problem)).into_response(),
    };
    let answer = match (input.event, input.tool.as_ref()) {
        (Event::SessionStart, _) => server.session_start(&input, user).await,
        (Event::PreToolUse, Some(call)) => server.pre(&input, call, user).await,
        (Event::PostToolUse, Some(call)) => {
            let response = call.response.clone().unwrap_or(Value::Null);
            server
                .post(&input, call, ToolOutcome::Success(response))
                .await
        }
        (Event::PostToolUseFailure, Some(call)) => {
            let error = call.error.clone().unwrap_or_default();
            server.post(&input, call, ToolOutcome::Error(error)).await
        }
        (_, None) => answer::unreadable("a tool event without its tool", Some(input.event), None),
    };
    Json(answer).into_response()
}

/// The answer to an input that was read but is not answered (a user header
/// that cannot be trusted, no slot free): blocked in its event's terms,
/// a post event's result replaced in its tool's shape.
fn refused(input: &HookInput, reason: &str) -> Value {
    match (input.event, input.tool.as_ref()) {
        (Event::PostToolUse, Some(call)) => answer::withhold(
            &call.name,
            input.event.name(),
            reason,
            call.response.as_ref(),
        ),
        (event, call) => {
            answer::unreadable(reason, Some(event), call.map(|call| call.name.as_str()))
        }
    }
}

/// The request's body, up to `max` bytes, within [`BODY_DEADLINE`]; or why
/// not, with its first bytes (for [`input::sniff_event`]).
async fn read_body(body: Body, max: usize) -> Result<Vec<u8>, (String, Vec<u8>)> {
    let mut stream = body.into_data_stream();
    let mut read = Vec::new();
    let reading = async {
        while let Some(chunk) = stream.next().await {
            let chunk =
                chunk.map_err(|error| format!("the hook input could not be read: {error}"))?;
            if read.len() + chunk.len() > max {
                let room = input::SNIFFED.saturating_sub(read.len()).min(chunk.len());
                read.extend_from_slice(&chunk[..room]);
                return Err(format!(
                    "the hook input is over the server's {max}-byte limit (the tool's input or \
                     output is too large to check)"
                ));
            }
            read.extend_from_slice(&chunk);
        }
        Ok(())
    };
    let outcome = tokio::time::timeout(BODY_DEADLINE, reading).await;
    match outcome {
        Ok(Ok(())) => Ok(read),
        Ok(Err(problem)) => Err((problem, read)),
        Err(_) => Err(("the hook input did not arrive in time".to_owned(), read)),
    }
}

/// A refused request: the status and a JSON body saying why. Nothing ran
/// and nothing was recorded.
fn refuse(status: StatusCode, message: &str) -> Response {
    (status, Json(json!({"error": message}))).into_response()
}

impl Server {
    /// Whether the request is the client's: the token when one is set;
    /// JSON (a page in a browser cannot post JSON to another origin without
    /// asking first, and nothing here answers that); and, without a token,
    /// addressed to a loopback name (a page whose domain was rebound to
    /// 127.0.0.1 sends its own host name).
    fn admit(&self, headers: &HeaderMap) -> Result<(), (StatusCode, &'static str)> {
        match &self.config.token {
            Some(token) if !authorized(headers, token) => {
                return Err((
                    StatusCode::UNAUTHORIZED,
                    "missing or wrong bearer token: send `Authorization: Bearer <token>` with \
                     the server's token",
                ));
            }
            Some(_) => {}
            None if !loopback_host(headers) => {
                return Err((
                    StatusCode::FORBIDDEN,
                    "without a token this server answers requests addressed to 127.0.0.1, \
                     localhost or [::1] only",
                ));
            }
            None => {}
        }
        let json = headers
            .get(CONTENT_TYPE)
            .and_then(|value| value.to_str().ok())
            .and_then(|value| value.split(';').next())
            .is_some_and(|kind| kind.trim().eq_ignore_ascii_case("application/json"));
        if !json {
            return Err((
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "send the hook input as `Content-Type: application/json`",
            ));
        }
        Ok(())
    }

    /// The user a request is made by: the configured header's value when
    /// present, else the configured user. The header is believed only from
    /// a peer listed in [`ServeConfig::user_header_from`] (the token alone
    /// does not do: the agent's own commands can read it), and must appear
    /// once: a proxy that appends its own value to the client's would
    /// otherwise let the client choose.
    fn user(&self, headers: &HeaderMap, peer: Option<IpAddr>) -> Result<String, String> {
        let Some(name) = self.config.user_header.as_deref() else {
            return Ok(self.config.user.clone());
        };
        // A dual-stack listener sees an IPv4 proxy as `::ffff:a.b.c.d`:
        // compare the canonical forms, on both sides.
        let trusted = peer.is_some_and(|peer| {
            self.config
                .user_header_from
                .iter()
                .any(|proxy| proxy.to_canonical() == peer.to_canonical())
        });
        if !trusted && headers.contains_key(name) {
            let from = peer.map_or_else(|| "an unknown address".to_owned(), |ip| ip.to_string());
            return Err(format!(
                "the `{name}` header came from {from}, which is not a proxy trusted to name \
                 the user (`--user-header-from`); the call is blocked"
            ));
        }
        let mut values = headers.get_all(name).iter();
        let (Some(value), None) = (values.next(), values.next()) else {
            return match headers.get_all(name).iter().count() {
                0 => Ok(self.config.user.clone()),
                _ => Err(format!(
                    "the `{name}` header appears more than once; the call is blocked"
                )),
            };
        };
        match value.to_str().map(str::trim) {
            Ok("") => Ok(self.config.user.clone()),
            Ok(user) => Ok(user.to_owned()),
            Err(_) => Err(format!(
                "the `{name}` header is not readable text; the call is blocked"
            )),
        }
    }

    /// The call's context: the agent's, with the request's identity.
    fn context(&self, input: &HookInput, ctx: HookContext, user: String) -> HookContext {
        let mut ctx = ctx
            .with_user(user)
            .with_org(self.config.org.clone())
            .with_conversation(input.session_id.clone());
        for (key, value) in &input.metadata {
            ctx = ctx.with_metadata(*key, value.clone());
        }
        ctx
    }

    async fn session_start(&self, input: &HookInput, user: String) -> Value {
        let ctx = self.context(input, HookContext::session(), user);
        match self.agent.start_session(ctx).await {
            Ok(session) => answer::session_context(&session.context),
            Err(stopped) => answer::stop(&stopped.to_string()),
        }
    }

    /// The pre phase: the gate may hold this request until a person decides.
    ///
    /// A call the hooks let through unchanged is answered with nothing, so
    /// the client's own permission rules still apply, unless a person
    /// approved it (then `allow`, or the client would ask again) or the
    /// server is set to [`answer_allow`](ServeConfig::answer_allow). A
    /// rewritten input is always `allow` with `updatedInput`: the client
    /// must run what the hooks checked.
    async fn pre(&self, input: &HookInput, call: &ToolCall, user: String) -> Value {
        let key = (input.session_id.clone(), call.id.clone());
        // A second pre event for a call in flight is refused before any hook
        // runs: it must not ask an approver twice or pair with the wrong post.
        if self.in_flight.contains(&key) {
            return answer::deny(&duplicate(&call.id));
        }
        let mut ctx = self
            .context(
                input,
                self.agent.context(call.name.clone(), call.input.clone()),
                user,
            )
            .with_tool_call_id(call.id.clone())
            .with_output_form(OutputForm::claude_code(&call.name));
        // `mcp__github__create_issue` is the `github` server's
        // `create_issue`, as `hooks mcp-proxy` names it.
        if let Some((server, tool)) = input::mcp_tool(&call.name) {
            ctx = ctx
                .with_metadata("connector", server)
                .with_metadata("action", tool);
        }
        let pending = match self.agent.registry().run_pre_tool_use(ctx).await {
            PreToolUse::Blocked(report) => return answer::deny(&report.observation.to_string()),
            PreToolUse::Proceed(pending) => pending,
        };
        let rewritten = pending.args() != &call.input;
        let approved = pending
            .trace()
            .side_effects()
            .any(|effect| effect.starts_with(APPROVED));
        let reply = if rewritten {
            answer::allow(
                &format!(
                    "allowed by the hooks of agent `{}`, with rewritten input",
                    self.agent.id()
                ),
                Some(pending.args()),
            )
        } else if approved {
            answer::allow(
                &format!("approved through the hooks of agent `{}`", self.agent.id()),
                None,
            )
        } else if self.config.answer_allow {
            answer::allow(
                &format!("allowed by the hooks of agent `{}`", self.agent.id()),
                None,
            )
        } else {
            answer::nothing()
        };
        match self.in_flight.hold(key, pending) {
            Ok(()) => reply,
            // The refused call was dropped: recorded once as abandoned.
            Err(refused) => answer::deny(&match refused {
                Refused::Duplicate => duplicate(&call.id),
                Refused::Full => format!(
                    "the hook server holds {} calls waiting for their results; try again \
                     when some have finished",
                    self.config.max_in_flight
                ),
                Refused::SessionFull => format!(
                    "this session has {} calls waiting for their results, as many as one \
                     session may; try again when some have finished",
                    self.config.max_in_flight_per_session
                ),
            }),
        }
    }

    /// The post phase, on the tool's result or error, paired with its pre
    /// event by session and `tool_use_id`; the observers (the audit log)
    /// then see the whole call once.
    async fn post(&self, input: &HookInput, call: &ToolCall, outcome: ToolOutcome) -> Value {
        let event = input.event;
        let key = (input.session_id.clone(), call.id.clone());
        let Some(pending) = self.in_flight.take(&key) else {
            // No pre event passed for this call (it was denied, never sent,
            // came from another session, or came before a restart): the
            // result is not let through unchecked.
            return answer::withhold(
                &call.name,
                event.name(),
                &format!(
                    "the hook server has no pre-tool-use record for tool_use_id {:?} in this \
                     session (its pre event was denied, never sent, or came before a \
                     restart); the result is withheld",
                    call.id
                ),
                call.response.as_ref(),
            );
        };
        // The tool must have run with what the hooks checked: another hook
        // of the client's may have rewritten the input after this one. Then
        // the result is withheld, and the audit row says why.
        let mismatch = &call.input != pending.args();
        let outcome = if mismatch {
            ToolOutcome::Error(format!(
                "the tool ran with input other than the input the hooks allowed ({} instead \
                 of {}); its result is withheld",
                escape_hidden(&call.input.to_string()).text,
                escape_hidden(&pending.args().to_string()).text,
            ))
        } else {
            outcome
        };
        let original = outcome.clone();
        let report = pending.run_post_tool_use(outcome).await;
        if mismatch {
            let ToolOutcome::Error(reason) = original else {
                unreachable!("a mismatch is recorded as the tool's error")
            };
            return answer::withhold(&call.name, event.name(), &reason, call.response.as_ref());
        }
        match (&report.observation, &original) {
            (Observation::Output(output), ToolOutcome::Success(result)) if output == result => {
                answer::nothing()
            }
            (Observation::Output(output), ToolOutcome::Success(response)) => {
                answer::rewrite(&call.name, event.name(), response, output)
            }
            (Observation::Output(output), ToolOutcome::Error(_)) => {
                json!({"hookSpecificOutput": {
                    "hookEventName": event.name(),
                    "additionalContext": format!("a hook replaced the tool's error with this result: {output}"),
                }})
            }
            (Observation::ToolError(_), _) => answer::nothing(),
            (Observation::Withheld { .. } | Observation::Blocked { .. }, _) => answer::withhold(
                &call.name,
                event.name(),
                &report.observation.to_string(),
                call.response.as_ref(),
            ),
        }
    }
}

/// The start of the side effect the approval gate records when a person
/// approved the call.
const APPROVED: &str = "approved by ";

/// Whether the request names a loopback host (`Host: 127.0.0.1:8377`).
fn loopback_host(headers: &HeaderMap) -> bool {
    let Some(host) = headers.get(HOST).and_then(|value| value.to_str().ok()) else {
        return false;
    };
    let name = match host.strip_prefix('[') {
        Some(rest) => rest.split(']').next().unwrap_or_default(),
        None => host.rsplit_once(':').map_or(host, |(name, _)| name),
    };
    name.eq_ignore_ascii_case("localhost")
        || name
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

fn duplicate(id: &str) -> String {
    format!(
        "a call with tool_use_id {id:?} is already waiting for its result; each call's pre \
         event is answered once"
    )
}
