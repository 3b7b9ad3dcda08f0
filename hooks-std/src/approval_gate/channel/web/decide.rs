//! Deciding a request from the page or the inline endpoint: the same path
//! as a Feishu or Slack press ([`Approvals::handle_callback`]).
//!
//! [`Approvals::handle_callback`]: crate::approval_gate::Approvals::handle_callback

use axum::http::StatusCode;
use serde::Serialize;

use super::WebApprovals;
use super::session::random_bytes;
use super::signed::Operator;
use super::view::RequestView;
use crate::approval_gate::ApprovalDecision;
use crate::approval_gate::channel::{Channel, DecisionCallback, ToastKind, decision_reason};

/// What became of a decision, as the JSON decide endpoint answers it.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct DecideReply {
    /// `decided`, `already_final`, `expired`, `refused`, `saving` or `unavailable`.
    pub(crate) outcome: &'static str,
    /// What to tell the operator.
    pub(crate) message: String,
    /// The request as it now stands, when the operator may see it.
    pub(crate) request: Option<RequestView>,
    #[serde(skip)]
    pub(crate) status: StatusCode,
}

impl DecideReply {
    fn refused(status: StatusCode, message: &str) -> Self {
        DecideReply {
            outcome: "refused",
            message: message.to_owned(),
            request: None,
            status,
        }
    }
}

impl WebApprovals {
    /// Decides request `id` as `operator`. A request the operator may not
    /// see is answered as unknown (404), so its existence does not leak; one
    /// of a watched channel (shown read-only) is refused (403). `seen` is
    /// the `args_digest` the operator was shown: required when the list
    /// cuts the request's arguments (they are decided only where all are
    /// shown), and it must be the request's whenever given.
    pub(crate) async fn decide(
        &self,
        operator: &Operator,
        id: &str,
        decision: ApprovalDecision,
        reason: Option<&str>,
        seen: Option<&str>,
    ) -> DecideReply {
        const UNKNOWN: &str = "no such request for you to decide; nothing changed";
        let inner = &self.inner;
        if operator.approver.is_none() {
            return DecideReply::refused(
                StatusCode::FORBIDDEN,
                "you are not a known approver; nothing changed",
            );
        }
        let request = match inner.approvals.store().get(id).await {
            Ok(request) => request,
            Err(error) => {
                tracing::error!(%error, request = %id, "approvals page: could not read a request");
                return DecideReply {
                    outcome: "unavailable",
                    message: "the request could not be read (the database is unavailable); \
                              nothing changed, try again"
                        .to_owned(),
                    request: None,
                    status: StatusCode::SERVICE_UNAVAILABLE,
                };
            }
        };
        let Some(request) = request else {
            return DecideReply::refused(StatusCode::NOT_FOUND, UNKNOWN);
        };
        if !self.visible(operator, &request).await {
            return DecideReply::refused(StatusCode::NOT_FOUND, UNKNOWN);
        }
        if !self.decides_here(&request) {
            // Its approver scope is another channel's identities.
            let mut refused = DecideReply::refused(
                StatusCode::FORBIDDEN,
                &format!(
                    "this request was sent to the {} channel and is decided there only; \
                     nothing changed",
                    request.channel_kind
                ),
            );
            refused.request = Some(self.summary(&request));
            return refused;
        }
        if RequestView::detail_cuts_args(&request) {
            // Longer than any view of the page shows: an approval would
            // cover what nobody here saw. Rejecting runs nothing.
            if decision == ApprovalDecision::Approve {
                let mut refused = DecideReply::refused(
                    StatusCode::CONFLICT,
                    "this request's arguments are too long for this page to show in full, \
                     so it cannot be approved here; reject it, or let it expire; nothing \
                     changed",
                );
                refused.request = Some(self.summary(&request));
                return refused;
            }
        } else if (RequestView::detail_only(&request) || seen.is_some())
            && seen != Some(request.args_digest.as_str())
        {
            let mut refused = DecideReply::refused(
                StatusCode::CONFLICT,
                "decide this request on its own page, where all of its arguments are shown \
                 and anything flagged in them (hidden characters, look-alike letters) is \
                 explained: open its detail (the page's request page, or \
                 `GET api/requests/{id}`) and send the `args_digest` it shows with the \
                 decision; nothing changed",
            );
            refused.request = Some(self.summary(&request));
            return refused;
        }
        let click = DecisionCallback {
            event_id: format!("web:{}", hex::encode(random_bytes())),
            request_id: request.id.clone(),
            decision,
            operator: operator.signed.operator.clone(),
            channel_id: inner.channel.channel_id().to_owned(),
            message_ref: None,
            // The page checked the digest of what it showed itself (above).
            shown_digest: None,
            reason: reason.and_then(decision_reason),
        };
        let outcome = inner.approvals.handle_callback(&click).await;
        let now = outcome.request.as_ref();
        if let Some(now) = now.filter(|now| now.status.is_terminal()) {
            // Other tabs and inline streams see it at once.
            inner.channel.publish(now);
        }
        let terminal = now.map(|now| now.status);
        use crate::approval_gate::ConfirmationStatus::Pending;
        let (status, word) = match (outcome.kind, terminal) {
            // An approval counted towards a quorum that still needs more.
            (ToastKind::Success, Some(Pending)) => (StatusCode::OK, "counted"),
            (ToastKind::Success, _) => (StatusCode::OK, "decided"),
            (ToastKind::Info, Some(Pending)) => (StatusCode::CONFLICT, "already_counted"),
            (_, Some(crate::approval_gate::ConfirmationStatus::Expired)) => {
                (StatusCode::CONFLICT, "expired")
            }
            (_, Some(status)) if status.is_terminal() => (StatusCode::CONFLICT, "already_final"),
            (ToastKind::Info, _) => (StatusCode::ACCEPTED, "saving"),
            (_, Some(_)) => (StatusCode::FORBIDDEN, "refused"),
            (ToastKind::Error, None) => (StatusCode::SERVICE_UNAVAILABLE, "unavailable"),
        };
        DecideReply {
            outcome: word,
            message: outcome.message,
            request: outcome.request.as_ref().map(|now| self.summary(now)),
            status,
        }
    }
}
