use hooks::prelude::*;

#[pre_tool_use(when = tool_name matches_regex "^sql_(exec|query$")]
async fn regex(_ctx: &HookContext) -> HookResult {
    HookResult::allow()
}

fn main() {}
