//! One hook request: authenticated, read, run through the agent's hooks,
//! answered in the client's output format.

use std::sync::Arc;

use axum::Json;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use super::answer;
use super::auth::authorized;
use super::config::ServeConfig;
use super::in_flight::{InFlight, Refused};
use super::input::{Event, HookInput, ToolCall};
use crate::{Agent, HookContext, Observation, PreToolUse, ToolOutcome};

/// What every request shares.
pub(super) struct Server {
    pub(super) agent: Agent,
    pub(super) config: ServeConfig,
    pub(super) in_flight: InFlight,
}

/// `POST /hook`: one hook input in, one hook output out.
pub(super) async fn hook(
    State(server): State<Arc<Server>>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    if let Some(token) = &server.config.token
        && !authorized(&headers, token)
    {
        return refuse(
            StatusCode::UNAUTHORIZED,
            "missing or wrong bearer token: send `Authorization: Bearer <token>` with the \
             server's token",
        );
    }
    let input = match HookInput::parse(&body) {
        Ok(input) => input,
        Err(problem) => return refuse(StatusCode::BAD_REQUEST, &problem),
    };
    let user = server.user(&headers);
    let answer = match (input.event, input.tool.as_ref()) {
        (Event::SessionStart, _) => server.session_start(&input, user).await,
        (Event::PreToolUse, Some(call)) => server.pre(&input, call, user).await,
        (Event::PostToolUse, Some(call)) => {
            let response = call.response.clone().unwrap_or(Value::Null);
            server
                .post(input.event, call, ToolOutcome::Success(response))
                .await
        }
        (Event::PostToolUseFailure, Some(call)) => {
            let error = call.error.clone().unwrap_or_default();
            server
                .post(input.event, call, ToolOutcome::Error(error))
                .await
        }
        (_, None) => return refuse(StatusCode::BAD_REQUEST, "a tool event without its tool"),
    };
    Json(answer).into_response()
}

/// A refused request: the status and a JSON body saying why. Nothing ran
/// and nothing was recorded.
fn refuse(status: StatusCode, message: &str) -> Response {
    (status, Json(json!({"error": message}))).into_response()
}

impl Server {
    /// The user a request is made by: the configured header's value when
    /// present and readable, else the configured user.
    fn user(&self, headers: &HeaderMap) -> String {
        self.config
            .user_header
            .as_deref()
            .and_then(|name| headers.get(name))
            .and_then(|value| value.to_str().ok())
            .map(str::trim)
            .filter(|user| !user.is_empty())
            .map_or_else(|| self.config.user.clone(), str::to_owned)
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
    async fn pre(&self, input: &HookInput, call: &ToolCall, user: String) -> Value {
        // A second pre event for a call in flight is refused before any hook
        // runs: it must not ask an approver twice or pair with the wrong post.
        if self.in_flight.contains(&call.id) {
            return answer::deny(&duplicate(&call.id));
        }
        let ctx = self
            .context(
                input,
                self.agent.context(call.name.clone(), call.input.clone()),
                user,
            )
            .with_tool_call_id(call.id.clone());
        let pending = match self.agent.registry().run_pre_tool_use(ctx).await {
            PreToolUse::Blocked(report) => return answer::deny(&report.observation.to_string()),
            PreToolUse::Proceed(pending) => pending,
        };
        let rewritten = pending.args() != &call.input;
        let reply = if rewritten {
            answer::allow(
                &format!(
                    "allowed by the hooks of agent `{}`, with rewritten input",
                    self.agent.id()
                ),
                Some(pending.args()),
            )
        } else if self.config.defer_allowed {
            answer::nothing()
        } else {
            answer::allow(
                &format!("allowed by the hooks of agent `{}`", self.agent.id()),
                None,
            )
        };
        match self.in_flight.hold(call.id.clone(), pending) {
            Ok(()) => reply,
            // The refused call was dropped: recorded once as abandoned.
            Err(refused) => answer::deny(&match refused {
                Refused::Duplicate => duplicate(&call.id),
                Refused::Full => format!(
                    "the hook server holds {} calls waiting for their results; try again \
                         when some have finished",
                    self.config.max_in_flight
                ),
            }),
        }
    }

    /// The post phase, on the tool's result or error, paired with its pre
    /// event by `tool_use_id`; the observers (the audit log) then see the
    /// whole call once.
    async fn post(&self, event: Event, call: &ToolCall, outcome: ToolOutcome) -> Value {
        let Some(pending) = self.in_flight.take(&call.id) else {
            // No pre event passed for this id (it was denied, never sent,
            // or the server restarted): the result is not let through
            // unchecked.
            return answer::withhold(&format!(
                "the hook server has no pre-tool-use record for tool_use_id {:?} (its pre event \
                 was denied, never sent, or came before a restart); the result is withheld",
                call.id
            ));
        };
        let original = outcome.clone();
        let report = pending.run_post_tool_use(outcome).await;
        match (&report.observation, &original) {
            (Observation::Output(output), ToolOutcome::Success(result)) if output == result => {
                answer::nothing()
            }
            (Observation::Output(output), ToolOutcome::Success(_)) => {
                answer::rewritten_output(&call.name, event.name(), output)
            }
            (Observation::Output(output), ToolOutcome::Error(_)) => json!({"hookSpecificOutput": {
                "hookEventName": event.name(),
                "additionalContext": format!("a hook replaced the tool's error with this result: {output}"),
            }}),
            (Observation::ToolError(_), _) => answer::nothing(),
            (Observation::Withheld { .. } | Observation::Blocked { .. }, _) => {
                answer::withhold(&report.observation.to_string())
            }
        }
    }
}

fn duplicate(id: &str) -> String {
    format!(
        "a call with tool_use_id {id:?} is already waiting for its result; each call's pre \
         event is answered once"
    )
}
