use hooks::prelude::*;

#[pre_tool_use(priority = "high")]
async fn high(_ctx: &HookContext) -> HookResult {
    HookResult::allow()
}

fn main() {}
