use hooks::prelude::*;

#[pre_tool_use(timeout = "5 parsecs")]
async fn slow(_ctx: &HookContext) -> HookResult {
    HookResult::allow()
}

fn main() {}
