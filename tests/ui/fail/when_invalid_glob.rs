use hooks::prelude::*;

#[pre_tool_use(when = tool_name matches "sql_[abc")]
async fn glob(_ctx: &HookContext) -> HookResult {
    HookResult::allow()
}

fn main() {}
