use hooks::prelude::*;

#[pre_tool_use(when = result contains "secret")]
async fn too_early(_ctx: &HookContext) -> HookResult {
    HookResult::allow()
}

fn main() {}
