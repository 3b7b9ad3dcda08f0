use hooks::prelude::*;

#[pre_tool_use(
    name = "guard",
    priority = -5,
    when = tool_name starts_with "sql_" && !metadata.read_only,
    timeout = "500ms",
    on_error = fail_open,
    description = "every argument at once",
)]
async fn guard_fn(_ctx: &HookContext) -> HookResult {
    std::future::ready(()).await;
    HookResult::allow()
}

#[post_tool_use(timeout = "2m", on_error = fail_closed)]
async fn post(_ctx: &HookContext) -> HookResult {
    std::future::ready(()).await;
    HookResult::allow()
}

#[session_start(timeout = "2s", when = org_id == "acme")]
async fn session(_ctx: &HookContext) -> HookResult {
    std::future::ready(()).await;
    HookResult::allow().with_context("hello")
}

fn main() {
    let registry = HookRegistry::builder()
        .registered_named(["guard", "post", "session"])
        .build()
        .unwrap();
    let guard = &registry.pre_tool_use()[0];
    assert_eq!(guard.name(), "guard");
    assert_eq!(guard.priority(), -5);
    assert_eq!(guard.timeout(), std::time::Duration::from_millis(500));
    assert_eq!(guard.on_error(), ErrorPolicy::FailOpen);
    assert_eq!(guard.description(), Some("every argument at once"));
    assert_eq!(guard.when_source(), Some("tool_name starts_with \"sql_\" && !metadata.read_only"));
}
