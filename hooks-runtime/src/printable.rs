//! Text from outside shown to a person: hook names, `when` sources, tool names.
//!
//! Such text may hold control characters, bidi overrides or zero-width
//! characters that make it read as something it is not, and it may be any
//! length. Tables and traces show it through [`shown`], which escapes the
//! first kind and cuts the second. [`is_hidden`] is the one definition of a
//! hidden character: the runtime refuses tool names holding one, and every
//! approval channel escapes them in what a person reads.

use std::borrow::Cow;
use std::fmt::Write as _;

use unicode_properties::{GeneralCategory, UnicodeGeneralCategory};

/// Longest cell, in characters, that a table shows before cutting it.
pub(crate) const MAX_CELL_CHARS: usize = 120;

/// Longest free text (a reason, a failure, a side effect), in characters,
/// that a trace or log shows before cutting it.
pub(crate) const MAX_TEXT_CHARS: usize = 500;

/// Whether `c` is invisible, changes the display order, or looks like a
/// plain space while being something else.
///
/// Hidden are: control characters (`Cc`, line feed and tab included — shown
/// escaped, they cannot fake a line break), format characters (`Cf`: bidi
/// embeddings, overrides and isolates, LRM/RLM/ALM, zero-width space and
/// joiners, word joiner, BOM, soft hyphen, tag characters, …), line and
/// paragraph separators, every space other than U+0020, private-use and
/// unassigned code points, and every `Default_Ignorable_Code_Point`
/// (variation selectors, Hangul fillers U+115F/U+1160/U+3164/U+FFA0,
/// combining grapheme joiner, Mongolian free variation selectors, …), plus the
/// blank-looking Braille pattern U+2800.
pub fn is_hidden(c: char) -> bool {
    if c.is_ascii() {
        return c.is_ascii_control();
    }
    if is_default_ignorable(c) || c == '\u{2800}' {
        return true;
    }
    matches!(
        c.general_category(),
        GeneralCategory::Control
            | GeneralCategory::Format
            | GeneralCategory::LineSeparator
            | GeneralCategory::ParagraphSeparator
            | GeneralCategory::SpaceSeparator
            | GeneralCategory::PrivateUse
            | GeneralCategory::Surrogate
            | GeneralCategory::Unassigned
    )
}

/// Unicode's `Default_Ignorable_Code_Point` (DerivedCoreProperties.txt):
/// characters a renderer shows as nothing when it does not support them.
fn is_default_ignorable(c: char) -> bool {
    matches!(
        u32::from(c),
        0x00AD
            | 0x034F
            | 0x061C
            | 0x115F..=0x1160
            | 0x17B4..=0x17B5
            | 0x180B..=0x180F
            | 0x200B..=0x200F
            | 0x202A..=0x202E
            | 0x2060..=0x206F
            | 0x3164
            | 0xFE00..=0xFE0F
            | 0xFEFF
            | 0xFFA0
            | 0xFFF0..=0xFFF8
            | 0x1BCA0..=0x1BCA3
            | 0x1D173..=0x1D17A
            | 0xE0000..=0xE0FFF
    )
}

/// `text` as a table shows it: hidden characters written as `\u{…}` escapes,
/// backslashes doubled, and cut to `max_chars` characters with a trailing `…`.
pub(crate) fn shown(text: &str, max_chars: usize) -> Cow<'_, str> {
    let fits = text.chars().nth(max_chars).is_none();
    // A backslash is doubled, so a typed `\u{202E}` cannot pass for an
    // escaped hidden character.
    if fits && !text.chars().any(|c| is_hidden(c) || c == '\\') {
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
        } else if c == '\\' {
            out.push_str("\\\\");
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
