use hooks::prelude::*;

#[pre_tool_use(priority = 5, priority = 6)]
async fn twice(_ctx: &HookContext) -> HookResult {
    HookResult::allow()
}

fn main() {}
