//! Card JSON 2.0 for approval requests: the card with buttons, and the
//! outcome card that replaces it once the request is decided.
//!
//! Values from the request (ids, tool name, arguments) are shown inside code
//! spans and a code block so that they cannot inject Markdown; backticks in
//! them are replaced by the look-alike `ˋ` (U+02CB) so they cannot close the
//! span or block early.
//!
//! What the approver reads is what runs: every value is rendered through
//! [`crate::text::hidden`], so bidi controls, zero-width and other invisible
//! characters appear escaped (`\u202E`) instead of reordering or hiding text,
//! and a card showing any of them says so ("contains hidden characters"). The
//! approval itself still binds the exact arguments' digest.

use serde_json::{Value, json};

use crate::gate::{ConfirmationRequest, ConfirmationStatus, Decision};
use crate::text::{escape_hidden, escape_hidden_in_json};

/// The warning a card carries when any value it shows held hidden characters.
pub(crate) const HIDDEN_CHARACTERS_FLAG: &str = "⚠ contains hidden characters";

/// How many characters of the arguments a card shows.
pub const ARGS_EXCERPT_CHARS: usize = 800;

/// The card asking for a decision on a pending `request`: a summary (agent,
/// requester, org, tool, request id, deadline, arguments, who may approve)
/// and Approve / Reject buttons whose callback values carry the request id
/// and the decision.
pub fn approval_card(request: &ConfirmationRequest) -> Value {
    let mut shown = Shown::default();
    let title = format!("Approval needed: {}", shown.plain(&request.tool_name));
    let mut summary = summary_markdown(request, &mut shown);
    summary.push_str(&format!(
        "\n**Who may approve:** {}",
        shown.inline_code(&request.approvers_text())
    ));
    let summary = shown.flagged(summary);
    let mut header = json!({
        "title": {"tag": "plain_text", "content": title},
        "template": "orange",
    });
    if shown.had_hidden {
        header["subtitle"] = json!({"tag": "plain_text", "content": HIDDEN_CHARACTERS_FLAG});
    }
    json!({
        "schema": "2.0",
        "config": {"update_multi": true, "summary": {"content": title}},
        "header": header,
        "body": {"elements": [
            {"tag": "markdown", "content": summary},
            {
                "tag": "column_set",
                "flex_mode": "flow",
                "columns": [
                    column(button("Approve", "primary", &request.id, Decision::Approve)),
                    column(button("Reject", "danger", &request.id, Decision::Reject)),
                ],
            },
        ]},
    })
}

/// The card replacing the approval card once `request` is no longer
/// pending: the same summary, the outcome in the header, and no buttons.
///
/// Approved is green ("Approved by …"), rejected red ("Rejected by …", with
/// the reason as subtitle), expired and cancelled grey. A request that is
/// still pending gets a neutral "Waiting for a decision" card, also without
/// buttons.
pub fn outcome_card(request: &ConfirmationRequest) -> Value {
    let mut shown = Shown::default();
    let decider = request
        .decided_by
        .as_deref()
        .map(|decider| shown.plain(decider))
        .unwrap_or_else(|| "unknown".to_owned());
    let (title, template) = match request.status {
        ConfirmationStatus::Approved => (format!("Approved by {decider}"), "green"),
        ConfirmationStatus::Rejected => (format!("Rejected by {decider}"), "red"),
        ConfirmationStatus::Expired => (
            "Expired — no decision before the deadline".to_owned(),
            "grey",
        ),
        ConfirmationStatus::Cancelled => ("Cancelled".to_owned(), "grey"),
        ConfirmationStatus::Pending => ("Waiting for a decision".to_owned(), "blue"),
    };
    let mut summary = summary_markdown(request, &mut shown);
    summary.push_str(&format!("\n**Status:** {}", request.status));
    if let Some(at) = request.decided_at_ms {
        summary.push_str(&format!(" at {}", format_utc(at)));
    }
    let reason = request
        .reason
        .as_deref()
        .map(str::trim)
        .filter(|reason| !reason.is_empty());
    if let Some(reason) = reason {
        summary.push_str(&format!("\n**Reason:** {}", shown.inline_code(reason)));
    }
    let subtitle = reason.map(|reason| shown.plain(reason));
    let summary = shown.flagged(summary);
    let mut header = json!({
        "title": {"tag": "plain_text", "content": title},
        "template": template,
    });
    if let Some(subtitle) = subtitle {
        header["subtitle"] = json!({"tag": "plain_text", "content": subtitle});
    }
    json!({
        "schema": "2.0",
        "config": {"update_multi": true, "summary": {"content": title}},
        "header": header,
        "body": {"elements": [{"tag": "markdown", "content": summary}]},
    })
}

