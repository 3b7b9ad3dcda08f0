use hooks::prelude::*;

#[pre_tool_use(when = "tool_name in [\"a\", \"b\"] || args.amount >= 50000")]
async fn string_form(_ctx: &HookContext) -> HookResult {
    HookResult::allow()
}

fn main() {
    let registry = HookRegistry::builder().registered_named(["string_form"]).build().unwrap();
    let hook = &registry.pre_tool_use()[0];
    let pay = HookContext::tool_call("pay", serde_json::json!({"amount": 50000.5}));
    assert!(hook.should_trigger(&pay));
    let other = HookContext::tool_call("pay", serde_json::json!({"amount": 10}));
    assert!(!hook.should_trigger(&other));
    assert!(hook.should_trigger(&HookContext::tool_call("b", serde_json::json!({}))));
}
