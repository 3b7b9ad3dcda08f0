//! Building a schema guard in code, one tool at a time.

use std::collections::HashMap;

use jsonschema::{PatternOptions, Validator};
use serde_json::Value;

use super::config::ArgsSchemaConfig;
use super::error::SchemaError;
use super::hook::ArgsSchema;

/// Builds an [`ArgsSchema`], compiling each schema as it is added, so a
/// bad schema is an error here and never while deciding a call.
///
/// ```
/// use hooks::std_hooks::ArgsSchema;
/// use serde_json::json;
///
/// let guard = ArgsSchema::builder()
///     .tool("pay", json!({
///         "type": "object",
///         "properties": {"amount": {"type": "number"}},
///         "required": ["amount"],
///         "additionalProperties": false
///     }))?
///     .require_schema(true)
///     .build();
/// # Ok::<(), hooks::std_hooks::SchemaError>(())
/// ```
#[derive(Debug)]
pub struct ArgsSchemaBuilder {
    schemas: HashMap<String, Validator>,
    require_schema: bool,
    max_depth: usize,
    priority: i32,
}

impl Default for ArgsSchemaBuilder {
    fn default() -> Self {
        let defaults = ArgsSchemaConfig::default();
        ArgsSchemaBuilder {
            schemas: HashMap::new(),
            require_schema: defaults.require_schema,
            max_depth: defaults.max_depth,
            priority: defaults.priority,
        }
    }
}

impl ArgsSchemaBuilder {
    /// Declares the JSON Schema of `tool`'s arguments.
    ///
    /// The schema's `$schema` picks the draft (2020-12 if absent). It is
    /// checked against its meta-schema; `format`s are asserted, and an
    /// unknown `format` is an error; `pattern`s use a linear-time regex
    /// engine, so one with look-around or back-references is an error rather
    /// than a way for a hostile string to stall the guard; `$ref`s resolve
    /// only inside the schema, never over the network or from files.
    pub fn tool(mut self, tool: impl Into<String>, schema: Value) -> Result<Self, SchemaError> {
        let tool = tool.into();
        if tool.is_empty() || tool.trim() != tool || tool.chars().any(char::is_control) {
            return Err(SchemaError::BadToolName { tool });
        }
        if self.schemas.contains_key(&tool) {
            return Err(SchemaError::DuplicateTool { tool });
        }
        let validator = compile(&schema).map_err(|message| SchemaError::InvalidSchema {
            tool: tool.clone(),
            message,
        })?;
        if checks_nothing(&schema, &validator) {
            return Err(SchemaError::InvalidSchema {
                tool,
                message: "it accepts every value (a `$ref` that only refers back to itself \
                          constrains nothing), so it would look like a guard and check nothing; \
                          write `true` if the tool really takes anything"
                    .to_owned(),
            });
        }
        self.schemas.insert(tool, validator);
        Ok(self)
    }

    /// Whether calls of tools without a schema are blocked (default: they pass).
    pub fn require_schema(mut self, required: bool) -> Self {
        self.require_schema = required;
        self
    }

    /// The deepest nesting of arrays and objects that is validated (default
    /// 64); deeper arguments are blocked without being read further.
    pub fn max_depth(mut self, depth: usize) -> Result<Self, SchemaError> {
        if depth == 0 {
            return Err(SchemaError::ZeroDepth);
        }
        self.max_depth = depth;
        Ok(self)
    }

    /// The hook's priority (default 0).
    pub fn priority(mut self, priority: i32) -> Self {
        self.priority = priority;
        self
    }

    /// The guard.
    pub fn build(self) -> ArgsSchema {
        ArgsSchema::new(
            self.schemas,
            self.require_schema,
            self.max_depth,
            self.priority,
        )
    }
}

/// True for a schema that accepts every value although it is written as if
/// it constrained something. `true` and `{}` say "anything" plainly and are
/// kept; anything else that lets null, an object, an array, a string, a
/// number and a boolean all through is a mistake (typically a `$ref` cycle).
fn checks_nothing(schema: &Value, validator: &Validator) -> bool {
    let plainly_anything =
        *schema == Value::Bool(true) || schema.as_object().is_some_and(serde_json::Map::is_empty);
    let probes = [
        Value::Null,
        serde_json::json!({"a guard": "probe"}),
        serde_json::json!([[], {}]),
        serde_json::json!("probe"),
        serde_json::json!(-1.5),
        serde_json::json!(true),
    ];
    !plainly_anything && probes.iter().all(|probe| validator.is_valid(probe))
}

/// Compiles one schema with the guard's fixed options.
fn compile(schema: &Value) -> Result<Validator, String> {
    jsonschema::options()
        .offline()
        .should_validate_formats(true)
        .should_ignore_unknown_formats(false)
        .with_pattern_options(PatternOptions::regex())
        .build(schema)
        .map_err(|error| match error.instance_path().as_str() {
            "" => error.to_string(),
            location => format!("at {location} in the schema: {error}"),
        })
}
