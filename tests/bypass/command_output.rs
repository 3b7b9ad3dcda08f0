//! Command hooks: what a script prints when the model has shaped its input,
//! or when a script says "block" where a lax reader would not look. Every
//! case runs a real script (`tests/scripts/printf.sh`, which prints a
//! `printf` format, optionally a second one on stderr, and exits with the
//! given code, is killed or hangs) as a fail-closed and as a fail-open pre
//! hook.

use std::time::Duration;

use hooks::{
    ErrorPolicy, HookContext, HookPoint, HookRegistry,
    command::{CommandHook, CommandLine, CommandSpec},
};
use serde_json::{Value, json};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Verdict {
    Runs,
    Blocked,
}

use Verdict::{Blocked, Runs};

/// How the script ends after printing.
#[derive(Debug, Clone, Copy)]
enum End {
    /// Exits with this code.
    Exit(u8),
    /// Killed by `SIGKILL`.
    Signal,
    /// Sleeps until the hook's timeout kills it.
    Hang,
}

use End::{Exit, Hang, Signal};

/// What the script prints on stdout and stderr (printf formats), and how it ends.
#[derive(Debug, Clone)]
struct Output {
    stdout: String,
    stderr: String,
    end: End,
}

fn out(stdout: impl Into<String>, end: End) -> Output {
    Output {
        stdout: stdout.into(),
        stderr: String::new(),
        end,
    }
}

fn registry(output: &Output, on_error: ErrorPolicy) -> HookRegistry {
    let script = format!("{}/tests/scripts/printf.sh", env!("CARGO_MANIFEST_DIR"));
    let (end, timeout) = match output.end {
        Exit(code) => (code.to_string(), Duration::from_secs(20)),
        Signal => ("signal".to_owned(), Duration::from_secs(20)),
        Hang => ("hang".to_owned(), Duration::from_secs(1)),
    };
    let spec = CommandSpec::new(
        HookPoint::PreToolUse,
        CommandLine::exec([script, output.stdout.clone(), end, output.stderr.clone()]),
    )
    .with_name("payee_check")
    .with_timeout(timeout)
    .with_on_error(on_error);
    let hook = CommandHook::new(spec, None).expect("valid spec");
    HookRegistry::builder()
        .hook(hook.into_registered())
        .build()
        .expect("registry")
}

async fn verdict(output: &Output, on_error: ErrorPolicy) -> Verdict {
    let report = registry(output, on_error)
        .run_tool_call(
            HookContext::tool_call("oa__pay", json!({"payee": "acme"})),
            async |_: &Value| Ok::<_, String>(json!("paid")),
        )
        .await;
    if report.tool_ran { Runs } else { Blocked }
}

const BLOCK: &str = r#"{"decision":"block","reason":"payee is blacklisted"}"#;

const DENY: &str = r#"{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"no"}}"#;

