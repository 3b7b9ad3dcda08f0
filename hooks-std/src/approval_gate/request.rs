//! A confirmation request: one gated tool call waiting for a person.

use std::fmt;

use serde_json::Value;

/// Where a confirmation request is in its life. Only `Pending` ever changes,
/// and it changes once.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ConfirmationStatus {
    /// Waiting for a decision.
    Pending,
    /// A person in scope approved it.
    Approved,
    /// A person in scope rejected it.
    Rejected,
    /// Nobody decided before the deadline.
    Expired,
    /// Withdrawn (an orphan whose card was never delivered, or by an operator).
    Cancelled,
}

impl ConfirmationStatus {
    /// The column value.
    pub fn as_str(self) -> &'static str {
        match self {
            ConfirmationStatus::Pending => "pending",
            ConfirmationStatus::Approved => "approved",
            ConfirmationStatus::Rejected => "rejected",
            ConfirmationStatus::Expired => "expired",
            ConfirmationStatus::Cancelled => "cancelled",
        }
    }

    /// Parses a column value.
    pub fn parse(text: &str) -> Option<Self> {
        Some(match text {
            "pending" => ConfirmationStatus::Pending,
            "approved" => ConfirmationStatus::Approved,
            "rejected" => ConfirmationStatus::Rejected,
            "expired" => ConfirmationStatus::Expired,
            "cancelled" => ConfirmationStatus::Cancelled,
            _ => return None,
        })
    }

    /// Whether the status is final.
    pub fn is_terminal(self) -> bool {
        self != ConfirmationStatus::Pending
    }
}

impl fmt::Display for ConfirmationStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A person's verdict on a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ApprovalDecision {
    /// Let the call run.
    Approve,
    /// Block the call.
    Reject,
}

impl ApprovalDecision {
    /// `approve` or `reject`, as carried in card callback values.
    pub fn as_str(self) -> &'static str {
        match self {
            ApprovalDecision::Approve => "approve",
            ApprovalDecision::Reject => "reject",
        }
    }

    /// Parses `approve` / `reject`.
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "approve" => Some(ApprovalDecision::Approve),
            "reject" => Some(ApprovalDecision::Reject),
            _ => None,
        }
    }

    /// The status a request takes when this decision is applied.
    pub fn status(self) -> ConfirmationStatus {
        match self {
            ApprovalDecision::Approve => ConfirmationStatus::Approved,
            ApprovalDecision::Reject => ConfirmationStatus::Rejected,
        }
    }
}

/// Why a call needed confirmation, stored with its request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ConfirmationMode {
    /// The call's `metadata.requires_confirmation` asked for it.
    Metadata,
    /// The agent's `require_confirmation_for_all` is set.
    RequireAll,
    /// The gate's `when` expression matched.
    When,
    /// A command hook answered "ask".
    Ask,
}

impl ConfirmationMode {
    /// The column value.
    pub fn as_str(self) -> &'static str {
        match self {
            ConfirmationMode::Metadata => "metadata",
            ConfirmationMode::RequireAll => "require_all",
            ConfirmationMode::When => "when",
            ConfirmationMode::Ask => "ask",
        }
    }

    /// Parses a column value.
    pub fn parse(text: &str) -> Option<Self> {
        Some(match text {
            "metadata" => ConfirmationMode::Metadata,
            "require_all" => ConfirmationMode::RequireAll,
            "when" => ConfirmationMode::When,
            "ask" => ConfirmationMode::Ask,
            _ => return None,
        })
    }
}

impl fmt::Display for ConfirmationMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Who may decide a request. The request's explicit allowlist is always
/// honoured in addition to the scope.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ApproverScope {
    /// Only the user on whose behalf the agent made the call (default).
    #[default]
    Initiator,
    /// Only the owner of the agent that made the call.
    AgentOwner,
    /// Any member of the request's org.
    OrgMembers,
    /// Only the users on the allowlist.
    Allowlist,
}

impl ApproverScope {
    /// The column value.
    pub fn as_str(self) -> &'static str {
        match self {
            ApproverScope::Initiator => "initiator",
            ApproverScope::AgentOwner => "agent_owner",
            ApproverScope::OrgMembers => "org_members",
            ApproverScope::Allowlist => "allowlist",
        }
    }

    /// Parses a column value.
    pub fn parse(text: &str) -> Option<Self> {
        Some(match text {
            "initiator" => ApproverScope::Initiator,
            "agent_owner" => ApproverScope::AgentOwner,
            "org_members" => ApproverScope::OrgMembers,
            "allowlist" => ApproverScope::Allowlist,
            _ => return None,
        })
    }
}

