//! A request as the page and the streams show it (the JSON shape is a
//! contract: docs/approvals-web.md).
//!
//! Every value that came from the agent or a person is shown with its
//! hidden characters escaped (`\u202E`), and `hidden_characters` says
//! whether any were; the HTML templates escape the rest.

use serde::Serialize;

use crate::approval_gate::channel::render::{Shown, format_utc};
use crate::approval_gate::{ConfirmationRequest, ConfirmationStatus};
use crate::text::{escape_hidden, escape_hidden_in_json, has_look_alikes};

/// The most characters of the arguments a request's detail shows.
const DETAIL_ARGS_CHARS: usize = 20_000;

/// The most characters of the one-line argument summary.
const GIST_CHARS: usize = 120;

/// One request, as the approvals page and the streams show it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct RequestView {
    pub(crate) id: String,
    pub(crate) tool: String,
    pub(crate) agent: String,
    pub(crate) user: String,
    pub(crate) org: String,
    pub(crate) status: &'static str,
    pub(crate) created_at_ms: i64,
    pub(crate) created_at: String,
    pub(crate) expires_at_ms: i64,
    pub(crate) expires_at: String,
    pub(crate) decided_at_ms: Option<i64>,
    /// `decided_at_ms` in UTC, for people.
    pub(crate) decided_at: Option<String>,
    pub(crate) decided_by: Option<String>,
    pub(crate) reason: Option<String>,
    pub(crate) approvers: String,
    /// How many distinct people must approve.
    pub(crate) approvals_required: i32,
    /// Who approved so far (user ids, hidden characters escaped).
    pub(crate) approved_by: Vec<String>,
    /// The progress in words when more than one approval is needed
    /// (`1 of 2 approvals (by alice)`), else `null`.
    pub(crate) quorum: Option<String>,
    /// Pretty JSON, hidden characters escaped, cut (see `args_truncated`).
    pub(crate) args: String,
    pub(crate) args_truncated: bool,
    /// The arguments for reading (what the page shows): pretty JSON in
    /// which a string holding line breaks is shown as its lines, each
    /// prefixed with `│ ` under its key, hidden characters escaped; `args`
    /// itself where that is cut.
    pub(crate) args_lines: String,
    /// Characters of all the arguments as pretty JSON, shown or not.
    pub(crate) args_chars: usize,
    /// Keys of all the arguments, at every depth.
    pub(crate) args_keys: usize,
    /// The arguments on one line, cut to [`GIST_CHARS`] characters, hidden
    /// characters escaped: enough to tell two decisions apart.
    pub(crate) args_gist: String,
    pub(crate) hidden_characters: bool,
    /// Whether a value holds a word that passes for another (`Аcme` with a
    /// Cyrillic `А`; [`has_look_alikes`]).
    pub(crate) look_alikes: bool,
    /// Whether the request is decided only on its own page: its list form
    /// cuts the arguments, or a value is flagged (hidden characters, look-
    /// alike letters), so no one-click decision from the list.
    pub(crate) detail_only: bool,
    /// The channel kind the request was sent through (`web`, `feishu`, …).
    pub(crate) channel: String,
    /// Whether this page decides it (`false`: a watched channel's request,
    /// shown read-only; it is decided in its own channel).
    pub(crate) decide_here: bool,
    /// The digest of the tool name and arguments the approval binds, given
    /// only where every argument is shown (`null` on a list whose
    /// arguments were cut): a decision on cut arguments must send the one
    /// its detail showed.
    pub(crate) args_digest: Option<String>,
}

impl RequestView {
    /// The list form: arguments cut like every channel's card. `here`:
    /// the page decides it.
    pub(crate) fn summary(request: &ConfirmationRequest, here: bool) -> Self {
        Self::build(request, None, here)
    }

    /// The detail form: arguments cut much later, and the digest a decision
    /// sends when every argument is shown (`null` when even the detail cuts
    /// them: such a request cannot be approved on the page).
    pub(crate) fn detail(request: &ConfirmationRequest, here: bool) -> Self {
        Self::build(request, Some(DETAIL_ARGS_CHARS), here)
    }

