//! A real rig agent (rig-agent's `AgentBuilder` and run loop) with real rig
//! tools, driven by a scripted completion model, under the standard hooks:
//! each test checks what the tools received, what the model was shown on its
//! next turn, and the audit log.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use hooks::config::{AgentConfig, ConfigFormat};
use hooks::prelude::*;
use hooks::std_hooks::approval_gate::ApprovalDecision;
use hooks::std_hooks::{AuditEntry, Database};
use hooks_rig::scripted::{ScriptedRuntime, SeenResult, Turn, scripted_model};
use hooks_rig::{CallContext, HookedTools as _, Hooks, OnBlock};
use hooks_testkit::feishu::{CardClick, FakeFeishu};
use hooks_testkit::gate::{ApprovalStack, STACK_APPROVER};
use rig_agent::AgentBuilder;
use rig_core::tool::{DynamicTool, Tool, ToolContext, ToolOutput};
use rig_core::wasm_compat::WasmBoxedFuture;
use serde_json::{Value, json};

const CONVERSATION: &str = "conv-rig-1";
const CHAT: &str = "oc_finance_approvals";
const APPROVER: &str = STACK_APPROVER;

// ------------------------------------------------------------------ hooks

#[pre_tool_use(priority = 5, when = tool_name == "delete_invoice")]
async fn no_deletes(_ctx: &HookContext) -> HookResult {
    HookResult::block("invoices are never deleted; void them instead")
}

/// Caps `limit` at 10; on the `audit` table rewrites it into text, which
/// the tool's `u32` cannot take (a rewrite that no longer fits).
#[pre_tool_use(priority = 20, when = tool_name == "list_rows")]
async fn cap_limit(ctx: &HookContext) -> HookResult {
    let mut args = ctx.tool_args.clone();
    if args["table"] == "audit" {
        args["limit"] = json!("everything");
        return HookResult::allow().with_args(args);
    }
    match args["limit"].as_u64() {
        Some(limit) if limit > 10 => {
            args["limit"] = json!(10);
            HookResult::allow().with_args(args)
        }
        _ => HookResult::allow(),
    }
}

#[post_tool_use(when = tool_name == "lookup_invoice")]
async fn no_payroll(ctx: &HookContext) -> HookResult {
    match ctx.result() {
        Some(result) if result.to_string().contains("PAYROLL") => {
            HookResult::block("payroll invoices are not shown to agents")
        }
        _ => HookResult::allow(),
    }
}

#[session_start]
async fn finance_rules(ctx: &HookContext) -> HookResult {
    HookResult::allow().with_context(format!(
        "Finance rules for {} at {}: payments over 50000 need approval.",
        ctx.user_id, ctx.org_id
    ))
}

const AGENT: &str = r#"
agent: finance-bot
hooks:
  class_hooks:
    - no_deletes
    - cap_limit
    - no_payroll
    - finance_rules
    - name: approval_gate
      config:
        when: 'tool_name == "pay_invoice" && args.amount > 50000'
        approver_scope: org_members
        timeout: 20s
    - name: result_truncate
      config: { max_chars: 80 }
    - audit_log
"#;

// ------------------------------------------------------------------ tools

#[derive(Debug, thiserror::Error)]
#[error("{0}")]
struct ToolFailed(String);

/// Counts the calls that reached a tool's own code.
#[derive(Clone, Default)]
struct Ran(Arc<AtomicUsize>);

