//! A runtime-defined rig tool (`DynamicTool`) behind the hooks.

use std::sync::Arc;

use rig_core::tool::{DynamicTool, ToolContext};
use serde_json::Value;

use crate::hooks::Inner;
use crate::outcome::Failure;
use crate::wrap::hooked;

pub(crate) fn wrap(hooks: Arc<Inner>, tool: DynamicTool) -> DynamicTool {
    let definition = tool.definition();
    let tool = Arc::new(tool);
    let live = tool.clone();
    hooked(
        hooks,
        definition,
        move |context: &mut ToolContext, final_args: Value, _: &Value| {
            let tool = tool.clone();
            Box::pin(async move {
                tool.execute_with(context, final_args)
                    .await
                    .map_err(Failure::Tool)
            })
        },
    )
    .with_liveness(move || live.is_live())
}
