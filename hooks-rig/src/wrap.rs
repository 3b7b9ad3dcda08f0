//! The one wrapper every hooked rig tool is: a `DynamicTool` whose callback
//! runs the call through the hooks around the tool's own call.

use std::sync::Arc;

use rig_core::completion::ToolDefinition;
use rig_core::tool::{DynamicTool, ToolContext, ToolOutput};
use rig_core::wasm_compat::WasmBoxedFuture;
use serde_json::Value;

use crate::hooks::Inner;
use crate::outcome::{Failure, into_rig, output_value, refused};

/// How the wrapped tool runs on the final arguments (and the model's own,
/// to tell a hook's rewrite from them).
pub(crate) trait Call:
    for<'a> Fn(
        &'a mut ToolContext,
        Value,
        &'a Value,
    ) -> WasmBoxedFuture<'a, Result<ToolOutput, Failure>>
    + Send
    + Sync
    + 'static
{
}

impl<F> Call for F where
    F: for<'a> Fn(
            &'a mut ToolContext,
            Value,
            &'a Value,
        ) -> WasmBoxedFuture<'a, Result<ToolOutput, Failure>>
        + Send
        + Sync
        + 'static
{
}

/// A rig tool named and described by `definition` that runs `call` behind
/// the hooks.
pub(crate) fn hooked(
    hooks: Arc<Inner>,
    definition: ToolDefinition,
    call: impl Call,
) -> DynamicTool {
    let call = Arc::new(call);
    let name = definition.name.clone();
    DynamicTool::new_with_context(
        definition.name,
        definition.description,
        definition.parameters,
        move |context: &mut ToolContext, args: Value| {
            let hooks = hooks.clone();
            let call = call.clone();
            let name = name.clone();
            Box::pin(async move {
                let ctx = match hooks.hook_context(context, name.as_str(), args.clone()) {
                    Ok(ctx) => ctx,
                    Err(reason) => return refused(reason, hooks.on_block),
                };
                let mut produced = None;
                let report = hooks
                    .run(ctx, async |final_args: &Value| {
                        let output = call(context, final_args.clone(), &args).await?;
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
