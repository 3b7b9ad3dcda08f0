use hooks::prelude::*;

#[pre_tool_use(crate = 5)]
async fn numbered(_ctx: &HookContext) -> HookResult {
    HookResult::allow()
}

fn main() {}
