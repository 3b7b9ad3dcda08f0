//! `crate = path`: the attributes in a crate that has no `hooks` dependency,
//! only `hooks_runtime` (or a re-export of it under another name).

use hooks_macros::{post_tool_use, pre_tool_use};
use hooks_runtime::{HookContext, HookRegistry, HookResult, Observation};
use serde_json::{Value, json};

/// A re-export under another name, as a framework would offer it.
mod framework {
    pub(crate) use hooks_runtime as hooks_api;
}

#[pre_tool_use(crate = hooks_runtime, when = tool_name == "crate_path_delete")]
async fn no_delete(_: &HookContext) -> HookResult {
    HookResult::block("deletes are off")
}

#[post_tool_use(crate = "framework::hooks_api", when = tool_name == "crate_path_echo")]
async fn shout(ctx: &HookContext) -> HookResult {
    tokio::task::yield_now().await;
    let text = ctx.result().and_then(Value::as_str).unwrap_or_default();
    HookResult::allow().with_result(json!(text.to_uppercase()))
}

#[tokio::test]
async fn hooks_declared_with_a_crate_path_register_and_run() {
    let registry = HookRegistry::from_registered().expect("registry");
    assert!(
        registry
            .pre_tool_use()
            .iter()
            .any(|h| h.name() == "no_delete")
    );
    let blocked = registry
        .run_tool_call(
            HookContext::tool_call("crate_path_delete", json!({})),
            async |_: &Value| Ok::<_, String>(json!("deleted")),
        )
        .await;
    assert!(!blocked.tool_ran);
    assert_eq!(blocked.stopped_by(), Some("no_delete"));
    let echoed = registry
        .run_tool_call(
            HookContext::tool_call("crate_path_echo", json!({"text": "hi"})),
            async |args: &Value| Ok::<_, String>(args["text"].clone()),
        )
        .await;
    assert_eq!(echoed.observation, Observation::Output(json!("HI")));
}
