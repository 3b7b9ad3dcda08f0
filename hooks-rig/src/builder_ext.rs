//! The one-liner: hooked tools straight onto rig's `AgentBuilder`.

use rig_agent::AgentBuilder;
use rig_agent::agent::{NoToolConfig, WithBuilderTools};
use rig_core::tool::{DynamicTool, Tool};

use crate::hooks::Hooks;

/// Adds tools behind the hooks to a rig `AgentBuilder`:
/// `AgentBuilder::new(model).hooked_tool(&hooks, Search)`.
pub trait HookedTools: Sized {
    /// `tool` behind `hooks` (see [`Hooks::tool`]).
    fn hooked_tool<T: Tool + 'static>(
        self,
        hooks: &Hooks,
        tool: T,
    ) -> AgentBuilder<WithBuilderTools>;

    /// Runtime-defined tools (MCP tools among them) behind `hooks` (see
    /// [`Hooks::dynamic_tool`]).
    fn hooked_dynamic_tools(
        self,
        hooks: &Hooks,
        tools: impl IntoIterator<Item = DynamicTool>,
    ) -> AgentBuilder<WithBuilderTools>;
}

/// The same two methods for each builder state that takes tools (rig's
/// `dynamic_tool` is an inherent method of each state, not a trait's).
macro_rules! hooked_tools_for {
    ($($state:ty),+) => {$(
        impl HookedTools for AgentBuilder<$state> {
            fn hooked_tool<T: Tool + 'static>(
                self,
                hooks: &Hooks,
                tool: T,
            ) -> AgentBuilder<WithBuilderTools> {
                self.dynamic_tool(hooks.tool(tool))
            }

            fn hooked_dynamic_tools(
                self,
                hooks: &Hooks,
                tools: impl IntoIterator<Item = DynamicTool>,
            ) -> AgentBuilder<WithBuilderTools> {
                self.dynamic_tools(hooks.dynamic_tools(tools))
            }
        }
    )+};
}

hooked_tools_for!(NoToolConfig, WithBuilderTools);
