//! `ResultTruncate`: keeps oversized tool results out of the LLM's context.

use hooks_runtime::{Hook, HookContext, HookOutcome, HookResult, PostToolUseHook};
use serde::Deserialize;
use serde_json::Value;

use crate::config::{ConfigError, parse_config};

/// Config of [`ResultTruncate`].
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ResultTruncateConfig {
    /// Longest result, in characters, that reaches the LLM (default 8,000).
    pub max_chars: usize,
    /// Priority (default 900: after hooks that inspect the full result).
    pub priority: i32,
}

impl Default for ResultTruncateConfig {
    fn default() -> Self {
        ResultTruncateConfig {
            max_chars: 8_000,
            priority: 900,
        }
    }
}

/// A post hook that cuts the text the model reads of a result to
/// `max_chars` characters — never inside a UTF-8 character — and appends a
/// marker saying how many characters the model would have read. Shorter
/// results pass untouched. The text is measured and cut where the model
/// reads it, keeping the result's shape ([`ToolOutput::truncated`](hooks_runtime::output::ToolOutput::truncated)): a
/// Claude Code `Bash` result's `stdout` and `stderr`, an MCP result's text
/// blocks and their structured copy, a string; a JSON result of a Rust tool
/// is measured and cut in its compact serialized form, which is what the
/// model reads of it. A failed tool's error text is cut the same way.
/// The untruncated result stays available as
/// [`ToolCallReport::raw_result`](hooks_runtime::ToolCallReport::raw_result).
#[derive(Debug, Clone, Default)]
pub struct ResultTruncate {
    config: ResultTruncateConfig,
}

impl ResultTruncate {
    /// The name config files use.
    pub const NAME: &'static str = "result_truncate";

    /// A hook with this config.
    pub fn new(config: ResultTruncateConfig) -> Self {
        ResultTruncate { config }
    }

    /// Builds the hook from its config-file form (`null` for defaults).
    pub fn from_config(config: &Value) -> Result<Self, ConfigError> {
        let config: ResultTruncateConfig = parse_config(Self::NAME, config)?;
        if config.max_chars == 0 {
            return Err(ConfigError::new(Self::NAME, "max_chars must be at least 1"));
        }
        Ok(Self::new(config))
    }
}

pub use hooks_runtime::output::truncate_text;

impl ResultTruncate {
    /// Cuts the result if it is too long; it never needs to wait.
    fn decide(&self, ctx: &HookContext) -> HookResult {
        let max = self.config.max_chars;
        if let Some(output) = ctx.output() {
            return match output.truncated(max) {
                Some(cut) => HookResult::allow()
                    .with_result(cut)
                    .with_side_effect(format!("truncated the result to {max} characters")),
                None => HookResult::allow(),
            };
        }
        // A tool's error text reaches the LLM as well, and can be as long.
        match ctx
            .tool_error()
            .and_then(|message| truncate_text(message, max))
        {
            Some(text) => HookResult::allow()
                .with_error_text(text)
                .with_side_effect(format!("truncated the tool's error to {max} characters")),
            None => HookResult::allow(),
        }
    }
}

impl Hook for ResultTruncate {
    fn name(&self) -> &str {
        Self::NAME
    }

    fn priority(&self) -> i32 {
        self.config.priority
    }

    fn should_trigger(&self, ctx: &HookContext) -> bool {
        ctx.result().is_some() || ctx.tool_error().is_some()
    }

    /// Pure: decides at once.
    fn execute<'a>(&'a self, ctx: &'a HookContext) -> HookOutcome<'a> {
        HookOutcome::Ready(Ok(self.decide(ctx)))
    }

    fn description(&self) -> Option<&str> {
        Some("cuts oversized results and tool errors on a character boundary")
    }
}

impl PostToolUseHook for ResultTruncate {}
