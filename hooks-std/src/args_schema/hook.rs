//! The schema guard itself.

use std::collections::HashMap;

use hooks_runtime::{Hook, HookContext, HookOutcome, HookResult, PreToolUseHook};
use jsonschema::Validator;
use serde_json::Value;

use super::builder::ArgsSchemaBuilder;
use super::config::ArgsSchemaConfig;
use super::depth::exceeds_depth;
use super::error::SchemaError;
use super::reason::{mismatch_reason, missing_schema_reason, too_deep_reason};
use crate::config::{ConfigError, parse_config};

/// A pre hook that blocks a call whose arguments do not match the JSON
/// Schema declared for its tool, listing each mismatch with its JSON
/// pointer (at most [`MAX_REPORTED_ERRORS`](super::MAX_REPORTED_ERRORS),
/// each cut to [`MAX_ERROR_CHARS`](super::MAX_ERROR_CHARS) characters).
///
/// * Schemas are compiled once, when the hook is built; a bad schema is a
///   build error naming the tool.
/// * A tool without a schema passes, unless `require_schema` is set: then
///   it is blocked, named in the reason.
/// * Tool names are compared exactly (byte for byte): `Pay` or `pay ` is not
///   `pay`. If whatever runs tools could map such a spelling to `pay`, set
///   `require_schema` so unknown spellings are blocked rather than unchecked.
/// * Arguments nested deeper than `max_depth` are blocked before the
///   validator (which recurses) sees them.
/// * It decides at once, without waiting, and runs at priority 0 by default:
///   before the approval gate and every other standard hook. It checks the
///   arguments as they arrive; a later pre hook that rewrites them is trusted
///   code and is not re-checked.
pub struct ArgsSchema {
    schemas: HashMap<String, Validator>,
    require_schema: bool,
    max_depth: usize,
    priority: i32,
}

impl std::fmt::Debug for ArgsSchema {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut tools: Vec<&str> = self.schemas.keys().map(String::as_str).collect();
        tools.sort_unstable();
        f.debug_struct("ArgsSchema")
            .field("tools", &tools)
            .field("require_schema", &self.require_schema)
            .field("max_depth", &self.max_depth)
            .field("priority", &self.priority)
            .finish()
    }
}

impl ArgsSchema {
    /// The name config files use.
    pub const NAME: &'static str = "args_schema";

    /// A builder, for schemas declared in code next to their tools.
    pub fn builder() -> ArgsSchemaBuilder {
        ArgsSchemaBuilder::default()
    }

    /// Assembled by [`ArgsSchemaBuilder::build`] from compiled schemas.
    pub(super) fn new(
        schemas: HashMap<String, Validator>,
        require_schema: bool,
        max_depth: usize,
        priority: i32,
    ) -> Self {
        ArgsSchema {
            schemas,
            require_schema,
            max_depth,
            priority,
        }
    }

    /// A guard with this config; every schema is compiled here.
    pub fn with_config(config: ArgsSchemaConfig) -> Result<Self, SchemaError> {
        let mut builder = Self::builder()
            .require_schema(config.require_schema)
            .max_depth(config.max_depth)?
            .priority(config.priority);
        for (tool, schema) in config.schemas {
            builder = builder.tool(tool, schema)?;
        }
        Ok(builder.build())
    }

    /// Builds the guard from its config-file form (`null` for defaults: no
    /// schemas, so every call passes).
    pub fn from_config(config: &Value) -> Result<Self, ConfigError> {
        let config: ArgsSchemaConfig = parse_config(Self::NAME, config)?;
        Self::with_config(config).map_err(|error| ConfigError::new(Self::NAME, error.to_string()))
    }

    /// Whether `tool` has a schema.
    pub fn has_schema(&self, tool: &str) -> bool {
        self.schemas.contains_key(tool)
    }

    /// The decision for one call; pure, so it never needs to wait.
    fn decide(&self, ctx: &HookContext) -> HookResult {
        let tool = ctx.tool_name.as_str();
        let Some(validator) = self.schemas.get(tool) else {
            return if self.require_schema {
                HookResult::block(missing_schema_reason(tool))
            } else {
                HookResult::allow()
            };
        };
        if exceeds_depth(&ctx.tool_args, self.max_depth) {
            return HookResult::block(too_deep_reason(tool, self.max_depth));
        }
        if validator.is_valid(&ctx.tool_args) {
            return HookResult::allow();
        }
        HookResult::block(mismatch_reason(tool, validator.iter_errors(&ctx.tool_args)))
    }
}

impl Hook for ArgsSchema {
    fn name(&self) -> &str {
        Self::NAME
    }

    fn priority(&self) -> i32 {
        self.priority
    }

    /// Only tools with a schema, or every tool under `require_schema`.
    fn should_trigger(&self, ctx: &HookContext) -> bool {
        self.require_schema || self.schemas.contains_key(&ctx.tool_name)
    }

    /// Pure: decides at once.
    fn execute<'a>(&'a self, ctx: &'a HookContext) -> HookOutcome<'a> {
        HookOutcome::Ready(Ok(self.decide(ctx)))
    }

    fn description(&self) -> Option<&str> {
        Some("blocks calls whose args do not match the tool's JSON Schema")
    }
}

impl PreToolUseHook for ArgsSchema {}
