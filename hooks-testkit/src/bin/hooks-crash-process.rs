//! `hooks-crash-process`: one process of the gate's multi-process crash
//! tests (`tests/crash_processes.rs`), built only with the `failpoints`
//! feature. Never used in production.
//!
//! ```text
//! hooks-crash-process agent   --db URL --feishu BASE_URL --ran FILE [--timeout 30s] [--crash-at POINT]
//! hooks-crash-process replica --db URL --feishu BASE_URL [--crash-at POINT]
//! hooks-crash-process fake
//! ```
//!
//! `agent` runs the one gated tool call of the tests (conversation `conv-1`,
//! tool call `c1`) under the audit log; the tool appends a line to `FILE`; it prints
//! `OUTCOME tool_ran=<bool> <observation>` and exits. `replica` serves the
//! callback router on a random local port, prints `READY <callback url>` and
//! sweeps every 200 ms until killed. With `--crash-at POINT` (a name from
//! `hooks_std::approval_gate::crash_points`) the process prints `REACHED POINT` when
//! it gets there and freezes, so the test can `kill -9` it at that point.
//! `fake` runs a `FakeFeishu` on a random local port, prints `READY <base
//! url>` and serves until killed (driven through its `/fake/…` endpoints).

use std::io::Write;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use hooks_runtime::{HookContext, HookRegistry};
use hooks_std::approval_gate::channel::feishu::{FeishuChannel, FeishuConfig};
use hooks_std::approval_gate::{
    ApprovalGate, Approvals, ApprovalsConfig, ConfirmationStore, StaticDirectory,
};
use hooks_std::fail;
use hooks_std::{AuditLog, Database};
use hooks_testkit::feishu::{FakeFeishu, FakeFeishuConfig};
use serde_json::{Value, json};

/// The chat every crash-test card goes to.
const CHAT: &str = "oc_finance";

/// The command line.
struct Options {
    role: String,
    db: String,
    feishu: String,
    ran: Option<String>,
    timeout: String,
    crash_at: Option<String>,
}

fn options() -> Result<Options, String> {
    let mut args = std::env::args().skip(1);
    let role = args
        .next()
        .ok_or("usage: hooks-crash-process agent|replica --db URL --feishu BASE_URL …")?;
    let mut options = Options {
        role,
        db: String::new(),
        feishu: String::new(),
        ran: None,
        timeout: "30s".to_owned(),
        crash_at: None,
    };
    while let Some(flag) = args.next() {
        let value = args.next().ok_or_else(|| format!("{flag} needs a value"))?;
        match flag.as_str() {
            "--db" => options.db = value,
            "--feishu" => options.feishu = value,
            "--ran" => options.ran = Some(value),
            "--timeout" => options.timeout = value,
            "--crash-at" => options.crash_at = Some(value),
            _ => return Err(format!("unknown option {flag}")),
        }
    }
    if options.role != "fake" && (options.db.is_empty() || options.feishu.is_empty()) {
        return Err("--db and --feishu are required".to_owned());
    }
    Ok(options)
}

/// At `point`, say so and freeze: the test kills the process there.
fn freeze_at(point: &str) -> Result<(), String> {
    let name = point.to_owned();
    fail::cfg_callback(point, move || {
        println!("REACHED {name}");
        let _ = std::io::stdout().flush();
        loop {
            std::thread::sleep(Duration::from_secs(3600));
        }
    })
}

async fn approvals(options: &Options) -> Result<Approvals, String> {
    let database = Database::connect(&options.db)
        .await
        .map_err(|error| error.to_string())?;
    let fake = FakeFeishuConfig::default();
    let mut config = FeishuConfig::new(
        fake.app_id,
        fake.app_secret,
        CHAT,
        fake.verification_token,
        fake.encrypt_key,
    );
    config.base_url = options.feishu.clone();
    let channel = FeishuChannel::new(config).map_err(|error| error.to_string())?;
    let directory = StaticDirectory::new().person("feishu", "ou_bob", "bob", "acme");
    Ok(Approvals::start(
        ConfirmationStore::new(database),
        Arc::new(channel),
        Arc::new(directory),
        ApprovalsConfig {
            poll_interval: Duration::from_millis(50),
            sweep_interval: Duration::from_millis(200),
            card_update_backoff: Duration::from_millis(100),
            ..ApprovalsConfig::default()
        },
    ))
}

async fn agent(options: &Options) -> Result<(), String> {
    let approvals = approvals(options).await?;
    let gate = json!({"approver_scope": "org_members", "timeout": options.timeout});
    let audit = AuditLog::new(approvals.store().database().clone());
    let hook = ApprovalGate::from_config(approvals, &gate).map_err(|error| error.to_string())?;
    let registry = HookRegistry::builder()
        .pre(hook)
        .observer(Arc::new(audit))
        .build()
        .map_err(|error| error.to_string())?;
    let call = HookContext::tool_call(
        "oa__purchase_pay",
        json!({"amount": 60_000, "payee": "ACME"}),
    )
    .with_conversation("conv-1")
    .with_tool_call_id("c1")
    .with_agent("finance-bot")
    .with_user("alice")
    .with_org("acme")
    .with_metadata("requires_confirmation", true);
    let ran = options.ran.clone().ok_or("agent needs --ran FILE")?;
    let report = registry
        .run_tool_call(call, async move |_: &Value| {
            let mut file = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(&ran)
                .map_err(|error| error.to_string())?;
            writeln!(file, "ran").map_err(|error| error.to_string())?;
            file.sync_all().map_err(|error| error.to_string())?;
            Ok::<_, String>(json!("paid"))
        })
        .await;
    println!(
        "OUTCOME tool_ran={} {}",
        report.tool_ran, report.observation
    );
    Ok(())
}

async fn replica(options: &Options) -> Result<(), String> {
    let approvals = approvals(options).await?;
    let app = axum::Router::new().nest("/feishu/callback", approvals.router());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .map_err(|error| error.to_string())?;
    let address = listener.local_addr().map_err(|error| error.to_string())?;
    println!("READY http://{address}/feishu/callback");
    let _ = std::io::stdout().flush();
    axum::serve(listener, app)
        .await
        .map_err(|error| error.to_string())
}

async fn fake() -> Result<(), String> {
    let fake = FakeFeishu::start_on(FakeFeishuConfig::default(), 0)
        .await
        .map_err(|error| format!("could not start the fake Feishu: {error}"))?;
    println!("READY {}", fake.base_url());
    let _ = std::io::stdout().flush();
    std::future::pending::<()>().await;
    Ok(())
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let run = async {
        let options = options()?;
        if let Some(point) = &options.crash_at {
            freeze_at(point)?;
        }
        match options.role.as_str() {
            "agent" => agent(&options).await,
            "replica" => replica(&options).await,
            "fake" => fake().await,
            other => Err(format!("unknown role {other}: use agent, replica or fake")),
        }
    };
    match run.await {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("hooks-crash-process: {error}");
            ExitCode::FAILURE
        }
    }
}
