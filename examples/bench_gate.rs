//! Approval gate benchmark.
//!
//! For 1,000 and then 10,000 concurrent gated calls on a SQLite file:
//!   * every call creates its confirmation request and waits;
//!   * while they all wait, the database load is measured (statements per
//!     second over a few seconds of idling): it must not grow with the number
//!     pending;
//!   * then every request is decided — 1,000 decisions per second, each
//!     through the same scope-checked path a channel callback takes — and the
//!     latency from the decision's commit to the tool actually running is
//!     recorded (and from the click, which adds the decision's own write).
//!
//! Cards go to an in-process channel that only records them, so the figures
//! are the gate's own, not an IM platform's.
//!
//! Run with `cargo run --release --example bench_gate`.
//! Targets: p99 decision→resume under 50 ms; idle load independent of the
//! number pending. Last line:
//! `gate: 10000 pending: p50 <A> ms, p99 <B> ms, idle <C> queries/s`

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use hooks::prelude::*;
use hooks::std_hooks::gate::channel::{
    Callback, CallbackError, CallbackReply, Channel, ChannelFuture, RawCallback,
};
use hooks::std_hooks::gate::{
    ApprovalGate, ApprovalGateConfig, Approvals, ApprovalsConfig, Approver, ConfirmationRequest,
    ConfirmationStore, Decision, StaticDirectory,
};
use hooks::std_hooks::{Database, DatabaseOptions};
use serde_json::{Value, json};

/// Records the cards it is asked to send.
#[derive(Default)]
struct RecordingChannel {
    sent: Mutex<Vec<String>>,
}

impl Channel for RecordingChannel {
    fn kind(&self) -> &'static str {
        "bench"
    }
    fn channel_id(&self) -> &str {
        "bench-room"
    }
    fn send_card<'a>(&'a self, request: &'a ConfirmationRequest) -> ChannelFuture<'a, String> {
        Box::pin(async move {
            self.sent.lock().expect("lock").push(request.id.clone());
            Ok(format!("msg-{}", request.id))
        })
    }
    fn update_card<'a>(&'a self, _: &'a ConfirmationRequest) -> ChannelFuture<'a, ()> {
        Box::pin(async { Ok(()) })
    }
    fn verify_callback(&self, _: RawCallback<'_>) -> Result<Callback, CallbackError> {
        Err(CallbackError::Unsupported(
            "the bench channel takes no callbacks".into(),
        ))
    }
    fn callback_reply(&self, _: CallbackReply<'_>) -> Value {
        json!({})
    }
}

/// The rate at which the simulated approvers decide.
const DECISIONS_PER_SECOND: u32 = 1_000;

struct Figures {
    p50_ms: f64,
    p99_ms: f64,
    /// From the start of the decision (including waiting for SQLite's write lock behind other deciders).
    click_p99_ms: f64,
    idle_queries_per_s: f64,
}

