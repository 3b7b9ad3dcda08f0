//! An agent with its hooks: the one way tool calls run, on every surface,
//! for delegated sub-agents too.
//!
//! An [`Agent`] pairs an agent's config with the registry built from it.
//! Every tool call goes through [`Agent::call_tool`], which stamps the
//! context with the agent's id, its delegation path and the surface, so
//! hooks (and `when` expressions) always see who is calling from where. A
//! delegated agent never inherits its caller's registry: [`Agent::delegate`]
//! builds the sub-agent's own registry from its own config, and that
//! registry always carries the hooks every agent gets (the approval gate,
//! with the standard hooks). A delegate is never less guarded than its
//! caller: every [agent flag](crate::factory::AgentFlag) set for the caller
//! (such as `require_confirmation_for_all`, which makes the gate ask for
//! every call) is set for the delegate too. Delegation cannot escape the
//! hooks every agent gets.

use std::fmt;
use std::sync::Arc;

use serde_json::Value;

use crate::config::{AgentConfig, AgentConfigErrors, ConfigWarning};
use crate::context::{HookContext, Surface};
use crate::dispatch::{PreToolUse, SessionStart, SessionStopped, ToolCallReport, ToolErrorSource};
use crate::factory::Resources;
use crate::registry::HookRegistry;

/// An agent ready to make tool calls under its hooks.
#[derive(Clone)]
pub struct Agent {
    config: Arc<AgentConfig>,
    registry: HookRegistry,
    path: Vec<String>,
    surface: Surface,
    resources: Resources,
    /// What building the registry could not check.
    warnings: Arc<[ConfigWarning]>,
}

impl fmt::Debug for Agent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Agent")
            .field("agent", &self.config.agent)
            .field("path", &self.path)
            .field("surface", &self.surface)
            .field("hooks", &self.registry.len())
            .finish()
    }
}

impl Agent {
    /// Builds the agent's registry from its config. Any config error stops
    /// here: an agent whose hooks cannot be built does not run.
    pub fn build(config: AgentConfig, resources: &Resources) -> Result<Agent, AgentConfigErrors> {
        let (registry, warnings) = config.build_registry_with_warnings(resources)?;
        Ok(Agent {
            path: vec![config.agent.clone()],
            config: Arc::new(config),
            registry,
            surface: Surface::Chat,
            resources: resources.clone(),
            warnings: warnings.into(),
        })
    }

    /// The agent's id.
    pub fn id(&self) -> &str {
        &self.config.agent
    }

    /// The agent's config.
    pub fn config(&self) -> &AgentConfig {
        &self.config
    }

    /// What building the agent's registry could not check (`args.…` paths
    /// that no declared argument schema decides), as `hooks check` prints
    /// them; see [`AgentConfig::build_registry_with_warnings`].
    pub fn config_warnings(&self) -> &[ConfigWarning] {
        &self.warnings
    }

    /// The agent's registry.
    pub fn registry(&self) -> &HookRegistry {
        &self.registry
    }

    /// The chain of agents from the root to this one.
    pub fn path(&self) -> &[String] {
        &self.path
    }

    /// The surface calls are made on.
    pub fn surface(&self) -> Surface {
        self.surface
    }

    /// The same agent on another surface (`Api`, `DagStep`, `WorkflowNode`…).
    /// On [`Surface::Evaluation`] hooks are bypassed, and every trace says so.
    pub fn on_surface(&self, surface: Surface) -> Agent {
        Agent {
            surface,
            ..self.clone()
        }
    }

    /// A sub-agent this agent delegates to: its **own** registry, built from
    /// its own config, on the `Delegated` surface, with the delegation path
    /// extended. The caller's other hooks are not inherited, but its agent
    /// flags are: the sub-agent's flags are its own and this agent's (and so
    /// every ancestor's), and [`config`](Agent::config) reports those
    /// effective flags. A parent that asks for every call to be approved
    /// cannot hand its tools to a child that does not.
    pub fn delegate(&self, mut config: AgentConfig) -> Result<Agent, AgentConfigErrors> {
        config.flags.extend(self.config.flags.iter().cloned());
        let (registry, warnings) = config.build_registry_with_warnings(&self.resources)?;
        let mut path = self.path.clone();
        path.push(config.agent.clone());
        Ok(Agent {
            config: Arc::new(config),
            registry,
            path,
            surface: Surface::Delegated,
            resources: self.resources.clone(),
            warnings: warnings.into(),
        })
    }

    /// A tool call's context, stamped with this agent's id, path and surface.
    pub fn context(&self, tool_name: impl Into<String>, args: Value) -> HookContext {
        self.stamp(HookContext::tool_call(tool_name, args))
    }

    fn stamp(&self, ctx: HookContext) -> HookContext {
        ctx.with_agent(self.config.agent.clone())
            .with_agent_path(self.path.iter().cloned())
            .with_surface(self.surface)
    }

    /// Runs one tool call through this agent's hooks. The context's agent id,
    /// path and surface are overwritten with this agent's, so a caller cannot
    /// run a call under another agent's identity or surface.
    pub async fn call_tool<T, E>(&self, ctx: HookContext, tool: T) -> ToolCallReport
    where
        T: AsyncFnOnce(&Value) -> Result<Value, E>,
        E: Into<ToolErrorSource>,
    {
        self.registry.run_tool_call(self.stamp(ctx), tool).await
    }

    /// Runs one tool call whose arguments are the model's JSON text as it
    /// emitted it, through this agent's hooks (stamped as in
    /// [`call_tool`](Self::call_tool)). `raw_args` replaces the context's
    /// arguments. Text that is not a readable JSON object is blocked by the
    /// runtime before any hook, and observed (audited) with the text as a
    /// JSON string: see [`HookRegistry::run_tool_call_raw`], which also
    /// lists what is refused.
    pub async fn call_tool_raw<T, E>(
        &self,
        ctx: HookContext,
        raw_args: &str,
        tool: T,
    ) -> ToolCallReport
    where
        T: AsyncFnOnce(&Value) -> Result<Value, E>,
        E: Into<ToolErrorSource>,
    {
        self.registry
            .run_tool_call_raw(self.stamp(ctx), raw_args, tool)
            .await
    }

    /// Runs one tool call's pre hooks through this agent's hooks (stamped as
    /// in [`call_tool`](Self::call_tool)), for a front end whose tool runs
    /// elsewhere: see [`HookRegistry::run_pre_tool_use`]. The arguments are
    /// the model's JSON text, read as in [`call_tool_raw`](Self::call_tool_raw).
    pub async fn run_pre_tool_use_raw(&self, ctx: HookContext, raw_args: &str) -> PreToolUse {
        self.registry
            .run_pre_tool_use_raw(self.stamp(ctx), raw_args)
            .await
    }

    /// Runs the session-start hooks; an `Err` means the session must not start.
    pub async fn start_session(&self, ctx: HookContext) -> Result<SessionStart, SessionStopped> {
        self.registry.start_session(self.stamp(ctx)).await
    }
}
