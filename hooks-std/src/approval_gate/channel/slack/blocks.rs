//! Block Kit messages for approval requests: the message with Approve and
//! Reject buttons, and the outcome message that replaces it once the request
//! is decided or expires.
//!
//! Every value from the request is rendered as every channel renders it
//! (hidden characters escaped and flagged, backticks replaced), then `&`,
//! `<` and `>` are written as Slack's entities, so no value can mention
//! `@channel`, link somewhere or close its code span. The message asking for
//! a decision shows every argument, or offers no Approve; the outcome
//! message cuts them to
//! [`ARGS_EXCERPT_CHARS`](crate::approval_gate::channel::ARGS_EXCERPT_CHARS).

use serde_json::{Value, json};

use super::config::is_slack_id;
use crate::approval_gate::channel::render::{
    HIDDEN_CHARACTERS_FLAG, LOOK_ALIKE_WARNING, Shown, approval_title, args_cut_note,
    args_too_long_note, format_utc, outcome_title, summary_facts,
};
use crate::approval_gate::channel::{ARGS_EXCERPT_CHARS, MAX_DECISION_REASON_CHARS};
use crate::approval_gate::{ApprovalDecision, ConfirmationRequest};

/// The `block_id` of the actions block holding the two buttons.
pub const ACTIONS_BLOCK_ID: &str = "hooks_approval";

/// The `block_id` and `action_id` of the input an approver may type a
/// reason into; the interaction reports it as
/// `state.values.reason.reason.value`.
pub const REASON_BLOCK_ID: &str = "reason";

/// Slack's limit on the text of a section block.
const SECTION_TEXT_LIMIT: usize = 3000;

/// Slack's limit on the text of a header block.
const HEADER_TEXT_LIMIT: usize = 150;

/// How many characters (once escaped) one value of the summary may take:
/// the summary's five values and labels stay within [`SECTION_TEXT_LIMIT`].
const SUMMARY_VALUE_LIMIT: usize = 500;

/// How many characters (once escaped) the approvers or the reason may take
/// in their section, leaving room for the label and status line.
const LONG_VALUE_LIMIT: usize = 2000;

/// How many characters the text of one message's blocks may hold in all:
/// Slack answers `msg_blocks_too_long` above about 13,200 (a limit it does
/// not document; this keeps clear of it).
const BLOCKS_TEXT_BUDGET: usize = 12_000;

/// The text of the blocks an approval message always has besides the
/// title, summary, arguments and approvers: the warning, the labels, the
/// note, the input and the buttons, generously counted.
const FIXED_TEXT: usize = 800;

/// The most characters of arguments one section shows, leaving room for its
/// label and code fence within [`SECTION_TEXT_LIMIT`].
const ARGS_PART_COST: usize = SECTION_TEXT_LIMIT - 40;

/// The `action_id` of a decision button: `{decision}:{request id}`.
pub fn action_id(request_id: &str, decision: ApprovalDecision) -> String {
    format!("{}:{request_id}", decision.as_str())
}

/// The `value` of a decision button: `{"request_id": …, "decision": …}` as JSON text.
pub fn button_value(request_id: &str, decision: ApprovalDecision) -> String {
    json!({"request_id": request_id, "decision": decision.as_str()}).to_string()
}

/// The `value` of the Approve button of a message that showed every
/// argument: [`button_value`] with the arguments' `digest`, which the gate
/// requires of an approval from Slack.
pub fn approve_value(request_id: &str, digest: &str) -> String {
    json!({"request_id": request_id, "decision": "approve", "digest": digest}).to_string()
}

