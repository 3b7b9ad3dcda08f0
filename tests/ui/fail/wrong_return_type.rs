use hooks::prelude::*;

#[pre_tool_use]
async fn returns_bool(_ctx: &HookContext) -> bool {
    true
}

fn main() {}
