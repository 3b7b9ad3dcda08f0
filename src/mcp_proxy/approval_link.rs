//! Telling the person at the client where a held call is decided: while
//! the approval gate holds a `tools/call`, a URL-mode elicitation (MCP
//! 2025-11-25) shows the client's user a link to the approval
//! ([`McpProxyConfig::approval_url`](super::McpProxyConfig::approval_url)).
//!
//! The link only points: the decision comes from the approval channel
//! alone. The client's answer to the elicitation (accept, decline, cancel;
//! a client's own hooks may answer it unseen) is logged and changes
//! nothing, and the call goes on waiting for the channel.

use std::future::Future;
use std::time::Duration;

use rmcp::RoleServer;
use rmcp::model::{CustomNotification, ServerNotification};
use rmcp::service::{Peer, RequestContext};
use serde_json::json;

use super::error::McpProxyError;
use super::{Shared, input_request};

/// How often a held call looks for its approval request until it finds it.
pub(super) const LOOK_EVERY: Duration = Duration::from_millis(250);

/// The placeholder of [`McpProxyConfig::approval_url`](super::McpProxyConfig::approval_url)
/// the request's id replaces.
pub(super) const ID_PLACEHOLDER: &str = "{id}";

/// Whether `template` can point at approvals: an `http(s)` URL without
/// credentials that holds [`ID_PLACEHOLDER`].
pub(super) fn check(template: &str) -> Result<(), McpProxyError> {
    let key = format!("`{}.approval_url`", super::SECTION);
    if !template.contains(ID_PLACEHOLDER) {
        return Err(McpProxyError::Config(format!(
            "{key} must hold `{ID_PLACEHOLDER}`, where the approval request's id goes \
             (https://approvals.example/approvals/requests/{ID_PLACEHOLDER})"
        )));
    }
    let url = reqwest::Url::parse(&template.replace(ID_PLACEHOLDER, "id"))
        .map_err(|error| McpProxyError::Config(format!("{key} is not a URL ({error})")))?;
    if !matches!(url.scheme(), "http" | "https") || url.username() != "" || url.password().is_some()
    {
        return Err(McpProxyError::Config(format!(
            "{key} must be an http or https URL without a user name or password"
        )));
    }
    Ok(())
}

/// `template` with the request id `id` in it, percent-encoded.
pub(super) fn link(template: &str, id: &str) -> Option<reqwest::Url> {
    let encoded: String = id
        .bytes()
        .map(|byte| {
            if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'_' | b'.' | b'~') {
                char::from(byte).to_string()
            } else {
                format!("%{byte:02X}")
            }
        })
        .collect();
    reqwest::Url::parse(&template.replace(ID_PLACEHOLDER, &encoded)).ok()
}

/// What the client shows with the link to request `id` of a call of `tool`.
pub(super) fn message(tool: &str, id: &str) -> String {
    format!(
        "`{tool}` waits for a person's approval (request {id}). Open the link to see the \
         request and decide there; answering here decides nothing."
    )
}

/// The elicitation's id for approval request `id`.
pub(super) fn elicitation_id(id: &str) -> String {
    format!("hooks-approval-{id}")
}

/// Runs `work` (the call's pre hooks). When the proxy has an approval link
/// and the client takes URL elicitations, it looks for the call's pending
/// approval request while `work` runs; once there is one, the client is
/// sent an elicitation with its link, and when `work` ends, an
/// `elicitation/complete` notification. `tool` names the call.
pub(super) async fn pointing<T>(
    shared: &Shared,
    session: &str,
    tool: &str,
    context: &RequestContext<RoleServer>,
    work: impl Future<Output = T>,
) -> T {
    let template = shared.settings.approval_url.as_str();
    let Some(approvals) = shared.approvals.as_ref().filter(|_| !template.is_empty()) else {
        return work.await;
    };
    // Under 2026-07-28 a server sends no requests: the call is answered
    // with an input request instead (`input_request`).
    if input_request::modern(context) || !input_request::takes_url_elicitation(context) {
        return work.await;
    }
    let call_id = context.id.to_string();
    let mut work = std::pin::pin!(work);
    let mut look = tokio::time::interval_at(tokio::time::Instant::now() + LOOK_EVERY, LOOK_EVERY);
    // Dropped with this future however the wait ends, a cancelled call's
    // included: the elicitation is withdrawn and the client told.
    let mut asked: Option<Asked> = None;
    loop {
        tokio::select! {
            done = &mut work => return done,
            _ = look.tick(), if asked.is_none() => {
                match approvals.pending_for_call(session, &call_id).await {
                    Ok(Some(request)) => {
                        let Some(url) = link(template, &request.id) else {
                            tracing::warn!(request = %request.id, "the approval link could not be built");
                            look.reset_after(Duration::from_secs(3600));
                            continue;
                        };
                        let id = elicitation_id(&request.id);
                        let message = message(tool, &request.id);
                        let task = tokio::spawn(elicit(context.peer.clone(), message, url, id.clone()));
                        asked = Some(Asked { id, task, peer: context.peer.clone() });
                    }
                    Ok(None) => {}
                    Err(error) => {
                        tracing::warn!(%error, "could not look for the approval request of a held call");
                    }
                }
            }
        }
    }
}

/// An elicitation sent for a held call. Dropped when the wait ends, it
/// stops waiting for the client's answer and tells the client the
/// elicitation is complete.
struct Asked {
    id: String,
    task: tokio::task::JoinHandle<()>,
    peer: Peer<RoleServer>,
}

impl Drop for Asked {
    fn drop(&mut self) {
        self.task.abort();
        let complete = CustomNotification::new(
            "notifications/elicitation/complete",
            Some(json!({"elicitationId": self.id})),
        );
        let peer = self.peer.clone();
        // Dropped inside the runtime (a request's task): the notice goes
        // out on a task of its own.
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                let _ = peer
                    .send_notification(ServerNotification::CustomNotification(complete))
                    .await;
            });
        }
    }
}

/// Sends the elicitation and logs the answer, which decides nothing.
async fn elicit(peer: Peer<RoleServer>, message: String, url: reqwest::Url, id: String) {
    match peer.elicit_url(message, url, id.clone()).await {
        Ok(action) => tracing::info!(
            elicitation = %id,
            ?action,
            "the client answered the approval link (the answer decides nothing)"
        ),
        Err(error) => tracing::info!(elicitation = %id, %error, "the approval link was not shown"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_template_must_be_a_plain_web_url_with_the_id() {
        check("https://approvals.example/approvals/requests/{id}").expect("fine");
        check("http://127.0.0.1:8080/requests/{id}?from=mcp").expect("fine");
        for (bad, why) in [
            ("https://approvals.example/requests/", "must hold `{id}`"),
            ("javascript:alert({id})", "http or https"),
            (
                "https://user:pw@approvals.example/{id}",
                "without a user name",
            ),
            ("not a url {id}", "is not a URL"),
        ] {
            let error = check(bad).expect_err(bad).to_string();
            assert!(error.contains(why), "{bad}: {error}");
        }
    }

    #[test]
    fn the_id_is_encoded_into_the_link() {
        let url = link("https://a.example/requests/{id}", "ab/../c d").expect("a URL");
        assert_eq!(url.as_str(), "https://a.example/requests/ab%2F..%2Fc%20d");
    }
}