impl Ran {
    fn count(&self) -> usize {
        self.0.load(Ordering::SeqCst)
    }
    fn tick(&self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

#[derive(serde::Deserialize)]
struct InvoiceArgs {
    invoice: String,
}

struct LookupInvoice(Ran);

impl Tool for LookupInvoice {
    const NAME: &'static str = "lookup_invoice";
    type Args = InvoiceArgs;
    type Output = Value;
    type Error = ToolFailed;

    fn description(&self) -> String {
        "Looks an invoice up.".to_owned()
    }
    fn parameters(&self) -> Value {
        json!({"type": "object", "properties": {"invoice": {"type": "string"}}, "required": ["invoice"]})
    }
    async fn call(&self, _: &mut ToolContext, args: InvoiceArgs) -> Result<Value, ToolFailed> {
        self.0.tick();
        Ok(json!({"invoice": args.invoice, "amount": 60000, "paid": false}))
    }
}

struct DeleteInvoice(Ran);

impl Tool for DeleteInvoice {
    const NAME: &'static str = "delete_invoice";
    type Args = InvoiceArgs;
    type Output = String;
    type Error = ToolFailed;

    fn description(&self) -> String {
        "Deletes an invoice.".to_owned()
    }
    fn parameters(&self) -> Value {
        json!({"type": "object", "properties": {"invoice": {"type": "string"}}})
    }
    async fn call(&self, _: &mut ToolContext, args: InvoiceArgs) -> Result<String, ToolFailed> {
        self.0.tick();
        Ok(format!("deleted {}", args.invoice))
    }
}

#[derive(serde::Deserialize)]
struct RowsArgs {
    table: String,
    limit: u32,
}

/// Records the `limit` it was called with.
struct ListRows(Ran, Arc<std::sync::Mutex<Vec<u32>>>);

impl Tool for ListRows {
    const NAME: &'static str = "list_rows";
    type Args = RowsArgs;
    type Output = Value;
    type Error = ToolFailed;

    fn description(&self) -> String {
        "Lists rows of a table.".to_owned()
    }
    fn parameters(&self) -> Value {
        json!({"type": "object", "properties": {"table": {"type": "string"}, "limit": {"type": "integer"}}})
    }
    async fn call(&self, _: &mut ToolContext, args: RowsArgs) -> Result<Value, ToolFailed> {
        self.0.tick();
        self.1.lock().unwrap().push(args.limit);
        Ok(json!({"table": args.table, "rows": args.limit}))
    }
}

#[derive(serde::Deserialize)]
struct PayArgs {
    invoice: String,
    amount: u64,
}

struct PayInvoice(Ran);

impl Tool for PayInvoice {
    const NAME: &'static str = "pay_invoice";
    type Args = PayArgs;
    type Output = Value;
    type Error = ToolFailed;

    fn description(&self) -> String {
        "Pays an invoice.".to_owned()
    }
    fn parameters(&self) -> Value {
        json!({"type": "object", "properties": {"invoice": {"type": "string"}, "amount": {"type": "integer"}}})
    }
    async fn call(&self, _: &mut ToolContext, args: PayArgs) -> Result<Value, ToolFailed> {
        self.0.tick();
        Ok(json!({"status": "paid", "invoice": args.invoice, "amount": args.amount}))
    }
}

struct Explode(Ran);

impl Tool for Explode {
    const NAME: &'static str = "explode";
    type Args = Value;
    type Output = String;
    type Error = ToolFailed;

    fn description(&self) -> String {
        "Always panics.".to_owned()
    }
    fn parameters(&self) -> Value {
        json!({"type": "object"})
    }
    async fn call(&self, _: &mut ToolContext, _: Value) -> Result<String, ToolFailed> {
        self.0.tick();
        panic!("the ledger file is corrupt");
    }
}

/// A runtime-defined tool (as MCP tools become) whose answer is long.
fn fetch_terms(ran: Ran) -> DynamicTool {
    DynamicTool::new(
        rig_core::completion::message::ToolName::new("fetch_terms").unwrap(),
        "Fetches the supplier's terms.",
        json!({"type": "object", "properties": {"url": {"type": "string"}}}),
        move |_args: Value| -> WasmBoxedFuture<'static, _> {
            ran.tick();
            Box::pin(async {
                Ok(ToolOutput::text(
                    "Net 30 days; 2% discount within 10 days; late fee 1.5% per month. ".repeat(3),
                ))
            })
        },
    )
}

// ------------------------------------------------------------------ stack

struct Stack {
    hooks: Hooks,
    database: Database,
    feishu: Arc<FakeFeishu>,
    callback_url: String,
}

async fn stack() -> Stack {
    let ApprovalStack {
        resources,
        database,
        feishu,
        callback_url,
    } = ApprovalStack::start(CHAT).await;
    let config = AgentConfig::parse(AGENT, ConfigFormat::Yaml, "agent.yaml", None).unwrap();
    let agent = Agent::build(config, &resources).unwrap();
    Stack {
        hooks: Hooks::for_agent(agent),
        database,
        feishu: Arc::new(feishu),
        callback_url,
    }
}

fn ids() -> CallContext {
    CallContext::new()
        .user("zhang.wei")
        .org("acme")
        .conversation(CONVERSATION)
}

impl Stack {
    /// Runs a rig agent with `tools` on `turns`; the final answer and the
    /// model's runtime.
    async fn run(
        &self,
        turns: Vec<Turn>,
        build: impl FnOnce(AgentBuilder) -> rig_agent::Agent,
    ) -> (String, ScriptedRuntime) {
        let (model, runtime) = scripted_model(turns);
        let agent = build(AgentBuilder::new(model));
        let run = self
            .hooks
            .prepare(
                agent.prompt("Sort out invoice INV-1042.").max_turns(8),
                ids(),
            )
            .await
            .unwrap();
        let answer = run.await.unwrap().output();
        (answer, runtime)
    }

