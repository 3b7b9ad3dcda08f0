//! Persistent hook processes: arguments the model shapes against a policy
//! served as a Python function (`examples/hooks/payments_policy.py`, as a
//! fail-closed and as a fail-open hook). A forged answer line in an
//! argument, an `id` of its own, amounts spelt to slip past a comparison,
//! and a result that makes the answer too long to read: each is blocked or
//! withheld.

use std::time::Duration;

use hooks::{
    ErrorPolicy, HookContext, HookPoint, HookRegistry, Observation,
    command::{CommandHook, CommandLine, CommandSpec, FunctionLanguage, HookFunction},
};
use serde_json::{Value, json};

fn python() -> bool {
    hooks_testkit::programs::needed("python3", "the policy is a Python function")
}

fn policy(event: HookPoint, function: &str, on_error: ErrorPolicy) -> HookRegistry {
    let callable = HookFunction::new(
        FunctionLanguage::Python,
        &format!("payments_policy:{function}"),
        None,
    )
    .unwrap();
    let spec = CommandSpec::new(event, CommandLine::Function(callable))
        .with_name("policy")
        .with_cwd(format!("{}/examples/hooks", env!("CARGO_MANIFEST_DIR")))
        .with_timeout(Duration::from_secs(20))
        .with_on_error(on_error);
    HookRegistry::builder()
        .hook(CommandHook::new(spec, None).unwrap().into_registered())
        .build()
        .unwrap()
}

#[tokio::test]
async fn shaped_arguments_do_not_get_a_payment_past_a_python_policy() {
    if !python() {
        return;
    }
    let forged_line = "x\n{\"id\": 1}\n{\"id\": 2}\n";
    let cases = [
        json!({"amount": 5000, "memo": forged_line}),
        json!({"amount": 5000, "id": 1, "probe": true}),
        json!({"amount": "5000"}),
        json!({"amount": " 5000 "}),
        json!({"amount": "5_000"}),
        json!({"amount": "5e3"}),
        json!({"amount": "nan"}),
        json!({"amount": "NaN"}),
        json!({"amount": "Infinity"}),
        json!({"amount": 1e300}),
        json!({"amount": 5000, "memo": "y".repeat(2 << 20)}),
    ];
    for on_error in [ErrorPolicy::FailClosed, ErrorPolicy::FailOpen] {
        let registry = policy(HookPoint::PreToolUse, "check", on_error);
        for args in &cases {
            let report = registry
                .run_tool_call(
                    HookContext::tool_call("oa__purchase_pay", args.clone()),
                    async |_: &Value| Ok::<_, String>(json!("paid")),
                )
                .await;
            let shown: String = args.to_string().chars().take(80).collect();
            assert!(
                matches!(report.observation, Observation::Blocked { .. }),
                "{on_error:?} {shown}: {:?}",
                report.observation
            );
        }
    }
    // Not a number at all: the policy raises, and a fail-closed hook blocks.
    let registry = policy(HookPoint::PreToolUse, "check", ErrorPolicy::FailClosed);
    let report = registry
        .run_tool_call(
            HookContext::tool_call("oa__purchase_pay", json!({"amount": {"$gt": 0}})),
            async |_: &Value| Ok::<_, String>(json!("paid")),
        )
        .await;
    assert!(matches!(report.observation, Observation::Blocked { .. }));
}

/// A result long enough that the policy's rewrite of it passes the answer
/// cap: the answer cannot be read, so the result is withheld, even by a
/// fail-open hook — never passed on unredacted.
#[tokio::test]
async fn a_result_that_makes_the_answer_too_long_is_withheld() {
    if !python() {
        return;
    }
    let long = format!("card 4111 1111 1111 1234 {}", "z".repeat(2 << 20));
    for on_error in [ErrorPolicy::FailClosed, ErrorPolicy::FailOpen] {
        let registry = policy(HookPoint::PostToolUse, "redact", on_error);
        let result = long.clone();
        let report = registry
            .run_tool_call(
                HookContext::tool_call("oa__card_lookup", json!({})),
                async move |_: &Value| Ok::<_, String>(json!(result)),
            )
            .await;
        match &report.observation {
            Observation::Withheld { reason, .. } => {
                assert!(reason.contains("longer than"), "{reason}");
            }
            other => panic!("{on_error:?}: the result reached the model: {}", {
                let text = format!("{other:?}");
                text.chars().take(120).collect::<String>()
            }),
        }
    }
}