/// The summary shared by both cards.
fn summary_markdown(request: &ConfirmationRequest, shown: &mut Shown) -> String {
    // Escaped after the cut, so the cut cannot split an escape; flagged from
    // all the arguments, since the approval covers all of them.
    let args = shown
        .json(&request.args_excerpt(ARGS_EXCERPT_CHARS))
        .replace('`', "\u{2cb}");
    if request.args_truncated(ARGS_EXCERPT_CHARS) {
        let full = serde_json::to_string_pretty(&request.args).unwrap_or_default();
        shown.had_hidden |= escape_hidden_in_json(&full).had_hidden;
    }
    // An approver must know when they are not seeing everything they approve.
    let cut = if request.args_truncated(ARGS_EXCERPT_CHARS) {
        format!(
            "\n**⚠ The arguments are longer than shown.** The approval covers all of them \
             (digest {}); inspect request {} before approving.",
            shown.inline_code(&request.args_digest),
            shown.inline_code(&request.id)
        )
    } else {
        String::new()
    };
    format!(
        "**Agent:** {agent}\n**Requester:** {requester}\n**Org:** {org}\n**Tool:** {tool}\n\
         **Request id:** {id}\n**Deadline:** {deadline}\n**Arguments:**\n```json\n{args}\n```{cut}",
        agent = shown.inline_code(&request.agent_id),
        requester = shown.inline_code(&request.initiator_user_id),
        org = shown.inline_code(&request.org_id),
        tool = shown.inline_code(&request.tool_name),
        id = shown.inline_code(&request.id),
        deadline = format_utc(request.expires_at_ms),
    )
}

/// Renders untrusted values for one card, remembering whether any of them
/// held hidden characters.
#[derive(Default)]
struct Shown {
    had_hidden: bool,
}

impl Shown {
    /// `text` on one line, hidden characters (line breaks included) escaped.
    fn plain(&mut self, text: &str) -> String {
        let escaped = escape_hidden(text);
        self.had_hidden |= escaped.had_hidden;
        escaped.text
    }

    /// Serialized JSON with hidden characters escaped.
    fn json(&mut self, json_text: &str) -> String {
        let escaped = escape_hidden_in_json(json_text);
        self.had_hidden |= escaped.had_hidden;
        escaped.text
    }

    /// `text` as a Markdown code span that cannot be broken out of.
    fn inline_code(&mut self, text: &str) -> String {
        let text = self.plain(text).replace('`', "\u{2cb}");
        if text.trim().is_empty() {
            "—".to_owned()
        } else {
            format!("`{text}`")
        }
    }

    /// `summary` with the hidden-characters warning first, when it applies.
    fn flagged(&self, summary: String) -> String {
        if self.had_hidden {
            format!(
                "**{HIDDEN_CHARACTERS_FLAG}.** Invisible or direction-changing characters \
                 are shown escaped (`\\u202E`); the tool receives them as they are.\n{summary}"
            )
        } else {
            summary
        }
    }
}

fn button(label: &str, kind: &str, request_id: &str, decision: Decision) -> Value {
    json!({
        "tag": "button",
        "text": {"tag": "plain_text", "content": label},
        "type": kind,
        "behaviors": [{
            "type": "callback",
            "value": {"request_id": request_id, "decision": decision.as_str()},
        }],
    })
}

fn column(element: Value) -> Value {
    json!({"tag": "column", "width": "auto", "elements": [element]})
}

