use hooks::prelude::*;

#[pre_tool_use]
async fn by_value(_ctx: HookContext) -> HookResult {
    HookResult::allow()
}

fn main() {}
