//! The flagship example on rig: a real rig agent (rig-agent's builder and run
//! loop) with real rig tools, under the standard hook stack from
//! `examples/agent.yaml`, in one line for the whole agent.
//!
//! No LLM and no service: a scripted rig completion model plays the agent's
//! turns; the hooks' state lives in embedded SQLite; approvals are answered by
//! a simulated operator through a fake Feishu Open API server on 127.0.0.1.
//! The transcript is what the model was shown after each action — a call
//! allowed, results truncated, one rate limited, a payment approved and one
//! rejected while rig's loop waits, a shell command vetted by a command hook,
//! and, in a second request for the frozen subsidiary, a write blocked by the
//! read-only guard — and ends with the audit log.
//!
//! Run with `cargo run --example rig_agent --features rig`.

#[path = "support/exit.rs"]
mod exit;

use std::path::Path;
use std::sync::Arc;

use hooks::approval_gate::channel::feishu::FeishuChannel;
use hooks::approval_gate::{ApprovalGate, StaticDirectory};
use hooks::rig::scripted::{Turn, scripted_model};
use hooks::rig::{CallContext, Hooks};
use hooks::std_hooks::readonly_guard::{DatabaseOrgModes, OrgModeSource};
use hooks::std_hooks::{APPROVALS, DATABASE, Database, ORG_MODES};
use hooks::{Agent, config::AgentConfig, factory::Resources};
use hooks_testkit::feishu::{FakeFeishu, FakeFeishuConfig};
use rig_agent::AgentBuilder;
use rig_core::completion::message::ToolName;
use rig_core::tool::{DynamicTool, Tool, ToolContext, ToolOutput};
use serde_json::{Value, json};

#[path = "support/feishu_operator.rs"]
mod feishu_operator;
use feishu_operator::{CHAT, OPERATOR, operator, serve_callbacks};

const CONVERSATION: &str = "conv-2026-12-03-finance-rig";

// ------------------------------------------------------------- the tools
// Plain rig tools: nothing in them knows about the hooks.

#[derive(Debug, thiserror::Error)]
#[error("{0}")]
struct ToolFailed(String);

#[derive(serde::Deserialize)]
struct Sql {
    sql: String,
}

fn sql_parameters() -> Value {
    json!({"type": "object", "properties": {"sql": {"type": "string"}}, "required": ["sql"]})
}

struct SqlQuery;

impl Tool for SqlQuery {
    const NAME: &'static str = "sql_query";
    type Args = Sql;
    type Output = Value;
    type Error = ToolFailed;
    fn description(&self) -> String {
        "Runs a read-only SQL query.".to_owned()
    }
    fn parameters(&self) -> Value {
        sql_parameters()
    }
    async fn call(&self, _: &mut ToolContext, _: Sql) -> Result<Value, ToolFailed> {
        Ok(json!([{"invoice": "INV-1042", "amount": 60000, "paid": false}]))
    }
}

struct SqlExec;

impl Tool for SqlExec {
    const NAME: &'static str = "sql_exec";
    type Args = Sql;
    type Output = Value;
    type Error = ToolFailed;
    fn description(&self) -> String {
        "Runs a SQL statement that writes.".to_owned()
    }
    fn parameters(&self) -> Value {
        sql_parameters()
    }
    async fn call(&self, _: &mut ToolContext, args: Sql) -> Result<Value, ToolFailed> {
        if args.sql.trim().is_empty() {
            return Err(ToolFailed("empty statement".to_owned()));
        }
        Ok(json!({"rows_affected": 1}))
    }
}

#[derive(serde::Deserialize)]
struct Payment {
    invoice: String,
    amount: u64,
    payee: String,
}

struct PurchasePay;

impl Tool for PurchasePay {
    const NAME: &'static str = "oa__purchase_pay";
    type Args = Payment;
    type Output = Value;
    type Error = ToolFailed;
    fn description(&self) -> String {
        "Pays a supplier invoice through the OA system.".to_owned()
    }
    fn parameters(&self) -> Value {
        json!({"type": "object", "properties": {
            "invoice": {"type": "string"}, "amount": {"type": "integer"}, "payee": {"type": "string"}
        }})
    }
    async fn call(&self, _: &mut ToolContext, args: Payment) -> Result<Value, ToolFailed> {
        Ok(
            json!({"status": "paid", "invoice": args.invoice, "amount": args.amount, "payee": args.payee}),
        )
    }
}

#[derive(serde::Deserialize)]
struct Command {
    command: String,
}

struct ShellExec;

impl Tool for ShellExec {
    const NAME: &'static str = "shell_exec";
    type Args = Command;
    type Output = String;
    type Error = ToolFailed;
    fn description(&self) -> String {
        "Runs a shell command in the working directory.".to_owned()
    }
    fn parameters(&self) -> Value {
        json!({"type": "object", "properties": {"command": {"type": "string"}}})
    }
    async fn call(&self, _: &mut ToolContext, args: Command) -> Result<String, ToolFailed> {
        match args.command.as_str() {
            "ls -la" => Ok("total 3\n-rw-r--r-- invoices.csv\n-rw-r--r-- terms.pdf".to_owned()),
            other => Ok(format!("ran `{other}`")),
        }
    }
}

/// A runtime-defined tool, as MCP tools become in rig.
fn http_fetch() -> DynamicTool {
    let name = ToolName::new("http__fetch").expect("a tool name");
    DynamicTool::new(
        name,
        "Fetches a web page as text.",
        json!({"type": "object", "properties": {"url": {"type": "string"}}}),
        |_args| {
            Box::pin(async {
                Ok(ToolOutput::text(
                    "Supplier terms (fetched): ".to_owned()
                        + &"Net 30 days; 2% discount within 10 days; late fee 1.5% per month. "
                            .repeat(12),
                ))
            })
        },
    )
}

