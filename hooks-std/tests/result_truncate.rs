//! ResultTruncate: character boundaries, exact limits, raw result kept.

use hooks_runtime::{HookContext, HookRegistry, Observation};
use hooks_std::{ResultTruncate, ResultTruncateConfig, truncate_text};
use serde_json::{Value, json};

async fn run(registry: &HookRegistry, result: Value) -> hooks_runtime::ToolCallReport {
    registry
        .run_tool_call(
            HookContext::tool_call("search", json!({})),
            async |_: &Value| Ok::<_, String>(result),
        )
        .await
}

fn registry(max_chars: usize) -> HookRegistry {
    HookRegistry::builder()
        .post(ResultTruncate::new(ResultTruncateConfig {
            max_chars,
            ..ResultTruncateConfig::default()
        }))
        .build()
        .expect("registry")
}

#[tokio::test]
async fn results_at_the_limit_pass_untouched() {
    let registry = registry(8_000);
    let exact = "a".repeat(8_000);
    assert_eq!(
        run(&registry, json!(exact)).await.observation,
        Observation::Output(json!(exact))
    );
}

#[tokio::test]
async fn one_character_over_is_cut_with_a_marker_and_the_raw_result_is_kept() {
    let registry = registry(8_000);
    let long = "a".repeat(8_001);
    let report = run(&registry, json!(long)).await;
    let Observation::Output(Value::String(seen)) = &report.observation else {
        panic!("{:?}", report.observation)
    };
    assert_eq!(
        seen,
        &format!(
            "{}\n…[truncated: showing 8000 of 8001 characters]",
            "a".repeat(8_000)
        )
    );
    assert_eq!(report.raw_result(), Some(&json!(long)));
}

#[test]
fn multibyte_text_is_cut_on_character_boundaries() {
    let chinese = "审批通过".repeat(3); // 12 characters, 36 bytes
    let cut = truncate_text(&chinese, 5).expect("too long");
    assert!(cut.starts_with("审批通过审\n"), "{cut}");
    assert!(cut.ends_with("showing 5 of 12 characters]"));

    let emoji = "🙂👍🏽🎉".repeat(4);
    let count = emoji.chars().count();
    let cut = truncate_text(&emoji, 7).expect("too long");
    assert_eq!(
        cut.split('\n').next().map(|head| head.chars().count()),
        Some(7)
    );
    assert!(cut.ends_with(&format!("showing 7 of {count} characters]")));
    assert_eq!(truncate_text("短", 1), None);
}

#[tokio::test]
async fn large_json_results_are_measured_serialized() {
    let registry = registry(20);
    let report = run(&registry, json!({"rows": [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]})).await;
    let Observation::Output(Value::String(seen)) = report.observation else {
        panic!()
    };
    assert_eq!(
        seen,
        "{\"rows\":[1,2,3,4,5,6\n…[truncated: showing 20 of 31 characters]"
    );
    let small = run(&registry, json!({"ok": 1})).await;
    assert_eq!(small.observation, Observation::Output(json!({"ok": 1})));
}

#[test]
fn config_rejects_unknown_keys_and_zero() {
    assert!(ResultTruncate::from_config(&json!({"max_chars": 100})).is_ok());
    let error = ResultTruncate::from_config(&json!({"max_char": 100})).expect_err("unknown key");
    assert!(
        error.to_string().contains("unknown field `max_char`"),
        "{error}"
    );
    assert!(ResultTruncate::from_config(&json!({"max_chars": 0})).is_err());
}

#[tokio::test]
async fn an_oversized_tool_error_is_cut_like_a_result() {
    let registry = registry(100);
    let report = registry
        .run_tool_call(
            HookContext::tool_call("search", json!({})),
            async |_: &Value| Err::<Value, _>("e".repeat(1_000_000)),
        )
        .await;
    let Observation::ToolError(seen) = &report.observation else {
        panic!("{:?}", report.observation)
    };
    assert_eq!(
        seen,
        &format!(
            "{}\n…[truncated: showing 100 of 1000000 characters]",
            "e".repeat(100)
        )
    );
    assert!(report.observation.to_string().chars().count() < 200);
    assert_eq!(
        report.tool_error().map(str::len),
        Some(1_000_000),
        "the tool's own error stays in the report"
    );
    assert_eq!(report.raw_result(), None);

    let short = registry
        .run_tool_call(
            HookContext::tool_call("search", json!({})),
            async |_: &Value| Err::<Value, _>("not found"),
        )
        .await;
    assert_eq!(
        short.observation,
        Observation::ToolError("not found".into())
    );
}