    /// The approver: waits for the card, then decides on it in Feishu;
    /// whether no tool had run until then (the call was held).
    fn decide_in_feishu(
        &self,
        decision: ApprovalDecision,
        ran: Ran,
    ) -> tokio::task::JoinHandle<bool> {
        let feishu = self.feishu.clone();
        let callback_url = self.callback_url.clone();
        tokio::spawn(async move {
            let card = feishu
                .wait_for_card(1, Duration::from_secs(10))
                .await
                .expect("a card reaches the approvers");
            // Long enough for a tool that did not wait to have run.
            tokio::time::sleep(Duration::from_millis(200)).await;
            let held = ran.count() == 0;
            let request = card.request_id().expect("buttons").to_owned();
            let click = CardClick::new(&request, decision, APPROVER, CHAT);
            feishu.click(&callback_url, &click).await.expect("click");
            held
        })
    }

    async fn audit(&self, expected: usize) -> Vec<AuditEntry> {
        self.hooks.registry().flush_observers().await;
        for _ in 0..100 {
            let rows = self.database.audit_entries(CONVERSATION).await.unwrap();
            if rows.len() >= expected {
                return rows;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        self.database.audit_entries(CONVERSATION).await.unwrap()
    }
}

fn seen(runtime: &ScriptedRuntime, turn: usize) -> SeenResult {
    let results = runtime.results_seen(turn);
    assert_eq!(
        results.len(),
        1,
        "one tool result on turn {turn}: {results:?}"
    );
    results.into_iter().next().unwrap()
}

// ------------------------------------------------------------------ tests

#[tokio::test]
async fn an_allowed_call_runs_the_tool_and_makes_one_audit_row() {
    let stack = stack().await;
    let ran = Ran::default();
    let tool = LookupInvoice(ran.clone());
    let (answer, runtime) = stack
        .run(
            vec![
                Turn::call("c1", "lookup_invoice", json!({"invoice": "INV-1042"})),
                Turn::answer("INV-1042 is unpaid."),
            ],
            |builder| builder.hooked_tool(&stack.hooks, tool).build(),
        )
        .await;

    assert_eq!(answer, "INV-1042 is unpaid.");
    assert_eq!(ran.count(), 1);
    let result = seen(&runtime, 1);
    assert!(!result.is_error);
    assert_eq!(
        serde_json::from_str::<Value>(&result.text).unwrap(),
        json!({"invoice": "INV-1042", "amount": 60000, "paid": false})
    );
    let rows = stack.audit(1).await;
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].tool_name, "lookup_invoice");
    assert_eq!(rows[0].outcome, "ok");
    assert_eq!(
        (rows[0].user_id.as_str(), rows[0].org_id.as_str()),
        ("zhang.wei", "acme")
    );
    assert_eq!(rows[0].agent_id, "finance-bot");
}

#[tokio::test]
async fn a_blocked_call_is_the_text_the_model_reads_on_its_next_turn() {
    let stack = stack().await;
    let ran = Ran::default();
    let tool = DeleteInvoice(ran.clone());
    let (answer, runtime) = stack
        .run(
            vec![
                Turn::call("c1", "delete_invoice", json!({"invoice": "INV-1042"})),
                Turn::answer("I will void it instead."),
            ],
            |builder| builder.hooked_tool(&stack.hooks, tool).build(),
        )
        .await;

    assert_eq!(answer, "I will void it instead.");
    assert_eq!(ran.count(), 0, "a blocked tool never runs");
    let result = seen(&runtime, 1);
    assert_eq!(
        result.text,
        "Blocked by hook `no_deletes`: invoices are never deleted; void them instead"
    );
    assert!(!result.is_error, "by default a block is the tool's output");
    let rows = stack.audit(1).await;
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].outcome, "blocked");
    assert_eq!(rows[0].blocked_by.as_deref(), Some("no_deletes"));
}

