//! Whether a path below `args` can exist under a tool's JSON Schema.
//!
//! The walk follows `properties` (and `items` for array indexes) one
//! segment at a time, without recursion, so no schema shape — however deep,
//! however odd — can overflow the stack or panic. What it cannot decide
//! without evaluating the schema (references, combinators, conditionals,
//! pattern properties, properties the schema allows without listing them)
//! is reported as not checkable, never guessed.

use hooks_when::PathSegment;
use serde_json::{Map, Value};

/// Keywords whose meaning the walk does not evaluate: a node carrying one
/// makes the rest of the path not checkable.
const NOT_FOLLOWED: [&str; 11] = [
    "$ref",
    "$dynamicRef",
    "$recursiveRef",
    "allOf",
    "anyOf",
    "oneOf",
    "not",
    "if",
    "dependentSchemas",
    "unevaluatedProperties",
    "dependencies",
];

/// What the schema says about a path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum PathVerdict {
    /// The schema lists every step of the path.
    Exists,
    /// No value valid under the schema has the path; `why` says which step
    /// fails and `suggestion` is a listed property close to the missing one.
    CannotExist {
        why: String,
        suggestion: Option<String>,
    },
    /// The schema does not say (`why` names the keyword that stops the walk).
    NotCheckable { why: String },
}

/// The verdict on `path` (below `args`) under `schema`.
pub(super) fn check_path(schema: &Value, path: &[PathSegment]) -> PathVerdict {
    let mut node = schema;
    for (depth, segment) in path.iter().enumerate() {
        // Spelled out only for a verdict: a long path is walked in linear time.
        let here = || shown_path(&path[..depth]);
        let object = match node {
            Value::Bool(true) => {
                return not_checkable(format!("the schema allows any value at `{}`", here()));
            }
            Value::Bool(false) => {
                return PathVerdict::CannotExist {
                    why: format!("the schema allows no value at `{}`", here()),
                    suggestion: None,
                };
            }
            Value::Object(object) => object,
            _ => {
                return not_checkable(format!("the schema at `{}` is not a schema object", here()));
            }
        };
        if let Some(keyword) = NOT_FOLLOWED.iter().find(|k| object.contains_key(**k)) {
            return not_checkable(format!(
                "the schema at `{}` uses `{keyword}`, which this check does not follow",
                here()
            ));
        }
        let types = Types::of(object);
        let step = match segment {
            PathSegment::Key(key) => Step::Key(key.as_str()),
            PathSegment::Index(index) if types.array && !types.object => Step::Index,
            // An index on an object reads the key spelled in decimal.
            PathSegment::Index(_) if types.object && !types.array => Step::DecimalKey,
            PathSegment::Index(_) => {
                return not_checkable(format!(
                    "the schema at `{}` does not say whether it is an array or an object",
                    here()
                ));
            }
        };
        node = match step {
            Step::Index => match (object.get("prefixItems"), object.get("items")) {
                (None, Some(items)) => items,
                _ => {
                    return not_checkable(format!(
                        "the schema at `{}` gives no single `items` schema",
                        here()
                    ));
                }
            },
            Step::Key(_) | Step::DecimalKey => {
                let key = match (step, segment) {
                    (Step::Key(key), _) => key.to_owned(),
                    (_, PathSegment::Index(index)) => index.to_string(),
                    (_, PathSegment::Key(key)) => key.clone(),
                };
                if types.declared && !types.object {
                    return PathVerdict::CannotExist {
                        why: format!(
                            "the schema says `{}` is {}, which has no key `{key}`",
                            here(),
                            types.describe()
                        ),
                        suggestion: None,
                    };
                }
                match property(object, &key) {
                    Ok(Some(next)) => next,
                    Ok(None) => return missing(object, &here(), &key),
                    Err(why) => return not_checkable(why),
                }
            }
        };
    }
    PathVerdict::Exists
}

#[derive(Clone, Copy)]
enum Step<'p> {
    Key(&'p str),
    DecimalKey,
    Index,
}

/// The schema of property `key`, `Ok(None)` when it is not listed.
fn property<'s>(object: &'s Map<String, Value>, key: &str) -> Result<Option<&'s Value>, String> {
    match object.get("properties") {
        None => Ok(None),
        Some(Value::Object(properties)) => Ok(properties.get(key)),
        Some(_) => Err("the schema's `properties` is not an object".to_owned()),
    }
}

/// `key` is not listed: it cannot exist when the schema allows no other
/// properties; otherwise the schema does not say.
fn missing(object: &Map<String, Value>, here: &str, key: &str) -> PathVerdict {
    let listed: Vec<&str> = match object.get("properties") {
        Some(Value::Object(properties)) => properties.keys().map(String::as_str).collect(),
        _ => Vec::new(),
    };
    let suggestion = hooks_when::did_you_mean(key, listed.iter().copied()).map(str::to_owned);
    if object.contains_key("patternProperties") {
        return not_checkable(format!(
            "the schema at `{here}` has `patternProperties`, which this check does not match"
        ));
    }
    let closed = matches!(object.get("additionalProperties"), Some(Value::Bool(false)));
    if !closed {
        let hint = suggestion
            .map(|s| format!(" (did you mean `{}`?)", shown_path_with(here, &s)))
            .unwrap_or_default();
        return not_checkable(format!(
            "the schema at `{here}` does not list `{key}` but allows properties it does not \
             list (`additionalProperties` is not false){hint}"
        ));
    }
    let listed = if listed.is_empty() {
        "it lists none".to_owned()
    } else {
        format!("it lists {}", listed.join(", "))
    };
    PathVerdict::CannotExist {
        why: format!(
            "the schema at `{here}` has no property `{key}` and allows no others ({listed})"
        ),
        suggestion: suggestion.map(|s| shown_path_with(here, &s)),
    }
}

