use hooks::prelude::*;

#[pre_tool_use(priority = "x", timeout = "soon", colour = "blue")]
fn everything_wrong(_ctx: &HookContext) -> HookResult {
    HookResult::allow()
}

fn main() {
    // The fn is still emitted, so this call does not add an error.
    let _ = everything_wrong;
}
