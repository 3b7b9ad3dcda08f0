use hooks::prelude::*;

#[pre_tool_use(on_error = fail_opne)]
async fn typo(_ctx: &HookContext) -> HookResult {
    HookResult::allow()
}

fn main() {}
