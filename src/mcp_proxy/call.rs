//! One `tools/call`: the agent's pre hooks, the upstream, the post hooks;
//! and the other requests that reach the upstream's data (`resources/read`,
//! `prompts/get`, `completion/complete`), run through the same hooks as
//! pseudo-tools.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResponse, CallToolResult,
    CancelledNotificationParam, ClientRequest, ContentBlock, ErrorData, ProgressNotificationParam,
    ServerResult,
};
use rmcp::service::{PeerRequestOptions, RequestContext, ServiceError};
use rmcp::{RoleClient, RoleServer};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use super::input_request::{self, FirstRound};
use super::{Shared, annotations, approval_link, http, resource_uri, tools};
use crate::output::OutputForm;
use crate::std_hooks::args_schema::output_problem;
use crate::{HookContext, Observation, PendingToolCall, PreToolUse, ToolOutcome};

/// How often a client that asked for progress hears that its call still
/// waits (for an approval, say).
pub(super) const PROGRESS_EVERY: Duration = Duration::from_secs(1);

/// Who the audit log names for a call the proxy refused before any hook.
pub(super) const REFUSER: &str = "mcp_proxy";

/// The hooks' context of one request of `session`.
fn context_of(
    shared: &Shared,
    session: &str,
    name: String,
    args: Value,
    context: &RequestContext<RoleServer>,
) -> HookContext {
    // The user and org of the token the request came with (HTTP), else the
    // configured ones: nothing else a client sends chooses them.
    let (user, org) = match http::caller(context) {
        Some(caller) => (caller.user.clone(), caller.org.clone()),
        None => (shared.settings.user.clone(), shared.settings.org.clone()),
    };
    shared
        .agent
        .context(name, args)
        .with_user(user)
        .with_org(org)
        .with_conversation(session.to_owned())
        .with_tool_call_id(context.id.to_string())
        .with_metadata("connector", shared.settings.server.clone())
}

/// A call the proxy refuses before any hook: recorded (the audit log's
/// row: blocked by [`REFUSER`], with the reason) and answered with the
/// reason.
async fn refuse(shared: &Shared, ctx: HookContext, reason: String) -> CallToolResult {
    shared
        .agent
        .registry()
        .refuse_tool_call(ctx, REFUSER, reason.clone())
        .await;
    refused(reason)
}

/// The client cancelled request `call_id` while the pre hooks ran: an
/// approval request they left pending for it is withdrawn, its card redrawn
/// as cancelled (a later click on it changes nothing).
async fn withdraw_approval(shared: &Shared, session: &str, call_id: &str) {
    let Some(approvals) = &shared.approvals else {
        return;
    };
    let withdrawn = approvals
        .withdraw_call(
            session,
            call_id,
            "the MCP client cancelled the call while it waited for approval",
        )
        .await;
    if let Err(error) = withdrawn {
        tracing::warn!(%error, "could not withdraw the approval request of a cancelled call");
    }
}

/// Why `name` may not be called now, or `None` when it may.
async fn refusal(shared: &Shared, name: &str) -> Option<String> {
    admitted(shared, name).await.err()
}

/// `name`'s tool as the upstream lists it now, or why it may not be called.
async fn admitted(shared: &Shared, name: &str) -> Result<rmcp::model::Tool, String> {
    let listed = shared.upstream.catalog().current().await;
    if let Some(reason) = tools::refusal(
        &shared.settings.server,
        &shared.settings.hide_tools,
        listed.as_deref(),
        &shared.checked,
        &shared.unusable_schemas,
        name,
    ) {
        return Err(reason);
    }
    listed
        .and_then(|listed| listed.get(name).cloned())
        .ok_or_else(|| format!("the tool `{name}` is not listed; the call is blocked"))
}