// ------------------------------------------------------------- the model

fn finance_turns() -> Vec<Turn> {
    let call = |n: usize, tool: &str, args: Value| Turn::call(format!("call-{n}"), tool, args);
    vec![
        call(
            1,
            "sql_query",
            json!({"sql": "SELECT * FROM invoices WHERE paid = false"}),
        )
        .thinking("Look up unpaid invoices."),
        call(
            2,
            "http__fetch",
            json!({"url": "https://supplier.example/terms"}),
        )
        .thinking("Fetch the supplier's payment terms."),
        call(
            3,
            "http__fetch",
            json!({"url": "https://supplier.example/terms?v=2"}),
        )
        .thinking("Fetch them again, in case they changed."),
        call(
            4,
            "http__fetch",
            json!({"url": "https://supplier.example/appendix"}),
        )
        .thinking("And the late-fee appendix."),
        call(
            5,
            "http__fetch",
            json!({"url": "https://supplier.example/terms?v=3"}),
        )
        .thinking("One more time, just to be sure."),
        call(
            6,
            "oa__purchase_pay",
            json!({"invoice": "INV-1042", "amount": 60000, "payee": "Shenzhen Components Ltd"}),
        )
        .thinking("Pay invoice INV-1042."),
        call(
            7,
            "oa__purchase_pay",
            json!({"invoice": "PRE-Q1", "amount": 480000, "payee": "Shenzhen Components Ltd"}),
        )
        .thinking("Prepay next quarter while I am at it."),
        call(8, "shell_exec", json!({"command": "ls -la"})).thinking("List the working directory."),
        call(9, "shell_exec", json!({"command": "rm -rf ./*"}))
            .thinking("Clean up the working directory."),
        Turn::answer("INV-1042 is paid; the prepayment was rejected and the clean-up refused."),
    ]
}

fn frozen_turns() -> Vec<Turn> {
    vec![
        Turn::call(
            "call-10",
            "sql_exec",
            json!({"sql": "UPDATE invoices SET paid = true WHERE id = 1042"}),
        )
        .thinking("Mark the invoice paid in the frozen subsidiary."),
        Turn::answer("The subsidiary is read-only; nothing was changed."),
    ]
}

// ------------------------------------------------------------- the run

#[tokio::main]
async fn main() -> std::process::ExitCode {
    exit::exit_code(run().await)
}

async fn run() -> Result<(), Box<dyn std::error::Error>> {
    // The platform: a fake Feishu, storage, org modes, approvals.
    let feishu = FakeFeishu::start(FakeFeishuConfig::default()).await?;
    let database = Database::connect("sqlite::memory:").await?;
    let org_modes = Arc::new(DatabaseOrgModes::new(database.clone()));
    org_modes.set_read_only("acme-frozen", true).await?;
    let (approvals, callbacks) = ApprovalGate::builder(
        database.clone(),
        FeishuChannel::new(feishu.feishu_config(CHAT))?,
    )
    .directory(StaticDirectory::new().person("feishu", OPERATOR, "wang.fang", "acme"))
    .start()?;
    let callback_url = serve_callbacks(callbacks).await?;
    tokio::spawn(operator(feishu, approvals.clone(), callback_url));

    // The hooks: the agent from its config file, as in the flagship example.
    let config_path = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/agent.yaml");
    let modes: Arc<dyn OrgModeSource> = org_modes;
    let resources = Resources::new()
        .with(DATABASE, database.clone())
        .with(APPROVALS, approvals.clone())
        .with(ORG_MODES, modes);
    let hooks = Hooks::for_agent(Agent::build(AgentConfig::load(&config_path)?, &resources)?);
    println!(
        "rig agent under `finance-bot` from {}\n",
        config_path.display()
    );

    // The rig agent: its tools added as rig users add them; one line puts
    // every call of the agent behind the hooks.
    let build = |model| {
        AgentBuilder::new(model)
            .preamble("You are a finance assistant.")
            .tool(SqlQuery)
            .tool(SqlExec)
            .tool(PurchasePay)
            .tool(ShellExec)
            .dynamic_tool(http_fetch())
            .add_hook(hooks.agent_hook())
            .build()
    };

    for (org, turns) in [("acme", finance_turns()), ("acme-frozen", frozen_turns())] {
        let (model, transcript) = scripted_model(turns);
        transcript.narrate();
        let agent = build(model);
        let ids = CallContext::new()
            .user("zhang.wei")
            .org(org)
            .conversation(CONVERSATION);
        println!("== request from zhang.wei in {org}");
        // Session-start hooks first (their context reaches the model as a
        // document of the run), then rig's loop.
        let request = agent
            .prompt("Settle the open supplier invoices.")
            .max_turns(12);
        let run = hooks.prepare(request, ids).await?;
        run.await?;
    }

    hooks.registry().flush_observers().await;
    println!("audit log (connector_call_logs):");
    println!(
        "{:<3} {:<17} {:<12} {:<11} {:<22} {:<7} reason",
        "#", "tool", "org", "outcome", "blocked by", "size"
    );
    for (n, row) in database
        .audit_entries(CONVERSATION)
        .await?
        .iter()
        .enumerate()
    {
        let reason: String = row
            .reason
            .clone()
            .unwrap_or_default()
            .chars()
            .take(50)
            .collect();
        println!(
            "{:<3} {:<17} {:<12} {:<11} {:<22} {:<7} {reason}",
            n + 1,
            row.tool_name,
            row.org_id,
            row.outcome,
            row.blocked_by.clone().unwrap_or_else(|| "-".into()),
            row.result_size.map_or("-".into(), |n| n.to_string()),
        );
    }
    Ok(())
}
