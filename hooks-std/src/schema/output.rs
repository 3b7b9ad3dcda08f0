//! A tool's result checked against the tool's own output schema (MCP's
//! `outputSchema`): what a client that validates results will refuse.

use serde_json::Value;

/// Why `value` does not match `schema`, or `None` when it does. A schema
/// that cannot be compiled (offline: no remote `$ref`s) is a problem too:
/// a result that cannot be checked is not sent as valid. Formats are
/// checked, as the strictest clients do.
pub fn output_problem(schema: &Value, value: &Value) -> Option<String> {
    let validator = match super::builder::compile(schema) {
        Ok(validator) => validator,
        Err(error) => return Some(format!("the output schema cannot be checked: {error}")),
    };
    let error = validator.iter_errors(value).next()?;
    Some(match error.instance_path().as_str() {
        "" => error.to_string(),
        at => format!("at {at}: {error}"),
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn results_are_checked_like_a_strict_client_would() {
        let schema = json!({"type": "object", "properties": {"content": {"type": "string", "maxLength": 5}},
                            "required": ["content"], "additionalProperties": false});
        assert_eq!(output_problem(&schema, &json!({"content": "short"})), None);
        assert!(output_problem(&schema, &json!({"content": "too long"})).is_some());
        assert!(output_problem(&schema, &json!({})).is_some());
        let email = json!({"type": "string", "format": "email"});
        assert!(output_problem(&email, &json!("not an address")).is_some());
        let remote = json!({"$ref": "https://example.invalid/schema.json"});
        assert!(
            output_problem(&remote, &json!(1)).is_some(),
            "cannot be checked offline"
        );
    }
}