/// Runs one `tools/call` through the agent's hooks and the upstream.
/// Every failure — of a hook, of the upstream, a timeout, a cancellation —
/// is answered with an error result, never with the tool's output unchecked.
/// A call the approval gate holds may be answered with an input request
/// instead (MCP 2026-07-28, [`input_request`]); its retry comes back here
/// with the request state and takes the running hooks over.
pub(super) async fn call_tool(
    shared: &Arc<Shared>,
    session: &Arc<str>,
    params: CallToolRequestParams,
    context: RequestContext<RoleServer>,
) -> CallToolResponse {
    let name = params.name.to_string();
    let args = Value::Object(params.arguments.clone().unwrap_or_default());
    let ctx = context_of(shared, session, name.clone(), args, &context)
        .with_output_form(OutputForm::McpResult);
    let tool = match admitted(shared, &name).await {
        Ok(tool) => tool,
        Err(reason) => return refuse(shared, ctx, reason).await.into(),
    };
    // What the upstream says of its tool, for `when`: believed only when
    // the config trusts the server.
    let ctx = ctx
        .with_metadata("annotations", annotations::of(&tool))
        .with_metadata("annotations_trusted", shared.settings.trust_annotations);
    if context.ct.is_cancelled() {
        let reason = "the client cancelled the call before it ran".to_owned();
        return refuse(shared, ctx, reason).await.into();
    }
    let waiting = "waiting for the hooks (an approval, perhaps)";
    // The arguments as sent, which a request state is bound to (only a
    // call that may be held for a retry reads them again).
    let sent = || Value::Object(params.arguments.clone().unwrap_or_default());
    let pre = if let Some(state) = params.request_state.as_deref() {
        // A retry: the hooks its state names, or nothing.
        let (args, answers) = (sent(), params.input_responses.as_ref());
        let mut held =
            match input_request::claim(shared, session, &name, &args, state, answers, &context) {
                Ok(held) => held,
                Err(reason) => return refuse(shared, ctx, reason).await.into(),
            };
        let decided = tokio::select! {
            decided = with_progress(held.decided(), &context, waiting) => decided,
            () = context.ct.cancelled() => {
                withdraw_approval(shared, &held.session, &held.call_id).await;
                return refused("the client cancelled the call before it ran".to_owned()).into();
            }
        };
        match decided {
            Ok(pre) => pre,
            Err(reason) => return refused(reason).into(),
        }
    } else if input_request::applies(shared, &context) {
        let args = sent();
        let round = input_request::first_round(shared, session, &name, &args, ctx, &context);
        match with_progress(round, &context, waiting).await {
            FirstRound::Decided(Ok(pre)) => pre,
            FirstRound::Decided(Err(reason)) => return refused(reason).into(),
            FirstRound::Ask(input) => return CallToolResponse::InputRequired(input),
            FirstRound::Cancelled => {
                withdraw_approval(shared, session, &context.id.to_string()).await;
                return refused("the client cancelled the call before it ran".to_owned()).into();
            }
        }
    } else {
        let pre = with_progress(
            approval_link::pointing(
                shared,
                session,
                &name,
                &context,
                shared.agent.registry().run_pre_tool_use(ctx),
            ),
            &context,
            waiting,
        );
        tokio::select! {
            pre = pre => pre,
            () = context.ct.cancelled() => {
                withdraw_approval(shared, session, &context.id.to_string()).await;
                return refused("the client cancelled the call before it ran".to_owned()).into();
            }
        }
    };
    let pending = match pre {
        PreToolUse::Blocked(report) => return refused(report.observation.to_string()).into(),
        PreToolUse::Proceed(pending) => pending,
    };
    run_admitted(shared, session, &name, &params, pending, &context)
        .await
        .into()
}

