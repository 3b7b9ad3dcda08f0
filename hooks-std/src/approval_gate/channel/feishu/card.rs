//! Card JSON 2.0 for approval requests: the card with buttons, and the
//! outcome card that replaces it once the request is decided.
//!
//! Values from the request (ids, tool name, arguments) are shown inside code
//! spans and code blocks so that they cannot inject Markdown, rendered as
//! every channel renders them (the channel module's shared rendering: hidden
//! characters escaped and flagged, backticks replaced so a value cannot
//! close its span or block). The card asking for a decision shows every
//! argument, or offers no Approve; the outcome card cuts them to
//! [`ARGS_EXCERPT_CHARS`].

use serde_json::{Value, json};

pub use crate::approval_gate::channel::ARGS_EXCERPT_CHARS;
use crate::approval_gate::channel::MAX_DECISION_REASON_CHARS;
use crate::approval_gate::channel::render::{
    HIDDEN_CHARACTERS_FLAG, LOOK_ALIKE_WARNING, Shown, approval_title, args_cut_note,
    args_too_long_note, format_utc, outcome_title, summary_facts,
};
use crate::approval_gate::{ApprovalDecision, ConfirmationRequest, ConfirmationStatus};

/// The most characters of a decision's reason shown in a card's subtitle.
const SUBTITLE_CHARS: usize = 80;

/// The card asking for a decision on a pending `request`: a summary (agent,
/// requester, org, tool, request id, deadline), every argument in code
/// blocks, who may approve, and a form with an optional reason input and
/// Approve / Reject buttons whose callback values carry the request id and
/// the decision (and, on Approve, the arguments' digest).
///
/// Arguments too long for one card (Feishu refuses a card over 30 KB) are
/// shown as far as they fit, with a note, and the card offers Reject only:
/// nobody approves from Feishu what Feishu could not show.
pub fn approval_card(request: &ConfirmationRequest) -> Value {
    let mut shown = Shown::default();
    let title = approval_title(&shown.plain(&request.tool_name));
    let facts = facts_markdown(request, &mut shown);
    let mut who = format!(
        "**Who may approve:** {}",
        shown.inline_code(&request.approvers_text())
    );
    if let Some(quorum) = request.quorum_text() {
        who.push_str(&format!("\n**Approvals:** {}", shown.inline_code(&quorum)));
    }
    let mut header = json!({
        "title": {"tag": "plain_text", "content": title},
        "template": "orange",
    });
    let card = |header: &Value, elements: Vec<Value>| {
        json!({
            "schema": "2.0",
            "config": {"update_multi": true, "summary": {"content": title}},
            "header": header,
            "body": {"elements": elements},
        })
    };
    // What the card takes without its arguments, counted with the longest
    // warning it may get.
    let without_args = card(
        &header,
        vec![
            markdown(&format!(
                "{HIDDEN_CHARACTERS_FLAG}{HIDDEN_WARNING}{LOOK_ALIKE_WARNING}\n{facts}"
            )),
            markdown(&args_too_long_note("**", usize::MAX)),
            markdown(&who),
            decision_form(request, true),
        ],
    );
    let room = CARD_BYTES.saturating_sub(CARD_MARGIN + without_args.to_string().len());
    let args = shown.args_parts(request, ARGS_PART_BYTES, room, json_bytes);
    if shown.had_hidden {
        header["subtitle"] = json!({"tag": "plain_text", "content": HIDDEN_CHARACTERS_FLAG});
    }
    let mut elements = vec![markdown(&flagged(&shown, facts))];
    for (at, part) in args.parts.iter().enumerate() {
        let label = if at == 0 { "**Arguments:**\n" } else { "" };
        elements.push(markdown(&format!("{label}```json\n{part}\n```")));
    }
    if !args.complete {
        elements.push(markdown(&args_too_long_note("**", args.chars)));
    }
    elements.push(markdown(&who));
    elements.push(decision_form(request, args.complete));
    card(&header, elements)
}

/// The most a card's JSON may take: Feishu refuses larger content (code
/// 230025).
const CARD_BYTES: usize = 30 * 1024;

