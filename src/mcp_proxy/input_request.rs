//! Telling the person at the client where a held call is decided, under
//! MCP 2026-07-28, where a server sends no requests of its own.
//!
//! The call the approval gate holds is answered with an input request (a
//! multi-round-trip request): a URL-mode elicitation with the approval's
//! link ([`McpProxyConfig::approval_url`](super::McpProxyConfig::approval_url)),
//! and a sealed `requestState` ([`request_state`](super::request_state)).
//! The client shows the link, answers, and calls the tool again with the
//! state; that retry then waits for the approval and runs the call.
//!
//! Meanwhile the call's pre hooks go on running: the approval gate keeps
//! waiting for the same request, and the hooks before it (a rate limit,
//! say) are not run twice. The retry takes them over. The state names
//! them, is bound to the caller and to the call (tool and arguments: a
//! retry with other arguments is refused, so an approval given for one
//! call cannot run another), can be used once, and expires after
//! [`STATE_LIFETIME`]; a call nobody comes back for is withdrawn then.
//!
//! As under 2025-11-25, the link only points: the client's answer to the
//! elicitation is logged and decides nothing.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use rmcp::RoleServer;
use rmcp::model::{
    ElicitRequest, ElicitRequestParams, InputRequest, InputRequests, InputRequiredResult,
    InputResponses, ProtocolVersion,
};
use rmcp::service::RequestContext;
use serde_json::Value;
use sha2::{Digest, Sha256};
use tokio::task::JoinHandle;

use super::request_state::{HeldId, Sealer, Unopened};
use super::{Shared, approval_link, http};
use crate::{HookContext, PreToolUse};

/// How long a client has to come back with the state: time enough to read
/// the link and answer. Once it has, the retry waits as long as the
/// approval takes.
pub(super) const STATE_LIFETIME: Duration = Duration::from_secs(600);

/// The input request's key in `inputRequests`.
const INPUT_KEY: &str = "approval";

/// The most calls held for one caller's retries, and for all callers: past
/// either, a held call waits inside its request, without a link, as it
/// does for a client that takes no URL elicitations.
const HELD_PER_CALLER: usize = 32;
const HELD_IN_ALL: usize = 1024;

/// The pre hooks of a call the gate holds, running while the client
/// shows the link. Dropped, they stop.
pub(super) struct Held {
    admission: JoinHandle<PreToolUse>,
    /// The conversation and JSON-RPC id the gate knows the call by.
    pub(super) session: Arc<str>,
    pub(super) call_id: String,
    /// Who may take it back (for the caps).
    caller: String,
    /// The task that forgets it at expiry, once it is held.
    expiry: Option<tokio::task::AbortHandle>,
}

impl Held {
    /// What the call's pre hooks decided, once they have; a panic in them
    /// is a block.
    pub(super) async fn decided(&mut self) -> Result<PreToolUse, String> {
        (&mut self.admission).await.map_err(|error| {
            tracing::warn!(call = %self.call_id, %error, "the pre hooks of a held call failed");
            "the call's pre hooks failed; the call is blocked (why is in the proxy's log)"
                .to_owned()
        })
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        self.admission.abort();
        if let Some(expiry) = self.expiry.take() {
            expiry.abort();
        }
    }
}

/// The calls held for a client's retry, and the key their states are
/// sealed with.
pub(super) struct HeldCalls {
    sealer: Option<Sealer>,
    calls: Mutex<HashMap<HeldId, Held>>,
}

impl Default for HeldCalls {
    fn default() -> Self {
        HeldCalls {
            sealer: Sealer::new(),
            calls: Mutex::new(HashMap::new()),
        }
    }
}