/// The rest of a call its pre hooks let through: the upstream, then the
/// post hooks, and the result they leave.
async fn run_admitted(
    shared: &Shared,
    session: &Arc<str>,
    name: &str,
    params: &CallToolRequestParams,
    pending: PendingToolCall,
    context: &RequestContext<RoleServer>,
) -> CallToolResult {
    let Some(arguments) = pending.args().as_object().cloned() else {
        let reason = "a hook rewrote the arguments into something other than a JSON object, \
                      which an MCP tool cannot take; the call is blocked";
        pending
            .run_post_tool_use(ToolOutcome::Error(reason.to_owned()))
            .await;
        return refused(reason.to_owned());
    };
    let forwarded = CallToolRequestParams::new(params.name.clone()).with_arguments(arguments);
    let answer = upstream_call(shared, session, forwarded, context).await;
    let (outcome, upstream) = match answer {
        Ok(result) if result.is_error == Some(true) => {
            (ToolOutcome::Error(error_text(&result)), Some(result))
        }
        Ok(result) => (ToolOutcome::Success(hooks_view(&result)), Some(result)),
        Err(reason) => (ToolOutcome::Error(reason), None),
    };
    let original = outcome.clone();
    let report = pending.run_post_tool_use(outcome).await;
    let schema = output_schema(shared, name).await;
    match (report.observation, original, upstream) {
        // A text-only answer the post hooks left as it was: as it came.
        (Observation::Output(output), ToolOutcome::Success(value), Some(result))
            if output == value && plain_text(&result).is_some() && schema.is_none() =>
        {
            result
        }
        // Anything else is rebuilt from what the post hooks saw and left:
        // nothing they did not see reaches the client; and a success must
        // match the tool's output schema, which clients check.
        (Observation::Output(output), _, _) => match rebuilt(&output) {
            Ok(result) => valid(result, name, schema.as_ref()),
            Err(reason) => refused(reason),
        },
        (Observation::ToolError(error), ToolOutcome::Error(original), Some(result))
            if error == original && plain_text(&result).is_some() =>
        {
            result
        }
        (Observation::ToolError(error), _, _) => refused(error),
        (observation @ (Observation::Blocked { .. } | Observation::Withheld { .. }), _, _) => {
            refused(observation.to_string())
        }
    }
}

