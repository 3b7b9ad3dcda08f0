//! What every channel shows an approver, rendered the same way: one model
//! of a card (its title while it asks and once decided, the facts its
//! summary lists in order, the note under arguments that were cut), the
//! arguments cut to [`ARGS_EXCERPT_CHARS`], every untrusted value with its
//! hidden characters escaped (and the message flagged when any were), and
//! deadlines in UTC. Each platform writes the model in its own markup.
//!
//! What the approver reads is what runs: values go through
//! [`crate::text::hidden`], so bidi controls, zero-width and other invisible
//! characters appear escaped (`\u202E`) instead of reordering or hiding text.
//! Backticks become the look-alike `ˋ` (U+02CB), so a value cannot close the
//! code span or block it is shown in (Feishu's Markdown and Slack's mrkdwn
//! both use backticks). The approval itself still binds the exact
//! arguments' digest.

use crate::approval_gate::{ConfirmationRequest, ConfirmationStatus};
use crate::text::{escape_hidden, escape_hidden_in_json};

/// The warning a message carries when any value it shows held hidden characters.
pub(crate) const HIDDEN_CHARACTERS_FLAG: &str = "⚠ contains hidden characters";

/// How many characters of the arguments an approval message shows.
pub const ARGS_EXCERPT_CHARS: usize = 800;

/// The arguments as an approver sees them.
pub(crate) struct ShownArgs {
    /// Pretty JSON cut to [`ARGS_EXCERPT_CHARS`], hidden characters escaped,
    /// backticks replaced.
    pub(crate) text: String,
    /// Whether the cut left something out (the message must say so).
    pub(crate) truncated: bool,
}

/// Renders untrusted values for one message, remembering whether any of
/// them held hidden characters.
#[derive(Default)]
pub(crate) struct Shown {
    pub(crate) had_hidden: bool,
}

impl Shown {
    /// `text` on one line, hidden characters (line breaks included) escaped.
    pub(crate) fn plain(&mut self, text: &str) -> String {
        let escaped = escape_hidden(text);
        self.had_hidden |= escaped.had_hidden;
        escaped.text
    }

    /// Serialized JSON with hidden characters escaped.
    pub(crate) fn json(&mut self, json_text: &str) -> String {
        let escaped = escape_hidden_in_json(json_text);
        self.had_hidden |= escaped.had_hidden;
        escaped.text
    }

    /// `text` on one line with backticks replaced, for a code span; an
    /// empty value becomes `None`.
    pub(crate) fn code_text(&mut self, text: &str) -> Option<String> {
        let text = self.plain(text).replace('`', "\u{2cb}");
        (!text.trim().is_empty()).then_some(text)
    }

    /// `text` as a Markdown code span that cannot be broken out of (`—` if empty).
    pub(crate) fn inline_code(&mut self, text: &str) -> String {
        match self.code_text(text) {
            Some(text) => format!("`{text}`"),
            None => "—".to_owned(),
        }
    }

    /// The request's arguments for a code block, cut at
    /// [`ARGS_EXCERPT_CHARS`]. Escaped after the cut, so the cut cannot split
    /// an escape; flagged from all the arguments, since the approval covers
    /// all of them.
    pub(crate) fn args(&mut self, request: &ConfirmationRequest) -> ShownArgs {
        self.args_cut(request, ARGS_EXCERPT_CHARS)
    }

    /// [`args`](Self::args) cut at `max_chars` instead (for a platform whose
    /// blocks hold less once escapes are written out).
    pub(crate) fn args_cut(
        &mut self,
        request: &ConfirmationRequest,
        max_chars: usize,
    ) -> ShownArgs {
        let text = self
            .json(&request.args_excerpt(max_chars))
            .replace('`', "\u{2cb}");
        let truncated = request.args_truncated(max_chars);
        if truncated {
            let full = serde_json::to_string_pretty(&request.args).unwrap_or_default();
            self.had_hidden |= escape_hidden_in_json(&full).had_hidden;
        }
        ShownArgs { text, truncated }
    }
}

/// The title of the card asking for a decision on a call of `tool` (as
/// shown).
pub(crate) fn approval_title(tool: &str) -> String {
    format!("Approval needed: {tool}")
}

/// The title of a card once its request is `status`, decided by `decider`
/// (as shown) when it was decided.
pub(crate) fn outcome_title(status: ConfirmationStatus, decider: &str) -> String {
    match status {
        ConfirmationStatus::Approved => format!("Approved by {decider}"),
        ConfirmationStatus::Rejected => format!("Rejected by {decider}"),
        ConfirmationStatus::Expired => "Expired — no decision before the deadline".to_owned(),
        ConfirmationStatus::Cancelled => "Cancelled".to_owned(),
        ConfirmationStatus::Pending => "Waiting for a decision".to_owned(),
    }
}

/// The facts every card lists about its request, in order: each label and
/// the value as stored (the platform shows it in a code span of its own
/// markup). The deadline and the arguments follow them.
pub(crate) fn summary_facts(request: &ConfirmationRequest) -> [(&'static str, &str); 5] {
    [
        ("Tool", &request.tool_name),
        ("Agent", &request.agent_id),
        ("Requested by", &request.initiator_user_id),
        ("Org", &request.org_id),
        ("Request id", &request.id),
    ]
}

/// The note under arguments that were cut: the approval covers all of
/// them. `bold` is the platform's bold delimiter; `digest` and `id` are
/// already shown as code.
pub(crate) fn args_cut_note(bold: &str, digest: &str, id: &str) -> String {
    format!(
        "{bold}⚠ The arguments are longer than shown.{bold} The approval covers all of them \
         (digest {digest}); inspect request {id} before approving."
    )
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
    fn code_spans_cannot_be_broken_out_of() {
        let mut shown = Shown::default();
        assert_eq!(shown.inline_code("a`b"), "`aˋb`");
        assert_eq!(shown.inline_code("  "), "—");
        assert!(!shown.had_hidden);
        assert_eq!(shown.inline_code("x\u{202E}y"), "`x\\u202Ey`");
        assert!(shown.had_hidden);
    }
}