    /// Whether even the detail form cuts `request`'s arguments: then nobody
    /// on the page can see everything an approval would cover, and it
    /// cannot be approved there (only rejected).
    pub(crate) fn detail_cuts_args(request: &ConfirmationRequest) -> bool {
        Shown::default()
            .args_cut(request, DETAIL_ARGS_CHARS)
            .truncated
    }

    /// Whether `request` is decided only on its own page (then a decision
    /// must carry the digest its detail shows): the list form cuts its
    /// arguments, or a value holds hidden characters or look-alike letters.
    pub(crate) fn detail_only(request: &ConfirmationRequest) -> bool {
        Self::summary(request, true).detail_only
    }

    fn build(request: &ConfirmationRequest, cut: Option<usize>, here: bool) -> Self {
        let mut shown = Shown::default();
        let args = match cut {
            None => shown.args(request),
            Some(cut) => shown.args_cut(request, cut),
        };
        // The approval covers every argument: flag from all of them.
        let full = serde_json::to_string(&request.args).unwrap_or_default();
        let (hidden, look_alikes) = flags(request);
        shown.had_hidden |= hidden;
        let gist = escape_hidden_in_json(&full).text;
        let gist = match gist.char_indices().nth(GIST_CHARS) {
            Some((cut, _)) => format!("{}…", &gist[..cut]),
            None => gist,
        };
        let pretty = serde_json::to_string_pretty(&request.args).unwrap_or_default();
        let decided = request.status != ConfirmationStatus::Pending;
        let decided_at_ms = request.decided_at_ms.filter(|_| decided);
        let mut view = RequestView {
            id: request.id.clone(),
            tool: shown.plain(&request.tool_name),
            agent: shown.plain(&request.agent_id),
            user: shown.plain(&request.initiator_user_id),
            org: shown.plain(&request.org_id),
            status: request.status.as_str(),
            created_at_ms: request.created_at_ms,
            created_at: format_utc(request.created_at_ms),
            expires_at_ms: request.expires_at_ms,
            expires_at: format_utc(request.expires_at_ms),
            decided_at_ms,
            decided_at: decided_at_ms.map(format_utc),
            decided_by: request.decided_by.as_deref().map(|who| shown.plain(who)),
            reason: request.reason.as_deref().map(|why| shown.plain(why)),
            approvers: shown.plain(&request.approvers_text()),
            approvals_required: request.approvals_required,
            approved_by: request
                .approved_by
                .iter()
                .map(|by| shown.plain(by))
                .collect(),
            quorum: request.quorum_text().map(|text| shown.plain(&text)),
            args_digest: None,
            args_lines: if args.truncated {
                args.text.clone()
            } else {
                readable(&request.args)
            },
            args: args.text,
            args_truncated: args.truncated,
            args_chars: pretty.chars().count(),
            args_keys: key_count(&request.args),
            args_gist: gist,
            hidden_characters: shown.had_hidden,
            look_alikes,
            detail_only: false,
            channel: shown.plain(&request.channel_kind),
            decide_here: here,
        };
        let flagged = view.hidden_characters || view.look_alikes;
        // The list form: a cut or flagged request is decided on its page.
        view.detail_only = cut.is_none() && (view.args_truncated || flagged);
        if !view.args_truncated && !view.detail_only {
            view.args_digest = Some(request.args_digest.clone());
        }
        view
    }
}

/// Whether any value of `request` (every argument, shown or not) holds
/// hidden characters, and whether any holds look-alike letters.
fn flags(request: &ConfirmationRequest) -> (bool, bool) {
    let full = serde_json::to_string(&request.args).unwrap_or_default();
    let values = [
        request.tool_name.as_str(),
        &request.agent_id,
        &request.initiator_user_id,
        &request.org_id,
        &full,
    ];
    let hidden = escape_hidden_in_json(&full).had_hidden;
    (hidden, values.into_iter().any(has_look_alikes))
}