async fn run(pending: usize) -> Figures {
    let dir =
        std::env::temp_dir().join(format!("hooks-bench-gate-{}-{pending}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temporary directory");
    let url = format!("sqlite://{}", dir.join("gate.db").display());
    // Setup speed only: the measured paths are reads and single-row updates.
    let options = DatabaseOptions {
        sync_full: false,
        ..DatabaseOptions::default()
    };
    let database = Database::connect_with(&url, &options)
        .await
        .expect("sqlite file");
    let store = ConfirmationStore::new(database.clone());
    let channel = Arc::new(RecordingChannel::default());
    let directory = StaticDirectory::new().person("bench", "op-1", "alice", "acme");
    let approvals = Approvals::start(
        store.clone(),
        channel.clone(),
        Arc::new(directory),
        ApprovalsConfig::default(),
    );
    let gate_config = ApprovalGateConfig {
        timeout: Duration::from_secs(600),
        ..ApprovalGateConfig::default()
    };
    let gate = ApprovalGate::with_config(approvals.clone(), gate_config).expect("gate");
    let registry = HookRegistry::builder().pre(gate).build().expect("registry");

    let resumed: Arc<Mutex<HashMap<usize, Instant>>> = Arc::default();
    let calls: Vec<_> = (0..pending)
        .map(|i| {
            let (registry, resumed) = (registry.clone(), resumed.clone());
            tokio::spawn(async move {
                let ctx = HookContext::tool_call("oa__purchase_pay", json!({"n": i}))
                    .with_conversation("bench")
                    .with_tool_call_id(format!("call-{i}"))
                    .with_user("alice")
                    .with_org("acme")
                    .with_metadata("requires_confirmation", true);
                let report = registry
                    .run_tool_call(ctx, async |_: &Value| {
                        resumed.lock().expect("lock").insert(i, Instant::now());
                        Ok::<_, String>(json!("paid"))
                    })
                    .await;
                assert!(report.tool_ran, "{}", report.observation);
            })
        })
        .collect();

    while channel.sent.lock().expect("lock").len() < pending {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // Let every gate reach its wait (the statement count stops climbing),
    // then measure the idle load.
    loop {
        let before = store.queries_issued();
        tokio::time::sleep(Duration::from_millis(500)).await;
        if store.queries_issued() - before < 5 {
            break;
        }
    }
    let idle_window = Duration::from_secs(6);
    let before = store.queries_issued();
    tokio::time::sleep(idle_window).await;
    let idle_queries_per_s = (store.queries_issued() - before) as f64 / idle_window.as_secs_f64();

    let ids: Vec<String> = channel.sent.lock().expect("lock").clone();
    let approver = Approver {
        user_id: "alice".into(),
        org_id: "acme".into(),
    };
    let decided: Arc<Mutex<HashMap<String, (Instant, Instant)>>> = Arc::default();
    // Decisions arrive at a steady DECISIONS_PER_SECOND (far above what people
    // click), each from its own task, so the figure is the wake-up path's
    // latency and not the length of a queue of writers the bench itself built.
    let mut ticks = tokio::time::interval(Duration::from_secs(1) / DECISIONS_PER_SECOND);
    let mut deciders = Vec::with_capacity(ids.len());
    for id in ids {
        ticks.tick().await;
        let (approvals, approver, decided) = (approvals.clone(), approver.clone(), decided.clone());
        deciders.push(tokio::spawn(async move {
            let clicked = Instant::now();
            approvals
                .decide(&id, &approver, Decision::Approve, None)
                .await
                .expect("decide");
            // The decision is committed: from here the gate must wake.
            decided
                .lock()
                .expect("lock")
                .insert(id, (clicked, Instant::now()));
        }));
    }
    for decider in deciders {
        decider.await.expect("decider");
    }
    for call in calls {
        call.await.expect("call");
    }

    // Map request ids back to calls through the store.
    let decided = decided.lock().expect("lock").clone();
    let resumed = resumed.lock().expect("lock").clone();
    let mut latencies = Vec::with_capacity(pending);
    let mut click_latencies = Vec::with_capacity(pending);
    for (id, (clicked, committed)) in decided {
        let request = store.get(&id).await.expect("get").expect("request");
        let n = request.args["n"].as_u64().expect("n") as usize;
        // A gate may resume before its decider sees the commit return: 0 then.
        latencies.push(
            resumed[&n]
                .saturating_duration_since(committed)
                .as_secs_f64()
                * 1000.0,
        );
        click_latencies.push(resumed[&n].duration_since(clicked).as_secs_f64() * 1000.0);
    }
    latencies.sort_by(f64::total_cmp);
    click_latencies.sort_by(f64::total_cmp);
    let at =
        |sorted: &[f64], p: f64| sorted[((sorted.len() as f64 * p) as usize).min(sorted.len() - 1)];
    let percentile = |p: f64| at(&latencies, p);
    let click_p99_ms = at(&click_latencies, 0.99);
    drop(approvals);
    database.close().await;
    let _ = std::fs::remove_dir_all(&dir);
    Figures {
        p50_ms: percentile(0.50),
        p99_ms: percentile(0.99),
        click_p99_ms,
        idle_queries_per_s,
    }
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let mut last = None;
    for pending in [1_000, 10_000] {
        let figures = runtime.block_on(run(pending));
        println!(
            "{pending:>6} pending, {DECISIONS_PER_SECOND} decisions/s: commit→resume p50 {:.2} ms, p99 {:.2} ms; click→resume p99 {:.2} ms; idle {:.2} queries/s",
            figures.p50_ms, figures.p99_ms, figures.click_p99_ms, figures.idle_queries_per_s
        );
        last = Some((pending, figures));
    }
    let (pending, figures) = last.expect("ran");
    println!(
        "gate: {pending} pending: p50 {:.2} ms, p99 {:.2} ms, idle {:.2} queries/s",
        figures.p50_ms, figures.p99_ms, figures.idle_queries_per_s
    );
}
