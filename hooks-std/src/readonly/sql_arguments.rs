//! Finding every piece of SQL text in a SQL tool's arguments.

use serde_json::Value;

/// The SQL texts under `keys` in `args`, as `(key, text)`, or why the call
/// must count as a write without parsing anything.
///
/// Every argument whose name matches a key (ASCII case-insensitively: a tool
/// may read `Query` as `query`) is returned, not just the first, so
/// `{"sql": "SELECT 1", "query": "DELETE …"}` cannot slip a write past.
/// `null` counts as absent; any other non-text value (number, list, object)
/// fails closed, since a tool may turn it into SQL somehow.
pub(crate) fn sql_texts<'a>(
    tool_name: &str,
    args: &'a Value,
    keys: &[String],
) -> Result<Vec<(&'a str, &'a str)>, String> {
    let mut texts = Vec::new();
    if let Value::Object(args) = args {
        for (name, value) in args {
            if !keys.iter().any(|key| key.eq_ignore_ascii_case(name)) {
                continue;
            }
            match value {
                Value::String(text) => texts.push((name.as_str(), text.as_str())),
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
    if texts.is_empty() {
        return Err(format!(
            "SQL tool `{tool_name}` has no SQL text in its arguments, so it is treated as a write"
        ));
    }
    Ok(texts)
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
