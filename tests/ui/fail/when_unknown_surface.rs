use hooks::prelude::*;

#[pre_tool_use(when = surface == "workflow")]
async fn surface(_ctx: &HookContext) -> HookResult {
    HookResult::allow()
}

fn main() {}
