//! The request a hooked tool service takes.

use serde_json::Value;

use crate::context::HookContext;

/// One tool call, as a [`HookService`](super::HookService) takes it and as
/// the wrapped executor receives it: the call's [`HookContext`] (tool name,
/// arguments, agent, user, org and conversation ids, metadata).
///
/// The executor behind a [`HookLayer`](super::HookLayer) receives the
/// arguments as the pre hooks left them (rewrites applied), never the
/// caller's originals.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCall {
    context: HookContext,
}

impl ToolCall {
    /// A call of `tool_name` with `args` (a JSON object) and no ids.
    pub fn new(tool_name: impl Into<String>, args: Value) -> Self {
        ToolCall {
            context: HookContext::tool_call(tool_name, args),
        }
    }

    /// A call described by `context` (built with [`HookContext::tool_call`]
    /// and its `with_*` methods, or by [`Agent::context`](crate::Agent::context)).
    pub fn from_context(context: HookContext) -> Self {
        ToolCall { context }
    }

    /// The tool's name.
    pub fn tool_name(&self) -> &str {
        &self.context.tool_name
    }

    /// The arguments: the caller's in a request, the pre hooks' final ones
    /// in what the executor receives.
    pub fn args(&self) -> &Value {
        &self.context.tool_args
    }

    /// The whole context.
    pub fn context(&self) -> &HookContext {
        &self.context
    }

    /// The context, owned.
    pub fn into_context(self) -> HookContext {
        self.context
    }
}

impl From<HookContext> for ToolCall {
    fn from(context: HookContext) -> Self {
        ToolCall::from_context(context)
    }
}
