use hooks::prelude::*;

#[pre_tool_use(when = tool_name == "a" &&)]
async fn dangling(_ctx: &HookContext) -> HookResult {
    HookResult::allow()
}

fn main() {}
