//! A local macro with a standard logging name that awaits: the attribute
//! cannot see the `.await`, so it makes the body a plain fn that decides at
//! once — and the hidden `.await` is then a compile error, never a hook that
//! waits where it was meant to decide at once.
use hooks::prelude::*;

macro_rules! info {
    () => {
        std::future::ready(()).await
    };
}

#[pre_tool_use]
async fn hides_an_await(_ctx: &HookContext) -> HookResult {
    info!();
    HookResult::allow()
}

fn main() {}
