//! Card JSON 2.0 for approval requests: the card with buttons, and the
//! outcome card that replaces it once the request is decided.
//!
//! Values from the request (ids, tool name, arguments) are shown inside code
//! spans and a code block so that they cannot inject Markdown, rendered as
//! every channel renders them (the channel module's shared rendering: hidden
//! characters escaped and flagged, arguments cut to [`ARGS_EXCERPT_CHARS`],
//! backticks replaced so a value cannot close its span or block).

use serde_json::{Value, json};

pub use crate::approval_gate::channel::ARGS_EXCERPT_CHARS;
use crate::approval_gate::channel::MAX_DECISION_REASON_CHARS;
use crate::approval_gate::channel::render::{
    HIDDEN_CHARACTERS_FLAG, Shown, approval_title, args_cut_note, format_utc, outcome_title,
    summary_facts,
};
use crate::approval_gate::{ApprovalDecision, ConfirmationRequest, ConfirmationStatus};

/// The most characters of a decision's reason shown in a card's subtitle.
const SUBTITLE_CHARS: usize = 80;

/// The card asking for a decision on a pending `request`: a summary (agent,
/// requester, org, tool, request id, deadline, arguments, who may approve)
/// and a form with an optional reason input and Approve / Reject buttons
/// whose callback values carry the request id and the decision.
pub fn approval_card(request: &ConfirmationRequest) -> Value {
    let mut shown = Shown::default();
    let title = approval_title(&shown.plain(&request.tool_name));
    let mut summary = summary_markdown(request, &mut shown);
    summary.push_str(&format!(
        "\n**Who may approve:** {}",
        shown.inline_code(&request.approvers_text())
    ));
    let summary = flagged(&shown, summary);
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
            decision_form(&request.id),
        ]},
    })
}

/// The `name` of the card's form and of the input an approver may type a
/// reason into; the callback reads it back as `form_value.reason`.
pub const REASON_INPUT_NAME: &str = "reason";

/// The form holding the optional reason input and the two decision
/// buttons. Both buttons submit the form, so the callback carries the
/// typed reason (`form_value`) with the decision (the button's value).
fn decision_form(request_id: &str) -> Value {
    json!({
        "tag": "form",
        "name": "decision",
        "elements": [
            {
                "tag": "input",
                "name": REASON_INPUT_NAME,
                "required": false,
                "max_length": MAX_DECISION_REASON_CHARS,
                "placeholder": {"tag": "plain_text", "content": "Reason (optional)"},
            },
            {
                "tag": "column_set",
                "flex_mode": "flow",
                "columns": [
                    column(button("Approve", "primary", request_id, ApprovalDecision::Approve)),
                    column(button("Reject", "danger", request_id, ApprovalDecision::Reject)),
                ],
            },
        ],
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
    let title = outcome_title(request.status, &decider);
    let template = match request.status {
        ConfirmationStatus::Approved => "green",
        ConfirmationStatus::Rejected => "red",
        ConfirmationStatus::Expired | ConfirmationStatus::Cancelled => "grey",
        ConfirmationStatus::Pending => "blue",
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
    // The header's subtitle is one short line; the summary has it whole.
    let subtitle = reason.map(|reason| match reason.char_indices().nth(SUBTITLE_CHARS) {
        None => shown.plain(reason),
        Some((cut, _)) => shown.plain(&format!("{}…", &reason[..cut])),
    });
    let summary = flagged(&shown, summary);
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
    let args = shown.args(request);
    let mut lines: Vec<String> = summary_facts(request)
        .into_iter()
        .map(|(label, value)| format!("**{label}:** {}", shown.inline_code(value)))
        .collect();
    lines.push(format!(
        "**Deadline:** {}",
        format_utc(request.expires_at_ms)
    ));
    lines.push(format!("**Arguments:**\n```json\n{}\n```", args.text));
    // An approver must know when they are not seeing everything they approve.
    if args.truncated {
        let digest = shown.inline_code(&request.args_digest);
        lines.push(args_cut_note(
            "**",
            &digest,
            &shown.inline_code(&request.id),
        ));
    }
    lines.join("\n")
}

/// `summary` with the hidden-characters warning first, when `shown` saw any.
fn flagged(shown: &Shown, summary: String) -> String {
    if shown.had_hidden {
        format!(
            "**{HIDDEN_CHARACTERS_FLAG}.** Invisible or direction-changing characters \
             are shown escaped (`\\u202E`); the tool receives them as they are.\n{summary}"
        )
    } else {
        summary
    }
}

/// A decision button that submits the card's form.
fn button(label: &str, kind: &str, request_id: &str, decision: ApprovalDecision) -> Value {
    json!({
        "tag": "button",
        "name": decision.as_str(),
        "text": {"tag": "plain_text", "content": label},
        "type": kind,
        "form_action_type": "submit",
        "behaviors": [{
            "type": "callback",
            "value": {"request_id": request_id, "decision": decision.as_str()},
        }],
    })
}

fn column(element: Value) -> Value {
    json!({"tag": "column", "width": "auto", "elements": [element]})
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request() -> ConfirmationRequest {
        let args = json!({"q": "DROP TABLE `x`"});
        ConfirmationRequest::sample(args, "ou_u", &["ou_*boss"], ("feishu", "oc_1"))
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
        let form = &card["body"]["elements"][1];
        assert_eq!(form["tag"], "form");
        let input = &form["elements"][0];
        assert_eq!(
            (&input["tag"], &input["name"], &input["required"]),
            (&json!("input"), &json!("reason"), &json!(false))
        );
        assert_eq!(input["placeholder"]["content"], "Reason (optional)");
        let columns = form["elements"][1]["columns"].as_array().unwrap();
        assert_eq!(columns.len(), 2);
        let reject = &columns[1]["elements"][0];
        assert_eq!(reject["form_action_type"], "submit");
        let value = &reject["behaviors"][0]["value"];
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
