//! Finding every piece of SQL text in a SQL tool's arguments.

use serde_json::Value;
use sqlparser::keywords::ALL_KEYWORDS;

use super::sql::WRITING_STATEMENT_WORDS;

/// All the SQL text one call may carry, summed over its arguments; more is
/// a write, unparsed. Each text is parsed once per dialect, so this bounds
/// the time one call can take, however many keys (`sql`, `SQL`, `Sql`, …)
/// it spells.
pub const MAX_SQL_BYTES_PER_CALL: usize = 128 * 1024;

/// How many SQL texts one call may carry; more is a write, unparsed.
pub const MAX_SQL_TEXTS_PER_CALL: usize = 32;

/// Words that start a statement somewhere, besides the writing ones: with
/// `check_all_string_args`, a string holding any of them as a word (or a
/// `;`) is classified as SQL.
const OTHER_STATEMENT_WORDS: &[&str] = &[
    "ABORT",
    "ANALYZE",
    "BEGIN",
    "CACHE",
    "CLUSTER",
    "COMMENT",
    "COMMIT",
    "DESC",
    "DESCRIBE",
    "DISCARD",
    "DO",
    "END",
    "EXPLAIN",
    "EXPORT",
    "FLUSH",
    "GET",
    "HANDLER",
    "IMPORT",
    "INSTALL",
    "LIST",
    "LISTEN",
    "LOCK",
    "MSCK",
    "NOTIFY",
    "OPTIMIZE",
    "PREPARE",
    "PUT",
    "REFRESH",
    "REINDEX",
    "RELEASE",
    "REMOVE",
    "REPLACE",
    "RESET",
    "ROLLBACK",
    "SAVEPOINT",
    "SECURITY",
    "SELECT",
    "SET",
    "SHOW",
    "START",
    "TABLE",
    "UNCACHE",
    "UNINSTALL",
    "UNLISTEN",
    "UNLOAD",
    "UNLOCK",
    "USE",
    "VALUES",
    "WITH",
];

/// The SQL texts in `args`, as `(where, text)`, or why the call must count
/// as a write without parsing anything.
///
/// Every top-level argument whose name matches a key (ASCII
/// case-insensitively: a tool may read `Query` as `query`) is returned, not
/// just the first, so `{"sql": "SELECT 1", "query": "DELETE …"}` cannot slip
/// a write past. `null` counts as absent; any other non-text value (number,
/// list, object) fails closed, since a tool may turn it into SQL somehow.
/// With `every_string`, any other string anywhere in `args` (nested objects
/// and lists too) that looks like SQL (see [`looks_like_sql`]) is returned as
/// well, named by its path (`params.sql_text`, `batch[1]`).
pub(crate) fn sql_texts<'a>(
    tool_name: &str,
    args: &'a Value,
    keys: &[String],
    every_string: bool,
) -> Result<Vec<(String, &'a str)>, String> {
    let mut texts: Vec<(String, &'a str)> = Vec::new();
    let is_key = |name: &str| keys.iter().any(|key| key.eq_ignore_ascii_case(name));
    if let Value::Object(args) = args {
        for (name, value) in args {
            if !is_key(name) {
                continue;
            }
            match value {
                Value::String(text) => texts.push((name.clone(), text.as_str())),
                Value::Null => {}
                other => {
                    return Err(format!(
                        "argument `{name}` of SQL tool `{tool_name}` is {}, not SQL text, \
                         so the call is treated as a write",
                        kind(other)
                    ));
                }
            }
        }
    }
    if every_string {
        strings_like_sql(tool_name, args, &is_key, &mut texts)?;
    }
    if texts.is_empty() {
        return Err(format!(
            "SQL tool `{tool_name}` has no SQL text in its arguments, so it is treated as a write"
        ));
    }
    if texts.len() > MAX_SQL_TEXTS_PER_CALL {
        return Err(format!(
            "SQL tool `{tool_name}` has more than {MAX_SQL_TEXTS_PER_CALL} SQL texts in one call, \
             too many to classify safely, so it is treated as a write"
        ));
    }
    let total: usize = texts.iter().map(|(_, text)| text.len()).sum();
    if total > MAX_SQL_BYTES_PER_CALL {
        return Err(format!(
            "SQL tool `{tool_name}` has {total} bytes of SQL in one call, over the \
             {MAX_SQL_BYTES_PER_CALL}-byte limit, too long to classify safely, \
             so it is treated as a write"
        ));
    }
    Ok(texts)
}

/// How many values (objects, lists, strings, numbers…) `check_all_string_args`
/// looks at in one call; an argument tree with more is a write, unread,
/// so a huge list cannot cost unbounded time or memory.
pub const MAX_ARGUMENT_VALUES: usize = 10_000;

/// One step of a path inside the arguments: an object key or a list index.
#[derive(Clone, Copy)]
enum Step<'a> {
    Key(&'a str),
    Index(usize),
}

/// A value still to look at, and where it is: `parent` indexes the
/// containers already entered, so no path is built (or copied per child)
/// unless the value turns out to be SQL.
struct Pending<'a> {
    value: &'a Value,
    parent: Option<usize>,
    step: Step<'a>,
}

