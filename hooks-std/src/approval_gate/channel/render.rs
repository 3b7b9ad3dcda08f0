//! What every channel shows an approver, rendered the same way: one model
//! of a card (its title while it asks and once decided, the facts its
//! summary lists in order, the note under arguments that were cut), the
//! arguments whole in parts on a card that asks for a decision (which offers
//! Approve only when every part fits) and cut to [`ARGS_EXCERPT_CHARS`] on
//! one that reports it, every untrusted value with its hidden characters
//! escaped (and the message flagged when any were), and deadlines in UTC.
//! Each platform writes the model in its own markup.
//!
//! What the approver reads is what runs: values go through
//! [`crate::text::hidden`], so bidi controls, zero-width and other invisible
//! characters appear escaped (`\u202E`) instead of reordering or hiding text.
//! Backticks become the look-alike `ˋ` (U+02CB), so a value cannot close the
//! code span or block it is shown in (Feishu's Markdown and Slack's mrkdwn
//! both use backticks). The approval itself still binds the exact
//! arguments' digest.

use crate::approval_gate::{ConfirmationRequest, ConfirmationStatus};
use crate::text::{escape_hidden, escape_hidden_in_json, has_look_alikes};

/// The warning a message carries when any value it shows held hidden characters.
pub(crate) const HIDDEN_CHARACTERS_FLAG: &str = "⚠ contains hidden characters";

/// The warning a message carries when any value held look-alike letters
/// ([`has_look_alikes`]), and what to do about them.
pub(crate) const LOOK_ALIKE_WARNING: &str = "⚠ contains look-alike letters: a word mixes \
    scripts (a Cyrillic А among Latin letters) or is written in letters that pass for Latin \
    ones. Read every name and number letter by letter before approving.";

/// How many characters of the arguments a message shows where it only
/// reports (an outcome card, the web page's list); a card asking for a
/// decision shows them all.
pub const ARGS_EXCERPT_CHARS: usize = 800;

/// The arguments as an approver sees them.
pub(crate) struct ShownArgs {
    /// Pretty JSON cut to [`ARGS_EXCERPT_CHARS`], hidden characters escaped,
    /// backticks replaced.
    pub(crate) text: String,
    /// Whether the cut left something out (the message must say so).
    pub(crate) truncated: bool,
}

/// The arguments in full for a card that asks for a decision, split into
/// parts that each fit one block of the platform's markup.
pub(crate) struct ArgsParts {
    /// The parts in order (pretty JSON, hidden characters escaped, backticks
    /// replaced, each without its last line break): together every
    /// argument, or as much as the card has room for when not `complete`.
    pub(crate) parts: Vec<String>,
    /// Whether the parts hold every argument: only then may the card offer
    /// Approve.
    pub(crate) complete: bool,
    /// Characters of the arguments as pretty JSON.
    pub(crate) chars: usize,
}

/// Renders untrusted values for one message, remembering whether any of
/// them held hidden characters.
#[derive(Default)]
pub(crate) struct Shown {
    pub(crate) had_hidden: bool,
    /// Whether any value held a word that passes for another.
    pub(crate) had_look_alikes: bool,
}

impl Shown {
    /// `text` on one line, hidden characters (line breaks included) escaped.
    pub(crate) fn plain(&mut self, text: &str) -> String {
        let escaped = escape_hidden(text);
        self.had_hidden |= escaped.had_hidden;
        self.had_look_alikes |= has_look_alikes(text);
        escaped.text
    }

    /// Serialized JSON with hidden characters escaped.
    pub(crate) fn json(&mut self, json_text: &str) -> String {
        let escaped = escape_hidden_in_json(json_text);
        self.had_hidden |= escaped.had_hidden;
        self.had_look_alikes |= has_look_alikes(json_text);
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
            self.had_look_alikes |= has_look_alikes(&full);
        }
        ShownArgs { text, truncated }
    }
}

