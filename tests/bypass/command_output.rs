//! Command hooks: what a script prints when the model has shaped its input,
//! or when a script says "block" where a lax reader would not look. Every
//! case runs a real script (`tests/scripts/printf.sh`, which prints a
//! `printf` format and exits with the given code) as a fail-closed and as a
//! fail-open pre hook.

use std::time::Duration;

use hooks::{
    CommandEvent, CommandHook, CommandLine, CommandSpec, ErrorPolicy, HookContext, HookRegistry,
};
use serde_json::{Value, json};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Verdict {
    Runs,
    Blocked,
}

use Verdict::{Blocked, Runs};

fn registry(format: &str, exit: u8, on_error: ErrorPolicy) -> HookRegistry {
    let script = format!("{}/tests/scripts/printf.sh", env!("CARGO_MANIFEST_DIR"));
    let spec = CommandSpec::new(
        CommandEvent::PreToolUse,
        CommandLine::exec([script, format.to_owned(), exit.to_string()]),
    )
    .with_name("payee_check")
    .with_timeout(Duration::from_secs(20))
    .with_on_error(on_error);
    let hook = CommandHook::new(spec, None).expect("valid spec");
    HookRegistry::builder()
        .hook(hook.into_registered())
        .build()
        .expect("registry")
}

async fn verdict(format: &str, exit: u8, on_error: ErrorPolicy) -> Verdict {
    let report = registry(format, exit, on_error)
        .run_tool_call(
            HookContext::tool_call("oa__pay", json!({"payee": "acme"})),
            async |_: &Value| Ok::<_, String>(json!("paid")),
        )
        .await;
    if report.tool_ran { Runs } else { Blocked }
}

const BLOCK: &str = r#"{"decision":"block","reason":"payee is blacklisted"}"#;

/// (why, printf format, exit code, fail-closed verdict, fail-open verdict).
fn cases() -> Vec<(&'static str, String, u8, Verdict, Verdict)> {
    vec![
        ("plain progress text", "checked 3 rules\n".into(), 0, Runs, Runs),
        ("a log line in brackets", "[INFO] done\n".into(), 0, Runs, Runs),
        ("a block decision", BLOCK.into(), 0, Blocked, Blocked),
        (
            "a deny in hookSpecificOutput",
            r#"{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"no"}}"#.into(),
            0,
            Blocked,
            Blocked,
        ),
        ("exit 2", "".into(), 2, Blocked, Blocked),
        ("a crash (exit 1): fail-open ignores it", "".into(), 1, Blocked, Runs),
        ("after a UTF-8 BOM", format!("\\357\\273\\277{BLOCK}"), 0, Blocked, Blocked),
        ("after bytes FF FE", format!("\\377\\376{BLOCK}"), 0, Blocked, Blocked),
        ("after 12,000 spaces", format!("{}{BLOCK}", " ".repeat(12_000)), 0, Blocked, Blocked),
        (
            "after 10,000 characters of progress lines",
            format!("{}{BLOCK}", "step ok\n".repeat(1_300)),
            0,
            Blocked,
            Blocked,
        ),
        ("on the same line as progress text", format!("checking... {BLOCK}"), 0, Blocked, Blocked),
        ("after a terminal reset (ESC ( B)", format!("\\033(B\\033[m{BLOCK}"), 0, Blocked, Blocked),
        ("after a C1 CSI (U+009B)", format!("\\302\\2330m{BLOCK}"), 0, Blocked, Blocked),
        ("after a zero-width space", format!("\\342\\200\\213{BLOCK}"), 0, Blocked, Blocked),
        ("inside a JSON array", format!("[{BLOCK}]"), 0, Blocked, Blocked),
        ("cut short (broken JSON)", r#"{"decision":"block","reason":"payee"#.into(), 0, Blocked, Blocked),
        (
            "overwritten by a duplicate key",
            r#"{"decision":"block","reason":"no","decision":null}"#.into(),
            0,
            Blocked,
            Blocked,
        ),
        ("over the output cap", format!("{BLOCK}{}", " ".repeat(11_000)), 0, Blocked, Blocked),
        ("not UTF-8", "\\377\\377 ok\n".into(), 0, Blocked, Blocked),
    ]
}

#[tokio::test]
async fn every_hidden_or_unreadable_decision_blocks() {
    for (why, format, exit, closed, open) in cases() {
        assert_eq!(
            verdict(&format, exit, ErrorPolicy::FailClosed).await,
            closed,
            "{why} (fail_closed)"
        );
        assert_eq!(
            verdict(&format, exit, ErrorPolicy::FailOpen).await,
            open,
            "{why} (fail_open)"
        );
    }
}