/// Adds every string in `args` outside the configured top-level keys that
/// looks like SQL (see [`looks_like_sql`]) to `texts`, named by its path
/// (`params.sql_text`, `batch[1]`). An explicit stack, because a `Value`
/// built in code may nest deeper than any stack; more than
/// [`MAX_ARGUMENT_VALUES`] values, or more than [`MAX_SQL_TEXTS_PER_CALL`]
/// texts, ends the walk.
fn strings_like_sql<'a>(
    tool_name: &str,
    args: &'a Value,
    is_key: &dyn Fn(&str) -> bool,
    texts: &mut Vec<(String, &'a str)>,
) -> Result<(), String> {
    // The containers entered so far: (parent, step into it).
    let mut entered: Vec<(Option<usize>, Step<'a>)> = Vec::new();
    let mut pending: Vec<Pending<'a>> = Vec::new();
    match args {
        Value::Object(fields) => pending.extend(
            fields
                .iter()
                .filter(|(name, _)| !is_key(name))
                .map(|(name, value)| Pending {
                    value,
                    parent: None,
                    step: Step::Key(name),
                }),
        ),
        other => pending.push(Pending {
            value: other,
            parent: None,
            step: Step::Key(""),
        }),
    }
    let too_many = || {
        format!(
            "SQL tool `{tool_name}` has more than {MAX_ARGUMENT_VALUES} argument values, \
             too many arguments to classify safely for SQL, so it is treated as a write"
        )
    };
    // Counted before a container's children are queued, so a huge list
    // costs nothing beyond its length.
    let mut seen = pending.len();
    if seen > MAX_ARGUMENT_VALUES {
        return Err(too_many());
    }
    while let Some(Pending {
        value,
        parent,
        step,
    }) = pending.pop()
    {
        let children = match value {
            Value::Object(fields) => fields.len(),
            Value::Array(items) => items.len(),
            _ => 0,
        };
        seen += children;
        if seen > MAX_ARGUMENT_VALUES {
            return Err(too_many());
        }
        match value {
            Value::String(text) if looks_like_sql(text) => {
                texts.push((path(&entered, parent, step), text));
                if texts.len() > MAX_SQL_TEXTS_PER_CALL {
                    return Ok(());
                }
            }
            Value::Object(fields) => {
                entered.push((parent, step));
                let here = Some(entered.len() - 1);
                pending.extend(fields.iter().map(|(name, value)| Pending {
                    value,
                    parent: here,
                    step: Step::Key(name),
                }));
            }
            Value::Array(items) => {
                entered.push((parent, step));
                let here = Some(entered.len() - 1);
                pending.extend(items.iter().enumerate().map(|(index, value)| Pending {
                    value,
                    parent: here,
                    step: Step::Index(index),
                }));
            }
            _ => {}
        }
    }
    Ok(())
}

/// The path of the value reached by `step` from the container `parent`.
fn path(entered: &[(Option<usize>, Step<'_>)], parent: Option<usize>, step: Step<'_>) -> String {
    let mut steps = vec![step];
    let mut at = parent;
    while let Some(index) = at {
        let (up, step) = entered[index];
        steps.push(step);
        at = up;
    }
    let mut path = String::new();
    for (depth, step) in steps.iter().rev().enumerate() {
        match step {
            Step::Key(name) if depth == 0 => path.push_str(name),
            Step::Key(name) => {
                path.push('.');
                path.push_str(name);
            }
            Step::Index(index) => path.push_str(&format!("[{index}]")),
        }
    }
    path
}

/// Whether `text` may be SQL: it holds a `;`; or, as a whole word in any
/// letter case, a word that starts a statement (`select`, `delete`, `set`,
/// `use`, `do`, …); or its first word is any SQL keyword `sqlparser` knows
/// and more follows (`REASSIGN OWNED BY …`, `PURGE BINARY LOGS …`), or it
/// is a single-word statement (`RESTART`). Common English words are among
/// these, so prose can look like SQL; it then fails to parse and counts as
/// a write. A lone keyword that is no statement (`csv`, `json`) is a value.
fn looks_like_sql(text: &str) -> bool {
    let is_word_char = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '$';
    let on = |list: &[&str], word: &str| list.iter().any(|k| k.eq_ignore_ascii_case(word));
    if text.contains(';')
        || text
            .split(|c: char| !is_word_char(c))
            .any(|word| on(WRITING_STATEMENT_WORDS, word) || on(OTHER_STATEMENT_WORDS, word))
    {
        return true;
    }
    let trimmed = text.trim_start();
    let first_end = trimmed
        .find(|c: char| !is_word_char(c))
        .unwrap_or(trimmed.len());
    let (first, rest) = trimmed.split_at(first_end);
    if first.is_empty() {
        return false;
    }
    let keyword = ALL_KEYWORDS
        .binary_search_by(|k| cmp_ascii_uppercase(k, first))
        .is_ok()
        || on(FIRST_WORDS, first);
    keyword && (!rest.trim().is_empty() || on(ONE_WORD_STATEMENTS, first))
}

/// Words that start a statement in some database but are no `sqlparser`
/// keyword, checked as a text's first word.
const FIRST_WORDS: &[&str] = &["REASSIGN", "STOP", "RECONNECT", "RESUME", "SUSPEND"];

/// Statements that are one word and are on no other list.
const ONE_WORD_STATEMENTS: &[&str] = &["RESTART", "STOP", "RECONNECT", "RESUME", "SUSPEND"];

/// `keyword` (upper case) against `word` in any case, as upper case.
fn cmp_ascii_uppercase(keyword: &str, word: &str) -> std::cmp::Ordering {
    keyword
        .bytes()
        .cmp(word.bytes().map(|b| b.to_ascii_uppercase()))
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "text",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sql_is_told_from_names_and_numbers() {
        for sql in ["SELECT 1", "x; y", "vacuum t", "Drop table t", "do $$ $$"] {
            assert!(looks_like_sql(sql), "{sql}");
        }
        for sql in [
            "REASSIGN OWNED BY a TO b",
            "purge binary logs",
            "  Restart",
            "STOP REPLICA",
            "clone instance from x",
        ] {
            assert!(looks_like_sql(sql), "{sql}");
        }
        for not_sql in [
            "invoices",
            "monthly report",
            "csv",
            "JSON",
            "2026-01-01",
            "selected",
            "",
            "  ",
        ] {
            assert!(!looks_like_sql(not_sql), "{not_sql}");
        }
    }
}