/// Runs a request other than `tools/call` that reads the upstream's data
/// through the agent's hooks as the pseudo-tool `name`, its arguments the
/// request's parameters as JSON (less `_meta`): `resources/read` with
/// `{uri}`, `prompts/get` with `{name, arguments}`, `completion/complete`
/// with `{ref, argument, context}`. The upstream receives the parameters
/// as the pre hooks left them; the post hooks see the result as its MCP
/// JSON and the client receives what they left (a rewrite into text goes
/// through `text_form`, when the result has one). A block, a failure, or a
/// rewrite that is not such a result is a protocol error with the reason.
pub(super) async fn call_pseudo_tool<P, R>(
    shared: &Shared,
    session: &Arc<str>,
    name: &str,
    params: P,
    context: &RequestContext<RoleServer>,
    send: impl AsyncFnOnce(rmcp::service::Peer<RoleClient>, P) -> Result<R, ServiceError>,
    text_form: impl FnOnce(&Value, String) -> Option<Value>,
) -> Result<R, ErrorData>
where
    P: Serialize + DeserializeOwned,
    R: Serialize + DeserializeOwned,
{
    let blocked = |reason: String| ErrorData::invalid_request(reason, None);
    let mut args = serde_json::to_value(&params).map_err(|error| {
        blocked(format!(
            "the request's parameters could not be read ({error}); refused"
        ))
    })?;
    if let Value::Object(fields) = &mut args {
        fields.remove("_meta");
    }
    let mut ctx = context_of(shared, session, name.to_owned(), args.clone(), context);
    if name == "resources/read" {
        // The URI in one spelling per resource: what an allow-list reads.
        let uri = args["uri"].as_str().and_then(resource_uri::normalized);
        if let Some(uri) = uri {
            ctx = ctx.with_metadata("uri", uri);
        }
    }
    let pending = tokio::select! {
        pre = shared.agent.registry().run_pre_tool_use(ctx) => match pre {
            PreToolUse::Blocked(report) => return Err(blocked(report.observation.to_string())),
            PreToolUse::Proceed(pending) => pending,
        },
        () = context.ct.cancelled() => {
            withdraw_approval(shared, session, &context.id.to_string()).await;
            return Err(blocked("the client cancelled the request before it ran".to_owned()));
        }
    };
    let final_args = pending.args().clone();
    let forwarded = match serde_json::from_value::<P>(final_args.clone()) {
        Ok(forwarded) => forwarded,
        Err(error) => {
            let reason = format!(
                "a hook rewrote the parameters of `{name}` into something that is not its \
                 parameters ({error}); the request is blocked"
            );
            pending
                .run_post_tool_use(ToolOutcome::Error(reason.clone()))
                .await;
            return Err(blocked(reason));
        }
    };
    let server = &shared.settings.server;
    // Reaching the upstream is not raced against the client's cancellation:
    // a restart dropped half-way would still count against `max_restarts`,
    // so a client cancelling its requests could use them up for everyone.
    let peer = shared.upstream.peer().await;
    let answer = match peer {
        Ok(peer) => {
            let _working = shared
                .downstream
                .working(session.clone(), context.peer.clone());
            tokio::select! {
                biased;
                () = context.ct.cancelled() => Err(("the client cancelled the request".to_owned(), None)),
                answer = tokio::time::timeout(shared.settings.call_timeout, send(peer, forwarded)) => match answer {
                    Ok(Ok(result)) => serde_json::to_value(&result)
                        .map(|value| (value, result))
                        .map_err(|error| (format!("the answer of the upstream MCP server `{server}` could not be read: {error}"), None)),
                    Ok(Err(ServiceError::McpError(error))) => Err((error.message.to_string(), Some(error))),
                    Ok(Err(error)) => {
                        let error = shared.upstream.failure(&error);
                        Err((format!("the upstream MCP server `{server}` failed the request: {error}"), None))
                    }
                    Err(_) => Err((format!("the upstream MCP server `{server}` did not answer within {}s (`mcp_proxy.call_timeout`)", shared.settings.call_timeout.as_secs_f64()), None)),
                },
            }
        }
        Err(reason) => Err((reason, None)),
    };
    let (outcome, upstream) = match answer {
        Ok((value, result)) => (ToolOutcome::Success(value), Ok(result)),
        Err((reason, error)) => (ToolOutcome::Error(reason), Err(error)),
    };
    let original = outcome.clone();
    let report = pending.run_post_tool_use(outcome).await;
    match (report.observation, original, upstream) {
        (Observation::Output(output), ToolOutcome::Success(value), Ok(result))
            if output == value =>
        {
            Ok(result)
        }
        (Observation::Output(output), _, _) => {
            let output = match output {
                Value::String(text) => text_form(&final_args, text).unwrap_or(Value::Null),
                other => other,
            };
            serde_json::from_value::<R>(output).map_err(|error| {
                blocked(format!(
                    "a post hook rewrote the result of `{name}` into something that is not one \
                     ({error}); the result is withheld"
                ))
            })
        }
        (Observation::ToolError(error), ToolOutcome::Error(original), Err(Some(upstream)))
            if error == original =>
        {
            // The hooks saw the message only: the server's `data` stays behind.
            Err(ErrorData::new(upstream.code, upstream.message, None))
        }
        (Observation::ToolError(error), _, _) => Err(ErrorData::internal_error(error, None)),
        (observation @ (Observation::Blocked { .. } | Observation::Withheld { .. }), _, _) => {
            Err(blocked(observation.to_string()))
        }
    }
}

/// Why a request the client cancelled before it reached the upstream was
/// not sent.
fn not_sent() -> String {
    "the client cancelled the request before it was sent to the upstream MCP server; it was \
     not sent"
        .to_owned()
}

