//! `hooks::serve` from your own binary: your attribute hooks and the
//! standard ones behind Claude Code's hook protocol, with approvals in a
//! (fake) Feishu chat.
//!
//! ```sh
//! cargo run --features serve --example serve
//! ```
//!
//! It starts the server, then plays Claude Code: it posts the hook inputs
//! Claude Code would post for three Bash calls, and an operator approves the
//! deploy in Feishu while its request is held. In a real set-up Claude Code
//! posts them (see docs/claude-code.md) and the server runs until stopped.

#[path = "support/exit.rs"]
mod exit;

use std::sync::Arc;
use std::time::Duration;

use hooks::config::{AgentConfig, ConfigFormat};
use hooks::factory::Resources;
use hooks::prelude::*;
use hooks::serve::{ServeConfig, serve};
use hooks::std_hooks::approval_gate::channel::feishu::FeishuChannel;
use hooks::std_hooks::approval_gate::{
    ApprovalDecision, Approvals, ApprovalsConfig, ConfirmationStore, StaticDirectory,
};
use hooks::std_hooks::{APPROVALS, DATABASE, Database, ORG_MODES, OrgModeSource, StaticOrgModes};
use hooks_testkit::feishu::{CardClick, FakeFeishu, FakeFeishuConfig};
use serde_json::{Value, json};

const CHAT: &str = "oc_ops_approvals";
const OPERATOR: &str = "ou_7d8a6e6df7621556ce0d21922b676706";
const TOKEN: &str = "example-token";

/// A policy of your own, in the same binary: found by name from the config.
#[pre_tool_use(priority = 5, when = tool_name == "Bash" && args.command contains "rm -rf")]
async fn no_rm_rf(_ctx: &HookContext) -> HookResult {
    HookResult::block("`rm -rf` is not allowed in this repository")
}

const AGENT: &str = r#"
agent: claude-code
hooks:
  class_hooks:
    - no_rm_rf
    - name: approval_gate
      config:
        when: 'tool_name == "Bash" && args.command contains "deploy"'
        approver_scope: org_members
        timeout: 2m
    - audit_log
"#;

#[tokio::main]
async fn main() -> std::process::ExitCode {
    exit::exit_code(run().await)
}

async fn run() -> Result<(), Box<dyn std::error::Error>> {
    // Approvals in a Feishu chat (a fake Open API here), stored in SQLite.
    let feishu = FakeFeishu::start(FakeFeishuConfig::default()).await?;
    let database = Database::connect("sqlite::memory:").await?;
    let approvals = Approvals::start(
        ConfirmationStore::new(database.clone()),
        Arc::new(FeishuChannel::new(feishu.feishu_config(CHAT))?),
        Arc::new(StaticDirectory::new().person("feishu", OPERATOR, "wang.fang", "acme")),
        ApprovalsConfig::default(),
    );
    let callbacks = axum::Router::new().nest("/feishu/callback", approvals.router());
    let callback_listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let callback_url = format!("http://{}/feishu/callback", callback_listener.local_addr()?);
    tokio::spawn(async move { axum::serve(callback_listener, callbacks).await });
    feishu.url_verification(&callback_url, "challenge").await;

    // The agent, and the hook endpoint.
    let modes: Arc<dyn OrgModeSource> = Arc::new(StaticOrgModes::new());
    let resources = Resources::new()
        .with(DATABASE, database.clone())
        .with(APPROVALS, approvals)
        .with(ORG_MODES, modes);
    let agent = Agent::build(
        AgentConfig::parse(AGENT, ConfigFormat::Yaml, "agent.yaml", None)?,
        &resources,
    )?;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let url = format!("http://{}/hook", listener.local_addr()?);
    let settings = ServeConfig::with_token(TOKEN).org("acme").user("zhang.wei");
    tokio::spawn(serve(listener, agent, settings));
    println!("hook endpoint: {url}\n");

    // Claude Code's side: three Bash calls.
    let http = reqwest::Client::new();
    let pre = |id: &str, command: &str| {
        json!({
            "session_id": "session-1", "hook_event_name": "PreToolUse", "cwd": "/home/dev/shop",
            "permission_mode": "default", "tool_name": "Bash",
            "tool_input": {"command": command}, "tool_use_id": id,
        })
    };
    for (id, command) in [("toolu_1", "git status"), ("toolu_2", "rm -rf build/")] {
        let answer = post(&http, &url, &pre(id, command)).await?;
        // `{}`: the hooks let it through; Claude Code's own rules decide.
        println!("PreToolUse `{command}` → {answer}");
    }

    let deploy = tokio::spawn({
        let (http, url, body) = (
            http.clone(),
            url.clone(),
            pre("toolu_3", "./deploy.sh production"),
        );
        async move { post(&http, &url, &body).await.map_err(|e| e.to_string()) }
    });
    let card = feishu
        .wait_for_card(1, Duration::from_secs(10))
        .await
        .ok_or("no approval card arrived")?;
    println!("PreToolUse `./deploy.sh production` → held; a card is in {CHAT}");
    let request = card
        .request_id()
        .ok_or("the card has no buttons")?
        .to_owned();
    let click = CardClick::new(&request, ApprovalDecision::Approve, OPERATOR, CHAT);
    feishu.click(&callback_url, &click).await?;
    println!("   wang.fang approves in Feishu");
    let answer = deploy.await??;
    println!("   → {answer}");

    let post_event = json!({
        "session_id": "session-1", "hook_event_name": "PostToolUse", "tool_name": "Bash",
        "tool_input": {"command": "git status"}, "tool_use_id": "toolu_1",
        "tool_response": {"stdout": "nothing to commit", "stderr": ""},
    });
    println!(
        "PostToolUse `git status` → {}",
        post(&http, &url, &post_event).await?
    );

    println!("\naudit log:");
    tokio::time::sleep(Duration::from_millis(200)).await;
    for row in database.audit_entries("session-1").await? {
        println!(
            "  {:<8} {:<5} {:<8} {}",
            row.tool_call_id,
            row.tool_name,
            row.outcome,
            row.blocked_by.unwrap_or_default()
        );
    }
    Ok(())
}

async fn post(http: &reqwest::Client, url: &str, body: &Value) -> Result<Value, reqwest::Error> {
    http.post(url)
        .bearer_auth(TOKEN)
        .json(body)
        .send()
        .await?
        .json()
        .await
}
