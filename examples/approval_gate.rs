//! The human-approval gate end to end, on embedded SQLite, with a fake Feishu
//! Open API server running in-process on 127.0.0.1.
//!
//! Three payments need a person's approval. For each, the gate stores a
//! confirmation request, sends a card to the (fake) Feishu group and pauses
//! the call; a simulated operator presses a button, which reaches the callback
//! router encrypted and signed exactly as Feishu sends it. The first payment
//! is approved and runs, the second is rejected, the third times out.
//!
//! Run with `cargo run --example approval_gate`.

#[path = "support/exit.rs"]
mod exit;

use std::time::Duration;

use axum::Router;
use hooks::approval_gate::channel::feishu::FeishuChannel;
use hooks::approval_gate::{
    ApprovalDecision, ApprovalGate, ApprovalGateConfig, ApproverScope, StaticDirectory,
};
use hooks::prelude::*;
use hooks::std_hooks::Database;
use hooks_testkit::feishu::{CardClick, FakeFeishu, FakeFeishuConfig};
use serde_json::{Value, json};

const CHAT: &str = "oc_finance_approvals";

// Errors are printed as people read them (`Display`, with their causes),
// not in the `Debug` form a `main` returning `Result` would print.
#[tokio::main]
async fn main() -> std::process::ExitCode {
    exit::exit_code(run().await)
}

async fn run() -> Result<(), Box<dyn std::error::Error>> {
    // The platform side: a fake Feishu that records cards and can "click".
    let feishu = FakeFeishu::start(FakeFeishuConfig::default()).await?;
    println!("fake Feishu Open API listening at {}", feishu.base_url());

    // Our side: storage, the Feishu channel, who is who, and the gate —
    // with the router the channel's button presses are posted to.
    let database = Database::connect("sqlite::memory:").await?;
    let channel = FeishuChannel::new(feishu.feishu_config(CHAT))?;
    let directory = StaticDirectory::new()
        .person(
            "feishu",
            "ou_7d8a6e6df7621556ce0d21922b676706",
            "wang.fang",
            "acme",
        )
        .person(
            "feishu",
            "ou_1f9e0c2b4d3a5e6f7a8b9c0d1e2f3a4b",
            "li.lei",
            "acme",
        );
    let (gate, callbacks) = ApprovalGate::builder(database, channel)
        .directory(directory)
        .when(r#"tool_name == "oa__purchase_pay" && args.amount > 50000"#)
        .approver_scope(ApproverScope::OrgMembers)
        .timeout(Duration::from_secs(120))
        .build()?;
    let approvals = gate
        .approvals()
        .ok_or("the gate has its approvals")?
        .clone();
    let registry = HookRegistry::builder().pre(gate).build()?;

    // The callback endpoint, mounted in "our" web server.
    let app = Router::new().nest("/feishu/callback", callbacks);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let callback_url = format!("http://{}/feishu/callback", listener.local_addr()?);
    tokio::spawn(async move { axum::serve(listener, app).await });
    let (_, verified) = feishu.url_verification(&callback_url, "challenge-42").await;
    println!("callback endpoint {callback_url} verified: {verified}\n");

    println!("{}", registry.describe());

    let approver = "ou_7d8a6e6df7621556ce0d21922b676706";
    let script = [
        ("call-1", 60_000, Some(ApprovalDecision::Approve)),
        ("call-2", 250_000, Some(ApprovalDecision::Reject)),
        ("call-3", 75_000, None),
    ];
    for (n, (call_id, amount, decision)) in script.into_iter().enumerate() {
        println!("── payment {} of ¥{amount} ({call_id})", n + 1);
        let registry = if decision.is_none() {
            // The third call gets a short deadline so the example ends quickly.
            let short = ApprovalGate::with_config(
                approvals.clone(),
                ApprovalGateConfig {
                    when: Some(r#"tool_name == "oa__purchase_pay""#.into()),
                    approver_scope: ApproverScope::OrgMembers,
                    timeout: Duration::from_secs(2),
                    ..ApprovalGateConfig::default()
                },
            )?;
            HookRegistry::builder().pre(short).build()?
        } else {
            registry.clone()
        };
        let ctx = HookContext::tool_call(
            "oa__purchase_pay",
            json!({"amount": amount, "payee": "Shenzhen Components Ltd", "po": format!("PO-{}", 7000 + n)}),
        )
        .with_agent("finance-bot")
        .with_user("zhang.wei")
        .with_org("acme")
        .with_conversation("conv-2026-12-03")
        .with_tool_call_id(call_id);
        let call = tokio::spawn(async move {
            registry
                .run_tool_call(ctx, async |args: &Value| {
                    println!("   tool oa__purchase_pay runs with {args}");
                    Ok::<_, String>(json!({"status": "paid", "amount": args["amount"]}))
                })
                .await
        });

        let card = feishu
            .wait_for_card(n + 1, Duration::from_secs(10))
            .await
            .ok_or("no approval card arrived")?;
        let request_id = card
            .request_id()
            .ok_or("the card has no buttons")?
            .to_owned();
        println!("   card sent to {CHAT}; request {request_id}; the call is paused");
        if let Some(decision) = decision {
            tokio::time::sleep(Duration::from_millis(300)).await;
            println!("   operator wang.fang presses {decision:?} in Feishu");
            let click = CardClick::new(&request_id, decision, approver, CHAT);
            let (status, reply) = feishu.click(&callback_url, &click).await?;
            println!(
                "   callback answered HTTP {status}, toast \"{}\"",
                reply["toast"]["content"].as_str().unwrap_or_default()
            );
        } else {
            println!("   nobody answers…");
        }
        let report = call.await?;
        println!("   observation: {}", report.observation);
        let request = approvals
            .store()
            .get(&request_id)
            .await?
            .ok_or("request vanished")?;
        println!(
            "   stored request: status {}, decided by {}\n",
            request.status,
            request.decided_by.as_deref().unwrap_or("-")
        );
    }
    println!(
        "cards sent: {}, cards updated after expiry: {}",
        feishu.sent_cards().len(),
        feishu.card_updates().len()
    );
    Ok(())
}