/// The upstream's answer, or why there is none. The client's progress
/// token (if any) is relayed: the upstream's progress reaches the client
/// under it. The client's cancellation and the timeout cancel the call
/// upstream too.
async fn upstream_call(
    shared: &Shared,
    session: &Arc<str>,
    params: CallToolRequestParams,
    context: &RequestContext<RoleServer>,
) -> Result<CallToolResult, String> {
    let server = &shared.settings.server;
    // Not raced against cancellation (see `call_pseudo_tool`); a client that
    // cancelled meanwhile is caught just before sending.
    let peer = shared.upstream.peer().await?;
    // The upstream may have started again (and listed other tools) since
    // the call was admitted.
    if let Some(reason) = refusal(shared, &params.name).await {
        return Err(reason);
    }
    let _working = shared
        .downstream
        .working(session.clone(), context.peer.clone());
    let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
    // A client that cancelled while the upstream was reached (a restart
    // can take a while) is not sent the call it no longer wants.
    if context.ct.is_cancelled() {
        return Err(not_sent());
    }
    let handle = peer
        .send_cancellable_request(request, PeerRequestOptions::no_options())
        .await
        .map_err(|error| {
            let error = shared.upstream.failure(&error);
            format!("the upstream MCP server `{server}` could not be sent the call: {error}")
        })?;
    let _relay = context.meta.get_progress_token().map(|client| {
        shared.downstream.relay_progress(
            handle.progress_token.clone(),
            client,
            context.peer.clone(),
        )
    });
    let id = handle.id.clone();
    let timeout = shared.settings.call_timeout;
    let cancel = |reason: &str| {
        let peer = peer.clone();
        let note = CancelledNotificationParam::new(Some(id.clone()), Some(reason.to_owned()));
        async move {
            let _ = peer.notify_cancelled(note).await;
        }
    };
    tokio::select! {
        answer = tokio::time::timeout(timeout, handle.await_response()) => match answer {
            Ok(Ok(ServerResult::CallToolResult(result))) => Ok(result),
            Ok(Ok(_)) => Err(format!(
                "the upstream MCP server `{server}` answered the call with something other than \
                 a tool result (the proxy does not pass on input requests or tasks); whether it \
                 took effect is unknown"
            )),
            Ok(Err(error)) => {
                let error = shared.upstream.failure(&error);
                Err(format!(
                    "the upstream MCP server `{server}` failed the call: {error}; whether it \
                     took effect is unknown"
                ))
            }
            Err(_) => {
                cancel("timed out in hooks mcp-proxy").await;
                Err(format!(
                    "the upstream MCP server `{server}` did not answer within {}s \
                     (`mcp_proxy.call_timeout`); whether the call took effect is unknown",
                    timeout.as_secs_f64()
                ))
            }
        },
        () = context.ct.cancelled() => {
            cancel("cancelled by the client").await;
            Err("the client cancelled the call while the upstream ran it; whether it took \
                 effect is unknown".to_owned())
        }
    }
}

/// Runs `work`, telling the client every [`PROGRESS_EVERY`] that the call
/// still waits, when its request carries a progress token.
async fn with_progress<T>(
    work: impl Future<Output = T>,
    context: &RequestContext<RoleServer>,
    message: &str,
) -> T {
    let Some(token) = context.meta.get_progress_token() else {
        return work.await;
    };
    let mut work = std::pin::pin!(work);
    // The first beat one period from now: `interval`'s immediate first tick,
    // awaited, waits for the timer's next turn (about 1 ms), on every call.
    let mut tick =
        tokio::time::interval_at(tokio::time::Instant::now() + PROGRESS_EVERY, PROGRESS_EVERY);
    let mut beats = 0u32;
    loop {
        tokio::select! {
            done = &mut work => return done,
            _ = tick.tick() => {
                beats += 1;
                let mut note = ProgressNotificationParam::new(token.clone(), f64::from(beats));
                note.message = Some(message.to_owned());
                let _ = context.peer.notify_progress(note).await;
            }
        }
    }
}

/// The `outputSchema` the upstream lists for `tool`, if any.
async fn output_schema(shared: &Shared, tool: &str) -> Option<Value> {
    let listed = shared.upstream.catalog().current().await?;
    let schema = listed.get(tool)?.output_schema.as_ref()?;
    Some(Value::Object((**schema).clone()))
}

