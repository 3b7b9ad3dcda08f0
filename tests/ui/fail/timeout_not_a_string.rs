use hooks::prelude::*;

#[pre_tool_use(timeout = 30)]
async fn slow(_ctx: &HookContext) -> HookResult {
    HookResult::allow()
}

fn main() {}
