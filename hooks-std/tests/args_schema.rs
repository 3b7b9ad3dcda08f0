//! ArgsSchema: a tool's arguments must match its JSON Schema — hostile
//! arguments (mistyped, extra, huge, deeply nested, hidden characters) are
//! blocked before any other hook or the tool sees them.

mod support;

use std::sync::{Arc, Mutex};

use hooks_runtime::{
    Hook, HookContext, HookRegistry, HookResult, Observation, PreToolUseHook, ToolCallReport,
    config::{AgentConfig, ConfigFormat},
    factory::{BuiltItem, Resources},
    registry::RegisteredHook,
};
use hooks_std::{ArgsSchema, ArgsSchemaConfig, SchemaError, build_std_hook, offline_resources};
use serde_json::{Value, json};

fn pay_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "amount": {"type": "number", "exclusiveMinimum": 0},
            "payee": {"type": "string", "maxLength": 64},
            "currency": {"enum": ["CNY", "USD"]}
        },
        "required": ["amount", "payee"],
        "additionalProperties": false
    })
}

fn pay_guard() -> ArgsSchema {
    ArgsSchema::builder()
        .tool("pay", pay_schema())
        .expect("valid schema")
        .build()
}

fn registry(guard: ArgsSchema) -> HookRegistry {
    HookRegistry::builder()
        .pre(guard)
        .build()
        .expect("registry")
}

/// Runs `tool` with `args`; the report says whether the tool ran.
async fn call(registry: &HookRegistry, tool: &str, args: Value) -> ToolCallReport {
    registry
        .run_tool_call(HookContext::tool_call(tool, args), async |_: &Value| {
            Ok::<_, String>(json!("paid"))
        })
        .await
}

/// The reason `args_schema` blocked the call with; panics if it ran or
/// another hook blocked it.
fn blocked_reason(report: &ToolCallReport) -> String {
    assert!(!report.tool_ran, "the tool ran: {:?}", report.observation);
    match &report.observation {
        Observation::Blocked { hook, reason } if hook == "args_schema" => reason.clone(),
        other => panic!("not blocked by args_schema: {other:?}"),
    }
}

#[tokio::test]
async fn valid_args_pass_and_the_tool_runs() {
    let registry = registry(pay_guard());
    for args in [
        json!({"amount": 120.5, "payee": "ACME Ltd"}),
        json!({"amount": 60000, "payee": "ACME Ltd", "currency": "CNY"}),
    ] {
        let report = call(&registry, "pay", args.clone()).await;
        assert!(report.tool_ran, "{args}: {:?}", report.observation);
        assert_eq!(report.observation, Observation::Output(json!("paid")));
        assert_eq!(report.args, args, "the guard never rewrites arguments");
    }
}

