//! `when` text from a config file: parsed for each hook point; an
//! expression that parses prints back to text that parses to the same
//! expression, and evaluates against calls of every shape without failing.

#![no_main]

use hooks_runtime::when::When;
use hooks_runtime::{HookContext, HookPoint, ToolOutcome};
use hooks_when::parse;
use libfuzzer_sys::fuzz_target;
use serde_json::json;

/// Calls at `point` to evaluate an expression against.
fn calls(point: HookPoint) -> Vec<HookContext> {
    let args = [
        json!({"sql": "delete from t", "amount": "12.5", "path": "/etc/passwd",
               "n": 3, "items": [1, "two", {"k": null}], "nested": {"deep": {"x": true}}}),
        json!({"amount": 1e300, "name": "Аcme\u{200b}", "": ""}),
        json!({}),
    ];
    let mut calls = Vec::new();
    for args in args {
        let mut call = HookContext::tool_call("sql_exec", args.clone())
            .with_agent("billing-agent")
            .with_user("alice")
            .with_org("acme")
            .with_metadata("requires_confirmation", true);
        call.point = point;
        if point == HookPoint::PostToolUse {
            call.tool_outcome = Some(ToolOutcome::Success(args));
        }
        calls.push(call);
    }
    calls
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    for point in [
        HookPoint::PreToolUse,
        HookPoint::PostToolUse,
        HookPoint::SessionStart,
    ] {
        let expr = match parse(text, point) {
            Ok(expr) => expr,
            Err(errors) => {
                let _ = errors.to_string();
                continue;
            }
        };
        let printed = expr.to_string();
        let again = parse(&printed, point).unwrap_or_else(|errors| {
            panic!("{text:?} printed as {printed:?}, which fails: {errors}")
        });
        assert_eq!(again.to_string(), printed, "{text:?} does not print stably");
        let when = When::parse(text, point).expect("the runtime parses what the parser did");
        if point != HookPoint::SessionStart {
            for call in calls(point) {
                let _ = when.matches(&call);
            }
        }
    }
});
