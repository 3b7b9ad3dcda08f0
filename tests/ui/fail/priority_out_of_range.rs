use hooks::prelude::*;

#[pre_tool_use(priority = 99999999999)]
async fn huge(_ctx: &HookContext) -> HookResult {
    HookResult::allow()
}

fn main() {}
