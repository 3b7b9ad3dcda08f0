use hooks::prelude::*;

#[pre_tool_use(when = tool_name && metadata.flag)]
async fn bare(_ctx: &HookContext) -> HookResult {
    HookResult::allow()
}

fn main() {}