/// The message asking for a decision on a pending `request`: `text` (the
/// notification fallback) and `blocks` — a header, the summary (tool, agent,
/// who asked, org, request id, deadline), every argument in code blocks, who
/// may approve, an optional input for a reason, and an actions block with
/// Approve (carrying the arguments' digest) and Reject buttons.
///
/// Arguments too long for one message (Slack refuses messages whose blocks
/// hold more than about 13,000 characters) are shown as far as they fit,
/// with a note, and the message offers Reject only: nobody approves from
/// Slack what Slack could not show.
pub fn approval_message(request: &ConfirmationRequest) -> Value {
    let mut shown = Shown::default();
    let tool = clip_chars(&shown.plain(&request.tool_name), HEADER_TEXT_LIMIT);
    let title = approval_title(&tool);
    let mut blocks = vec![header(&title)];
    let summary = summary(request, &mut shown);
    let mut who = format!(
        "*Who may approve:* {}",
        code_within(&mut shown, &request.approvers_text(), LONG_VALUE_LIMIT)
    );
    if let Some(quorum) = request.quorum_text() {
        who.push_str(&format!(
            "\n*Approvals:* {}",
            code_within(&mut shown, &quorum, LONG_VALUE_LIMIT / 2)
        ));
    }
    let room = BLOCKS_TEXT_BUDGET.saturating_sub(
        FIXED_TEXT + title.chars().count() + summary.chars().count() + who.chars().count(),
    );
    let args = shown.args_parts(request, ARGS_PART_COST, room, entity_cost);
    if shown.had_hidden {
        blocks.push(hidden_warning());
    }
    if shown.had_look_alikes {
        blocks.push(look_alike_warning());
    }
    blocks.push(section(&summary));
    for (at, part) in args.parts.iter().enumerate() {
        let label = if at == 0 { "*Arguments:*\n" } else { "" };
        blocks.push(section(&format!("{label}```\n{}\n```", escape(part))));
    }
    if !args.complete {
        blocks.push(json!({
            "type": "context",
            "elements": [{"type": "mrkdwn", "text": args_too_long_note("*", args.chars)}],
        }));
    }
    blocks.push(section(&who));
    blocks.push(reason_input());
    let reject = button(
        "Reject",
        "danger",
        &request.id,
        ApprovalDecision::Reject,
        button_value(&request.id, ApprovalDecision::Reject),
    );
    let elements = if args.complete {
        let value = approve_value(&request.id, &request.args_digest);
        let approve = button(
            "Approve",
            "primary",
            &request.id,
            ApprovalDecision::Approve,
            value,
        );
        vec![approve, reject]
    } else {
        vec![reject]
    };
    blocks.push(json!({
        "type": "actions",
        "block_id": ACTIONS_BLOCK_ID,
        "elements": elements,
    }));
    json!({
        "text": escape(&format!("{title} (request {})", shown.plain(&request.id))),
        "blocks": blocks,
    })
}

/// The message replacing the approval message once `request` is no longer
/// pending: the outcome as header ("Approved by …", "Rejected by …",
/// "Expired", "Cancelled"), the same summary, and no buttons. `clicker` is
/// the Slack user id of whoever decided, if known, shown as a mention.
pub fn outcome_message(request: &ConfirmationRequest, clicker: Option<&str>) -> Value {
    let mut shown = Shown::default();
    let decider = request
        .decided_by
        .as_deref()
        .map(|decider| clip_chars(&shown.plain(decider), HEADER_TEXT_LIMIT))
        .unwrap_or_else(|| "unknown".to_owned());
    let title = outcome_title(request.status, &decider);
    let summary = summary(request, &mut shown);
    let args = args_section(request, &mut shown);
    let mut status = format!("*Status:* {}", request.status);
    if let Some(at) = request.decided_at_ms {
        status.push_str(&format!(" at {}", format_utc(at)));
    }
    if let Some(quorum) = request.quorum_text() {
        status.push_str(&format!(
            "\n*Approvals:* {}",
            code_within(&mut shown, &quorum, LONG_VALUE_LIMIT / 2)
        ));
    }
    let mention = clicker.filter(|id| is_slack_id(id));
    if request.status.is_terminal()
        && let Some(id) = mention
        && request.decided_by.is_some()
    {
        // A mention renders as the clicker's name; the id is checked, so it
        // cannot carry other markup.
        status.push_str(&format!(" by <@{id}>"));
    }
    if let Some(reason) = request
        .reason
        .as_deref()
        .map(str::trim)
        .filter(|reason| !reason.is_empty())
    {
        status.push_str(&format!(
            "\n*Reason:* {}",
            code_within(&mut shown, reason, LONG_VALUE_LIMIT)
        ));
    }
    let mut blocks = vec![header(&title)];
    if shown.had_hidden {
        blocks.push(hidden_warning());
    }
    if shown.had_look_alikes {
        blocks.push(look_alike_warning());
    }
    blocks.push(section(&summary));
    blocks.extend(args);
    blocks.push(section(&status));
    json!({
        "text": escape(&format!("{title} (request {})", shown.plain(&request.id))),
        "blocks": blocks,
    })
}

