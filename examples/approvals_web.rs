//! The approval gate in a browser, with nothing else set up: the gate on
//! embedded SQLite, the web approvals page on 127.0.0.1, and a scripted
//! agent whose payment waits for you.
//!
//! Run `cargo run --features serve --example approvals_web`, open the printed address, sign
//! in as `demo` with the printed token, and press Approve (or Reject, with a
//! reason): the agent's call finishes at once, and the page keeps serving
//! (stop it with Ctrl-C) so you see the outcome there. `--port N` picks the port;
//! `--auto` approves through the page's own HTTP endpoints instead of a
//! person (tests and CI use it).

#[path = "support/exit.rs"]
mod exit;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use hooks::prelude::*;
use hooks::std_hooks::Database;
use hooks::std_hooks::approval_gate::channel::web::{
    TokenAuth, WebApprovals, WebChannel, WebConfig,
};
use hooks::std_hooks::approval_gate::{
    ApprovalGate, Approvals, ApprovalsConfig, ConfirmationStore, StaticDirectory,
};
use serde_json::{Value, json};

const OPERATOR: &str = "demo";

#[tokio::main]
async fn main() -> std::process::ExitCode {
    exit::exit_code(run().await)
}

async fn run() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let auto = args.iter().any(|arg| arg == "--auto");
    let port: u16 = match args.iter().position(|arg| arg == "--port") {
        Some(at) => args
            .get(at + 1)
            .ok_or("--port needs a number")?
            .parse()
            .map_err(|_| "--port needs a number from 0 to 65535")?,
        None => 0,
    };

    // Storage, the web channel, and who is who: the operator `demo` signs in
    // on the page and is the user `zhang.wei`, on whose behalf the agent pays.
    let database = Database::connect("sqlite::memory:").await?;
    let channel = WebChannel::new("approvals");
    let directory = StaticDirectory::new().person("web", OPERATOR, "zhang.wei", "acme");
    let approvals = Approvals::start(
        ConfirmationStore::new(database),
        Arc::new(channel.clone()),
        Arc::new(directory),
        ApprovalsConfig::default(),
    );

    // The operator's token: printed once, kept only as its Argon2 hash.
    let token = TokenAuth::generate_token();
    let auth = TokenAuth::new([(OPERATOR, TokenAuth::hash_token(&token)?)])?;
    let web = WebApprovals::new(
        approvals.clone(),
        channel,
        Arc::new(auth),
        WebConfig::default(),
    )?;
    let app = Router::new().nest("/approvals", web.router());
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await?;
    let address = listener.local_addr()?;
    tokio::spawn(async move {
        axum::serve(
            listener,
            app.into_make_service_with_connect_info::<SocketAddr>(),
        )
        .await
    });
    let page = format!("http://{address}/approvals");
    println!("approvals page: {page}");
    println!("sign in as operator `{OPERATOR}` with token {token}\n");

    // The agent: one payment that needs the initiator's approval.
    let timeout = if auto { "30s" } else { "10m" };
    let gate = ApprovalGate::from_config(
        approvals,
        &json!({"approver_scope": "initiator", "timeout": timeout,
                "when": "tool_name == \"oa__purchase_pay\""}),
    )?;
    let registry = HookRegistry::builder().pre(gate).build()?;
    let ctx = HookContext::tool_call(
        "oa__purchase_pay",
        json!({"amount": 60_000, "payee": "Acme Components Inc", "po": "PO-7001"}),
    )
    .with_agent("finance-bot")
    .with_user("zhang.wei")
    .with_org("acme")
    .with_conversation("conv-demo")
    .with_tool_call_id("call-1");
    println!("agent finance-bot asks to pay $60000 to Acme Components Inc; waiting for approval…");
    if auto {
        let page = page.clone();
        tokio::spawn(async move {
            if let Err(error) = approve_over_http(&page, &token).await {
                eprintln!("--auto could not approve: {error}");
            }
        });
    } else {
        println!("open {page} and press Approve or Reject");
    }
    let report = registry
        .run_tool_call(ctx, async |args: &Value| {
            println!("tool oa__purchase_pay runs with {args}");
            Ok::<_, String>(json!({"status": "paid", "amount": args["amount"]}))
        })
        .await;
    println!("observation: {}", report.observation);
    if auto {
        if !report.tool_ran {
            return Err("the approved payment did not run".into());
        }
        return Ok(());
    }
    // The page stays up, so the operator sees the outcome there (the
    // request's page and the recent decisions).
    println!("\nthe page keeps serving at {page}; press Ctrl-C to stop");
    std::future::pending::<()>().await;
    Ok(())
}

/// What a person does in the browser, over the same HTTP endpoints: sign in
/// (the login form's double-submit token, then the session cookie), wait
/// for the request on the list, approve it with the CSRF token.
async fn approve_over_http(page: &str, token: &str) -> Result<(), Box<dyn std::error::Error>> {
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()?;
    let form = client.get(format!("{page}/login")).send().await?;
    let login_cookie = cookie(&form, "hooks_approvals_login").ok_or("no login cookie")?;
    let html = form.text().await?;
    let at = html.find("name=\"csrf\" value=\"").ok_or("no csrf field")? + 19;
    let csrf = html[at..].split('"').next().unwrap_or_default().to_owned();
    let signed = client
        .post(format!("{page}/login"))
        .header("cookie", login_cookie)
        .form(&[("operator", OPERATOR), ("token", token), ("csrf", &csrf)])
        .send()
        .await?;
    let session = cookie(&signed, "hooks_approvals_session").ok_or("login refused")?;
    for _ in 0..100 {
        let list: Value = serde_json::from_str(
            &client
                .get(format!("{page}/api/requests"))
                .header("cookie", &session)
                .send()
                .await?
                .text()
                .await?,
        )?;
        if let Some(id) = list["pending"][0]["id"].as_str() {
            println!("(--auto) operator {OPERATOR} approves request {id} on the page");
            let decided = client
                .post(format!("{page}/api/requests/{id}/decide"))
                .header("cookie", &session)
                .header(
                    "x-csrf-token",
                    list["csrf_token"].as_str().unwrap_or_default(),
                )
                .header("content-type", "application/json")
                .body(json!({"decision": "approve", "reason": "demo"}).to_string())
                .send()
                .await?;
            println!("(--auto) decide answered HTTP {}", decided.status());
            return Ok(());
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    Err("no pending request appeared on the page".into())
}

/// `name=value` of the cookie `name` a response sets.
fn cookie(response: &reqwest::Response, name: &str) -> Option<String> {
    response
        .headers()
        .get_all("set-cookie")
        .iter()
        .filter_map(|value| value.to_str().ok())
        .find(|line| line.starts_with(&format!("{name}=")))
        .map(|line| line.split(';').next().unwrap_or_default().to_owned())
}