#[tokio::test]
async fn a_block_can_be_a_refused_tool_result_instead() {
    let stack = stack().await;
    let hooks = stack.hooks.clone().on_block(OnBlock::ToolError);
    let ran = Ran::default();
    let tool = DeleteInvoice(ran.clone());
    let (_, runtime) = stack
        .run(
            vec![
                Turn::call("c1", "delete_invoice", json!({"invoice": "INV-1042"})),
                Turn::answer("Understood."),
            ],
            |builder| builder.hooked_tool(&hooks, tool).build(),
        )
        .await;
    assert_eq!(ran.count(), 0);
    let result = seen(&runtime, 1);
    assert!(result.is_error, "{result:?}");
    assert!(
        result.text.contains("Blocked by hook `no_deletes`"),
        "{result:?}"
    );
}

#[tokio::test]
async fn the_tool_receives_the_rewritten_arguments_and_a_misfit_rewrite_blocks() {
    let stack = stack().await;
    let ran = Ran::default();
    let limits = Arc::new(std::sync::Mutex::new(Vec::new()));
    let tool = ListRows(ran.clone(), limits.clone());
    let (_, runtime) = stack
        .run(
            vec![
                Turn::call(
                    "c1",
                    "list_rows",
                    json!({"table": "invoices", "limit": 5000}),
                ),
                Turn::call("c2", "list_rows", json!({"table": "audit", "limit": 5})),
                Turn::answer("Done."),
            ],
            |builder| builder.hooked_tool(&stack.hooks, tool).build(),
        )
        .await;

    assert_eq!(
        *limits.lock().unwrap(),
        vec![10],
        "only the fitting call ran, capped"
    );
    assert_eq!(ran.count(), 1);
    let capped = seen(&runtime, 1);
    assert_eq!(
        serde_json::from_str::<Value>(&capped.text).unwrap(),
        json!({"table": "invoices", "rows": 10})
    );
    let misfit = seen(&runtime, 2);
    assert!(
        misfit.text.starts_with(
            "Blocked by hook `runtime`: the hooks rewrote the arguments into a shape the tool does not accept"
        ),
        "{misfit:?}"
    );
    let rows = stack.audit(2).await;
    assert_eq!(rows.len(), 2, "one row per call: {rows:?}");
}

#[tokio::test]
async fn model_arguments_that_do_not_fit_are_an_invalid_arguments_error() {
    let stack = stack().await;
    let ran = Ran::default();
    let limits = Arc::new(std::sync::Mutex::new(Vec::new()));
    let tool = ListRows(ran.clone(), limits);
    let (_, runtime) = stack
        .run(
            vec![
                Turn::call("c1", "list_rows", json!({"table": "invoices", "limit": -3})),
                Turn::answer("Sorry."),
            ],
            |builder| builder.hooked_tool(&stack.hooks, tool).build(),
        )
        .await;
    assert_eq!(ran.count(), 0);
    let result = seen(&runtime, 1);
    assert!(result.is_error);
    assert!(
        result
            .text
            .contains("the arguments do not fit the tool's parameters"),
        "{result:?}"
    );
}

