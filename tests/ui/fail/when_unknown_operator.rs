use hooks::prelude::*;

#[pre_tool_use(when = tool_name startswith "sql_")]
async fn operator(_ctx: &HookContext) -> HookResult {
    HookResult::allow()
}

fn main() {}
