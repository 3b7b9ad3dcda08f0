//! A body without `.await` decides at once and is never timed: a `timeout`
//! on it would be dead config, so it is refused where it is written.
use hooks::prelude::*;

#[pre_tool_use(when = tool_name == "slow", timeout = "10ms")]
async fn decides_at_once(_ctx: &HookContext) -> HookResult {
    HookResult::allow()
}

fn main() {}