/// A stored confirmation request (a row of `confirmation_requests`), decoded
/// from the database as it is: the status and scope columns into their enums
/// (an unknown value is a decode error, see
/// [`UnknownColumnValue`](super::UnknownColumnValue)), the JSON
/// columns into values.
#[derive(Debug, Clone, PartialEq, sqlx::FromRow)]
pub struct ConfirmationRequest {
    /// The request's id (a UUID v4), carried in the card's buttons.
    pub id: String,
    /// `conversation_id` + `tool_call_id`: a re-run of the same call resumes this request.
    pub idempotency_key: String,
    /// The gated tool.
    pub tool_name: String,
    /// The arguments the tool would run with.
    #[sqlx(json)]
    pub args: Value,
    /// SHA-256 over the tool name and the canonical JSON of the arguments.
    pub args_digest: String,
    /// The agent making the call.
    pub agent_id: String,
    /// The user on whose behalf the agent made the call.
    pub initiator_user_id: String,
    /// The initiator's org.
    pub org_id: String,
    /// Who may decide.
    pub approver_scope: ApproverScope,
    /// Users who may decide whatever the scope.
    #[sqlx(json)]
    pub approver_allowlist: Vec<String>,
    /// The channel kind, e.g. `feishu`.
    pub channel_kind: String,
    /// The channel instance (e.g. the Feishu chat id); callbacks must come from it.
    pub channel_id: String,
    /// Why confirmation was required.
    pub mode: ConfirmationMode,
    /// Where the request is in its life.
    pub status: ConfirmationStatus,
    /// Creation time, ms since the Unix epoch.
    pub created_at_ms: i64,
    /// Deadline, ms since the Unix epoch; a pending request past it cannot be approved.
    pub expires_at_ms: i64,
    /// When it was decided or expired.
    pub decided_at_ms: Option<i64>,
    /// Who decided (a user id, or `system` for expiry).
    pub decided_by: Option<String>,
    /// The decider's reason, if any.
    pub reason: Option<String>,
    /// The channel's reference to the card (e.g. a Feishu message id), once sent.
    pub message_ref: Option<String>,
    /// When an approved request let its call run (an approval runs the call once).
    pub consumed_at_ms: Option<i64>,
    /// How many distinct people must approve (1 to 10); any rejection
    /// rejects.
    pub approvals_required: i32,
    /// Whether the initiator may not approve (they may still reject).
    pub exclude_requester: bool,
    /// Who approved so far, in order (user ids); the request is approved
    /// once there are `approvals_required` of them.
    #[sqlx(json)]
    pub approved_by: Vec<String>,
}

impl ConfirmationRequest {
    /// The arguments as pretty JSON cut to `max_chars` characters (for cards).
    pub fn args_excerpt(&self, max_chars: usize) -> String {
        let text = serde_json::to_string_pretty(&self.args).unwrap_or_default();
        match text.char_indices().nth(max_chars) {
            Some((cut, _)) => format!("{}\n… (cut at {max_chars} characters)", &text[..cut]),
            None => text,
        }
    }

    /// Whether [`args_excerpt`](Self::args_excerpt) cuts the arguments at `max_chars`.
    pub fn args_truncated(&self, max_chars: usize) -> bool {
        let text = serde_json::to_string_pretty(&self.args).unwrap_or_default();
        text.chars().nth(max_chars).is_some()
    }

    /// The approvals still needed while pending (0 once approved).
    pub fn approvals_missing(&self) -> usize {
        usize::try_from(self.approvals_required)
            .unwrap_or(1)
            .saturating_sub(self.approved_by.len())
    }

    /// The approval progress in words, when more than one approval is
    /// needed: `1 of 2 approvals (by alice)`; `None` for a single approval.
    pub fn quorum_text(&self) -> Option<String> {
        if self.approvals_required <= 1 {
            return None;
        }
        let mut text = format!(
            "{} of {} approvals",
            self.approved_by.len(),
            self.approvals_required
        );
        if !self.approved_by.is_empty() {
            text.push_str(&format!(" (by {})", self.approved_by.join(", ")));
        }
        if self.exclude_requester {
            text.push_str(&format!(
                "; the requester ({}) may not approve",
                self.initiator_user_id
            ));
        }
        Some(text)
    }

    /// Who may decide, in words (for cards).
    pub fn approvers_text(&self) -> String {
        let scope = match self.approver_scope {
            ApproverScope::Initiator => format!("the requester ({})", self.initiator_user_id),
            ApproverScope::AgentOwner => format!("the owner of agent {}", self.agent_id),
            ApproverScope::OrgMembers => format!("members of org {}", self.org_id),
            ApproverScope::Allowlist => "the listed approvers".to_owned(),
        };
        if self.approver_allowlist.is_empty() {
            scope
        } else {
            format!("{scope}, or {}", self.approver_allowlist.join(", "))
        }
    }
}

#[cfg(test)]
impl ConfirmationRequest {
    /// A pending `sql_exec` request `4f9c` for the renderers' tests: `args`
    /// by `initiator`, only they or `allowlist` may decide, agent `agent*1`,
    /// posted to `channel_kind`/`channel_id`, due 2023-11-14 22:13:20 UTC.
    pub(crate) fn sample(
        args: Value,
        initiator: &str,
        allowlist: &[&str],
        (channel_kind, channel_id): (&str, &str),
    ) -> Self {
        ConfirmationRequest {
            id: "4f9c".into(),
            idempotency_key: "conv:call".into(),
            tool_name: "sql_exec".into(),
            args,
            args_digest: "d".into(),
            agent_id: "agent*1".into(),
            initiator_user_id: initiator.into(),
            org_id: "acme".into(),
            approver_scope: ApproverScope::Initiator,
            approver_allowlist: allowlist.iter().map(|&user| user.to_owned()).collect(),
            channel_kind: channel_kind.into(),
            channel_id: channel_id.into(),
            mode: ConfirmationMode::Metadata,
            status: ConfirmationStatus::Pending,
            created_at_ms: 0,
            expires_at_ms: 1_700_000_000_123,
            decided_at_ms: None,
            decided_by: None,
            reason: None,
            message_ref: None,
            consumed_at_ms: None,
            approvals_required: 1,
            exclude_requester: false,
            approved_by: Vec::new(),
        }
    }
}
