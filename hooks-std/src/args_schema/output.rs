//! A tool's result checked against the tool's own output schema (MCP's
//! `outputSchema`): what a client that validates results will refuse.

use serde_json::Value;

use jsonschema::PatternOptions;

/// The longest problem reported, in characters: a validation error quotes
/// the value, which may be anything the upstream sent.
const MAX_PROBLEM_CHARS: usize = 200;

/// Why `value` does not match `schema`, or `None` when it does, in at most
/// 200 characters (where, and which keyword). A schema that cannot be
/// compiled (offline: no remote `$ref`s) is a problem too: a result that
/// cannot be checked is not sent as valid. Known formats are checked, as
/// the strictest clients do; a format no client knows (`path`, `int64`)
/// is not.
pub fn output_problem(schema: &Value, value: &Value) -> Option<String> {
    let compiled = jsonschema::options()
        .offline()
        .should_validate_formats(true)
        .should_ignore_unknown_formats(true)
        .with_pattern_options(PatternOptions::regex())
        .build(schema);
    let validator = match compiled {
        Ok(validator) => validator,
        Err(error) => {
            return Some(capped(format!(
                "the output schema cannot be checked: {error}"
            )));
        }
    };
    let error = validator.iter_errors(value).next()?;
    let keyword = error
        .schema_path()
        .as_str()
        .rsplit('/')
        .next()
        .unwrap_or_default()
        .to_owned();
    Some(capped(match error.instance_path().as_str() {
        "" => format!("the value fails `{keyword}`"),
        at => format!("at {at}: the value fails `{keyword}`"),
    }))
}

fn capped(text: String) -> String {
    match text.char_indices().nth(MAX_PROBLEM_CHARS) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text,
    }
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
