//! Quickstart: four hooks declared with attributes, and a scripted agent's tool
//! calls run through them — one allowed, one blocked, one with its arguments
//! rewritten, one with its result rewritten.
//!
//! Run with `cargo run --example quickstart`.

#[path = "support/exit.rs"]
mod exit;

use hooks::prelude::*;
use serde_json::{Value, json};

/// Orgs frozen for an audit; a real deployment reads this from a database.
fn org_is_readonly(org_id: &str) -> bool {
    org_id == "frozen-corp"
}

#[session_start(description = "tells the model the house rules")]
async fn house_rules(ctx: &HookContext) -> HookResult {
    HookResult::allow().with_context(format!(
        "You act for org {}. Never reveal customer emails.",
        ctx.org_id
    ))
}

#[pre_tool_use(priority = 5, when = tool_name starts_with "sql_")]
async fn readonly_guard(ctx: &HookContext) -> HookResult {
    let statement = ctx.tool_args["q"].as_str().unwrap_or_default();
    let is_read = statement
        .trim_start()
        .to_ascii_uppercase()
        .starts_with("SELECT");
    if org_is_readonly(&ctx.org_id) && !is_read {
        return HookResult::block("Org is in read-only mode — write blocked.");
    }
    HookResult::allow()
}

#[pre_tool_use(priority = 20, when = tool_name == "sql_query" && args.limit > 100)]
async fn cap_row_limit(ctx: &HookContext) -> HookResult {
    let mut args = ctx.tool_args.clone();
    args["limit"] = json!(100);
    HookResult::allow()
        .with_args(args)
        .with_side_effect(format!("limit {} capped to 100", ctx.tool_args["limit"]))
}

#[post_tool_use(when = connector == "crm")]
async fn redact_emails(ctx: &HookContext) -> HookResult {
    let Some(Value::Object(record)) = ctx.result() else {
        return HookResult::allow();
    };
    let mut record = record.clone();
    if record.contains_key("email") {
        record.insert("email".into(), json!("[redacted]"));
        return HookResult::allow()
            .with_result(Value::Object(record))
            .with_side_effect("redacted email");
    }
    HookResult::allow()
}

/// The agent's toolbox: what a real agent would call.
async fn run_tool(name: &str, args: &Value) -> Result<Value, String> {
    match name {
        "sql_query" => Ok(json!(format!(
            "{} rows (limit {})",
            args["limit"].as_i64().unwrap_or(10).min(3),
            args["limit"]
        ))),
        "sql_exec" => Ok(json!("1 row affected")),
        "crm__lookup" => {
            Ok(json!({"name": "Ada Lovelace", "email": "ada@example.com", "tier": "gold"}))
        }
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
    let registry = HookRegistry::from_registered()?;
    println!("Hooks, in run order:\n{}", registry.describe());

    let session = HookContext::session()
        .with_org("frozen-corp")
        .with_user("alice");
    let started = registry.start_session(session).await?;
    println!("Session context for the LLM: {}\n", started.context);

    let plan = [
        (
            "sql_query",
            json!({"q": "SELECT * FROM invoices", "limit": 10}),
            "frozen-corp",
        ),
        (
            "sql_exec",
            json!({"q": "DELETE FROM invoices"}),
            "frozen-corp",
        ),
        (
            "sql_query",
            json!({"q": "SELECT * FROM invoices", "limit": 5000}),
            "open-corp",
        ),
        ("crm__lookup", json!({"customer": 42}), "open-corp"),
    ];
    for (step, (tool, args, org)) in plan.into_iter().enumerate() {
        println!("Step {}: {tool} {args}", step + 1);
        let ctx = HookContext::tool_call(tool, args)
            .with_org(org)
            .with_user("alice")
            .with_conversation("conv-1")
            .with_tool_call_id(format!("call-{}", step + 1));
        let report = registry
            .run_tool_call(ctx, async |args: &Value| run_tool(tool, args).await)
            .await;
        println!("  tool ran:    {}", report.tool_ran);
        println!("  observation: {}", report.observation);
        println!("  trace:\n{}", report.trace);
    }
    Ok(())
}