impl HeldCalls {
    fn calls(&self) -> std::sync::MutexGuard<'_, HashMap<HeldId, Held>> {
        self.calls.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Withdraws the approval requests of the calls held for `session`'s
/// retries: its client is gone (a stdio connection closed), and a state is
/// bound to the connection, so none can come back.
pub(super) async fn release_session(shared: &Shared, session: &str) {
    let released: Vec<Held> = {
        let mut calls = shared.held.calls();
        let ids: Vec<HeldId> = calls
            .iter()
            .filter(|(_, held)| &*held.session == session)
            .map(|(id, _)| *id)
            .collect();
        ids.iter().filter_map(|id| calls.remove(id)).collect()
    };
    for held in released {
        let (session, call_id) = (held.session.clone(), held.call_id.clone());
        drop(held);
        withdraw(
            shared,
            &session,
            &call_id,
            "the MCP client disconnected before it came back for the call",
        )
        .await;
    }
}

/// Withdraws the approval request of call `call_id` of `session`.
async fn withdraw(shared: &Shared, session: &str, call_id: &str, reason: &str) {
    let Some(approvals) = &shared.approvals else {
        return;
    };
    if let Err(error) = approvals.withdraw_call(session, call_id, reason).await {
        tracing::warn!(%error, "could not withdraw the approval request of a held call");
    }
}

/// Whether the client of `context` declared URL-mode elicitation (in its
/// `initialize`, or under 2026-07-28 in the request's own `_meta`).
pub(super) fn takes_url_elicitation(context: &RequestContext<RoleServer>) -> bool {
    context
        .client_capabilities()
        .and_then(|capabilities| capabilities.elicitation)
        .is_some_and(|elicitation| elicitation.url.is_some())
}

/// Whether the request of `context` speaks MCP 2026-07-28 or later.
pub(super) fn modern(context: &RequestContext<RoleServer>) -> bool {
    context
        .protocol_version()
        .is_some_and(|version| version.as_str() >= ProtocolVersion::V_2026_07_28.as_str())
}

/// Whether a held call of `context` is answered with an input request:
/// 2026-07-28, a client that takes URL elicitations, an approval link
/// configured, and approvals to look in.
pub(super) fn applies(shared: &Shared, context: &RequestContext<RoleServer>) -> bool {
    !shared.settings.approval_url.is_empty()
        && shared.approvals.is_some()
        && shared.held.sealer.is_some()
        && modern(context)
        && takes_url_elicitation(context)
}

/// Who may carry a state back: the token over HTTP (its digest: another
/// token of the same user and org is another client), the connection over
/// stdio.
fn caller_of(session: &str, context: &RequestContext<RoleServer>) -> String {
    match http::token_of(context) {
        Some(digest) => format!("token {digest}"),
        None if http::over_http(context) => "http without tokens".to_owned(),
        None => format!("stdio {session}"),
    }
}

/// What a state is bound to: its caller, and the call, as a digest.
fn binding(caller: &str, name: &str, args: &Value) -> Vec<u8> {
    let mut digest = Sha256::new();
    for part in [caller.as_bytes(), name.as_bytes()] {
        digest.update((part.len() as u64).to_be_bytes());
        digest.update(part);
    }
    let mut canonical = Vec::new();
    write_canonical(args, &mut canonical);
    digest.update(&canonical);
    digest.finalize().to_vec()
}

/// `value` as JSON with every object's keys sorted: the same bytes for
/// the same arguments, whatever order a client sends their keys in.
fn write_canonical(value: &Value, out: &mut Vec<u8>) {
    match value {
        Value::Object(fields) => {
            let mut keys: Vec<&String> = fields.keys().collect();
            keys.sort();
            out.push(b'{');
            for (n, key) in keys.into_iter().enumerate() {
                if n > 0 {
                    out.push(b',');
                }
                write_canonical(&Value::String(key.clone()), out);
                out.push(b':');
                write_canonical(&fields[key], out);
            }
            out.push(b'}');
        }
        Value::Array(items) => {
            out.push(b'[');
            for (n, item) in items.iter().enumerate() {
                if n > 0 {
                    out.push(b',');
                }
                write_canonical(item, out);
            }
            out.push(b']');
        }
        other => out.extend_from_slice(other.to_string().as_bytes()),
    }
}

/// How the first round of a call ended.
#[allow(
    clippy::large_enum_variant,
    reason = "one per call, moved once: `Decided` holds the pending call as `PreToolUse` does"
)]
pub(super) enum FirstRound {
    /// The pre hooks decided before any approval was asked for.
    Decided(Result<PreToolUse, String>),
    /// An approval was asked for: the client is to show its link and
    /// come back.
    Ask(InputRequiredResult),
    /// The client cancelled the call.
    Cancelled,
}

/// Runs `ctx`'s pre hooks on a task of their own, looking for the call's
/// approval request meanwhile. When there is one, the running hooks are
/// held for the client's retry and the input request is returned.
pub(super) async fn first_round(
    shared: &Arc<Shared>,
    session: &Arc<str>,
    name: &str,
    args: &Value,
    ctx: HookContext,
    context: &RequestContext<RoleServer>,
) -> FirstRound {
    let registry = shared.agent.registry().clone();
    let mut held = Held {
        admission: tokio::spawn(async move { registry.run_pre_tool_use(ctx).await }),
        session: session.clone(),
        call_id: context.id.to_string(),
        caller: caller_of(session, context),
        expiry: None,
    };
    let Some(approvals) = shared.approvals.as_ref() else {
        return FirstRound::Decided(held.decided().await);
    };
    let every = approval_link::LOOK_EVERY;
    let mut look = tokio::time::interval_at(tokio::time::Instant::now() + every, every);
    // Until the request is found, or it cannot be held for a retry (the
    // call then waits here, as under 2025-11-25 without a link).
    let mut looking = true;
    loop {
        tokio::select! {
            decided = held.decided() => return FirstRound::Decided(decided),
            () = context.ct.cancelled() => return FirstRound::Cancelled,
            _ = look.tick(), if looking => {
                let request = match approvals.pending_for_call(session, &held.call_id).await {
                    Ok(Some(request)) => request,
                    Ok(None) => continue,
                    Err(error) => {
                        tracing::warn!(%error, "could not look for the approval request of a held call");
                        continue;
                    }
                };
                looking = false;
                let Some(url) = approval_link::link(&shared.settings.approval_url, &request.id) else {
                    tracing::warn!(request = %request.id, "the approval link could not be built");
                    continue;
                };
                let binding = binding(&held.caller, name, args);
                let (id, state) = match hold(shared, held, &binding) {
                    Ok(held) => held,
                    Err(back) => {
                        held = back;
                        continue;
                    }
                };
                if context.ct.is_cancelled() {
                    // Cancelled while it was being held: the caller
                    // withdraws the request.
                    drop(shared.held.calls().remove(&id));
                    return FirstRound::Cancelled;
                }
                let elicitation = ElicitRequest::new(ElicitRequestParams::UrlElicitationParams {
                    meta: None,
                    message: approval_link::message(name, &request.id),
                    url: url.to_string(),
                    elicitation_id: approval_link::elicitation_id(&request.id),
                });
                let requests = InputRequests::from([(
                    INPUT_KEY.to_owned(),
                    InputRequest::Elicitation(elicitation),
                )]);
                return FirstRound::Ask(InputRequiredResult::new(Some(requests), Some(state)));
            }
        }
    }
}