#[tokio::test]
async fn a_post_hook_withholds_the_result_from_the_model() {
    let stack = stack().await;
    let ran = Ran::default();
    let tool = LookupInvoice(ran.clone());
    let (_, runtime) = stack
        .run(
            vec![
                Turn::call("c1", "lookup_invoice", json!({"invoice": "PAYROLL-7"})),
                Turn::answer("I cannot see that one."),
            ],
            |builder| builder.hooked_tool(&stack.hooks, tool).build(),
        )
        .await;
    assert_eq!(ran.count(), 1, "the tool ran; its result is withheld");
    let result = seen(&runtime, 1);
    assert_eq!(
        result.text,
        "Result withheld by hook `no_payroll`: payroll invoices are not shown to agents"
    );
    assert!(!result.text.contains("60000"));
    let rows = stack.audit(1).await;
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].blocked_by.as_deref(), Some("no_payroll"));
}

#[tokio::test]
async fn a_long_result_reaches_the_model_truncated() {
    let stack = stack().await;
    let ran = Ran::default();
    let tool = fetch_terms(ran.clone());
    let (_, runtime) = stack
        .run(
            vec![
                Turn::call(
                    "c1",
                    "fetch_terms",
                    json!({"url": "https://supplier.example/terms"}),
                ),
                Turn::answer("Net 30."),
            ],
            |builder| builder.hooked_dynamic_tools(&stack.hooks, [tool]).build(),
        )
        .await;

    assert_eq!(ran.count(), 1);
    let result = seen(&runtime, 1);
    assert!(
        result.text.starts_with("Net 30 days; 2% discount"),
        "{result:?}"
    );
    assert!(
        result.text.contains("[truncated"),
        "the tail is cut: {result:?}"
    );
    assert!(result.text.chars().count() < 200, "{result:?}");
    let rows = stack.audit(1).await;
    assert_eq!(rows.len(), 1);
}

#[tokio::test]
async fn a_gated_call_waits_for_the_approver_in_feishu_then_runs() {
    let stack = stack().await;
    let ran = Ran::default();
    let tool = PayInvoice(ran.clone());
    let approver = stack.decide_in_feishu(ApprovalDecision::Approve, ran.clone());
    let (answer, runtime) = stack
        .run(
            vec![
                Turn::call(
                    "c1",
                    "pay_invoice",
                    json!({"invoice": "INV-1042", "amount": 60000}),
                ),
                Turn::answer("Paid."),
            ],
            |builder| builder.hooked_tool(&stack.hooks, tool).build(),
        )
        .await;

    assert!(approver.await.unwrap(), "the tool waited for the approval");
    assert_eq!(answer, "Paid.");
    assert_eq!(ran.count(), 1);
    let result = seen(&runtime, 1);
    assert_eq!(
        serde_json::from_str::<Value>(&result.text).unwrap(),
        json!({"status": "paid", "invoice": "INV-1042", "amount": 60000})
    );
    let rows = stack.audit(1).await;
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].outcome, "ok");
}

#[tokio::test]
async fn a_panicking_tool_is_a_tool_error_and_one_audit_row() {
    let stack = stack().await;
    let ran = Ran::default();
    let tool = Explode(ran.clone());
    let (answer, runtime) = stack
        .run(
            vec![
                Turn::call("c1", "explode", json!({})),
                Turn::answer("The ledger tool is broken."),
            ],
            |builder| builder.hooked_tool(&stack.hooks, tool).build(),
        )
        .await;

    assert_eq!(answer, "The ledger tool is broken.");
    assert_eq!(ran.count(), 1);
    let result = seen(&runtime, 1);
    assert!(result.is_error);
    assert!(result.text.contains("the tool panicked"), "{result:?}");
    let rows = stack.audit(1).await;
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(rows[0].tool_name, "explode");
}

