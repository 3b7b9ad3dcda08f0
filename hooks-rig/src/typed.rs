//! A typed rig `Tool` behind the hooks.

use std::sync::Arc;

use rig_core::tool::{DynamicTool, IntoToolOutput as _, Tool, ToolContext, tool_definition};
use serde_json::Value;

use crate::hooks::Inner;
use crate::outcome::{Failure, into_rig, output_value, refused};

pub(crate) fn wrap<T: Tool + 'static>(hooks: Arc<Inner>, tool: T) -> DynamicTool {
    let definition = tool_definition(&tool);
    let tool = Arc::new(tool);
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
                let ctx = match hooks.hook_context(context, name.as_str(), args.clone()) {
                    Ok(ctx) => ctx,
                    Err(reason) => return refused(reason, hooks.on_block),
                };
                let mut produced = None;
                let report = hooks
                    .run(ctx, async |final_args: &Value| {
                        // The arguments the hooks left, read into the
                        // tool's own type: a rewrite that no longer fits
                        // stops the call.
                        let typed = serde_json::from_value::<T::Args>(final_args.clone()).map_err(
                            |source| Failure::Args {
                                rewritten: *final_args != args,
                                source,
                            },
                        )?;
                        let output = tool
                            .call(context, typed)
                            .await
                            .map_err(|error| tool.map_error(error))
                            .and_then(|output| output.into_tool_output())
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
}
