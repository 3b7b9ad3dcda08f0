use hooks::prelude::*;

#[pre_tool_use(when = tool_nam == "a" || args.amount > "big" || tool_name matches "[")]
async fn several(_ctx: &HookContext) -> HookResult {
    HookResult::allow()
}

fn main() {}
