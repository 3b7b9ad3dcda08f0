//! Argument text as a hostile model writes it, through the standard stack
//! of `tool_calls` (the gate asks for `oa__pay` over 50,000; the offline
//! channel reaches nobody, so it blocks them) with `Agent::call_tool_raw`: text meant to read one way to the
//! hooks and another to the tool (a repeated key, an escaped spelling of
//! the same key), text that is not quite JSON, and text too big to read.
//! Whatever is refused, no hook and no tool sees; whatever runs, the tool
//! gets exactly the value the hooks checked.

use std::sync::{Arc, Mutex};

use hooks::trace::Refusal;
use serde_json::{Value, json};

use super::tool_calls::{AGENT, agent};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Verdict {
    /// The tool runs, with exactly the arguments the hooks saw.
    Runs,
    /// The gate blocks it (the amount is over the threshold).
    Gated,
    /// The runtime refuses the text before any hook.
    Refused,
}

use Verdict::{Gated, Refused, Runs};

fn cases() -> Vec<(&'static str, String, Verdict)> {
    let small = r#"{"amount": 1, "payee": "acme"}"#;
    vec![
        ("a plain small payment", small.to_owned(), Runs),
        (
            "a plain big payment",
            r#"{"amount": 60000, "payee": "acme"}"#.to_owned(),
            Gated,
        ),
        (
            "a repeated key: serde keeps the last, another reader the first",
            r#"{"amount": 1, "payee": "acme", "amount": 60000}"#.to_owned(),
            Refused,
        ),
        (
            "the same key spelled with an escape",
            r#"{"amount": 60000, "\u0061mount": 1, "payee": "acme"}"#.to_owned(),
            Refused,
        ),
        (
            "the same key in another case: a case-blind reader (Go, .NET) takes the last",
            r#"{"amount": 1, "payee": "acme", "Amount": 60000}"#.to_owned(),
            Refused,
        ),
        (
            "the same key with a long s, which folds to s",
            r#"{"payee": "acme", "amount": 1, "notes": "ok", "noteſ": "wire it all"}"#.to_owned(),
            Refused,
        ),
        (
            "a repeated key deep down",
            r#"{"amount": 1, "payee": "acme", "meta": [{"k": 1, "k": 2}]}"#.to_owned(),
            Refused,
        ),
        (
            "a second object after the first",
            format!(r#"{small}{{"amount": 60000}}"#),
            Refused,
        ),
        ("trailing garbage", format!("{small} garbage"), Refused),
        ("a trailing comma", r#"{"amount": 1,}"#.to_owned(), Refused),
        ("a comment", format!("{small} // approved"), Refused),
        (
            "a lone surrogate escape",
            r#"{"amount": 1, "payee": "\ud800"}"#.to_owned(),
            Refused,
        ),
        (
            "a reversed surrogate pair",
            r#"{"amount": 1, "payee": "\udc00\ud800"}"#.to_owned(),
            Refused,
        ),
        (
            "a raw NUL inside a string",
            "{\"amount\": 1, \"payee\": \"ac\0me\"}".to_owned(),
            Refused,
        ),
        ("a raw NUL after the object", format!("{small}\0"), Refused),
        (
            "an escaped NUL is a character like any other",
            r#"{"amount": 1, "payee": "ac\u0000me"}"#.to_owned(),
            Runs,
        ),
        (
            "a byte-order mark first",
            format!("\u{FEFF}{small}"),
            Refused,
        ),
        (
            "NaN",
            r#"{"amount": NaN, "payee": "acme"}"#.to_owned(),
            Refused,
        ),
        (
            "nesting past the parser's limit",
            format!("{}{}", "[".repeat(10_000), "]".repeat(10_000)),
            Refused,
        ),
        (
            "10 MB of text",
            format!(
                r#"{{"amount": 60000, "payee": "{}"}}"#,
                "a".repeat(10 << 20)
            ),
            Refused,
        ),
        ("not an object", "60000".to_owned(), Refused),
        (
            "an object inside a string",
            serde_json::to_string(&json!(small)).expect("a string"),
            Refused,
        ),
    ]
}

#[tokio::test]
async fn hostile_argument_text_gets_its_verdict() {
    let (agent, _resources) = agent(AGENT).await;
    for (n, (why, raw, expected)) in cases().into_iter().enumerate() {
        let received: Arc<Mutex<Option<Value>>> = Arc::default();
        let tool_received = Arc::clone(&received);
        let ctx = agent
            .context("oa__pay", Value::Null)
            .with_user(format!("user-{n}"))
            .with_tool_call_id(format!("call-{n}"));
        let report = agent
            .call_tool_raw(ctx, &raw, async move |args: &Value| {
                *tool_received.lock().expect("lock") = Some(args.clone());
                Ok::<_, String>(json!("paid"))
            })
            .await;
        let verdict = match report.stopped_by() {
            None => Runs,
            Some("approval_gate") => Gated,
            Some("runtime") => Refused,
            Some(other) => panic!("{why}: stopped by {other}"),
        };
        assert_eq!(verdict, expected, "{why}: {}", report.observation);
        match verdict {
            Runs => assert_eq!(
                received.lock().unwrap().as_ref(),
                Some(&report.args),
                "{why}: the tool gets what the hooks saw"
            ),
            Gated => assert!(received.lock().unwrap().is_none(), "{why}"),
            Refused => {
                assert!(received.lock().unwrap().is_none(), "{why}");
                assert_eq!(report.trace.refused(), Some(Refusal::Arguments), "{why}");
                assert!(
                    report.trace.runs().is_empty(),
                    "{why}: no hook may see refused text"
                );
                // What observers and the audit log keep is bounded and shown.
                let kept = report.args.as_str().expect("the text as a string");
                assert!(
                    kept.chars().count() <= hooks::registry::RAW_ARGS_PREVIEW_CHARS + 1,
                    "{why}"
                );
                assert!(!kept.contains('\0'), "{why}: NUL is escaped");
                assert!(!kept.contains('\u{FEFF}'), "{why}: BOM is escaped");
            }
        }
    }
}

#[tokio::test]
async fn an_escaped_nul_reaches_hooks_and_tool_alike() {
    let (agent, _resources) = agent(AGENT).await;
    let report = agent
        .call_tool_raw(
            agent.context("oa__pay", Value::Null),
            r#"{"amount": 1, "payee": "ac\u0000me"}"#,
            async |args: &Value| Ok::<_, String>(args["payee"].clone()),
        )
        .await;
    assert_eq!(report.observation.output(), Some(&json!("ac\0me")));
    assert_eq!(report.args["payee"], json!("ac\0me"));
}
