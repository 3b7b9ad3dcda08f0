use hooks::prelude::*;

#[session_start(when = tool_name == "sql_exec")]
async fn no_tool_yet(_ctx: &HookContext) -> HookResult {
    HookResult::allow()
}

fn main() {}
