//! Hook decisions in the program's logs: the `TracingObserver` wired to
//! `tracing-subscriber`'s fmt layer, and four calls — allowed, blocked, one
//! whose hook waits, one whose tool fails — each logged as a `hooks.tool_call`
//! span with one event per hook that ran.
//!
//! Run with `cargo run --example tracing`. To send the same spans to an
//! OpenTelemetry collector, add a `tracing-opentelemetry` layer next to (or
//! instead of) the fmt layer; the observer does not change.

#[path = "support/exit.rs"]
mod exit;

use std::sync::Arc;
use std::time::Duration;

use hooks::observer::TracingObserver;
use hooks::prelude::*;
use serde_json::{Value, json};

#[pre_tool_use(priority = 5, when = tool_name starts_with "sql_")]
async fn readonly_guard(ctx: &HookContext) -> HookResult {
    let statement = ctx.tool_args["q"].as_str().unwrap_or_default();
    if ctx.org_id == "frozen-corp" && !statement.trim_start().starts_with("SELECT") {
        return HookResult::block("Org is in read-only mode — write blocked.");
    }
    HookResult::allow()
}

#[pre_tool_use(priority = 10, when = tool_name == "pay")]
async fn second_look(_: &HookContext) -> HookResult {
    // Stands in for a hook that waits (an approval, a remote policy check).
    tokio::time::sleep(Duration::from_millis(20)).await;
    HookResult::allow()
}

async fn run_tool(name: &str, args: &Value) -> Result<Value, String> {
    match name {
        "sql_query" => Ok(json!("3 rows")),
        "pay" => Ok(json!(format!("paid {}", args["amount"]))),
        other => Err(format!("no tool named {other}")),
    }
}

// Errors are printed as people read them (`Display`, with their causes),
// not in the `Debug` form a `main` returning `Result` would print.
#[tokio::main]
async fn main() -> std::process::ExitCode {
    exit::exit_code(run().await)
}

async fn run() -> Result<(), Box<dyn std::error::Error>> {
    // Any subscriber will do; this one prints to stderr. Spans show as the
    // prefix of the events inside them.
    tracing_subscriber::fmt()
        .with_max_level(tracing_subscriber::filter::LevelFilter::INFO)
        .with_writer(std::io::stderr)
        .init();

    let registry = HookRegistry::builder()
        .registered()
        // Last among the observers, so it logs what the LLM is finally shown.
        .observer(Arc::new(TracingObserver::new()))
        .build()?;

    let calls = [
        ("sql_query", json!({"q": "SELECT * FROM invoices"}), "acme"),
        (
            "sql_exec",
            json!({"q": "DELETE FROM invoices"}),
            "frozen-corp",
        ),
        (
            "pay",
            json!({"amount": 120, "card": "4111 1111 1111 1111"}),
            "acme",
        ),
        ("mail", json!({"to": "ada@example.com"}), "acme"),
    ];
    for (number, (tool, args, org)) in calls.into_iter().enumerate() {
        let ctx = HookContext::tool_call(tool, args)
            .with_agent("finance")
            .with_user("alice")
            .with_org(org)
            .with_conversation("conv-1")
            .with_tool_call_id(format!("call-{number}"));
        let report = registry
            .run_tool_call(ctx, async |args: &Value| run_tool(tool, args).await)
            .await;
        println!("{tool}: {}", report.observation);
    }
    // The card number above is in no log line: argument values are not written.
    Ok(())
}
