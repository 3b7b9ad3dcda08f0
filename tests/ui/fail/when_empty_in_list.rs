use hooks::prelude::*;

#[pre_tool_use(when = tool_name in [])]
async fn empty(_ctx: &HookContext) -> HookResult {
    HookResult::allow()
}

fn main() {}