/// The summary both messages share, as mrkdwn.
fn summary(request: &ConfirmationRequest, shown: &mut Shown) -> String {
    let mut lines: Vec<String> = summary_facts(request)
        .into_iter()
        .map(|(label, value)| {
            format!(
                "*{label}:* {}",
                code_within(shown, value, SUMMARY_VALUE_LIMIT)
            )
        })
        .collect();
    lines.push(format!("*Deadline:* {}", format_utc(request.expires_at_ms)));
    lines.join("\n")
}

/// The arguments as a code block (and, when cut, a note that the approval
/// covers all of them), within Slack's section limit once escaped.
fn args_section(request: &ConfirmationRequest, shown: &mut Shown) -> Vec<Value> {
    let mut max_chars = ARGS_EXCERPT_CHARS;
    let (text, truncated) = loop {
        let args = shown.args_cut(request, max_chars);
        let text = format!("*Arguments:*\n```\n{}\n```", escape(&args.text));
        // Escapes (`\u202E`, `&amp;`) can make the shown text several times
        // longer than the cut; cut shorter until the block fits.
        if text.chars().count() <= SECTION_TEXT_LIMIT || max_chars < 50 {
            break (text, args.truncated);
        }
        max_chars /= 2;
    };
    let mut blocks = vec![section(&text)];
    if truncated {
        blocks.push(json!({
            "type": "context",
            "elements": [{"type": "mrkdwn", "text": args_cut_note(
                "*",
                &code_within(shown, &request.args_digest, SUMMARY_VALUE_LIMIT),
                &code_within(shown, &request.id, SUMMARY_VALUE_LIMIT),
            )}],
        }));
    }
    blocks
}

/// `text` as a mrkdwn code span that cannot be broken out of (`—` if
/// empty), cut so the escaped text holds at most `max_chars` characters
/// ([`escape_within`]).
fn code_within(shown: &mut Shown, text: &str, max_chars: usize) -> String {
    match shown.code_text(text) {
        Some(text) => format!("`{}`", escape_within(&text, max_chars)),
        None => "—".to_owned(),
    }
}

/// [`escape`]d `text` cut to at most `max_chars` characters (ending in `…`
/// when cut). The cut is made before escaping, one character at a time, so
/// it never splits an entity such as `&amp;`.
pub(crate) fn escape_within(text: &str, max_chars: usize) -> String {
    let mut out = String::new();
    let mut used = 0;
    let mut chars = text.chars().peekable();
    while let Some(ch) = chars.next() {
        let escaped = escape(ch.encode_utf8(&mut [0; 4]));
        let width = escaped.chars().count();
        // Room is kept for the `…` unless this is the last character.
        let room = if chars.peek().is_some() {
            max_chars.saturating_sub(1)
        } else {
            max_chars
        };
        if used + width > room {
            out.push('…');
            break;
        }
        used += width;
        out.push_str(&escaped);
    }
    out
}

/// `text` cut to at most `max_chars` characters, ending in `…` when cut.
fn clip_chars(text: &str, max_chars: usize) -> String {
    match text.char_indices().nth(max_chars.saturating_sub(1)) {
        Some((cut, _)) if text.chars().count() > max_chars => format!("{}…", &text[..cut]),
        _ => text.to_owned(),
    }
}

/// `&`, `<` and `>` as Slack's entities, so text cannot form a mention,
/// link or other control sequence.
pub(crate) fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

fn header(title: &str) -> Value {
    let text: String = match title.char_indices().nth(HEADER_TEXT_LIMIT - 1) {
        Some((cut, _)) => format!("{}…", &title[..cut]),
        None => title.to_owned(),
    };
    json!({"type": "header", "text": {"type": "plain_text", "text": text, "emoji": false}})
}

