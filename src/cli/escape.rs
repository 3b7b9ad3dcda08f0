//! Text from a call, made safe for one line of a table.

/// `text` for one line of a table: hidden characters (line breaks, bidi
/// overrides, zero-width characters, …) written as `\u{…}` escapes.
pub(super) fn printable(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if crate::text::is_hidden(c) {
            out.push_str(&format!("\\u{{{:X}}}", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    out
}
