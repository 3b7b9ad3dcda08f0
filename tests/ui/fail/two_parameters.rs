use hooks::prelude::*;

#[post_tool_use]
async fn two(_ctx: &HookContext, _extra: u32) -> HookResult {
    HookResult::allow()
}

fn main() {}