fn section(text: &str) -> Value {
    json!({"type": "section", "text": {"type": "mrkdwn", "text": text}})
}

fn hidden_warning() -> Value {
    json!({
        "type": "context",
        "elements": [{"type": "mrkdwn", "text": format!(
            "*{HIDDEN_CHARACTERS_FLAG}.* Invisible or direction-changing characters are shown \
             escaped (`\\u202E`); the tool receives them as they are."
        )}],
    })
}

fn look_alike_warning() -> Value {
    json!({
        "type": "context",
        "elements": [{"type": "mrkdwn", "text": escape(LOOK_ALIKE_WARNING)}],
    })
}

/// The optional input for the approver's reason, sent along with either
/// button's press in the interaction's state.
fn reason_input() -> Value {
    json!({
        "type": "input",
        "block_id": REASON_BLOCK_ID,
        "optional": true,
        "label": {"type": "plain_text", "text": "Reason"},
        "element": {
            "type": "plain_text_input",
            "action_id": REASON_BLOCK_ID,
            "max_length": MAX_DECISION_REASON_CHARS,
            "placeholder": {"type": "plain_text", "text": "Optional: why you approve or reject"},
        },
    })
}

fn button(
    label: &str,
    style: &str,
    request_id: &str,
    decision: ApprovalDecision,
    value: String,
) -> Value {
    json!({
        "type": "button",
        "action_id": action_id(request_id, decision),
        "text": {"type": "plain_text", "text": label, "emoji": false},
        "style": style,
        "value": value,
    })
}

