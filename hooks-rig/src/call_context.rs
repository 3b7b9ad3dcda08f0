//! Who a request is for: the ids the hooks see, set by the application per
//! request through rig's `ToolContext`.

use std::collections::BTreeMap;

use hooks_runtime::HookContext;
use rig_core::tool::{ContextValue, ToolContext, ToolContextError};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The ids of one request, as every hook of its tool calls sees them:
/// user, organisation, conversation, agent, and free-form metadata.
///
/// Set it per request on rig's run with
/// `agent.prompt(…).tool_context(call_context.into_tool_context()?)`; each
/// hooked tool reads it back from the `ToolContext` rig hands the tool. An
/// id left unset is empty, which `when` expressions read as "not known".
/// Under an [`Agent`](hooks_runtime::Agent) ([`Hooks::for_agent`](crate::Hooks::for_agent))
/// the agent id is the agent's own, whatever this says.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CallContext {
    /// The user on whose behalf the agent runs.
    #[serde(default)]
    pub user_id: String,
    /// The user's organisation.
    #[serde(default)]
    pub org_id: String,
    /// The conversation the request belongs to.
    #[serde(default)]
    pub conversation_id: String,
    /// The agent making the calls (ignored under a `hooks::Agent`).
    #[serde(default)]
    pub agent_id: String,
    /// Facts hooks may read as `metadata.…`.
    #[serde(default)]
    pub metadata: BTreeMap<String, Value>,
}

impl ContextValue for CallContext {
    const KEY: &'static str = "hooks.call_context";
}

impl CallContext {
    /// No ids.
    pub fn new() -> Self {
        CallContext::default()
    }

    /// Sets the user id.
    pub fn user(mut self, user_id: impl Into<String>) -> Self {
        self.user_id = user_id.into();
        self
    }

    /// Sets the organisation id.
    pub fn org(mut self, org_id: impl Into<String>) -> Self {
        self.org_id = org_id.into();
        self
    }

    /// Sets the conversation id.
    pub fn conversation(mut self, conversation_id: impl Into<String>) -> Self {
        self.conversation_id = conversation_id.into();
        self
    }

    /// Sets the agent id.
    pub fn agent(mut self, agent_id: impl Into<String>) -> Self {
        self.agent_id = agent_id.into();
        self
    }

    /// Adds one metadata entry.
    pub fn metadata(mut self, key: impl Into<String>, value: impl Into<Value>) -> Self {
        self.metadata.insert(key.into(), value.into());
        self
    }

    /// A rig `ToolContext` holding these ids, for
    /// `AgentRunner::tool_context`.
    pub fn into_tool_context(self) -> Result<ToolContext, ToolContextError> {
        let mut context = ToolContext::new();
        self.insert_into(&mut context)?;
        Ok(context)
    }

    /// Puts these ids into an existing `ToolContext` (replacing any there).
    pub fn insert_into(self, context: &mut ToolContext) -> Result<(), ToolContextError> {
        context.insert(self).map(drop)
    }

    /// The hook context of a call of `tool_name` with `args` under these ids.
    pub fn hook_context(&self, tool_name: &str, args: Value) -> HookContext {
        self.stamp(HookContext::tool_call(tool_name, args))
    }

    /// `ctx` with these ids.
    pub fn stamp(&self, ctx: HookContext) -> HookContext {
        let mut ctx = ctx
            .with_user(self.user_id.clone())
            .with_org(self.org_id.clone())
            .with_conversation(self.conversation_id.clone())
            .with_agent(self.agent_id.clone());
        for (key, value) in &self.metadata {
            ctx = ctx.with_metadata(key.clone(), value.clone());
        }
        ctx
    }
}
