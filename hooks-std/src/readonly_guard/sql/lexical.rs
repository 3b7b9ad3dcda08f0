//! Lexical rules no single `sqlparser` dialect covers, so the guard applies
//! them on top of every dialect.

use sqlparser::tokenizer::{Token, TokenWithSpan};

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

/// Unquoted words that start a writing (or session-changing) statement.
/// SQL Server does not need `;` between statements, so in
/// `SELECT 1 DELETE FROM t` it runs a `DELETE` where every parser sees a
/// column alias; such a word inside a statement that otherwise reads makes
/// it a write. The T-SQL reserved words that start a statement are all here
/// (`CHECKPOINT`, `RECONFIGURE`, `WAITFOR`, …). Left out: `REPLACE` and
/// `USE` (also a function and an index hint), `SET` (also `CHARACTER SET`
/// in a cast; an `UPDATE … SET` is caught by `UPDATE`), and `OPEN`/`CLOSE`
/// (everyday column names; opening a cursor writes nothing).
pub(crate) const WRITING_STATEMENT_WORDS: &[&str] = &[
    "ALTER",
    "ATTACH",
    "BACKUP",
    "BULK",
    "CALL",
    "CHECKPOINT",
    "COPY",
    "CREATE",
    "DBCC",
    "DEALLOCATE",
    "DECLARE",
    "DELETE",
    "DENY",
    "DETACH",
    "DROP",
    "DUMP",
    "EXEC",
    "EXECUTE",
    "GRANT",
    "INSERT",
    "KILL",
    "LOAD",
    "MERGE",
    "PRAGMA",
    "RECONFIGURE",
    "RENAME",
    "RESTORE",
    "REVERT",
    "REVOKE",
    "SETUSER",
    "SHUTDOWN",
    "TRUNCATE",
    "UPDATE",
    "UPDATETEXT",
    "UPSERT",
    "VACUUM",
    "WAITFOR",
    "WRITETEXT",
];

/// Why `tokens` hold a bare word that starts a writing statement inside
/// another statement, if they do. The first word of each statement (at the
/// start, or after a `;`) is left to the parser, which judges the whole
/// statement it starts: `PRAGMA table_info('t')` is a read there.
pub(crate) fn writing_statement_word(tokens: &[TokenWithSpan]) -> Option<String> {
    let mut statement_start = true;
    // Right after `SHOW` opening a statement: `SHOW CREATE TABLE t`
    // (MySQL) shows a table's definition. (`SELECT 1 SHOW CREATE …` is not
    // exempt: there SHOW can be an alias, and SQL Server needs no `;`.)
    let mut after_show = false;
    for token in tokens.iter().map(|t| &t.token) {
        let shown = std::mem::take(&mut after_show);
        match token {
            Token::Whitespace(_) => {
                after_show = shown;
                continue;
            }
            Token::SemiColon => {
                statement_start = true;
                continue;
            }
            Token::Word(word)
                if statement_start
                    && word.quote_style.is_none()
                    && word.value.eq_ignore_ascii_case("SHOW") =>
            {
                after_show = true;
            }
            Token::Word(word)
                if !statement_start
                    && !shown
                    && word.quote_style.is_none()
                    && WRITING_STATEMENT_WORDS
                        .iter()
                        .any(|keyword| keyword.eq_ignore_ascii_case(&word.value)) =>
            {
                return Some(format!(
                    "it contains the word {}, which starts a new statement in SQL Server \
                     (statements need no `;` there)",
                    word.value.to_ascii_uppercase()
                ));
            }
            _ => {}
        }
        statement_start = false;
    }
    None
}

/// Why `tokens` hold a bare word that starts a writing statement anywhere,
/// first word included, if they do: for a reading the parser could not
/// read, where no statement can be judged whole.
pub(crate) fn any_writing_word(tokens: &[TokenWithSpan]) -> Option<String> {
    tokens.iter().find_map(|token| match &token.token {
        Token::Word(word)
            if word.quote_style.is_none()
                && WRITING_STATEMENT_WORDS
                    .iter()
                    .any(|keyword| keyword.eq_ignore_ascii_case(&word.value)) =>
        {
            Some(format!(
                "it contains the word {}, which starts a writing statement",
                word.value.to_ascii_uppercase()
            ))
        }
        _ => None,
    })
}

/// SQL Server table hints that lock (or hold locks longer than a plain
/// read) as a word; see `writes` for the same hints after a table.
pub(crate) const LOCKING_HINTS: &[&str] = &[
    "HOLDLOCK",
    "PAGLOCK",
    "REPEATABLEREAD",
    "ROWLOCK",
    "SERIALIZABLE",
    "TABLOCK",
    "TABLOCKX",
    "UPDLOCK",
    "XLOCK",
];

/// Why `tokens` hold a SQL Server query hint that takes locks, or `None`:
/// `OPTION (TABLE HINT(t, XLOCK))` locks like `WITH (XLOCK)` on the table,
/// and parsers read `OPTION (…)` as an alias with column definitions. Any
/// `TABLE HINT` inside `OPTION (…)`, or a locking hint word there, is a
/// write.
pub(crate) fn locking_query_hint(tokens: &[TokenWithSpan]) -> Option<String> {
    let words: Vec<&Token> = tokens
        .iter()
        .map(|t| &t.token)
        .filter(|token| !matches!(token, Token::Whitespace(_)))
        .collect();
    let bare = |token: &Token, name: &str| {
        matches!(token, Token::Word(word)
            if word.quote_style.is_none() && word.value.eq_ignore_ascii_case(name))
    };
    let mut at = 0;
    while at + 1 < words.len() {
        if !(bare(words[at], "OPTION") && matches!(words[at + 1], Token::LParen)) {
            at += 1;
            continue;
        }
        let mut depth = 0usize;
        let mut previous: Option<&Token> = None;
        for &token in &words[at + 1..] {
            match token {
                Token::LParen => depth += 1,
                Token::RParen => depth = depth.saturating_sub(1),
                _ => {}
            }
            if bare(token, "HINT") && previous.is_some_and(|p| bare(p, "TABLE")) {
                return Some("its OPTION (TABLE HINT …) query hint takes table locks".to_owned());
            }
            if let Some(hint) = LOCKING_HINTS.iter().find(|hint| bare(token, hint)) {
                return Some(format!("its OPTION (…) query hint {hint} takes locks"));
            }
            if depth == 0 {
                break;
            }
            previous = Some(token);
        }
        at += 1;
    }
    None
}
