//! [`Hooks`]: what wraps rig's tools.

use std::sync::Arc;

use hooks_runtime::{
    Agent, HookContext, HookRegistry, PreToolUse, ToolCallReport, ToolErrorSource,
};
use rig_core::tool::{DynamicTool, Tool, ToolContext};
use serde_json::Value;

use crate::call_context::CallContext;
use crate::on_block::OnBlock;

/// A hook registry (or a `hooks::Agent`) ready to wrap rig tools: each
/// wrapped tool runs every call through the hooks.
///
/// Cheap to clone (the registry is shared). See the [crate docs](crate) for
/// the one line that wraps an agent's tools.
#[derive(Clone, Debug)]
pub struct Hooks {
    inner: Arc<Inner>,
}

#[derive(Debug)]
pub(crate) struct Inner {
    runner: Runner,
    pub(crate) on_block: OnBlock,
    require_context: bool,
}

#[derive(Debug)]
enum Runner {
    Registry(HookRegistry),
    Agent(Agent),
}

impl Hooks {
    /// Calls run through `registry`; the ids come from the request's
    /// [`CallContext`].
    pub fn new(registry: HookRegistry) -> Self {
        Hooks::with_runner(Runner::Registry(registry))
    }

    /// Calls run through `agent` (its registry, stamped with its id,
    /// delegation path and surface, as [`Agent::call_tool`] does).
    pub fn for_agent(agent: Agent) -> Self {
        Hooks::with_runner(Runner::Agent(agent))
    }

    fn with_runner(runner: Runner) -> Self {
        Hooks {
            inner: Arc::new(Inner {
                runner,
                on_block: OnBlock::default(),
                require_context: true,
            }),
        }
    }

    /// How a blocked call reaches the model (default: as the tool's output).
    /// Applies to the tools wrapped after this call.
    pub fn on_block(self, on_block: OnBlock) -> Self {
        self.map(|inner| inner.on_block = on_block)
    }

    /// Whether a call whose request carries no [`CallContext`] is refused
    /// (the tool does not run). **On by default**: without the ids, hooks
    /// keyed on the user or org (per-user rate limits, org modes, approver
    /// scope) would see empty ids and could not do their job, so the call
    /// fails closed. `require_context(false)` lets such calls run with
    /// empty ids, which hooks read as "not known" — for agents that have no
    /// users. Applies to the tools wrapped after this call.
    pub fn require_context(self, require: bool) -> Self {
        self.map(|inner| inner.require_context = require)
    }

    fn map(self, change: impl FnOnce(&mut Inner)) -> Self {
        let mut inner = Inner {
            runner: match &self.inner.runner {
                Runner::Registry(registry) => Runner::Registry(registry.clone()),
                Runner::Agent(agent) => Runner::Agent(agent.clone()),
            },
            on_block: self.inner.on_block,
            require_context: self.inner.require_context,
        };
        change(&mut inner);
        Hooks {
            inner: Arc::new(inner),
        }
    }

    /// The registry calls run through.
    pub fn registry(&self) -> &HookRegistry {
        match &self.inner.runner {
            Runner::Registry(registry) => registry,
            Runner::Agent(agent) => agent.registry(),
        }
    }

    /// `tool` behind the hooks, as a rig tool an `AgentBuilder` takes with
    /// `dynamic_tool`. The model sees the same name, description and
    /// parameters; the tool receives the arguments the pre hooks left,
    /// read back into its own `Args` type.
    pub fn tool<T: Tool + 'static>(&self, tool: T) -> DynamicTool {
        crate::typed::wrap(self.inner.clone(), tool)
    }

    /// A runtime-defined rig tool (rig's `DynamicTool`, which MCP tools
    /// also become) behind the hooks. Its liveness is kept.
    pub fn dynamic_tool(&self, tool: DynamicTool) -> DynamicTool {
        crate::dynamic::wrap(self.inner.clone(), tool)
    }

    /// [`dynamic_tool`](Self::dynamic_tool) for each of `tools`, for
    /// `AgentBuilder::dynamic_tools`.
    pub fn dynamic_tools(&self, tools: impl IntoIterator<Item = DynamicTool>) -> Vec<DynamicTool> {
        tools
            .into_iter()
            .map(|tool| self.dynamic_tool(tool))
            .collect()
    }
}

impl Inner {
    /// The hook context of a call, from the request's `ToolContext`; `Err`
    /// (the call is refused) when the ids cannot be read or are required
    /// and missing.
    pub(crate) fn hook_context(
        &self,
        tool_context: &ToolContext,
        tool_name: &str,
        args: Value,
    ) -> Result<HookContext, String> {
        let ids = match tool_context.get::<CallContext>() {
            Ok(Some(ids)) => ids,
            Ok(None) if !self.require_context => CallContext::default(),
            Ok(None) => {
                return Err(
                    "the request carries no hooks CallContext (user, org and conversation ids), \
                     and these hooks require one: set it with AgentRunner::tool_context"
                        .to_owned(),
                );
            }
            Err(error) => {
                return Err(format!(
                    "the request's hooks CallContext could not be read ({error}); \
                     set it with CallContext::into_tool_context"
                ));
            }
        };
        Ok(ids.hook_context(tool_name, args))
    }

    /// Runs one call through the hooks.
    pub(crate) async fn run<T, E>(&self, ctx: HookContext, tool: T) -> ToolCallReport
    where
        T: AsyncFnOnce(&Value) -> Result<Value, E>,
        E: Into<ToolErrorSource>,
    {
        match &self.runner {
            Runner::Registry(registry) => registry.run_tool_call(ctx, tool).await,
            Runner::Agent(agent) => agent.call_tool(ctx, tool).await,
        }
    }

    /// Runs one call's pre hooks on the model's argument text.
    pub(crate) async fn run_pre_raw(&self, ctx: HookContext, raw_args: &str) -> PreToolUse {
        match &self.runner {
            Runner::Registry(registry) => registry.run_pre_tool_use_raw(ctx, raw_args).await,
            Runner::Agent(agent) => agent.run_pre_tool_use_raw(ctx, raw_args).await,
        }
    }

    /// Whether a call without a [`CallContext`] is refused.
    pub(crate) fn requires_context(&self) -> bool {
        self.require_context
    }

    /// Runs the session-start hooks.
    pub(crate) async fn start_session(
        &self,
        ctx: HookContext,
    ) -> Result<hooks_runtime::SessionStart, hooks_runtime::SessionStopped> {
        match &self.runner {
            Runner::Registry(registry) => registry.start_session(ctx).await,
            Runner::Agent(agent) => agent.start_session(ctx).await,
        }
    }
}

impl Hooks {
    pub(crate) fn inner(&self) -> &Inner {
        &self.inner
    }

    pub(crate) fn inner_arc(&self) -> Arc<Inner> {
        self.inner.clone()
    }
}