/// Room kept free in a card for what the budget does not count exactly:
/// each part's element and label.
const CARD_MARGIN: usize = 2048;

/// The most bytes of arguments one markdown element shows.
const ARGS_PART_BYTES: usize = 4000;

/// What a character takes in the card's JSON text.
fn json_bytes(c: char) -> usize {
    match c {
        '"' | '\\' | '\n' | '\r' | '\t' => 2,
        c if u32::from(c) < 0x20 => 6,
        c => c.len_utf8(),
    }
}

fn markdown(content: &str) -> Value {
    json!({"tag": "markdown", "content": content})
}

/// The `name` of the card's form and of the input an approver may type a
/// reason into; the callback reads it back as `form_value.reason`.
pub const REASON_INPUT_NAME: &str = "reason";

/// The form holding the optional reason input and the decision buttons:
/// Approve (its value carrying the arguments' digest) only when the card
/// showed every argument, and Reject. Both submit the form, so the callback
/// carries the typed reason (`form_value`) with the decision (the button's
/// value).
fn decision_form(request: &ConfirmationRequest, approvable: bool) -> Value {
    let mut columns = Vec::new();
    if approvable {
        let value = json!({
            "request_id": request.id,
            "decision": ApprovalDecision::Approve.as_str(),
            "digest": request.args_digest,
        });
        columns.push(column(button("Approve", "primary", value)));
    }
    let value = json!({"request_id": request.id, "decision": ApprovalDecision::Reject.as_str()});
    columns.push(column(button("Reject", "danger", value)));
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
                "columns": columns,
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
    if let Some(quorum) = request.quorum_text() {
        summary.push_str(&format!("\n**Approvals:** {}", shown.inline_code(&quorum)));
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

/// The facts both cards list (tool, agent, requester, org, request id,
/// deadline), as Markdown.
fn facts_markdown(request: &ConfirmationRequest, shown: &mut Shown) -> String {
    let mut lines: Vec<String> = summary_facts(request)
        .into_iter()
        .map(|(label, value)| format!("**{label}:** {}", shown.inline_code(value)))
        .collect();
    lines.push(format!(
        "**Deadline:** {}",
        format_utc(request.expires_at_ms)
    ));
    lines.join("\n")
}

/// The outcome card's summary: the facts and the arguments cut to
/// [`ARGS_EXCERPT_CHARS`] (it asks nothing, so a cut is only noted).
fn summary_markdown(request: &ConfirmationRequest, shown: &mut Shown) -> String {
    let mut summary = facts_markdown(request, shown);
    let args = shown.args(request);
    summary.push_str(&format!("\n**Arguments:**\n```json\n{}\n```", args.text));
    // An approver must know when they are not seeing everything.
    if args.truncated {
        let digest = shown.inline_code(&request.args_digest);
        let id = shown.inline_code(&request.id);
        summary.push('\n');
        summary.push_str(&args_cut_note("**", &digest, &id));
    }
    summary
}

/// The explanation after [`HIDDEN_CHARACTERS_FLAG`].
const HIDDEN_WARNING: &str = ".** Invisible or direction-changing characters are shown escaped \
    (`\\u202E`); the tool receives them as they are.\n";

/// `summary` with the hidden-characters and look-alike warnings first, when
/// `shown` saw any.
fn flagged(shown: &Shown, summary: String) -> String {
    let mut flags = String::new();
    if shown.had_hidden {
        flags.push_str(&format!("**{HIDDEN_CHARACTERS_FLAG}{HIDDEN_WARNING}"));
    }
    if shown.had_look_alikes {
        flags.push_str(&format!("**{LOOK_ALIKE_WARNING}**\n"));
    }
    flags + &summary
}

/// A decision button that submits the card's form with callback `value`.
fn button(label: &str, kind: &str, value: Value) -> Value {
    let name = value["decision"].clone();
    json!({
        "tag": "button",
        "name": name,
        "text": {"tag": "plain_text", "content": label},
        "type": kind,
        "form_action_type": "submit",
        "behaviors": [{"type": "callback", "value": value}],
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
        let text = card["body"]["elements"].to_string();
        assert!(text.contains("`agent*1`"), "{text}");
        assert!(text.contains("2023-11-14 22:13:20 UTC"), "{text}");
        assert!(text.contains("DROP TABLE ˋxˋ"), "{text}");
        assert!(
            text.contains("**Who may approve:** `the requester (ou_u), or ou_*boss`"),
            "{text}"
        );
        let form = card["body"]["elements"].as_array().unwrap().last().unwrap();
        assert_eq!(form["tag"], "form");
        let input = &form["elements"][0];
        assert_eq!(
            (&input["tag"], &input["name"], &input["required"]),
            (&json!("input"), &json!("reason"), &json!(false))
        );
        assert_eq!(input["placeholder"]["content"], "Reason (optional)");
        let columns = form["elements"][1]["columns"].as_array().unwrap();
        assert_eq!(columns.len(), 2);
        let [approve, reject] = [0, 1].map(|at| &columns[at]["elements"][0]);
        assert_eq!(reject["form_action_type"], "submit");
        let value = &reject["behaviors"][0]["value"];
        assert_eq!(value, &json!({"request_id": "4f9c", "decision": "reject"}));
        let value = &approve["behaviors"][0]["value"];
        assert_eq!(
            value,
            &json!({"request_id": "4f9c", "decision": "approve", "digest": "d"})
        );
    }

    /// The labels of the card's buttons, and the arguments its code blocks show.
    fn buttons_and_args(card: &Value) -> (Vec<String>, String) {
        let elements = card["body"]["elements"].as_array().unwrap();
        let form = elements.last().unwrap();
        let buttons = form["elements"][1]["columns"]
            .as_array()
            .unwrap()
            .iter()
            .map(|column| {
                column["elements"][0]["text"]["content"]
                    .as_str()
                    .unwrap()
                    .to_owned()
            })
            .collect();
        let args = elements
            .iter()
            .filter_map(|element| element["content"].as_str())
            .filter_map(|text| text.split_once("```json\n"))
            .map(|(_, code)| code.trim_end_matches("\n```").to_owned())
            .collect();
        (buttons, args)
    }

    #[test]
    fn long_arguments_are_shown_whole_across_elements() {
        let mut request = request();
        let value: String = (0..15_000)
            .map(|at| char::from(b'a' + (at % 26) as u8))
            .collect();
        request.args = json!({"q": value, "tail": "the part that matters"});
        let card = approval_card(&request);
        let (buttons, mut args) = buttons_and_args(&card);
        assert_eq!(buttons, ["Approve", "Reject"]);
        // A part that ends at a line break is shown without it.
        let mut full = serde_json::to_string_pretty(&request.args).unwrap();
        args.retain(|c| c != '\n');
        full.retain(|c| c != '\n');
        assert!(
            args == full,
            "{} of {} characters shown",
            args.len(),
            full.len()
        );
        assert!(card.to_string().len() <= CARD_BYTES);
        assert!(!card.to_string().contains("too long"));
    }

    #[test]
    fn arguments_too_long_for_a_card_cannot_be_approved_from_it() {
        let mut request = request();
        // Each `"` takes two bytes in the card's JSON, each `中` three.
        for value in ["\"".repeat(20_000), "中".repeat(12_000)] {
            request.args = json!({"q": value, "tail": "the part that matters"});
            let card = approval_card(&request);
            let (buttons, args) = buttons_and_args(&card);
            assert_eq!(buttons, ["Reject"]);
            assert!(!args.contains("the part that matters"));
            assert!(
                card.to_string().len() <= CARD_BYTES,
                "{}",
                card.to_string().len()
            );
            let chars = serde_json::to_string_pretty(&request.args)
                .unwrap()
                .chars()
                .count();
            let note = format!("too long to show here in full ({chars} characters)");
            assert!(card.to_string().contains(&note));
            assert!(!card.to_string().contains("\"approve\""));
        }
    }

    #[test]
    fn look_alike_letters_are_flagged() {
        let mut request = request();
        assert!(!approval_card(&request).to_string().contains("look-alike"));
        request.args = json!({"payee": "p\u{430}ypal"});
        let card = approval_card(&request).to_string();
        assert!(card.contains("contains look-alike letters"), "{card}");
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
