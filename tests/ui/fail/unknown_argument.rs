use hooks::prelude::*;

#[pre_tool_use(prio = 5)]
async fn unknown(_ctx: &HookContext) -> HookResult {
    HookResult::allow()
}

fn main() {}
