//! Lexical rules no single `sqlparser` dialect covers, so the guard applies
//! them on top of every dialect.

/// Characters some database may take as the end of a `--` comment.
/// PostgreSQL ends one at `\r`; others may at the remaining line breaks.
const LINE_BREAKS: &[char] = &['\r', '\x0b', '\x0c', '\u{85}', '\u{2028}', '\u{2029}'];

/// The same text with every line break read as `\n`, if it has any other
/// than `\n`. Classifying this too means a `--` comment can never hide a
/// statement behind a line break that one database honours and another
/// does not (`SELECT 1; -- x\rDELETE FROM t`).
pub(crate) fn with_plain_line_breaks(sql: &str) -> Option<String> {
    sql.contains(LINE_BREAKS)
        .then(|| sql.replace(LINE_BREAKS, "\n"))
}

/// Why the text holds a comment that MySQL or MariaDB executes
/// (`/*! … */`, `/*M! … */`), or `None`. Other readers skip these comments,
/// so their contents would never be classified.
pub(crate) fn executable_comment(sql: &str) -> Option<String> {
    let bytes = sql.as_bytes();
    bytes.windows(3).enumerate().find_map(|(at, window)| {
        let executable = window == b"/*!"
            || (window[..2] == *b"/*"
                && matches!(window[2], b'M' | b'm')
                && bytes.get(at + 3) == Some(&b'!'));
        executable
            .then(|| "it holds a `/*! … */` comment, which MySQL and MariaDB execute".to_owned())
    })
}