#[tokio::test]
async fn session_start_hooks_reach_the_model_as_a_context_document() {
    let stack = stack().await;
    let (_, runtime) = stack
        .run(vec![Turn::answer("Hello.")], |builder| builder.build())
        .await;
    let documents = runtime.documents_seen(0);
    assert_eq!(documents.len(), 1, "{documents:?}");
    assert!(
        documents[0].contains(hooks_rig::SESSION_DOCUMENT_ID)
            && documents[0].contains(
                "Finance rules for zhang.wei at acme: payments over 50000 need approval."
            ),
        "{documents:?}"
    );
}

#[tokio::test]
async fn a_request_without_ids_is_refused_by_default() {
    let stack = stack().await;
    let ran = Ran::default();
    let (model, runtime) = scripted_model(vec![
        Turn::call("c1", "lookup_invoice", json!({"invoice": "INV-1042"})),
        Turn::answer("No access."),
    ]);
    let agent = AgentBuilder::new(model)
        .hooked_tool(&stack.hooks, LookupInvoice(ran.clone()))
        .build();
    // No CallContext on this run: per-user hooks would see empty ids.
    agent.prompt("Look it up.").max_turns(4).await.unwrap();
    assert_eq!(ran.count(), 0);
    assert!(
        seen(&runtime, 1)
            .text
            .contains("carries no hooks CallContext")
    );
}

#[tokio::test]
async fn a_request_without_ids_runs_when_ids_are_explicitly_optional() {
    let stack = stack().await;
    let ran = Ran::default();
    let hooks = stack.hooks.clone().require_context(false);
    let (model, _runtime) = scripted_model(vec![
        Turn::call("c1", "lookup_invoice", json!({"invoice": "INV-1042"})),
        Turn::answer("Found it."),
    ]);
    let agent = AgentBuilder::new(model)
        .hooked_tool(&hooks, LookupInvoice(ran.clone()))
        .build();
    agent.prompt("Look it up.").max_turns(4).await.unwrap();
    assert_eq!(ran.count(), 1);
}

// ------------------------------------------------- the agent level (AgentHook)

/// An agent whose tools came in the plain rig way, guarded at the agent
/// level by `hooks.agent_hook()`.
fn guarded(builder: AgentBuilder, hooks: &Hooks, tools: Tools) -> rig_agent::Agent {
    let Tools {
        lookup,
        delete,
        rows,
        pay,
        terms,
    } = tools;
    builder
        .tool(lookup)
        .tool(delete)
        .tool(rows)
        .tool(pay)
        .dynamic_tool(terms)
        .add_hook(hooks.agent_hook())
        .build()
}

/// The tools, each added with plain `.tool()` (or `.dynamic_tool()`).
struct Tools {
    lookup: LookupInvoice,
    delete: DeleteInvoice,
    rows: ListRows,
    pay: PayInvoice,
    terms: DynamicTool,
}

fn tools(ran: &Ran, limits: &Arc<std::sync::Mutex<Vec<u32>>>) -> Tools {
    Tools {
        lookup: LookupInvoice(ran.clone()),
        delete: DeleteInvoice(ran.clone()),
        rows: ListRows(ran.clone(), limits.clone()),
        pay: PayInvoice(ran.clone()),
        terms: fetch_terms(ran.clone()),
    }
}

