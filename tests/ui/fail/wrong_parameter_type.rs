use hooks::prelude::*;

#[pre_tool_use]
async fn wrong_param(_name: &String) -> HookResult {
    HookResult::allow()
}

fn main() {}
