use hooks::prelude::*;

#[pre_tool_use]
async fn no_return(_ctx: &HookContext) {}

fn main() {}
