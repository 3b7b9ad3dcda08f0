//! Text from outside shown to a person: hook names, `when` sources, tool names.
//!
//! Such text may hold control characters, bidi overrides or zero-width
//! characters that make it read as something it is not, and it may be any
//! length. Tables and traces show it through [`shown`], which escapes the
//! first kind and cuts the second.

use std::borrow::Cow;
use std::fmt::Write as _;

/// Longest cell, in characters, that a table shows before cutting it.
pub(crate) const MAX_CELL_CHARS: usize = 120;

/// True for characters a reader cannot see but that change what text says or
/// how it reads: control characters, bidi controls, zero-width characters,
/// the soft hyphen, fillers, variation selectors, tag characters.
pub fn is_hidden(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{00AD}'
                | '\u{034F}'
                | '\u{061C}'
                | '\u{115F}'
                | '\u{1160}'
                | '\u{17B4}'
                | '\u{17B5}'
                | '\u{180B}'..='\u{180F}'
                | '\u{200B}'..='\u{200F}'
                | '\u{2028}'..='\u{202E}'
                | '\u{2060}'..='\u{206F}'
                | '\u{3164}'
                | '\u{FE00}'..='\u{FE0F}'
                | '\u{FEFF}'
                | '\u{FFA0}'
                | '\u{FFF0}'..='\u{FFFB}'
                | '\u{1D173}'..='\u{1D17A}'
                | '\u{E0000}'..='\u{E0FFF}'
        )
}

/// `text` as a table shows it: hidden characters written as `\u{…}` escapes,
/// and cut to `max_chars` characters with a trailing `…`.
pub(crate) fn shown(text: &str, max_chars: usize) -> Cow<'_, str> {
    let fits = text.chars().nth(max_chars).is_none();
    if fits && !text.chars().any(is_hidden) {
        return Cow::Borrowed(text);
    }
    let mut out = String::new();
    for (count, c) in text.chars().enumerate() {
        if count >= max_chars {
            out.push('…');
            break;
        }
        if is_hidden(c) {
            let _ = write!(out, "\\u{{{:X}}}", u32::from(c));
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// Appends `cell` left-aligned in `width` characters. Written out rather than
/// with `{:<width$}`, whose width the formatter limits (and panics beyond).
pub(crate) fn push_padded(out: &mut String, cell: &str, width: usize) {
    out.push_str(cell);
    let used = cell.chars().count();
    out.extend(std::iter::repeat_n(' ', width.saturating_sub(used)));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ordinary_text_is_borrowed() {
        assert!(matches!(shown("readonly_guard", 120), Cow::Borrowed(_)));
    }

    #[test]
    fn hidden_characters_are_escaped_and_long_text_cut() {
        assert_eq!(shown("pay\u{202E}yap\0", 120), "pay\\u{202E}yap\\u{0}");
        let long = "x".repeat(70_000);
        let cut = shown(&long, 120);
        assert_eq!(cut.chars().count(), 121);
        assert!(cut.ends_with('…'));
    }

    #[test]
    fn padding_any_width_does_not_panic() {
        let mut out = String::new();
        push_padded(&mut out, "a", 70_000);
        assert_eq!(out.len(), 70_000);
    }
}