#[tokio::test]
async fn at_the_agent_level_a_plain_tool_is_blocked_and_rewrites_reach_tool_and_model() {
    let stack = stack().await;
    let ran = Ran::default();
    let limits = Arc::new(std::sync::Mutex::new(Vec::new()));
    let (answer, runtime) = stack
        .run(
            vec![
                Turn::call("c1", "delete_invoice", json!({"invoice": "INV-1042"})),
                Turn::call(
                    "c2",
                    "list_rows",
                    json!({"table": "invoices", "limit": 5000}),
                ),
                Turn::call("c3", "lookup_invoice", json!({"invoice": "PAYROLL-7"})),
                Turn::call(
                    "c4",
                    "fetch_terms",
                    json!({"url": "https://supplier.example/terms"}),
                ),
                Turn::call("c5", "lookup_invoice", json!({"invoice": "INV-1042"})),
                Turn::answer("Done."),
            ],
            |builder| guarded(builder, &stack.hooks, tools(&ran, &limits)),
        )
        .await;
    assert_eq!(answer, "Done.");

    // A `#[pre_tool_use]` hook blocks a tool added with plain `.tool()`.
    let blocked = seen(&runtime, 1);
    assert_eq!(
        blocked.text,
        "Blocked by hook `no_deletes`: invoices are never deleted; void them instead"
    );
    // Rewritten arguments are what the tool receives.
    assert_eq!(*limits.lock().unwrap(), vec![10]);
    assert_eq!(
        serde_json::from_str::<Value>(&seen(&runtime, 2).text).unwrap(),
        json!({"table": "invoices", "rows": 10})
    );
    // A withheld result: the tool ran, the model reads why instead.
    let withheld = seen(&runtime, 3);
    assert_eq!(
        withheld.text,
        "Result withheld by hook `no_payroll`: payroll invoices are not shown to agents"
    );
    // A rewritten result (truncated) is what the model reads.
    let truncated = seen(&runtime, 4);
    assert!(
        truncated.text.starts_with("Net 30 days; 2% discount")
            && truncated.text.contains("[truncated"),
        "{truncated:?}"
    );
    // An untouched result keeps what the tool produced.
    assert_eq!(
        serde_json::from_str::<Value>(&seen(&runtime, 5).text).unwrap(),
        json!({"invoice": "INV-1042", "amount": 60000, "paid": false})
    );
    assert_eq!(
        ran.count(),
        4,
        "every call but the blocked one ran its tool"
    );

    let rows = stack.audit(5).await;
    assert_eq!(rows.len(), 5, "one audit row per call: {rows:?}");
    let blocked_by: Vec<_> = rows.iter().map(|row| row.blocked_by.as_deref()).collect();
    assert!(blocked_by.contains(&Some("no_deletes")), "{rows:?}");
    assert!(blocked_by.contains(&Some("no_payroll")), "{rows:?}");
    assert!(rows.iter().all(|row| row.agent_id == "finance-bot"));
}

#[tokio::test]
async fn at_the_agent_level_the_gate_holds_the_call_while_rig_waits() {
    let stack = stack().await;
    let ran = Ran::default();
    let limits = Arc::new(std::sync::Mutex::new(Vec::new()));
    let approver = stack.decide_in_feishu(ApprovalDecision::Reject, ran.clone());
    let (answer, runtime) = stack
        .run(
            vec![
                Turn::call(
                    "c1",
                    "pay_invoice",
                    json!({"invoice": "INV-1042", "amount": 60000}),
                ),
                Turn::answer("Not paid."),
            ],
            |builder| guarded(builder, &stack.hooks, tools(&ran, &limits)),
        )
        .await;
    assert!(approver.await.unwrap(), "the tool waited for the approver");
    assert_eq!(answer, "Not paid.");
    assert_eq!(ran.count(), 0, "a rejected payment never runs");
    let result = seen(&runtime, 1);
    assert!(
        result.text.starts_with("Blocked by hook `approval_gate`"),
        "{result:?}"
    );
}