fn not_checkable(why: String) -> PathVerdict {
    PathVerdict::NotCheckable { why }
}

/// The JSON types a schema node allows, from its `type` (and, when it has
/// none, from `properties`/`items`).
struct Types {
    declared: bool,
    object: bool,
    array: bool,
    names: Vec<String>,
}

impl Types {
    fn of(object: &Map<String, Value>) -> Types {
        let names: Vec<String> = match object.get("type") {
            Some(Value::String(name)) => vec![name.clone()],
            Some(Value::Array(names)) => names
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect(),
            _ => Vec::new(),
        };
        if names.is_empty() {
            return Types {
                declared: false,
                object: object.contains_key("properties")
                    || object.contains_key("additionalProperties"),
                array: object.contains_key("items") || object.contains_key("prefixItems"),
                names,
            };
        }
        Types {
            declared: true,
            object: names.iter().any(|name| name == "object"),
            array: names.iter().any(|name| name == "array"),
            names,
        }
    }

    fn describe(&self) -> String {
        match self.names.as_slice() {
            [one] => format!("of type {one}"),
            many => format!("of type {}", many.join(" or ")),
        }
    }
}

/// `args.a.0.b` as a `when` expression spells it.
pub(super) fn shown_path(path: &[PathSegment]) -> String {
    let mut out = String::from("args");
    for segment in path {
        out.push('.');
        match segment {
            PathSegment::Key(key) => out.push_str(&crate::printable::shown(key, 60)),
            PathSegment::Index(index) => out.push_str(&index.to_string()),
        }
    }
    out
}

fn shown_path_with(here: &str, key: &str) -> String {
    format!("{here}.{key}")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn path(keys: &[&str]) -> Vec<PathSegment> {
        keys.iter()
            .map(|key| match key.parse::<usize>() {
                Ok(index) => PathSegment::Index(index),
                Err(_) => PathSegment::Key((*key).to_owned()),
            })
            .collect()
    }

    #[test]
    fn listed_paths_exist_and_closed_schemas_refuse_others() {
        let schema = json!({
            "type": "object",
            "properties": {
                "command": {"type": "string"},
                "env": {"type": "object", "properties": {"HOME": {}}, "additionalProperties": false},
                "files": {"type": "array", "items": {"type": "object", "properties": {"name": {}}}}
            },
            "additionalProperties": false
        });
        assert_eq!(
            check_path(&schema, &path(&["command"])),
            PathVerdict::Exists
        );
        assert_eq!(
            check_path(&schema, &path(&["files", "3", "name"])),
            PathVerdict::Exists
        );
        assert_eq!(
            check_path(&schema, &path(&["comand"])),
            PathVerdict::CannotExist {
                why: "the schema at `args` has no property `comand` and allows no others \
                      (it lists command, env, files)"
                    .to_owned(),
                suggestion: Some("args.command".to_owned()),
            }
        );
        assert!(matches!(
            check_path(&schema, &path(&["env", "HOMR"])),
            PathVerdict::CannotExist { suggestion: Some(s), .. } if s == "args.env.HOME"
        ));
        assert!(matches!(
            check_path(&schema, &path(&["command", "x"])),
            PathVerdict::CannotExist {
                suggestion: None,
                ..
            }
        ));
        assert!(matches!(
            check_path(&schema, &path(&["files", "0", "size"])),
            PathVerdict::NotCheckable { .. }
        ));
    }

    #[test]
    fn what_the_walk_does_not_evaluate_is_not_checkable() {
        for schema in [
            json!({"$ref": "#/$defs/args"}),
            json!({"type": "object", "properties": {"a": {}}}),
            json!({"type": "object", "patternProperties": {"^x": {}}, "additionalProperties": false}),
            json!({"anyOf": [{"properties": {"b": {}}}]}),
            json!(true),
            json!({"type": "object", "properties": "oops"}),
            json!(42),
        ] {
            assert!(
                matches!(
                    check_path(&schema, &path(&["b"])),
                    PathVerdict::NotCheckable { .. }
                ),
                "{schema}"
            );
        }
        assert!(matches!(
            check_path(&json!(false), &path(&["b"])),
            PathVerdict::CannotExist { .. }
        ));
    }

    #[test]
    fn deep_and_hostile_schemas_do_not_panic() {
        // Nested by hand: `json!` would serialize the inner value recursively.
        let level = |inner: Value| {
            let mut properties = Map::new();
            properties.insert("a".to_owned(), inner);
            let mut node = Map::new();
            node.insert("type".to_owned(), json!("object"));
            node.insert("properties".to_owned(), Value::Object(properties));
            node.insert("additionalProperties".to_owned(), json!(false));
            Value::Object(node)
        };
        let mut schema = json!({"type": "object", "properties": {}, "additionalProperties": false});
        for _ in 0..2_000 {
            schema = level(schema);
        }
        let long: Vec<PathSegment> = (0..2_050).map(|_| PathSegment::Key("a".into())).collect();
        assert!(matches!(
            check_path(&schema, &long),
            PathVerdict::CannotExist { .. }
        ));
        // serde_json drops deep values recursively; leak it rather than overflow the test's stack.
        std::mem::forget(schema);
        let odd = json!({"type": ["object", 7, null], "properties": {"a": {"items": 3, "type": "array"}},
                          "additionalProperties": false});
        assert!(matches!(
            check_path(&odd, &path(&["a", "0", "x"])),
            PathVerdict::NotCheckable { .. }
        ));
    }
}