/// What a character takes once [`escape`]d.
fn entity_cost(c: char) -> usize {
    match c {
        '&' => 5,
        '<' | '>' => 4,
        _ => 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::approval_gate::ConfirmationStatus;

    fn request() -> ConfirmationRequest {
        let args = json!({"q": "DROP TABLE `x` -- <!channel> & <https://evil.example|click>"});
        ConfirmationRequest::sample(args, "alice", &["boss"], ("slack", "T1/C1"))
    }

    fn all_text(message: &Value) -> String {
        message["blocks"].to_string()
    }

    #[test]
    fn approval_message_shape() {
        let message = approval_message(&request());
        let blocks = message["blocks"].as_array().unwrap();
        assert_eq!(blocks[0]["type"], "header");
        assert_eq!(blocks[0]["text"]["text"], "Approval needed: sql_exec");
        let actions = blocks.last().unwrap();
        assert_eq!(actions["type"], "actions");
        let approve = &actions["elements"][0];
        assert_eq!(approve["action_id"], "approve:4f9c");
        assert_eq!(approve["style"], "primary");
        let value: Value = serde_json::from_str(approve["value"].as_str().unwrap()).unwrap();
        assert_eq!(
            value,
            json!({"request_id": "4f9c", "decision": "approve", "digest": "d"})
        );
        assert_eq!(actions["elements"][1]["action_id"], "reject:4f9c");
        let input = &blocks[blocks.len() - 2];
        assert_eq!(
            (&input["type"], &input["block_id"], &input["optional"]),
            (&json!("input"), &json!("reason"), &json!(true))
        );
        assert_eq!(input["element"]["type"], "plain_text_input");
        assert_eq!(input["element"]["action_id"], "reason");
        let text = all_text(&message);
        assert!(text.contains("2023-11-14 22:13:20 UTC"), "{text}");
        assert!(text.contains("the requester (alice), or boss"), "{text}");
        assert!(message["text"].as_str().unwrap().contains("sql_exec"));
    }

    #[test]
    fn values_cannot_form_markup() {
        let text = all_text(&approval_message(&request()));
        assert!(!text.contains("<!channel>"), "{text}");
        assert!(!text.contains("<https://"), "{text}");
        assert!(text.contains("&lt;!channel&gt; &amp;"), "{text}");
        assert!(text.contains("DROP TABLE ˋxˋ"), "{text}");
    }

    /// The text of every section and context block, and the buttons' labels.
    fn texts_and_buttons(message: &Value) -> (Vec<String>, Vec<String>) {
        let blocks = message["blocks"].as_array().unwrap();
        let texts = blocks
            .iter()
            .filter_map(|block| {
                (block["text"]["text"].as_str())
                    .or(block["elements"][0]["text"].as_str())
                    .map(str::to_owned)
            })
            .collect();
        let buttons = blocks.last().unwrap()["elements"]
            .as_array()
            .unwrap()
            .iter()
            .map(|button| button["text"]["text"].as_str().unwrap().to_owned())
            .collect();
        (texts, buttons)
    }

    #[test]
    fn long_arguments_are_shown_whole_across_sections() {
        let mut request = request();
        let value: String = (0..7000)
            .map(|at| char::from(b'a' + (at % 26) as u8))
            .collect();
        request.args = json!({"q": value, "tail": "the part that matters"});
        let message = approval_message(&request);
        let (texts, buttons) = texts_and_buttons(&message);
        assert_eq!(buttons, ["Approve", "Reject"]);
        assert!(
            texts
                .iter()
                .all(|text| text.chars().count() <= SECTION_TEXT_LIMIT)
        );
        let mut shown: String = texts
            .iter()
            .filter(|text| text.contains("```"))
            .map(|text| {
                text.split("```\n")
                    .nth(1)
                    .unwrap()
                    .trim_end_matches("\n```")
            })
            .collect();
        // A part that ends at a line break is shown without it.
        let mut full = serde_json::to_string_pretty(&request.args).unwrap();
        shown.retain(|c| c != '\n');
        full.retain(|c| c != '\n');
        assert!(
            shown == full,
            "{} of {} characters shown",
            shown.len(),
            full.len()
        );
        assert!(texts.iter().all(|text| !text.contains("too long")));
    }

    #[test]
    fn arguments_too_long_for_a_message_cannot_be_approved_from_it() {
        let mut request = request();
        // Escaped, each `&` takes five characters.
        request.args = json!({"q": "&".repeat(5000), "tail": "the part that matters"});
        let message = approval_message(&request);
        let (texts, buttons) = texts_and_buttons(&message);
        assert_eq!(buttons, ["Reject"]);
        assert!(
            texts
                .iter()
                .all(|text| text.chars().count() <= SECTION_TEXT_LIMIT)
        );
        let all: usize = texts.iter().map(|text| text.chars().count()).sum();
        assert!(all <= BLOCKS_TEXT_BUDGET, "{all}");
        assert!(!all_text(&message).contains("the part that matters"));
        let chars = serde_json::to_string_pretty(&request.args).unwrap().len();
        let note = format!("too long to show here in full ({chars} characters)");
        assert!(texts.iter().any(|text| text.contains(&note)), "{texts:?}");
        assert!(!all_text(&message).contains("approve:4f9c"));
    }

    #[test]
    fn look_alike_letters_are_flagged() {
        let mut request = request();
        assert!(!all_text(&approval_message(&request)).contains("look-alike"));
        request.args = json!({"payee": "\u{410}cme Ltd"});
        let text = all_text(&approval_message(&request));
        assert!(text.contains("contains look-alike letters"), "{text}");
    }

    #[test]
    fn outcome_messages_have_no_buttons() {
        let mut request = request();
        request.status = ConfirmationStatus::Approved;
        request.decided_by = Some("boss".into());
        request.decided_at_ms = Some(1_700_000_000_000);
        let message = outcome_message(&request, Some("U0BOSS"));
        assert_eq!(message["blocks"][0]["text"]["text"], "Approved by boss");
        let text = all_text(&message);
        assert!(text.contains("by <@U0BOSS>"), "{text}");
        assert!(
            !text.contains("\"actions\"")
                && !text.contains("button")
                && !text.contains("plain_text_input"),
            "{text}"
        );
        // An id that is not a Slack id is not turned into markup.
        let text = all_text(&outcome_message(&request, Some("U1> <!here")));
        assert!(!text.contains("<!here"), "{text}");
        request.status = ConfirmationStatus::Expired;
        request.decided_by = None;
        let message = outcome_message(&request, None);
        assert!(message["text"].as_str().unwrap().starts_with("Expired"));
    }
}
