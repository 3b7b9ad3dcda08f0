//! A typed rig `Tool` behind the hooks.

use std::sync::Arc;

use rig_core::tool::{IntoToolOutput as _, Tool, ToolContext, tool_definition};
use serde_json::Value;

use crate::hooks::Inner;
use crate::outcome::Failure;
use crate::wrap::hooked;

pub(crate) fn wrap<T: Tool + 'static>(hooks: Arc<Inner>, tool: T) -> rig_core::tool::DynamicTool {
    let definition = tool_definition(&tool);
    let tool = Arc::new(tool);
    hooked(
        hooks,
        definition,
        move |context: &mut ToolContext, final_args: Value, model_args: &Value| {
            let tool = tool.clone();
            let rewritten = final_args != *model_args;
            Box::pin(async move {
                // The arguments the hooks left, read into the tool's own
                // type: a rewrite that no longer fits stops the call.
                let typed = serde_json::from_value::<T::Args>(final_args)
                    .map_err(|source| Failure::Args { rewritten, source })?;
                tool.call(context, typed)
                    .await
                    .map_err(|error| tool.map_error(error))
                    .and_then(|output| output.into_tool_output())
                    .map_err(Failure::Tool)
            })
        },
    )
}
