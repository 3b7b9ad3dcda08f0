//! The upstream's tool schemas, registered with the `args_schema` guard.

use std::collections::BTreeMap;

use rmcp::model::Tool;
use serde_json::{Map, Value};

use super::tools::Checked;
use crate::config::{AgentConfig, ClassHookEntry};
use crate::std_hooks::ArgsSchema;

/// Where the added guard says it came from, in config errors.
const ENTRY: &str = "mcp_proxy (the upstream tools' inputSchema)";

/// Adds each upstream tool's `inputSchema` to the agent's `args_schema`
/// guard (adding the guard when the config has none). A schema the config
/// already gives for a tool wins. Returns the tools whose schema the guard
/// cannot compile, with why (their calls are blocked, since the proxy
/// cannot check their arguments), and the tools whose arguments are
/// checked, with the upstream schema registered for each (`None`: the
/// config's own). A tool missing from the second is never called.
pub(super) fn register(
    config: &mut AgentConfig,
    tools: &[Tool],
) -> (BTreeMap<String, String>, Checked) {
    let position = config
        .class_hooks
        .iter()
        .position(|entry| entry.name == ArgsSchema::NAME);
    let index = match position {
        Some(index) => index,
        None => {
            config.class_hooks.push(ClassHookEntry {
                name: ArgsSchema::NAME.to_owned(),
                config: Value::Object(Map::new()),
                entry: ENTRY.to_owned(),
            });
            config.class_hooks.len() - 1
        }
    };
    let entry = &mut config.class_hooks[index];
    if entry.config.is_null() {
        entry.config = Value::Object(Map::new());
    }
    let mut unusable = BTreeMap::new();
    let mut checked = Checked::new();
    // A config that is not a mapping is left for the guard to report (the
    // agent does not build, so nothing is served).
    let Some(settings) = entry.config.as_object_mut() else {
        return (unusable, checked);
    };
    let schemas = settings
        .entry("schemas")
        .or_insert_with(|| Value::Object(Map::new()));
    let Some(schemas) = schemas.as_object_mut() else {
        return (unusable, checked);
    };
    for tool in tools {
        let name = tool.name.to_string();
        if schemas.contains_key(&name) {
            checked.insert(name, None);
            continue;
        }
        let schema = Value::Object((*tool.input_schema).clone());
        if constrains_nothing(&schema) {
            // Nothing to check: every argument object passes.
            checked.insert(name, Some(schema));
            continue;
        }
        match ArgsSchema::builder().tool(name.clone(), schema.clone()) {
            Ok(_) => {
                schemas.insert(name.clone(), schema.clone());
                checked.insert(name, Some(schema));
            }
            Err(error) => {
                unusable.insert(name, error.to_string());
            }
        }
    }
    (unusable, checked)
}

/// `{}`: a schema that admits every value, with nothing to register.
fn constrains_nothing(schema: &Value) -> bool {
    schema.as_object().is_some_and(Map::is_empty)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::config::ConfigFormat;

    fn tool(name: &'static str, schema: Value) -> Tool {
        let Value::Object(schema) = schema else {
            panic!("a schema object")
        };
        Tool::new(name, "a tool", schema)
    }

    #[test]
    fn upstream_schemas_join_the_guard_and_the_configs_own_win() {
        let yaml = "agent: a\nhooks:\n  class_hooks:\n    - name: args_schema\n      config:\n        \
                    schemas:\n          pay: {type: object, required: [amount]}\n";
        let mut config =
            AgentConfig::parse(yaml, ConfigFormat::Yaml, "a.yaml", None).expect("config");
        let tools = [
            tool("pay", json!({"type": "object"})),
            tool("echo", json!({"type": "object", "required": ["message"]})),
            tool("anything", json!({})),
            tool(
                "broken",
                json!({"type": "object", "pattern": "(?=look-around)"}),
            ),
        ];
        let (unusable, checked) = register(&mut config, &tools);
        let schemas = &config.class_hooks[0].config["schemas"];
        assert_eq!(
            schemas["pay"],
            json!({"type": "object", "required": ["amount"]})
        );
        assert_eq!(schemas["echo"]["required"], json!(["message"]));
        assert!(schemas.get("anything").is_none());
        assert!(schemas.get("broken").is_none());
        assert_eq!(unusable.keys().collect::<Vec<_>>(), ["broken"]);
        assert_eq!(
            checked.keys().collect::<Vec<_>>(),
            ["anything", "echo", "pay"],
            "a tool whose schema cannot be checked is never called"
        );
        assert_eq!(checked["pay"], None, "the config's own schema");
    }

    #[test]
    fn a_config_without_the_guard_gets_it() {
        let mut config =
            AgentConfig::parse("agent: a\n", ConfigFormat::Yaml, "a.yaml", None).expect("config");
        let (unusable, _) = register(&mut config, &[tool("echo", json!({"type": "object"}))]);
        assert!(unusable.is_empty());
        assert_eq!(config.class_hooks.len(), 1);
        assert_eq!(config.class_hooks[0].name, "args_schema");
        assert_eq!(
            config.class_hooks[0].config["schemas"]["echo"],
            json!({"type": "object"})
        );
    }
}
