//! One `tools/call`: the agent's pre hooks, the upstream, the post hooks.

use std::future::Future;
use std::time::Duration;

use rmcp::RoleServer;
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResult, CancelledNotificationParam,
    ClientRequest, ContentBlock, ProgressNotificationParam, ServerResult,
};
use rmcp::service::{PeerRequestOptions, RequestContext};
use serde_json::Value;

use super::Shared;
use crate::{Observation, PreToolUse, ToolOutcome};

/// How often a client that asked for progress hears that its call still
/// waits (for an approval, say).
pub(super) const PROGRESS_EVERY: Duration = Duration::from_secs(1);

/// Runs one `tools/call` through the agent's hooks and the upstream.
/// Every failure — of a hook, of the upstream, a timeout, a cancellation —
/// is answered with an error result, never with the tool's output unchecked.
pub(super) async fn call_tool(
    shared: &Shared,
    session: &str,
    params: CallToolRequestParams,
    context: RequestContext<RoleServer>,
) -> CallToolResult {
    let name = params.name.to_string();
    if shared.settings.hide_tools.contains(&name) {
        return refused(format!(
            "the tool `{name}` is hidden by the proxy's config (`mcp_proxy.hide_tools`); the \
             call is blocked"
        ));
    }
    if let Some(problem) = shared.unusable_schemas.get(&name) {
        return refused(format!(
            "the upstream's inputSchema of `{name}` cannot be checked ({problem}); the call is \
             blocked"
        ));
    }
    let args = Value::Object(params.arguments.clone().unwrap_or_default());
    let ctx = shared
        .agent
        .context(name.clone(), args)
        .with_user(shared.settings.user.clone())
        .with_org(shared.settings.org.clone())
        .with_conversation(session.to_owned())
        .with_tool_call_id(context.id.to_string())
        .with_metadata("connector", shared.settings.server.clone());
    let pre = with_progress(
        shared.agent.registry().run_pre_tool_use(ctx),
        &context,
        "waiting for the hooks (an approval, perhaps)",
    );
    let pending = tokio::select! {
        pre = pre => match pre {
            PreToolUse::Blocked(report) => return refused(report.observation.to_string()),
            PreToolUse::Proceed(pending) => pending,
        },
        () = context.ct.cancelled() => {
            return refused("the client cancelled the call before it ran".to_owned());
        }
    };
    let Some(arguments) = pending.args().as_object().cloned() else {
        let reason = "a hook rewrote the arguments into something other than a JSON object, \
                      which an MCP tool cannot take; the call is blocked";
        pending
            .run_post_tool_use(ToolOutcome::Error(reason.to_owned()))
            .await;
        return refused(reason.to_owned());
    };
    let forwarded = CallToolRequestParams::new(params.name.clone()).with_arguments(arguments);
    let answer = upstream_call(shared, forwarded, &context).await;
    let (outcome, upstream) = match answer {
        Ok(result) if result.is_error == Some(true) => {
            (ToolOutcome::Error(text_of(&result)), Some(result))
        }
        Ok(result) => (ToolOutcome::Success(value_of(&result)), Some(result)),
        Err(reason) => (ToolOutcome::Error(reason), None),
    };
    let original = outcome.clone();
    let report = pending.run_post_tool_use(outcome).await;
    match (report.observation, original, upstream) {
        // Unchanged by the post hooks: the upstream's answer as it came
        // (images, structured content and all).
        (Observation::Output(output), ToolOutcome::Success(value), Some(result))
            if output == value =>
        {
            result
        }
        (Observation::Output(output), _, _) => {
            CallToolResult::success(vec![ContentBlock::text(as_text(&output))])
        }
        (Observation::ToolError(error), ToolOutcome::Error(original), Some(result))
            if error == original =>
        {
            result
        }
        (Observation::ToolError(error), _, _) => refused(error),
        (observation @ (Observation::Blocked { .. } | Observation::Withheld { .. }), _, _) => {
            refused(observation.to_string())
        }
    }
}

/// The upstream's answer, or why there is none. The client's progress
/// token (if any) is relayed: the upstream's progress reaches the client
/// under it. The client's cancellation and the timeout cancel the call
/// upstream too.
async fn upstream_call(
    shared: &Shared,
    params: CallToolRequestParams,
    context: &RequestContext<RoleServer>,
) -> Result<CallToolResult, String> {
    let server = &shared.settings.server;
    let peer = shared.upstream.peer().await?;
    let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
    let handle = peer
        .send_cancellable_request(request, PeerRequestOptions::no_options())
        .await
        .map_err(|error| {
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
            Ok(Err(error)) => Err(format!(
                "the upstream MCP server `{server}` failed the call: {error}; whether it took \
                 effect is unknown"
            )),
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
    let mut tick = tokio::time::interval(PROGRESS_EVERY);
    tick.tick().await;
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

/// An error result the model reads: why the call did not produce a result.
fn refused(reason: String) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(reason)])
}

/// The hooks' view of a result: its text content, or its structured
/// content when it has no text.
fn value_of(result: &CallToolResult) -> Value {
    let texts: Vec<&str> = result
        .content
        .iter()
        .filter_map(ContentBlock::as_text)
        .map(|text| text.text.as_str())
        .collect();
    match (&result.structured_content, texts.is_empty()) {
        (Some(structured), true) => structured.clone(),
        _ => Value::String(texts.join("\n")),
    }
}

/// An error result's message.
fn text_of(result: &CallToolResult) -> String {
    match value_of(result) {
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
