//! What an approval covers: a digest of the tool name and its exact arguments.

use serde_json::Value;
use sha2::{Digest, Sha256};

/// Hex SHA-256 over the tool name, a NUL byte, and the canonical JSON of
/// `args` (object keys sorted at every depth), so the same call always has the
/// same digest whatever order its keys arrived in.
pub fn args_digest(tool_name: &str, args: &Value) -> String {
    let mut canonical = String::new();
    write_canonical(args, &mut canonical);
    let mut hasher = Sha256::new();
    hasher.update(tool_name.as_bytes());
    hasher.update([0]);
    hasher.update(canonical.as_bytes());
    hex::encode(hasher.finalize())
}

fn write_canonical(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort_unstable();
            out.push('{');
            for (i, key) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(key.clone()).to_string());
                out.push(':');
                write_canonical(&map[key], out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_canonical(item, out);
            }
            out.push(']');
        }
        scalar => out.push_str(&scalar.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::args_digest;

    #[test]
    fn key_order_does_not_matter_but_every_value_does() {
        let a = args_digest(
            "pay",
            &json!({"amount": 5, "to": {"iban": "X", "name": "Y"}}),
        );
        let b = args_digest(
            "pay",
            &json!({"to": {"name": "Y", "iban": "X"}, "amount": 5}),
        );
        assert_eq!(a, b);
        assert_ne!(
            a,
            args_digest(
                "pay",
                &json!({"amount": 6, "to": {"iban": "X", "name": "Y"}})
            )
        );
        assert_ne!(
            a,
            args_digest(
                "refund",
                &json!({"amount": 5, "to": {"iban": "X", "name": "Y"}})
            )
        );
        assert_ne!(
            args_digest("a", &json!("b")),
            args_digest("a\"", &json!("b"))
        );
    }
}
