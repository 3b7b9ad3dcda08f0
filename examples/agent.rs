//! The flagship example: a scripted ReAct-style agent under the full hook
//! stack, loaded from `examples/agent.yaml`.
//!
//! No LLM and no service: the agent follows a fixed plan of tool calls, the
//! hooks' state lives in embedded SQLite, and approvals are answered by a
//! simulated operator through the real callback path — a fake Feishu Open
//! API server on 127.0.0.1 sends encrypted, signed button presses to the
//! callback router. The transcript shows a call allowed, one blocked by the
//! read-only guard, one rate limited, one truncated, a payment approved, a
//! payment rejected and a command hook's verdicts, and ends with the audit log.
//!
//! Run with `cargo run --example agent`.

#[path = "support/exit.rs"]
mod exit;

use std::path::Path;
use std::sync::Arc;

use hooks::approval_gate::channel::feishu::FeishuChannel;
use hooks::approval_gate::{ApprovalGate, StaticDirectory};
use hooks::std_hooks::readonly_guard::{DatabaseOrgModes, OrgModeSource};
use hooks::std_hooks::{APPROVALS, DATABASE, Database, ORG_MODES};
use hooks::{Agent, HookContext, config::AgentConfig, factory::Resources};
use hooks_testkit::feishu::{FakeFeishu, FakeFeishuConfig};
use serde_json::{Value, json};

#[path = "support/feishu_operator.rs"]
mod feishu_operator;
use feishu_operator::{CHAT, OPERATOR, operator, serve_callbacks};

/// The agent's toolbox: what each tool returns.
async fn run_tool(tool: &str, args: &Value) -> Result<Value, String> {
    match tool {
        "sql_query" => Ok(json!([{"invoice": "INV-1042", "amount": 60000, "paid": false}])),
        "sql_exec" => Ok(json!({"rows_affected": 1})),
        "oa__purchase_pay" => Ok(json!({"status": "paid", "amount": args["amount"]})),
        "http__fetch" => Ok(json!(
            "Supplier terms (fetched): ".to_owned()
                + &"Net 30 days; 2% discount within 10 days; late fee 1.5% per month. ".repeat(12)
        )),
        "shell_exec" => Ok(json!(
            "total 3\n-rw-r--r-- invoices.csv\n-rw-r--r-- terms.pdf"
        )),
        other => Err(format!("unknown tool {other}")),
    }
}

/// One step of the fixed plan.
struct Step {
    thought: &'static str,
    org: &'static str,
    tool: &'static str,
    args: Value,
}

fn plan() -> Vec<Step> {
    let step = |thought, org, tool, args| Step {
        thought,
        org,
        tool,
        args,
    };
    vec![
        step(
            "Look up unpaid invoices.",
            "acme",
            "sql_query",
            json!({"sql": "SELECT * FROM invoices WHERE paid = false"}),
        ),
        step(
            "Mark the invoice paid in the frozen subsidiary.",
            "acme-frozen",
            "sql_exec",
            json!({"sql": "UPDATE invoices SET paid = true WHERE id = 1042"}),
        ),
        step(
            "Fetch the supplier's payment terms.",
            "acme",
            "http__fetch",
            json!({"url": "https://supplier.example/terms"}),
        ),
        step(
            "Fetch them again, in case they changed.",
            "acme",
            "http__fetch",
            json!({"url": "https://supplier.example/terms?v=2"}),
        ),
        step(
            "And the late-fee appendix.",
            "acme",
            "http__fetch",
            json!({"url": "https://supplier.example/appendix"}),
        ),
        step(
            "One more time, just to be sure.",
            "acme",
            "http__fetch",
            json!({"url": "https://supplier.example/terms?v=3"}),
        ),
        step(
            "Pay invoice INV-1042.",
            "acme",
            "oa__purchase_pay",
            json!({"invoice": "INV-1042", "amount": 60000, "payee": "Shenzhen Components Ltd"}),
        ),
        step(
            "Prepay next quarter while I am at it.",
            "acme",
            "oa__purchase_pay",
            json!({"invoice": "PRE-Q1", "amount": 480000, "payee": "Shenzhen Components Ltd"}),
        ),
        step(
            "List the working directory.",
            "acme",
            "shell_exec",
            json!({"command": "ls -la"}),
        ),
        step(
            "Clean up the working directory.",
            "acme",
            "shell_exec",
            json!({"command": "rm -rf ./*"}),
        ),
    ]
}

// Errors are printed as people read them (`Display`, with their causes),
// not in the `Debug` form a `main` returning `Result` would print.
#[tokio::main]
async fn main() -> std::process::ExitCode {
    exit::exit_code(run().await)
}

async fn run() -> Result<(), Box<dyn std::error::Error>> {
    // The platform: a fake Feishu Open API on loopback.
    let feishu = FakeFeishu::start(FakeFeishuConfig::default()).await?;

    // Storage, org modes, the approval channel and who is who.
    let database = Database::connect("sqlite::memory:").await?;
    let org_modes = Arc::new(DatabaseOrgModes::new(database.clone()));
    org_modes.set_read_only("acme-frozen", true).await?;
    // The gate itself comes from the config file (below); here its channel
    // and machinery start, with the router the card's buttons post to.
    let (approvals, callbacks) = ApprovalGate::builder(
        database.clone(),
        FeishuChannel::new(feishu.feishu_config(CHAT))?,
    )
    .directory(StaticDirectory::new().person("feishu", OPERATOR, "wang.fang", "acme"))
    .start()?;
    let callback_url = serve_callbacks(callbacks).await?;
    tokio::spawn(operator(feishu, approvals.clone(), callback_url));

    // The agent, from its config file; any config error stops it here.
    let config_path = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/agent.yaml");
    let modes: Arc<dyn OrgModeSource> = org_modes;
    let resources = Resources::new()
        .with(DATABASE, database.clone())
        .with(APPROVALS, approvals.clone())
        .with(ORG_MODES, modes);
    let agent = Agent::build(AgentConfig::load(&config_path)?, &resources)?;
    println!("agent `{}` from {}", agent.id(), config_path.display());
    println!("{}", agent.registry().describe());

    let conversation = "conv-2026-12-03-finance";
    let session = agent
        .start_session(
            HookContext::session()
                .with_conversation(conversation)
                .with_user("zhang.wei")
                .with_org("acme"),
        )
        .await?;
    println!("session context: {}\n", session.context);

    for (n, step) in plan().into_iter().enumerate() {
        println!("Thought: {}", step.thought);
        println!("Action: {} {}", step.tool, step.args);
        let ctx = agent
            .context(step.tool, step.args)
            .with_user("zhang.wei")
            .with_org(step.org)
            .with_conversation(conversation)
            .with_tool_call_id(format!("call-{n}"));
        let report = agent
            .call_tool(ctx, async |args: &Value| run_tool(step.tool, args).await)
            .await;
        println!("Observation: {}\n", report.observation);
    }

    println!("audit log (connector_call_logs):");
    println!(
        "{:<3} {:<17} {:<11} {:<22} {:<7} reason",
        "#", "tool", "outcome", "blocked by", "size"
    );
    for row in database.audit_entries(conversation).await? {
        let reason: String = row.reason.unwrap_or_default().chars().take(60).collect();
        println!(
            "{:<3} {:<17} {:<11} {:<22} {:<7} {reason}",
            row.tool_call_id.trim_start_matches("call-"),
            row.tool_name,
            row.outcome,
            row.blocked_by.unwrap_or_else(|| "-".into()),
            row.result_size.map_or("-".into(), |n| n.to_string()),
        );
    }
    Ok(())
}
