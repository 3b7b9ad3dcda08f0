use hooks::prelude::*;

#[pre_tool_use(when = tool_nme starts_with "sql_")]
async fn typo(_ctx: &HookContext) -> HookResult {
    HookResult::allow()
}

fn main() {}
