use hooks::prelude::*;

#[pre_tool_use]
async fn mutable(_ctx: &mut HookContext) -> HookResult {
    HookResult::allow()
}

fn main() {}