/// (why, what the script prints and how it ends, fail-closed verdict, fail-open verdict).
fn cases() -> Vec<(&'static str, Output, Verdict, Verdict)> {
    vec![
        (
            "plain progress text",
            out("checked 3 rules\n", Exit(0)),
            Runs,
            Runs,
        ),
        (
            "a log line in brackets",
            out("[INFO] done\n", Exit(0)),
            Runs,
            Runs,
        ),
        ("a block decision", out(BLOCK, Exit(0)), Blocked, Blocked),
        (
            "a deny in hookSpecificOutput",
            out(DENY, Exit(0)),
            Blocked,
            Blocked,
        ),
        ("exit 2", out("", Exit(2)), Blocked, Blocked),
        (
            "a crash (exit 1): fail-open ignores it",
            out("", Exit(1)),
            Blocked,
            Runs,
        ),
        (
            "after a UTF-8 BOM",
            out(format!("\\357\\273\\277{BLOCK}"), Exit(0)),
            Blocked,
            Blocked,
        ),
        (
            "after bytes FF FE",
            out(format!("\\377\\376{BLOCK}"), Exit(0)),
            Blocked,
            Blocked,
        ),
        (
            "after 12,000 spaces",
            out(format!("{}{BLOCK}", " ".repeat(12_000)), Exit(0)),
            Blocked,
            Blocked,
        ),
        (
            "after 10,000 characters of progress lines",
            out(format!("{}{BLOCK}", "step ok\n".repeat(1_300)), Exit(0)),
            Blocked,
            Blocked,
        ),
        (
            "on the same line as progress text",
            out(format!("checking... {BLOCK}"), Exit(0)),
            Blocked,
            Blocked,
        ),
        (
            "after a terminal reset (ESC ( B)",
            out(format!("\\033(B\\033[m{BLOCK}"), Exit(0)),
            Blocked,
            Blocked,
        ),
        (
            "after a C1 CSI (U+009B)",
            out(format!("\\302\\2330m{BLOCK}"), Exit(0)),
            Blocked,
            Blocked,
        ),
        (
            "after a zero-width space",
            out(format!("\\342\\200\\213{BLOCK}"), Exit(0)),
            Blocked,
            Blocked,
        ),
        (
            "inside a JSON array",
            out(format!("[{BLOCK}]"), Exit(0)),
            Blocked,
            Blocked,
        ),
        (
            "cut short (broken JSON)",
            out(r#"{"decision":"block","reason":"payee"#, Exit(0)),
            Blocked,
            Blocked,
        ),
        (
            "overwritten by a duplicate key",
            out(
                r#"{"decision":"block","reason":"no","decision":null}"#,
                Exit(0),
            ),
            Blocked,
            Blocked,
        ),
        (
            "over the output cap",
            out(format!("{BLOCK}{}", " ".repeat(11_000)), Exit(0)),
            Blocked,
            Blocked,
        ),
        (
            "not UTF-8",
            out("\\377\\377 ok\n", Exit(0)),
            Blocked,
            Blocked,
        ),
        // Review D 1: the model makes the script fail after it printed its decision.
        (
            "a block, then exit 1",
            out(BLOCK, Exit(1)),
            Blocked,
            Blocked,
        ),
        ("a deny, then exit 3", out(DENY, Exit(3)), Blocked, Blocked),
        (
            "a block, then killed by a signal",
            out(BLOCK, Signal),
            Blocked,
            Blocked,
        ),
        (
            "a block, then a timeout",
            out(BLOCK, Hang),
            Blocked,
            Blocked,
        ),
        (
            "a block after progress text, then exit 1",
            out(format!("checking... {BLOCK}"), Exit(1)),
            Blocked,
            Blocked,
        ),
        (
            "a broken block, then exit 1",
            out(r#"{"decision":"block","reason":"pay"#, Exit(1)),
            Blocked,
            Blocked,
        ),
        (
            "a rewrite, then exit 1",
            out(
                r#"{"hookSpecificOutput":{"hookEventName":"PreToolUse","updatedInput":{"payee":"x"}}}"#,
                Exit(1),
            ),
            Blocked,
            Blocked,
        ),
        (
            "an allow, then exit 1: fail-open ignores it",
            out(
                r#"{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow"}}"#,
                Exit(1),
            ),
            Blocked,
            Runs,
        ),
        (
            "progress text, then exit 1: fail-open ignores it",
            out("checked 3 rules\n", Exit(1)),
            Blocked,
            Runs,
        ),
        (
            "progress text, then a timeout: fail-open ignores it",
            out("checking\n", Hang),
            Blocked,
            Runs,
        ),
        // Review D 2: ordinary output is not a hidden decision.
        (
            "a markdown checkbox",
            out("[ ] lint skipped\n", Exit(0)),
            Runs,
            Runs,
        ),
        (
            "a quoted key word in a warning",
            out("warning: config lacks \"reason\"; using default\n", Exit(0)),
            Runs,
            Runs,
        ),
        (
            "a quoted protocol word in prose",
            out("Press \"continue\" in the UI\n", Exit(0)),
            Runs,
            Runs,
        ),
        (
            "Allman-style C",
            out("int main()\n{\n    return 0;\n}\n", Exit(0)),
            Runs,
            Runs,
        ),
        (
            "Go %+v output",
            out("{Name:acme Limit:500}\n", Exit(0)),
            Runs,
            Runs,
        ),
        (
            "shell brace expansion",
            out("{src,dst}/y done\n", Exit(0)),
            Runs,
            Runs,
        ),
        (
            "a list of file names",
            out("[\"a.txt\", \"b.txt\"] unchanged\n", Exit(0)),
            Runs,
            Runs,
        ),
        (
            "JSON without protocol keys after text",
            out("input ok: {\"payee\": \"acme\"}\n", Exit(0)),
            Runs,
            Runs,
        ),
        (
            "a Python dict without protocol keys",
            out("args: {'payee': 'acme'}\n", Exit(0)),
            Runs,
            Runs,
        ),
        // Review D 3: double-encoded JSON.
        (
            "double-encoded",
            out(r#""{\"decision\":\"block\",\"reason\":\"no\"}""#, Exit(0)),
            Blocked,
            Blocked,
        ),
        (
            "double-encoded after text",
            out(
                r#"checking "{\"decision\":\"block\",\"reason\":\"no\"}""#,
                Exit(0),
            ),
            Blocked,
            Blocked,
        ),
        // Review D 4: a decision on stderr with exit 0.
        (
            "a block on stderr",
            Output {
                stdout: String::new(),
                stderr: BLOCK.into(),
                end: Exit(0),
            },
            Blocked,
            Blocked,
        ),
        (
            "a deny after text on stderr",
            Output {
                stdout: "ok\n".into(),
                stderr: format!("warn: {DENY}"),
                end: Exit(0),
            },
            Blocked,
            Blocked,
        ),
        (
            "structured logging on stderr",
            Output {
                stdout: String::new(),
                stderr: "{\"level\":\"info\",\"msg\":\"checked\"}\n".into(),
                end: Exit(0),
            },
            Runs,
            Runs,
        ),
        // Review D 9: a Python dict printed after text.
        (
            "a Python dict decision after text",
            out("result: {'decision': 'block'}\n", Exit(0)),
            Blocked,
            Blocked,
        ),
    ]
}

#[tokio::test]
async fn every_hidden_or_unreadable_decision_blocks() {
    let mut wrong = Vec::new();
    for (why, output, closed, open) in cases() {
        for (policy, expected) in [
            (ErrorPolicy::FailClosed, closed),
            (ErrorPolicy::FailOpen, open),
        ] {
            let got = verdict(&output, policy).await;
            if got != expected {
                wrong.push(format!(
                    "{why} ({policy:?}): {got:?}, expected {expected:?}"
                ));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