/// Keeps `held` for the client's retry: its id and the state that names
/// it; or `held` back, to wait in its request, when it cannot be kept (the
/// caps are reached, or no state can be sealed). A call not taken back
/// within [`STATE_LIFETIME`] is dropped and its approval request withdrawn.
fn hold(shared: &Arc<Shared>, mut held: Held, binding: &[u8]) -> Result<(HeldId, String), Held> {
    let Some(sealer) = shared.held.sealer.as_ref() else {
        return Err(held);
    };
    let Some((id, state)) = sealer
        .fresh_id()
        .and_then(|id| Some((id, sealer.seal(&id, STATE_LIFETIME, binding)?)))
    else {
        tracing::warn!("could not seal a request state; the held call waits in its request");
        return Err(held);
    };
    let mut calls = shared.held.calls();
    let of_caller = calls
        .values()
        .filter(|other| other.caller == held.caller)
        .count();
    if calls.len() >= HELD_IN_ALL || of_caller >= HELD_PER_CALLER {
        tracing::info!(
            caller = %held.caller,
            "too many calls held for retries; this one waits in its request"
        );
        return Err(held);
    }
    let expiring = shared.clone();
    held.expiry = Some(
        tokio::spawn(async move {
            tokio::time::sleep(STATE_LIFETIME).await;
            let forgotten = expiring.held.calls().remove(&id);
            if let Some(mut held) = forgotten {
                // This very task: not to be aborted by the drop.
                held.expiry = None;
                let (session, call_id) = (held.session.clone(), held.call_id.clone());
                drop(held);
                let reason =
                    "the MCP client did not come back for the call it was shown the approval for";
                withdraw(&expiring, &session, &call_id, reason).await;
            }
        })
        .abort_handle(),
    );
    calls.insert(id, held);
    Ok((id, state))
}

/// The held call `state` names, taken out for this retry, or why not: the
/// state must have been sealed by this proxy for this caller and this very
/// call, not be expired, and not have been used.
pub(super) fn claim(
    shared: &Shared,
    session: &str,
    name: &str,
    args: &Value,
    state: &str,
    answers: Option<&InputResponses>,
    context: &RequestContext<RoleServer>,
) -> Result<Held, String> {
    let refused = |why: &str| {
        format!(
            "the `requestState` of this call {why}; nothing ran. Call the tool again without it"
        )
    };
    let sealer = shared
        .held
        .sealer
        .as_ref()
        .ok_or_else(|| refused("is not one this proxy gave"))?;
    let id = sealer
        .open(state, &binding(&caller_of(session, context), name, args))
        .map_err(|why| match why {
            Unopened::Expired => refused(&format!(
                "expired (a state is good for {} s)",
                STATE_LIFETIME.as_secs()
            )),
            Unopened::Foreign => refused(
                "is not one this proxy gave to this client for this tool with these arguments",
            ),
        })?;
    let held = shared
        .held
        .calls()
        .remove(&id)
        .ok_or_else(|| refused("was used already, or its call was withdrawn"))?;
    let answer = answers
        .and_then(|answers| answers.get(INPUT_KEY))
        .and_then(|answer| answer.get("action"))
        .and_then(Value::as_str)
        .unwrap_or("none");
    tracing::info!(
        call = %held.call_id,
        answer,
        "the client came back for a held call (its answer to the link decides nothing)"
    );
    Ok(held)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn arguments_are_digested_whatever_their_keys_order() {
        let mut a = Vec::new();
        let mut b = Vec::new();
        write_canonical(&json!({"b": [1, {"y": "é", "x": null}], "a": true}), &mut a);
        write_canonical(
            &serde_json::from_str(r#"{"a":true,"b":[1,{"x":null,"y":"é"}]}"#).expect("json"),
            &mut b,
        );
        assert_eq!(a, b);
        assert_eq!(
            String::from_utf8(a).expect("utf-8"),
            r#"{"a":true,"b":[1,{"x":null,"y":"é"}]}"#
        );
        let mut c = Vec::new();
        write_canonical(&json!({"a": true, "b": [1, {"x": null, "y": "e"}]}), &mut c);
        assert_ne!(b, c);
    }
}