impl Shown {
    /// The request's arguments whole, in parts of at most `part_cost` and
    /// in all at most `total_cost`, where `cost` is what one character
    /// takes in the platform's markup (an entity or a JSON escape costs more
    /// than one). A part ends at a line break where it can; a line longer
    /// than a part is split. Flagged from all the arguments, shown or not.
    pub(crate) fn args_parts(
        &mut self,
        request: &ConfirmationRequest,
        part_cost: usize,
        total_cost: usize,
        cost: fn(char) -> usize,
    ) -> ArgsParts {
        let full = serde_json::to_string_pretty(&request.args).unwrap_or_default();
        let text = self.json(&full).replace('`', "\u{2cb}");
        let mut parts = Vec::new();
        let (mut part, mut in_part, mut spent) = (String::new(), 0, 0);
        let mut complete = true;
        'lines: for line in text.split_inclusive('\n') {
            let line_cost: usize = line.chars().map(cost).sum();
            if in_part + line_cost > part_cost && !part.is_empty() {
                parts.push(std::mem::take(&mut part));
                in_part = 0;
            }
            for unit in json_units(line) {
                let unit_cost: usize = unit.chars().map(cost).sum();
                if spent + unit_cost > total_cost {
                    complete = false;
                    break 'lines;
                }
                if in_part + unit_cost > part_cost {
                    parts.push(std::mem::take(&mut part));
                    in_part = 0;
                }
                part.push_str(unit);
                in_part += unit_cost;
                spent += unit_cost;
            }
        }
        if !part.is_empty() {
            parts.push(part);
        }
        for part in &mut parts {
            if part.ends_with('\n') {
                part.pop();
            }
        }
        ArgsParts {
            parts,
            complete,
            chars: full.chars().count(),
        }
    }
}

/// `line` of JSON text in pieces a split may fall between: one character,
/// or one whole escape (`\"`, `\\`, `\u202E`), so no part ends inside an
/// escape.
fn json_units(line: &str) -> impl Iterator<Item = &str> {
    let mut rest = line;
    std::iter::from_fn(move || {
        let mut chars = rest.char_indices();
        let (_, first) = chars.next()?;
        let end = match (first, chars.next()) {
            ('\\', Some((_, 'u'))) => rest
                .char_indices()
                .nth(6)
                .map_or(rest.len(), |(end, _)| end),
            ('\\', Some((_, next))) => 1 + next.len_utf8(),
            (first, _) => first.len_utf8(),
        };
        let (unit, after) = rest.split_at(end);
        rest = after;
        Some(unit)
    })
}

/// The note on a card whose arguments are too long for it, which therefore
/// offers no Approve. `bold` is the platform's bold delimiter.
pub(crate) fn args_too_long_note(bold: &str, chars: usize) -> String {
    format!(
        "{bold}⚠ The arguments are too long to show here in full ({chars} characters).{bold} \
         An approval covers every argument, so this card cannot approve them: reject it, or \
         have the call made where its arguments can be read in full."
    )
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
    fn json_text_splits_only_between_escapes() {
        let units: Vec<&str> = json_units(r#"a\u202E\"\\é\u12"#).collect();
        assert_eq!(units, ["a", r"\u202E", r#"\""#, r"\\", "é", r"\u12"]);
    }

    #[test]
    fn arguments_split_into_parts_hold_them_all_or_say_they_do_not() {
        let args = serde_json::json!({"a": "x".repeat(50), "b": "\u{202E}".repeat(30)});
        let request = ConfirmationRequest::sample(args, "u", &[], ("slack", "T/C"));
        let full = crate::text::escape_hidden_in_json(
            &serde_json::to_string_pretty(&request.args).unwrap(),
        )
        .text;
        let one = |_: char| 1;
        for part_cost in [7, 13, 40, 1000] {
            let mut shown = Shown::default();
            let args = shown.args_parts(&request, part_cost, usize::MAX, one);
            assert!(args.complete && shown.had_hidden);
            assert!(
                args.parts
                    .iter()
                    .all(|part| part.chars().count() <= part_cost)
            );
            let mut joined = args.parts.join("");
            // Parts ending at a line break lost it.
            joined.retain(|c| c != '\n');
            let mut expected = full.clone();
            expected.retain(|c| c != '\n');
            assert_eq!(joined, expected, "parts of {part_cost}");
            for part in &args.parts {
                assert!(!part.ends_with('\\'), "{part}");
                assert!(json_units(part).all(|unit| !unit.starts_with(r"\u") || unit.len() == 6));
            }
        }
        let mut shown = Shown::default();
        let cut = shown.args_parts(&request, 40, 100, one);
        assert!(
            !cut.complete && shown.had_hidden,
            "flagged though not shown"
        );
        assert!(
            cut.parts
                .iter()
                .map(|part| part.chars().count())
                .sum::<usize>()
                <= 100
        );
        assert_eq!(
            cut.chars,
            serde_json::to_string_pretty(&request.args)
                .unwrap()
                .chars()
                .count()
        );
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