#[tokio::test]
async fn at_the_agent_level_a_block_can_be_a_refusal_or_end_the_run() {
    let stack = stack().await;
    let ran = Ran::default();
    let limits = Arc::new(std::sync::Mutex::new(Vec::new()));
    let refusing = stack.hooks.clone().on_block(OnBlock::ToolError);
    let (_, runtime) = stack
        .run(
            vec![
                Turn::call("c1", "delete_invoice", json!({"invoice": "INV-1042"})),
                Turn::call("c2", "lookup_invoice", json!({"invoice": "PAYROLL-7"})),
                Turn::answer("Understood."),
            ],
            |builder| guarded(builder, &refusing, tools(&ran, &limits)),
        )
        .await;
    for turn in [1, 2] {
        let result = seen(&runtime, turn);
        assert!(result.is_error, "a refused result: {result:?}");
    }
    assert!(
        seen(&runtime, 1)
            .text
            .contains("Blocked by hook `no_deletes`")
    );
    assert!(
        seen(&runtime, 2)
            .text
            .contains("withheld by hook `no_payroll`")
    );
    assert!(!seen(&runtime, 2).text.contains("60000"));

    let (model, runtime) = scripted_model(vec![
        Turn::call("c1", "delete_invoice", json!({"invoice": "INV-1042"})),
        Turn::answer("Never reached."),
    ]);
    let agent = AgentBuilder::new(model)
        .tool(DeleteInvoice(ran.clone()))
        .add_hook(stack.hooks.agent_hook().stop_on_block())
        .build();
    let run = stack
        .hooks
        .prepare(agent.prompt("Delete it.").max_turns(4), ids())
        .await
        .unwrap();
    let error = run.await.expect_err("the block ends the run");
    assert!(
        error.to_string().contains("invoices are never deleted"),
        "{error}"
    );
    assert!(runtime.results_seen(1).is_empty(), "no second model turn");
    assert_eq!(ran.count(), 1, "only the payroll lookup ran");
}

#[tokio::test]
async fn at_the_agent_level_a_request_without_ids_is_refused() {
    let stack = stack().await;
    let ran = Ran::default();
    let (model, runtime) = scripted_model(vec![
        Turn::call("c1", "lookup_invoice", json!({"invoice": "INV-1042"})),
        Turn::answer("No access."),
    ]);
    let agent = AgentBuilder::new(model)
        .tool(LookupInvoice(ran.clone()))
        .add_hook(stack.hooks.agent_hook())
        .build();
    agent.prompt("Look it up.").max_turns(4).await.unwrap();
    assert_eq!(ran.count(), 0);
    assert!(
        seen(&runtime, 1)
            .text
            .contains("carries no hooks CallContext"),
        "{:?}",
        seen(&runtime, 1)
    );
}

/// A rig hook added after the hooks that patches the arguments again.
struct Repatch;

impl rig_agent::agent::AgentHook for Repatch {
    async fn on_dispatch(
        &self,
        _ctx: &rig_agent::agent::HookContext,
        event: rig_agent::agent::DispatchEvent<'_>,
    ) -> rig_agent::agent::DispatchAction {
        rig_agent::agent::DispatchAction::rewrite_tool_args(
            event.kind,
            json!({"table": "invoices", "limit": 5000}),
        )
    }
}

#[tokio::test]
async fn at_the_agent_level_arguments_rewritten_after_the_hooks_withhold_the_result() {
    let stack = stack().await;
    let ran = Ran::default();
    let limits = Arc::new(std::sync::Mutex::new(Vec::new()));
    let tool = ListRows(ran.clone(), limits.clone());
    let (_, runtime) = stack
        .run(
            vec![
                Turn::call("c1", "list_rows", json!({"table": "invoices", "limit": 3})),
                Turn::answer("Done."),
            ],
            |builder| {
                builder
                    .tool(tool)
                    .add_hook(stack.hooks.agent_hook())
                    .add_hook(Repatch)
                    .build()
            },
        )
        .await;
    assert_eq!(*limits.lock().unwrap(), vec![5000], "the later hook won");
    let result = seen(&runtime, 1);
    assert!(
        result
            .text
            .contains("the tool ran with input other than the input the hooks allowed"),
        "{result:?}"
    );
    assert!(!result.text.contains("\"rows\""), "{result:?}");
    let rows = stack.audit(1).await;
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_ne!(rows[0].outcome, "ok", "{rows:?}");
    assert!(
        rows[0]
            .reason
            .as_deref()
            .is_some_and(|reason| reason.contains("input other than")),
        "the audit row says why: {rows:?}"
    );
}
