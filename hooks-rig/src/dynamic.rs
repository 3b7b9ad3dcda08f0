//! A runtime-defined rig tool (`DynamicTool`) behind the hooks.

use std::sync::Arc;

use rig_core::tool::{DynamicTool, ToolContext};
use serde_json::Value;

use crate::hooks::Inner;
use crate::outcome::{Failure, into_rig, output_value, refused};

pub(crate) fn wrap(hooks: Arc<Inner>, tool: DynamicTool) -> DynamicTool {
    let definition = tool.definition();
    let tool = Arc::new(tool);
    let live = tool.clone();
    let name = definition.name.clone();
    DynamicTool::new_with_context(
        definition.name,
        definition.description,
        definition.parameters,
        move |context: &mut ToolContext, args: Value| {
            let hooks = hooks.clone();
            let tool = tool.clone();
            let name = name.clone();
            Box::pin(async move {
                let ctx = match hooks.hook_context(context, name.as_str(), args) {
                    Ok(ctx) => ctx,
                    Err(reason) => return refused(reason, hooks.on_block),
                };
                let mut produced = None;
                let report = hooks
                    .run(ctx, async |final_args: &Value| {
                        let output = tool
                            .execute_with(context, final_args.clone())
                            .await
                            .map_err(Failure::Tool)?;
                        let value = output_value(&output);
                        produced = Some(output);
                        Ok::<_, Failure>(value)
                    })
                    .await;
                into_rig(report, produced, hooks.on_block)
            })
        },
    )
    .with_liveness(move || live.is_live())
}