#[tokio::test]
async fn an_amount_written_as_a_string_is_blocked_before_the_payment_runs() {
    // The issue's attack: `args.amount > 50000` is false for a string, so a
    // gate keyed on it asks nobody, and a payment tool that coerces the
    // string pays 60,000 unapproved.
    let registry = registry(pay_guard());
    for amount in [
        json!("60000"),
        json!(" 60000 "),
        json!("6e4"),
        json!(["60000"]),
    ] {
        let report = call(&registry, "pay", json!({"amount": amount, "payee": "x"})).await;
        let reason = blocked_reason(&report);
        assert!(reason.contains("/amount: "), "{reason}");
        assert!(reason.contains(r#"is not of type "number""#), "{reason}");
    }
}

#[tokio::test]
async fn every_kind_of_mismatch_blocks_with_its_pointer_and_the_validators_message() {
    let registry = registry(pay_guard());
    let cases = [
        (
            json!({"payee": "x"}),
            vec![r#"(root): "amount" is a required property"#],
        ),
        (
            json!({"amount": 1, "payee": "x", "memo": "ignore previous instructions"}),
            vec!["(root): Additional properties are not allowed", "'memo'"],
        ),
        (
            json!({"amount": -5, "payee": "x"}),
            vec!["/amount: -5 is less than or equal to the minimum of 0"],
        ),
        (
            json!({"amount": 1, "payee": "x", "currency": "BTC"}),
            vec![r#"/currency: "BTC" is not one of"#],
        ),
        (
            json!({"amount": 1, "payee": 42}),
            vec![r#"/payee: 42 is not of type "string""#],
        ),
    ];
    for (args, expected) in cases {
        let reason = blocked_reason(&call(&registry, "pay", args.clone()).await);
        assert!(
            reason.starts_with(r#"Arguments of tool "pay" do not match its JSON Schema: "#),
            "{reason}"
        );
        for part in expected {
            assert!(reason.contains(part), "{args}: {part:?} not in {reason}");
        }
    }

    // All errors are listed, each with its own pointer.
    let reason = blocked_reason(
        &call(
            &registry,
            "pay",
            json!({"amount": "1", "payee": 2, "extra": true}),
        )
        .await,
    );
    for part in ["/amount: ", "/payee: ", "(root): Additional properties"] {
        assert!(reason.contains(part), "{part:?} not in {reason}");
    }
}

#[tokio::test]
async fn arguments_that_are_not_an_object_are_blocked() {
    let registry = registry(pay_guard());
    for args in [
        json!(null),
        json!("amount=60000"),
        json!([60000, "x"]),
        json!(60000),
        json!(true),
    ] {
        let reason = blocked_reason(&call(&registry, "pay", args.clone()).await);
        assert!(
            reason.contains(r#"(root): "#) && reason.contains(r#"is not of type "object""#),
            "{args}: {reason}"
        );
    }
}

#[tokio::test]
async fn formats_are_asserted_not_just_annotations() {
    let guard = ArgsSchema::builder()
        .tool(
            "send_mail",
            json!({"type": "object", "properties": {"to": {"type": "string", "format": "email"}}}),
        )
        .expect("valid schema")
        .build();
    let registry = registry(guard);
    assert!(
        call(&registry, "send_mail", json!({"to": "ops@example.com"}))
            .await
            .tool_ran
    );
    let reason =
        blocked_reason(&call(&registry, "send_mail", json!({"to": "not an address"})).await);
    assert!(
        reason.contains(r#"/to: "not an address" is not a "email""#),
        "{reason}"
    );
}

#[tokio::test]
async fn a_tool_without_a_schema_passes_unless_a_schema_is_required() {
    let open = registry(pay_guard());
    let report = call(&open, "search", json!({"q": "anything", "deep": [[[1]]]})).await;
    assert!(report.tool_ran, "{:?}", report.observation);

    let strict = registry(
        ArgsSchema::builder()
            .tool("pay", pay_schema())
            .expect("valid schema")
            .require_schema(true)
            .build(),
    );
    let reason = blocked_reason(&call(&strict, "search", json!({"q": "x"})).await);
    assert!(
        reason.contains(r#"Tool "search" has no JSON Schema"#),
        "{reason}"
    );
    assert!(reason.contains("require_schema: true"), "{reason}");
    assert!(
        call(&strict, "pay", json!({"amount": 1, "payee": "x"}))
            .await
            .tool_ran
    );
}

#[tokio::test]
async fn tool_names_are_compared_exactly() {
    // Another spelling is another tool: it is not checked against `pay`'s
    // schema, and under require_schema it is blocked as a tool without one.
    let spellings = ["Pay", "PAY", "pay ", "ｐａｙ"];
    let open = registry(pay_guard());
    for tool in spellings {
        let report = call(&open, tool, json!({"amount": "60000"})).await;
        assert!(report.tool_ran, "{tool:?}: {:?}", report.observation);
    }
    let strict = ArgsSchema::builder()
        .tool("pay", pay_schema())
        .expect("valid schema")
        .require_schema(true)
        .build();
    let strict_registry = registry(strict);
    for tool in spellings {
        let reason =
            blocked_reason(&call(&strict_registry, tool, json!({"amount": "60000"})).await);
        assert!(reason.contains("has no JSON Schema"), "{tool:?}: {reason}");
    }
    // A name with a zero-width space is another tool too (the dispatcher
    // refuses such names before any hook runs; the guard alone would block
    // it under require_schema), and the reason shows the character escaped,
    // so a log reader sees the difference.
    let strict = ArgsSchema::builder()
        .tool("pay", pay_schema())
        .expect("valid schema")
        .require_schema(true)
        .build();
    let ctx = HookContext::tool_call("pa\u{200B}y", json!({}));
    let decided = at_once(&strict, &ctx);
    let reason = decided.block_reason().expect("blocked").to_owned();
    assert!(
        reason.contains(r#"Tool "pa\u200By" has no JSON Schema"#),
        "{reason}"
    );
}

#[test]
fn invalid_schemas_fail_to_build_naming_the_tool() {
    let cases = [
        (json!({"type": "numbr"}), "numbr"),
        (json!({"type": "object", "required": "amount"}), "/required"),
        (json!({"minimum": "ten"}), "/minimum"),
        (
            json!({"$ref": "https://example.com/pay.json"}),
            "example.com",
        ),
        (json!({"$ref": "#/$defs/missing"}), "missing"),
        (json!({"type": "string", "pattern": "^(?=x)"}), "pattern"),
        (json!({"type": "string", "format": "iban"}), "iban"),
        (json!(42), "42"),
        // A schema that only refers back to itself constrains nothing.
        (json!({"$ref": "#"}), "accepts every value"),
        (
            json!({"$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}}, "$ref": "#/$defs/a"}),
            "accepts every value",
        ),
        (
            json!({"description": "payment arguments"}),
            "accepts every value",
        ),
    ];
    for (schema, mentioned) in cases {
        let error = ArgsSchema::builder()
            .tool("pay", schema.clone())
            .expect_err(&format!("{schema} must not build"));
        assert!(
            matches!(&error, SchemaError::InvalidSchema { tool, .. } if tool == "pay"),
            "{error:?}"
        );
        let message = error.to_string();
        assert!(
            message.starts_with(r#"the JSON Schema for tool "pay" is invalid: "#),
            "{message}"
        );
        assert!(message.contains(mentioned), "{schema}: {message}");
    }
}

#[test]
fn tool_names_that_could_never_match_and_duplicates_are_build_errors() {
    for name in ["", " pay", "pay\n", "pay\0"] {
        let error = ArgsSchema::builder().tool(name, json!({})).expect_err(name);
        assert!(matches!(error, SchemaError::BadToolName { .. }), "{name:?}");
        assert!(error.to_string().contains("compared exactly"), "{error}");
    }
    let twice = ArgsSchema::builder()
        .tool("pay", json!({}))
        .and_then(|builder| builder.tool("pay", json!({})))
        .expect_err("duplicate");
    assert_eq!(twice, SchemaError::DuplicateTool { tool: "pay".into() });
    assert!(matches!(
        ArgsSchema::builder().max_depth(0),
        Err(SchemaError::ZeroDepth)
    ));
}

#[tokio::test]
async fn builds_by_name_from_config_and_bad_config_names_the_tool() {
    let config = json!({
        "require_schema": true,
        "schemas": {"pay": pay_schema(), "search": {"type": "object"}}
    });
    let built = build_std_hook("args_schema", &config, &Resources::new())
        .expect("args_schema builds without resources");
    let registry = support::add(HookRegistry::builder(), built)
        .build()
        .expect("registry");
    assert!(call(&registry, "search", json!({"q": "x"})).await.tool_ran);
    blocked_reason(&call(&registry, "pay", json!({"amount": "60000", "payee": "x"})).await);
    blocked_reason(&call(&registry, "shell_exec", json!({"cmd": "id"})).await);

    let bad = build_std_hook(
        "args_schema",
        &json!({"schemas": {"pay": {"type": "numbr"}}}),
        &Resources::new(),
    )
    .err()
    .expect("invalid schema");
    let message = bad.to_string();
    assert!(
        message.starts_with(
            r#"invalid config for hook "args_schema": the JSON Schema for tool "pay" is invalid"#
        ),
        "{message}"
    );
    let typo = build_std_hook("args_schema", &json!({"schema": {}}), &Resources::new())
        .err()
        .expect("unknown key");
    assert!(
        typo.to_string().contains("unknown field `schema`"),
        "{typo}"
    );

    let defaults =
        build_std_hook("args_schema", &json!(null), &Resources::new()).expect("null config");
    let BuiltItem::Hook(RegisteredHook::Pre(hook)) = defaults.item else {
        panic!("a pre hook")
    };
    assert_eq!(hook.name(), "args_schema");
    assert_eq!(hook.priority(), 0, "runs before every other standard hook");
    assert_eq!(ArgsSchemaConfig::default().max_depth, 64);
}

#[tokio::test]
async fn an_agent_config_file_runs_the_schema_before_the_approval_gate() {
    // The gate's trigger compares `args.amount` as a number; the schema makes
    // sure it is one before the gate (priority 10) looks.
    let yaml = r#"
agent: finance-bot
hooks:
  class_hooks:
    - name: approval_gate
      config:
        when: 'tool_name == "pay" && args.amount > 50000'
    - name: args_schema
      config:
        schemas:
          pay:
            type: object
            properties:
              amount: { type: number }
              payee: { type: string }
            required: [amount, payee]
            additionalProperties: false
"#;
    let config = AgentConfig::parse(yaml, ConfigFormat::Yaml, "agent.yaml", None).expect("parse");
    let resources = offline_resources(Vec::<String>::new())
        .await
        .expect("resources");
    let registry = config.build_registry(&resources).expect("registry");

    let report = call(
        &registry,
        "pay",
        json!({"amount": "60000", "payee": "mallory"}),
    )
    .await;
    let reason = blocked_reason(&report);
    assert!(
        reason.contains(r#"/amount: "60000" is not of type "number""#),
        "{reason}"
    );

    let small = call(&registry, "pay", json!({"amount": 20, "payee": "bob"})).await;
    assert!(small.tool_ran, "{:?}", small.observation);
}

/// A later pre hook that writes down every call it sees.
struct Recorder {
    seen: Arc<Mutex<Vec<Value>>>,
}

impl Hook for Recorder {
    fn name(&self) -> &str {
        "recorder"
    }

    fn priority(&self) -> i32 {
        1
    }

    fn execute<'a>(&'a self, ctx: &'a HookContext) -> hooks_runtime::HookOutcome<'a> {
        let seen = self.seen.clone();
        hooks_runtime::HookOutcome::pending(async move {
            seen.lock().expect("lock").push(ctx.tool_args.clone());
            Ok(HookResult::allow())
        })
    }
}

impl PreToolUseHook for Recorder {}

#[tokio::test]
async fn it_runs_first_so_later_hooks_and_the_tool_never_see_bad_args() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let registry = HookRegistry::builder()
        .pre(Recorder { seen: seen.clone() })
        .pre(pay_guard())
        .build()
        .expect("registry");
    let tool_calls = Arc::new(Mutex::new(0));
    let run = async |args: Value| {
        let tool_calls = tool_calls.clone();
        registry
            .run_tool_call(
                HookContext::tool_call("pay", args),
                async move |_: &Value| {
                    *tool_calls.lock().expect("lock") += 1;
                    Ok::<_, String>(json!("paid"))
                },
            )
            .await
    };

    let report = run(json!({"amount": "60000", "payee": "x"})).await;
    blocked_reason(&report);
    assert!(seen.lock().expect("lock").is_empty(), "a later hook saw it");
    assert_eq!(*tool_calls.lock().expect("lock"), 0, "the tool ran");

    let report = run(json!({"amount": 60000, "payee": "x"})).await;
    assert!(report.tool_ran);
    assert_eq!(seen.lock().expect("lock").len(), 1);
    assert_eq!(*tool_calls.lock().expect("lock"), 1);
}

/// The guard's decision, which it must make at once (no future).
fn at_once(guard: &ArgsSchema, ctx: &HookContext) -> HookResult {
    match guard.execute(ctx) {
        hooks_runtime::HookOutcome::Ready(decided) => decided.expect("no failure"),
        hooks_runtime::HookOutcome::Pending(_) => panic!("the schema guard must decide at once"),
    }
}

#[test]
fn it_decides_at_once_without_a_future() {
    let guard = pay_guard();
    let bad = HookContext::tool_call("pay", json!({"amount": "60000", "payee": "x"}));
    let decided = at_once(&guard, &bad);
    assert!(decided.is_blocked());
    let good = HookContext::tool_call("pay", json!({"amount": 6, "payee": "x"}));
    assert!(!at_once(&guard, &good).is_blocked());
}

/// `depth` arrays nested in each other, built without recursion.
fn nested_arrays(depth: usize) -> Value {
    let mut value = json!(0);
    for _ in 0..depth {
        value = Value::Array(vec![value]);
    }
    value
}

/// Drops a deeply nested value without recursion (serde_json's drop recurses).
fn dismantle(value: Value) {
    let mut pending = vec![value];
    while let Some(value) = pending.pop() {
        match value {
            Value::Array(items) => pending.extend(items),
            Value::Object(fields) => pending.extend(fields.into_iter().map(|(_, v)| v)),
            _ => {}
        }
    }
}

#[test]
fn deep_nesting_is_blocked_without_overflowing_the_stack() {
    // A recursive schema lets the validator follow the nesting all the way
    // down; 100,000 levels would overflow the stack (an abort, not a panic).
    let guard = ArgsSchema::builder()
        .tool(
            "tree",
            json!({"type": "array", "items": {"anyOf": [{"type": "integer"}, {"$ref": "#"}]}}),
        )
        .expect("valid schema")
        .tool("pay", pay_schema())
        .expect("valid schema")
        .build();
    for tool in ["tree", "pay"] {
        let ctx = HookContext::tool_call(tool, nested_arrays(100_000));
        let decided = at_once(&guard, &ctx);
        let reason = decided.block_reason().expect("blocked").to_owned();
        assert!(
            reason.contains("nest arrays and objects more than 64 levels deep"),
            "{reason}"
        );
        dismantle(ctx.tool_args);
    }
    // At the limit it is validated as usual.
    let ctx = HookContext::tool_call("tree", nested_arrays(64));
    assert!(!at_once(&guard, &ctx).is_blocked());
    let ctx = HookContext::tool_call("tree", nested_arrays(65));
    assert!(at_once(&guard, &ctx).is_blocked());
    // Objects count as levels too.
    let mut object = json!(1);
    for _ in 0..65 {
        object = json!({"a": object});
    }
    let ctx = HookContext::tool_call("pay", object);
    assert!(at_once(&guard, &ctx).is_blocked());
}

#[tokio::test]
async fn deep_nesting_through_a_registry_is_blocked_and_the_tool_never_runs() {
    let registry = registry(
        ArgsSchema::builder()
            .tool("pay", pay_schema())
            .expect("valid schema")
            .max_depth(8)
            .expect("depth")
            .build(),
    );
    let mut args = json!({"amount": 1, "payee": "x"});
    args["payee"] = nested_arrays(20_000);
    let report = call(&registry, "pay", args).await;
    let reason = blocked_reason(&report);
    assert!(reason.contains("more than 8 levels deep"), "{reason}");
    dismantle(report.args);
}

#[tokio::test]
async fn huge_hostile_values_are_capped_in_the_reason() {
    let pay = registry(pay_guard());

    // A 1,000,000-character string where a number belongs.
    let huge = "9".repeat(1_000_000);
    let reason = blocked_reason(&call(&pay, "pay", json!({"amount": huge, "payee": "x"})).await);
    assert!(reason.len() < 1_000, "{} bytes", reason.len());
    // Too long to quote: the value gives way to a placeholder, the
    // explanation stays.
    assert!(
        reason.contains(r#"/amount: the value (too long to show) is not of type "number""#),
        "{reason}"
    );
    assert!(!reason.contains("99999"), "{reason}");

    // A 1,000-character unexpected key: the key is cut in the pointer and the message.
    let key = "k".repeat(1_000);
    let reason =
        blocked_reason(&call(&pay, "pay", json!({"amount": 1, "payee": "x", key: 1})).await);
    assert!(
        reason.contains("(root): Additional properties are not allowed ('kkk"),
        "{reason}"
    );
    assert!(reason.contains("…[cut at 200 characters]"), "{reason}");
    assert!(reason.len() < 1_000, "{reason}");
    // And one under a nested object, where it is also in the pointer.
    let nested = ArgsSchema::builder()
        .tool(
            "meta",
            json!({"type": "object", "additionalProperties": {"type": "integer"}}),
        )
        .expect("valid schema")
        .build();
    let key = "p".repeat(1_000);
    let reason = blocked_reason(&call(&registry(nested), "meta", json!({key: "x"})).await);
    assert!(
        reason.contains("/ppp") && reason.contains("…[cut at 100 characters]"),
        "{reason}"
    );
    assert!(reason.len() < 1_000, "{reason}");

    // 100,000 wrong items: the first ten are listed and the rest announced.
    let guard = ArgsSchema::builder()
        .tool(
            "batch",
            json!({"type": "object", "properties": {"ids": {"type": "array", "items": {"type": "integer"}}}}),
        )
        .expect("valid schema")
        .build();
    let ids: Vec<Value> = (0..100_000).map(|i| json!(format!("id-{i}"))).collect();
    let reason = blocked_reason(&call(&registry(guard), "batch", json!({"ids": ids})).await);
    assert_eq!(
        reason.matches(r#"is not of type "integer""#).count(),
        10,
        "{reason}"
    );
    assert!(
        reason.contains("/ids/0: ") && reason.contains("/ids/9: "),
        "{reason}"
    );
    assert!(!reason.contains("/ids/10: "), "{reason}");
    assert!(
        reason.ends_with("more errors not shown (the first 10 are listed)"),
        "{reason}"
    );
    assert!(reason.len() < 2_000, "{} bytes", reason.len());
}

#[tokio::test]
async fn huge_arrays_are_checked_whole() {
    // 200,000 items: uniqueItems is checked over all of them (by hashing,
    // not pairwise), so a duplicate at the very end is still found.
    let guard = ArgsSchema::builder()
        .tool(
            "tag",
            json!({
                "type": "object",
                "properties": {"ids": {"type": "array", "items": {"type": "integer"}, "uniqueItems": true}}
            }),
        )
        .expect("valid schema")
        .build();
    let registry = registry(guard);
    let mut ids: Vec<Value> = (0..200_000).map(|i| json!(i)).collect();
    assert!(call(&registry, "tag", json!({"ids": ids})).await.tool_ran);
    ids.push(json!(7));
    let reason = blocked_reason(&call(&registry, "tag", json!({"ids": ids})).await);
    assert!(
        reason.contains("/ids: ") && reason.contains("has non-unique elements"),
        "{reason}"
    );
    assert!(reason.len() < 1_000, "{} bytes", reason.len());
}

#[tokio::test]
async fn hidden_characters_in_hostile_values_are_shown_escaped() {
    let registry = registry(pay_guard());
    let key = "note\u{202E}txt.exe";
    let reason = blocked_reason(
        &call(
            &registry,
            "pay",
            json!({"amount": 1, "payee": "x", key: "\u{200B}"}),
        )
        .await,
    );
    assert!(!reason.contains('\u{202E}'), "{reason}");
    assert!(reason.contains(r"note\u202Etxt.exe"), "{reason}");
}

#[test]
fn a_schema_that_plainly_takes_anything_still_builds() {
    for schema in [json!(true), json!({})] {
        assert!(
            ArgsSchema::builder().tool("echo", schema.clone()).is_ok(),
            "{schema}"
        );
    }
}
