use hooks::prelude::*;

#[pre_tool_use(when = tool_name == "x")]
async fn callable(ctx: &HookContext) -> HookResult {
    if ctx.tool_name == "x" { HookResult::block("x") } else { HookResult::allow() }
}

fn main() {
    // The annotated fn is still an ordinary async fn.
    let ctx = HookContext::tool_call("x", serde_json::json!({}));
    let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
    let result = runtime.block_on(callable(&ctx));
    assert!(result.is_blocked());
}