/// `result` as the client may receive it: a success of a tool with an
/// output schema must carry `structuredContent` that matches it (clients
/// refuse it otherwise, and an allowed call that did happen would reach
/// the agent as an exception). One that does not — a hook rewrote or cut
/// the result, or the upstream broke its own schema — becomes an error
/// result that says so and keeps the text. An error result carries no
/// `structuredContent` (some clients check it there too).
fn valid(mut result: CallToolResult, tool: &str, schema: Option<&Value>) -> CallToolResult {
    if result.is_error == Some(true) {
        result.structured_content = None;
        return result;
    }
    let Some(schema) = schema else {
        return result;
    };
    let problem = match &result.structured_content {
        None => "it has no structured content".to_owned(),
        Some(structured) => match output_problem(schema, structured) {
            None => return result,
            Some(problem) => format!("its structured content does not match: {problem}"),
        },
    };
    let note = format!(
        "The result of `{tool}` does not fit the tool's output schema as the hooks left it \
         ({problem}); it is sent as an error result. The text follows."
    );
    let mut content = vec![ContentBlock::text(note)];
    content.extend(result.content);
    CallToolResult::error(content)
}

/// An error result the model reads: why the call did not produce a result.
fn refused(reason: String) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(reason)])
}

/// A result's text, when it is nothing but plain text blocks (no
/// annotations, no `_meta`, no structured content): the blocks joined with
/// newlines.
fn plain_text(result: &CallToolResult) -> Option<String> {
    if result.structured_content.is_some() || result.meta.is_some() {
        return None;
    }
    let mut texts = Vec::with_capacity(result.content.len());
    for block in &result.content {
        match block {
            ContentBlock::Text(text) if text.meta.is_none() && text.annotations.is_none() => {
                texts.push(text.text.as_str());
            }
            _ => return None,
        }
    }
    Some(texts.join("\n"))
}

/// What the post hooks see of a result: its text when it is plain text
/// only; otherwise the whole result as MCP JSON, `{"content": [every
/// block], "structuredContent": …, "_meta": …}` (the last two when present).
pub(super) fn hooks_view(result: &CallToolResult) -> Value {
    if let Some(text) = plain_text(result) {
        return Value::String(text);
    }
    let mut view = Map::new();
    // Content blocks always serialize; should one not, the hooks see null
    // and the result is withheld rather than sent unseen.
    view.insert(
        "content".to_owned(),
        serde_json::to_value(&result.content).unwrap_or(Value::Null),
    );
    if let Some(structured) = &result.structured_content {
        view.insert("structuredContent".to_owned(), structured.clone());
    }
    if let Some(meta) = &result.meta {
        view.insert(
            "_meta".to_owned(),
            serde_json::to_value(meta).unwrap_or(Value::Null),
        );
    }
    Value::Object(view)
}

/// The keys of the view [`hooks_view`] gives of a result that is not
/// plain text.
const VIEW_KEYS: [&str; 3] = ["content", "structuredContent", "_meta"];

/// The result the client receives: built from the value the post hooks
/// left, and from nothing else. Text is one text block; an object with
/// `content` is read back as a result of the shape [`hooks_view`] gives
/// (anything else in it, or a block that is not an MCP block, withholds
/// the result); any other value is its JSON text.
pub(super) fn rebuilt(value: &Value) -> Result<CallToolResult, String> {
    match value {
        Value::String(text) => Ok(CallToolResult::success(vec![ContentBlock::text(
            text.clone(),
        )])),
        Value::Object(view) if view.contains_key("content") => {
            if let Some(key) = view.keys().find(|key| !VIEW_KEYS.contains(&key.as_str())) {
                return Err(format!(
                    "a post hook left the result with `{key}`, which is not part of a tool \
                     result's view (`content`, `structuredContent`, `_meta`); the result is \
                     withheld"
                ));
            }
            let mut result = view.clone();
            result.insert("isError".to_owned(), Value::Bool(false));
            serde_json::from_value(Value::Object(result)).map_err(|error| {
                format!(
                    "a post hook left a result that is not an MCP tool result ({error}); the \
                     result is withheld"
                )
            })
        }
        other => Ok(CallToolResult::success(vec![ContentBlock::text(
            other.to_string(),
        )])),
    }
}

/// An error result's message, as the post hooks see it: its text when it
/// is plain text, the JSON of its whole view otherwise.
fn error_text(result: &CallToolResult) -> String {
    match hooks_view(result) {
        Value::String(text) if text.is_empty() => "the tool failed without saying why".to_owned(),
        value => as_text(&value),
    }
}

/// A value as the text the model reads.
fn as_text(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}
