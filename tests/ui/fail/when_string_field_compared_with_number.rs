use hooks::prelude::*;

#[pre_tool_use(when = tool_name == 5)]
async fn number(_ctx: &HookContext) -> HookResult {
    HookResult::allow()
}

fn main() {}
