use hooks::prelude::*;

#[pre_tool_use(when = tool_name == "a" && && metadata.flag)]
async fn doubled(_ctx: &HookContext) -> HookResult {
    HookResult::allow()
}

fn main() {}
