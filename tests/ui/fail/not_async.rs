use hooks::prelude::*;

#[pre_tool_use]
fn not_async(_ctx: &HookContext) -> HookResult {
    HookResult::allow()
}

fn main() {}
