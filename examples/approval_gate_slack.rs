//! The human-approval gate end to end on Slack, on embedded SQLite, with a
//! fake Slack Web API running in-process on 127.0.0.1.
//!
//! The gate's config names its channel (`channel: slack`) and the
//! environment variables holding the bot token and the signing secret. Three
//! payments need a person's approval: for each, the gate stores a
//! confirmation request, posts a Block Kit message with Approve and Reject
//! buttons to the (fake) channel and pauses the call; a simulated operator
//! presses a button, which reaches the interactivity endpoint signed exactly
//! as Slack signs it. The first payment is approved and runs, the second is
//! rejected, the third times out; each message is then updated in place.
//!
//! Run with `cargo run --example approval_gate_slack`.

#[path = "support/exit.rs"]
mod exit;

use std::time::Duration;

use axum::Router;
use hooks::approval_gate::{ApprovalDecision, ApprovalGate, StaticDirectory};
use hooks::prelude::*;
use hooks::std_hooks::Database;
use hooks_testkit::slack::{FakeSlack, FakeSlackConfig, SlackClick};
use serde_json::{Value, json};

const CHANNEL: &str = "C0FINANCE";
const OPERATOR: &str = "U0WANGFANG";

// Errors are printed as people read them (`Display`, with their causes),
// not in the `Debug` form a `main` returning `Result` would print.
#[tokio::main]
async fn main() -> std::process::ExitCode {
    exit::exit_code(run().await)
}

async fn run() -> Result<(), Box<dyn std::error::Error>> {
    // The platform side: a fake Slack that records messages and can "click".
    let slack = FakeSlack::start(FakeSlackConfig::default()).await?;
    println!("fake Slack Web API listening at {}", slack.base_url());

    // The gate's config, as it would appear in an agent's config file. The
    // secrets are not in it: it names the environment variables that hold them.
    let gate_config = |timeout: &str| {
        json!({
            "when": "tool_name == \"oa__purchase_pay\" && args.amount > 50000",
            "approver_scope": "org_members",
            "timeout": timeout,
            "channel": "slack",
            "slack": {
                "bot_token_env": "SLACK_BOT_TOKEN",
                "signing_secret_env": "SLACK_SIGNING_SECRET",
                "channel_id": CHANNEL,
                "team_id": slack.config().team_id,
                "base_url": slack.base_url(),
            },
        })
    };
    // The config builds the channel from its `slack` section. In
    // production the secrets come from the process environment; here the
    // fake's credentials stand in for it.
    let (bot_token, signing_secret) = (
        slack.config().bot_token.clone(),
        slack.config().signing_secret.clone(),
    );
    let environment = move |name: &str| match name {
        "SLACK_BOT_TOKEN" => Some(bot_token.clone()),
        "SLACK_SIGNING_SECRET" => Some(signing_secret.clone()),
        _ => None,
    };

    // Our side: storage, who is who, and the gate with the router of the
    // channel's button presses.
    let database = Database::connect("sqlite::memory:").await?;
    let directory = StaticDirectory::new()
        .person("slack", OPERATOR, "wang.fang", "acme")
        .person("slack", "U0LILEI", "li.lei", "acme");
    let (gate, actions) = ApprovalGate::builder_from_config(database, &gate_config("120s"))?
        .directory(directory)
        .environment(environment)
        .build()?;
    let approvals = gate
        .approvals()
        .ok_or("the gate has its approvals")?
        .clone();
    let registry = HookRegistry::builder().pre(gate).build()?;

    // The interactivity endpoint, mounted in "our" web server (the app's
    // Interactivity Request URL points here).
    let app = Router::new().nest("/slack/actions", actions);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let actions_url = format!("http://{}/slack/actions", listener.local_addr()?);
    tokio::spawn(async move { axum::serve(listener, app).await });
    println!("interactivity endpoint {actions_url}\n");
    println!("{}", registry.describe());

    let script = [
        ("call-1", 60_000, Some(ApprovalDecision::Approve)),
        ("call-2", 250_000, Some(ApprovalDecision::Reject)),
        ("call-3", 75_000, None),
    ];
    for (n, (call_id, amount, decision)) in script.into_iter().enumerate() {
        println!("── payment {} of ${amount} ({call_id})", n + 1);
        let registry = if decision.is_none() {
            // The third call gets a short deadline so the example ends quickly.
            let short = ApprovalGate::from_config(approvals.clone(), &gate_config("2s"))?;
            HookRegistry::builder().pre(short).build()?
        } else {
            registry.clone()
        };
        let ctx = HookContext::tool_call(
            "oa__purchase_pay",
            json!({"amount": amount, "payee": "Acme Components Inc", "po": format!("PO-{}", 7000 + n)}),
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

        let message = slack
            .wait_for_message(n + 1, Duration::from_secs(10))
            .await
            .ok_or("no approval message arrived")?;
        let request_id = message.request_id().ok_or("the message has no buttons")?;
        println!(
            "   message posted to {CHANNEL} (ts {}); request {request_id}; the call is paused",
            message.ts
        );
        if let Some(decision) = decision {
            tokio::time::sleep(Duration::from_millis(300)).await;
            println!("   operator wang.fang presses {decision:?} in Slack");
            let click = SlackClick::new(&request_id, decision, OPERATOR);
            let (status, _) = slack.click(&actions_url, &click).await?;
            println!("   interactivity request answered HTTP {status}");
        } else {
            println!("   nobody answers…");
        }
        let report = call.await?;
        println!("   observation: {}", report.observation);
        let update = slack
            .wait_for_update(n + 1, Duration::from_secs(10))
            .await
            .ok_or("the message was not updated")?;
        println!("   message updated: \"{}\"\n", update.text);
    }

    // A late press on the expired request changes nothing; only the
    // presser is told why.
    let expired = slack.messages()[2].request_id().ok_or("no buttons")?;
    let late = SlackClick::new(&expired, ApprovalDecision::Approve, OPERATOR);
    slack.click(&actions_url, &late).await?;
    if let Some(note) = slack.wait_for_ephemeral(1, Duration::from_secs(10)).await {
        println!(
            "a late press on the expired request: \"{}\" (seen only by {})",
            note.text, note.user
        );
    }
    println!(
        "messages posted: {}, messages updated: {}",
        slack.messages().len(),
        slack.updates().len()
    );
    Ok(())
}