/// `value` as pretty JSON for a person (see [`RequestView::args_lines`]).
fn readable(value: &serde_json::Value) -> String {
    let mut out = String::new();
    write_readable(value, 0, &mut out);
    out
}

fn write_readable(value: &serde_json::Value, depth: usize, out: &mut String) {
    use serde_json::Value;
    let pad = |depth: usize| "  ".repeat(depth);
    let json = |value: &Value| {
        escape_hidden_in_json(&serde_json::to_string(value).unwrap_or_default()).text
    };
    match value {
        Value::String(text) if text.contains('\n') => {
            let lines: Vec<&str> = text.split('\n').collect();
            out.push_str(&format!("⤶ {} lines", lines.len()));
            for line in lines {
                out.push('\n');
                out.push_str(&pad(depth + 1));
                out.push_str("│ ");
                out.push_str(&escape_hidden(line).text);
            }
        }
        Value::Object(object) if !object.is_empty() => {
            out.push('{');
            let last = object.len() - 1;
            for (at, (key, value)) in object.iter().enumerate() {
                out.push('\n');
                out.push_str(&pad(depth + 1));
                out.push_str(&json(&Value::String(key.clone())));
                out.push_str(": ");
                write_readable(value, depth + 1, out);
                if at != last && !is_block(value) {
                    out.push(',');
                }
            }
            out.push('\n');
            out.push_str(&pad(depth));
            out.push('}');
        }
        Value::Array(items) if !items.is_empty() => {
            out.push('[');
            let last = items.len() - 1;
            for (at, item) in items.iter().enumerate() {
                out.push('\n');
                out.push_str(&pad(depth + 1));
                write_readable(item, depth + 1, out);
                if at != last && !is_block(item) {
                    out.push(',');
                }
            }
            out.push('\n');
            out.push_str(&pad(depth));
            out.push(']');
        }
        other => out.push_str(&json(other)),
    }
}

/// Whether `value` is shown as a block of lines (which ends without a comma).
fn is_block(value: &serde_json::Value) -> bool {
    value.as_str().is_some_and(|text| text.contains('\n'))
}

/// The keys of every object in `value`, at every depth.
fn key_count(value: &serde_json::Value) -> usize {
    match value {
        serde_json::Value::Object(object) => {
            object.len() + object.values().map(key_count).sum::<usize>()
        }
        serde_json::Value::Array(items) => items.iter().map(key_count).sum(),
        _ => 0,
    }
}

impl super::WebApprovals {
    /// `request` in the list form, as this page shows it.
    pub(crate) fn summary(&self, request: &ConfirmationRequest) -> RequestView {
        RequestView::summary(request, self.decides_here(request))
    }

    /// `requests` in the list form.
    pub(crate) fn summaries(&self, requests: &[ConfirmationRequest]) -> Vec<RequestView> {
        requests
            .iter()
            .map(|request| self.summary(request))
            .collect()
    }

    /// `request` in the detail form, as this page shows it.
    pub(crate) fn detail(&self, request: &ConfirmationRequest) -> RequestView {
        RequestView::detail(request, self.decides_here(request))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn multi_line_strings_are_shown_as_their_lines() {
        let args = json!({
            "script": "SELECT 1;\nDROP TABLE \"x\";\r\n\u{202E}evil",
            "z": [1, "a\nb"],
        });
        assert_eq!(
            readable(&args),
            "{\n  \"script\": ⤶ 3 lines\n    │ SELECT 1;\n    │ DROP TABLE \"x\";\\u000D\n    \
             │ \\u202Eevil\n  \"z\": [\n    1,\n    ⤶ 2 lines\n      │ a\n      │ b\n  ]\n}"
        );
        // Without line breaks it is serde's pretty JSON, escapes and all.
        let plain = json!({"a": [1, {"b": "c\u{200B}"}], "e": {}, "f": []});
        assert_eq!(
            readable(&plain),
            escape_hidden_in_json(&serde_json::to_string_pretty(&plain).unwrap()).text
        );
    }
}
