use hooks::prelude::*;

#[pre_tool_use]
async fn generic<T: Default>(_ctx: &HookContext) -> HookResult {
    let _ = T::default();
    HookResult::allow()
}

fn main() {}
