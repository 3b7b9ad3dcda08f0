//! Finding every piece of SQL text in a SQL tool's arguments.

use serde_json::Value;

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
    let mut texts = Vec::new();
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
        // An explicit stack: a `Value` built in code may nest deeper than
        // any stack.
        let mut pending: Vec<(String, &Value)> = match args {
            Value::Object(args) => args
                .iter()
                .filter(|(name, _)| !is_key(name))
                .map(|(name, value)| (name.clone(), value))
                .collect(),
            other => vec![(String::new(), other)],
        };
        while let Some((path, value)) = pending.pop() {
            match value {
                Value::String(text) if looks_like_sql(text) => texts.push((path, text)),
                Value::Object(fields) => pending.extend(
                    fields
                        .iter()
                        .map(|(name, value)| (format!("{path}.{name}"), value)),
                ),
                Value::Array(items) => pending.extend(
                    items
                        .iter()
                        .enumerate()
                        .map(|(index, value)| (format!("{path}[{index}]"), value)),
                ),
                _ => {}
            }
            if texts.len() > MAX_SQL_TEXTS_PER_CALL {
                break;
            }
        }
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

/// Whether `text` may be SQL: it holds a `;` or, as a whole word in any
/// letter case, a word that starts a statement (`select`, `delete`, `set`,
/// `use`, `do`, …). Common English words are on that list, so prose can
/// look like SQL; it then fails to parse and counts as a write.
fn looks_like_sql(text: &str) -> bool {
    text.contains(';')
        || text
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '$'))
            .any(|word| {
                WRITING_STATEMENT_WORDS
                    .iter()
                    .chain(OTHER_STATEMENT_WORDS)
                    .any(|keyword| keyword.eq_ignore_ascii_case(word))
            })
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
        for not_sql in [
            "invoices",
            "monthly report",
            "csv",
            "2026-01-01",
            "selected",
        ] {
            assert!(!looks_like_sql(not_sql), "{not_sql}");
        }
    }
}
