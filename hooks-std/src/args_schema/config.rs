//! The config-file form of the schema guard.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value;

/// Config of [`ArgsSchema`](super::ArgsSchema):
///
/// ```yaml
/// - name: args_schema
///   config:
///     require_schema: true
///     schemas:
///       pay:
///         type: object
///         properties: { amount: { type: number }, payee: { type: string } }
///         required: [amount, payee]
///         additionalProperties: false
/// ```
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ArgsSchemaConfig {
    /// A JSON Schema per tool name. Names are compared exactly: no case
    /// folding, trimming or Unicode normalisation.
    pub schemas: BTreeMap<String, Value>,
    /// Block calls of tools that have no schema (default `false`: they pass).
    pub require_schema: bool,
    /// Deepest nesting of arrays and objects in arguments that is validated;
    /// deeper arguments are blocked unread (default 64).
    pub max_depth: usize,
    /// Priority (default 0: before every standard hook, so later guards see
    /// arguments of the declared types).
    pub priority: i32,
}

impl Default for ArgsSchemaConfig {
    fn default() -> Self {
        ArgsSchemaConfig {
            schemas: BTreeMap::new(),
            require_schema: false,
            max_depth: 64,
            priority: 0,
        }
    }
}
