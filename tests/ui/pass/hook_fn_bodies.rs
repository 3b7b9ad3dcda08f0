//! Hook fn bodies that decide at once and ones that wait both compile, and
//! the fns stay callable as written.
use hooks::prelude::*;

#[pre_tool_use]
async fn at_once(ctx: &HookContext) -> Result<HookResult, String> {
    if ctx.tool_name.is_empty() {
        return Err("no tool".to_owned());
    }
    let _unused_async_block = async { 1 };
    Ok(HookResult::allow())
}

#[pre_tool_use]
async fn ignores_ctx(_: &HookContext) -> HookResult {
    HookResult::allow()
}

#[pre_tool_use]
#[allow(clippy::let_unit_value)]
async fn waits(_ctx: &HookContext) -> HookResult {
    std::future::ready(()).await;
    HookResult::allow()
}

fn main() {
    let ctx = HookContext::tool_call("t", serde_json::json!({}));
    let _ = (at_once(&ctx), ignores_ctx(&ctx), waits(&ctx));
}
