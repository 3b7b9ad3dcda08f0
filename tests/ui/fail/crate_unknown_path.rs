use hooks::prelude::*;

#[pre_tool_use(crate = hooks_runtim)]
async fn misspelled(_ctx: &HookContext) -> HookResult {
    HookResult::allow()
}

fn main() {}