/// Milliseconds since the Unix epoch as `YYYY-MM-DD HH:MM:SS UTC`.
pub(crate) fn format_utc(ms: i64) -> String {
    let secs = ms.div_euclid(1000);
    let days = secs.div_euclid(86_400);
    let of_day = secs.rem_euclid(86_400);
    let (year, month, day) = civil_from_days(days);
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02}:{:02} UTC",
        of_day / 3600,
        of_day % 3600 / 60,
        of_day % 60
    )
}

/// The proleptic Gregorian date of a day count since 1970-01-01
/// (Howard Hinnant's `civil_from_days`).
fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gate::{ApproverScope, ConfirmationMode};

    fn request() -> ConfirmationRequest {
        ConfirmationRequest {
            id: "4f9c".into(),
            idempotency_key: "conv:call".into(),
            tool_name: "sql_exec".into(),
            args: json!({"q": "DROP TABLE `x`"}),
            args_digest: "d".into(),
            agent_id: "agent*1".into(),
            initiator_user_id: "ou_u".into(),
            org_id: "acme".into(),
            approver_scope: ApproverScope::Initiator,
            approver_allowlist: vec!["ou_*boss".into()],
            channel_kind: "feishu".into(),
            channel_id: "oc_1".into(),
            mode: ConfirmationMode::Metadata,
            status: ConfirmationStatus::Pending,
            created_at_ms: 0,
            expires_at_ms: 1_700_000_000_123,
            decided_at_ms: None,
            decided_by: None,
            reason: None,
            message_ref: None,
            consumed_at_ms: None,
        }
    }

    #[test]
    fn utc_formatting() {
        assert_eq!(format_utc(0), "1970-01-01 00:00:00 UTC");
        assert_eq!(format_utc(1_700_000_000_123), "2023-11-14 22:13:20 UTC");
        assert_eq!(format_utc(951_782_400_000), "2000-02-29 00:00:00 UTC");
        assert_eq!(format_utc(-1), "1969-12-31 23:59:59 UTC");
        // Extreme values format without overflow.
        let _ = format_utc(i64::MAX);
        let _ = format_utc(i64::MIN);
    }

    #[test]
    fn approval_card_shape() {
        let card = approval_card(&request());
        assert_eq!(card["schema"], "2.0");
        assert_eq!(card["config"]["update_multi"], true);
        assert_eq!(
            card["header"]["title"]["content"],
            "Approval needed: sql_exec"
        );
        let text = card["body"]["elements"][0]["content"].as_str().unwrap();
        assert!(text.contains("`agent*1`"), "{text}");
        assert!(text.contains("2023-11-14 22:13:20 UTC"), "{text}");
        assert!(text.contains("DROP TABLE ˋxˋ"), "{text}");
        assert!(
            text.contains("**Who may approve:** `the requester (ou_u), or ou_*boss`"),
            "{text}"
        );
        let columns = card["body"]["elements"][1]["columns"].as_array().unwrap();
        assert_eq!(columns.len(), 2);
        let value = &columns[1]["elements"][0]["behaviors"][0]["value"];
        assert_eq!(value, &json!({"request_id": "4f9c", "decision": "reject"}));
    }

    #[test]
    fn outcome_cards() {
        let mut request = request();
        request.status = ConfirmationStatus::Rejected;
        request.decided_by = Some("ou_boss".into());
        request.reason = Some("too risky".into());
        request.decided_at_ms = Some(1_700_000_000_000);
        let card = outcome_card(&request);
        assert_eq!(card["header"]["title"]["content"], "Rejected by ou_boss");
        assert_eq!(card["header"]["template"], "red");
        assert_eq!(card["header"]["subtitle"]["content"], "too risky");
        assert_eq!(card["body"]["elements"].as_array().unwrap().len(), 1);
        assert!(!card.to_string().contains("button"));
        request.status = ConfirmationStatus::Expired;
        request.reason = None;
        let card = outcome_card(&request);
        assert_eq!(card["header"]["template"], "grey");
        assert!(card["header"].get("subtitle").is_none());
    }
}
