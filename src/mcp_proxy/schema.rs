//! The upstream's tool schemas, registered with the `args_schema` guard.

use std::collections::BTreeMap;

use rmcp::model::Tool;
use serde_json::{Map, Value};

use crate::config::{AgentConfig, ClassHookEntry};
use crate::std_hooks::ArgsSchemaHook;

/// Where the added guard says it came from, in config errors.
const ENTRY: &str = "mcp_proxy (the upstream tools' inputSchema)";

/// Adds each upstream tool's `inputSchema` to the agent's `args_schema`
/// guard (adding the guard when the config has none). A schema the config
/// already gives for a tool wins. Returns the tools whose schema the guard
/// cannot compile, with why: their calls are blocked, since the proxy
/// cannot check their arguments.
pub(super) fn register(config: &mut AgentConfig, tools: &[Tool]) -> BTreeMap<String, String> {
    let position = config
        .class_hooks
        .iter()
        .position(|entry| entry.name == ArgsSchemaHook::NAME);
    let index = match position {
        Some(index) => index,
        None => {
            config.class_hooks.push(ClassHookEntry {
                name: ArgsSchemaHook::NAME.to_owned(),
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
    // A config that is not a mapping is left for the guard to report.
    let Some(settings) = entry.config.as_object_mut() else {
        return unusable;
    };
    let schemas = settings
        .entry("schemas")
        .or_insert_with(|| Value::Object(Map::new()));
    let Some(schemas) = schemas.as_object_mut() else {
        return unusable;
    };
    for tool in tools {
        let name = tool.name.to_string();
        if schemas.contains_key(&name) {
            continue;
        }
        let schema = Value::Object((*tool.input_schema).clone());
        if constrains_nothing(&schema) {
            continue;
        }
        match ArgsSchemaHook::builder().tool(name.clone(), schema.clone()) {
            Ok(_) => {
                schemas.insert(name, schema);
            }
            Err(error) => {
                unusable.insert(name, error.to_string());
            }
        }
    }
    unusable
}

/// `{}`: a schema that admits every value, with nothing to register.
fn constrains_nothing(schema: &Value) -> bool {
    schema.as_object().is_some_and(Map::is_empty)
}
