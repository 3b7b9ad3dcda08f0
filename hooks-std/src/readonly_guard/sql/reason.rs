//! Showing a statement inside a block reason.

/// How many characters of a statement a reason shows.
const SHOWN_CHARS: usize = 120;

/// `statement` in double quotes, cut to [`SHOWN_CHARS`] characters, with
/// control and invisible characters escaped: the reason reaches the model,
/// logs and people, and must show the text, not act on it (a `\r` shown
/// raw would let the rest of the line overwrite what came before).
pub(crate) fn quoted(statement: &str) -> String {
    let mut shown = String::with_capacity(statement.len().min(SHOWN_CHARS * 2) + 2);
    shown.push('"');
    for (count, c) in statement.chars().enumerate() {
        if count == SHOWN_CHARS {
            shown.push('…');
            break;
        }
        match c {
            '"' => shown.push_str("\\\""),
            '\\' => shown.push_str("\\\\"),
            c if c.is_control() || is_invisible(c) => {
                shown.extend(c.escape_default());
            }
            c => shown.push(c),
        }
    }
    shown.push('"');
    shown
}

/// Format characters that change how text looks without showing themselves
/// (zero-width, bidi controls, BOM).
fn is_invisible(c: char) -> bool {
    matches!(
        c,
        '\u{ad}' | '\u{200b}'..='\u{200f}' | '\u{2028}'..='\u{202e}' | '\u{2060}'..='\u{2069}' | '\u{feff}'
    )
}
