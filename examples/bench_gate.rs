//! Approval gate benchmark: calls waiting on people, decisions arriving
//! at a rate people make them.
//!
//! Gated calls are started at a paced 500/s until 1,000 wait, then until
//! 10,000 wait (a call that is approved and has run makes its next gated
//! call at once, so the number waiting stays put). Decisions then arrive
//! open loop, 100 per second for ten seconds, each on the clock whatever
//! the earlier ones are doing, through the same scope-checked path a
//! channel callback takes. It reports:
//!   * commit→resume: from the decision's commit returning to the tool
//!     running (the wake-up, the gate's read and its approval stamp);
//!   * click→resume: from the start of the decision (its own durable write
//!     included) to the tool running;
//!   * idle statements/s with 1,000 and with 10,000 waiting and nothing
//!     decided (it must not grow with the number waiting), counted from
//!     sqlx's own statement events (`sqlx::query` at debug level);
//!   * resident memory per waiting call, at 10,000 waiting.
//!
//! Backends: a SQLite file (WAL, `synchronous = FULL`); and, when
//! `HOOKS_TEST_POSTGRES_URL` is set, PostgreSQL with two replicas — two
//! `Approvals` on separate pools, decisions delivered to one, the gates
//! waiting on the other and woken by `LISTEN/NOTIFY`. On SQLite a second
//! run writes audit rows to the same file at a paced 10,000 rows/s from
//! 256 conversations through the audit log's writer, as when one file
//! serves both. Cards go to an in-process channel that only records them,
//! so the figures are the gate's own, not an IM platform's.
//!
//! Run with `cargo run --release --features postgres --example bench_gate [sqlite|postgres]`.
//! Targets: p99 commit→resume under 25 ms on SQLite and under 50 ms on
//! PostgreSQL (two replicas) with 10,000 waiting and 100 decisions/s; idle
//! load independent of the number waiting. The summary lines:
//! `gate-sqlite: p50 <A> ms, p99 <B> ms, …` and `gate-postgres: …`.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use hooks::prelude::*;
use hooks::std_hooks::approval_gate::channel::{
    Callback, CallbackError, CallbackReply, Channel, ChannelFuture, RawCallback,
};
use hooks::std_hooks::approval_gate::{
    ApprovalDecision, ApprovalGate, ApprovalGateConfig, Approvals, ApprovalsConfig, Approver,
    ConfirmationRequest, ConfirmationStore, StaticDirectory,
};
use hooks::std_hooks::{AuditLog, Database, DatabaseOptions};
use serde_json::{Value, json};

/// Records the cards it is asked to send, in order, for the deciders to take.
struct RecordingChannel {
    room: String,
    cards: Mutex<VecDeque<String>>,
    sent: AtomicUsize,
}

impl RecordingChannel {
    fn new(room: String) -> Self {
        RecordingChannel {
            room,
            cards: Mutex::default(),
            sent: AtomicUsize::new(0),
        }
    }

    fn next_card(&self) -> Option<String> {
        self.cards.lock().expect("lock").pop_front()
    }
}

impl Channel for RecordingChannel {
    fn kind(&self) -> &'static str {
        "bench"
    }
    fn channel_id(&self) -> &str {
        &self.room
    }
    fn send_card<'a>(&'a self, request: &'a ConfirmationRequest) -> ChannelFuture<'a, String> {
        Box::pin(async move {
            self.cards
                .lock()
                .expect("lock")
                .push_back(request.id.clone());
            self.sent.fetch_add(1, Ordering::Relaxed);
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

/// Where the run goes.
#[derive(Clone)]
enum Backend {
    /// A fresh SQLite file.
    Sqlite,
    /// Two replicas on this PostgreSQL database.
    Postgres(String),
}

impl Backend {
    fn name(&self) -> &'static str {
        match self {
            Backend::Sqlite => "sqlite",
            Backend::Postgres(_) => "postgres",
        }
    }
}

/// Calls kept waiting, first and then.
const FEW: usize = 1_000;
const MANY: usize = 10_000;
/// How fast gated calls are started while filling up.
const STARTS_PER_SECOND: u32 = 500;
/// Decisions per second, and for how long they arrive.
const DECISIONS_PER_SECOND: u32 = 100;
const DECIDING: Duration = Duration::from_secs(10);
/// How long the idle load is counted: one sweep interval (30 s by
/// default), so each count holds the same number of sweeps as of polls.
/// A shorter window holds a sweep or not by chance, and its figure then
/// differs by one sweep's statements whatever the number waiting.
const IDLE_WINDOW: Duration = Duration::from_secs(30);

struct Figures {
    decisions: usize,
    p50_ms: f64,
    p99_ms: f64,
    click_p50_ms: f64,
    click_p99_ms: f64,
    idle_few: f64,
    idle_many: f64,
    bytes_per_waiting: f64,
    /// Audit rows/s written to the same file during the decisions.
    audit_rows_per_s: Option<f64>,
}

/// Statements sqlx ran, counted from its `sqlx::query` events.
static STATEMENTS: AtomicU64 = AtomicU64::new(0);

/// A tracing layer that only counts sqlx's statement events.
struct CountStatements;

impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for CountStatements {
    fn enabled(
        &self,
        metadata: &tracing::Metadata<'_>,
        _: tracing_subscriber::layer::Context<'_, S>,
    ) -> bool {
        metadata.target() == "sqlx::query"
    }

    fn on_event(&self, _: &tracing::Event<'_>, _: tracing_subscriber::layer::Context<'_, S>) {
        STATEMENTS.fetch_add(1, Ordering::Relaxed);
    }
}

/// This process's resident memory in bytes (Linux; 0 elsewhere).
fn resident_bytes() -> u64 {
    std::fs::read_to_string("/proc/self/statm")
        .ok()
        .and_then(|statm| statm.split_whitespace().nth(1)?.parse::<u64>().ok())
        .map_or(0, |pages| pages * 4096)
}

/// One replica: its store, approvals and gate registry.
struct Replica {
    database: Database,
    store: ConfirmationStore,
    approvals: Approvals,
    registry: HookRegistry,
}

async fn replica(url: &str, channel: Arc<RecordingChannel>) -> Replica {
    let database = Database::connect_with(url, &DatabaseOptions::default())
        .await
        .expect("database");
    let store = ConfirmationStore::new(database.clone());
    let directory = StaticDirectory::new().person("bench", "op-1", "alice", "acme");
    let approvals = Approvals::start(
        store.clone(),
        channel,
        Arc::new(directory),
        ApprovalsConfig::default(),
    );
    let gate_config = ApprovalGateConfig {
        timeout: Duration::from_secs(600),
        ..ApprovalGateConfig::default()
    };
    let gate = ApprovalGate::with_config(approvals.clone(), gate_config).expect("gate");
    let registry = HookRegistry::builder().pre(gate).build().expect("registry");
    Replica {
        database,
        store,
        approvals,
        registry,
    }
}

/// Gated calls: each waits for its decision, runs, and makes the next.
struct Calls {
    registry: HookRegistry,
    tag: String,
    /// Call number → when its tool ran.
    resumed: Arc<Mutex<HashMap<u64, Instant>>>,
    stop: Arc<AtomicBool>,
    next_call: Arc<AtomicU64>,
    tasks: Vec<tokio::task::JoinHandle<()>>,
}

impl Calls {
    /// Starts callers at a paced rate until `count` run.
    async fn grow_to(&mut self, count: usize) {
        let mut ticks = tokio::time::interval(Duration::from_secs(1) / STARTS_PER_SECOND);
        while self.tasks.len() < count {
            ticks.tick().await;
            let registry = self.registry.clone();
            let (resumed, stop, next_call, tag) = (
                self.resumed.clone(),
                self.stop.clone(),
                self.next_call.clone(),
                self.tag.clone(),
            );
            self.tasks.push(tokio::spawn(async move {
                while !stop.load(Ordering::Relaxed) {
                    let n = next_call.fetch_add(1, Ordering::Relaxed);
                    let ctx = HookContext::tool_call("oa__purchase_pay", json!({"n": n}))
                        .with_conversation(format!("bench-{tag}"))
                        .with_tool_call_id(format!("call-{n}"))
                        .with_user("alice")
                        .with_org("acme")
                        .with_metadata("requires_confirmation", true);
                    let resumed = resumed.clone();
                    let report = registry
                        .run_tool_call(ctx, async move |_: &Value| {
                            resumed.lock().expect("lock").insert(n, Instant::now());
                            Ok::<_, String>(json!("paid"))
                        })
                        .await;
                    if !report.tool_ran {
                        // Rejected at the end of the run.
                        return;
                    }
                }
            }));
        }
    }
}

/// Waits until `cards` cards were sent and the statement count stops
/// climbing (every gate waits), then counts statements over the idle window.
async fn idle_statements_per_second(channel: &RecordingChannel, cards: usize) -> f64 {
    while channel.sent.load(Ordering::Relaxed) < cards {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    loop {
        let before = STATEMENTS.load(Ordering::Relaxed);
        tokio::time::sleep(Duration::from_millis(500)).await;
        if STATEMENTS.load(Ordering::Relaxed) - before < 5 {
            break;
        }
    }
    let before = STATEMENTS.load(Ordering::Relaxed);
    tokio::time::sleep(IDLE_WINDOW).await;
    (STATEMENTS.load(Ordering::Relaxed) - before) as f64 / IDLE_WINDOW.as_secs_f64()
}

async fn run(backend: &Backend, audit_rate: u32) -> Figures {
    let tag = format!(
        "{}-{}",
        std::process::id(),
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_millis())
            .unwrap_or_default()
    );
    let dir = std::env::temp_dir().join(format!("hooks-bench-gate-{tag}"));
    let channel = Arc::new(RecordingChannel::new(format!("bench-{tag}")));
    // The gates wait on `waiting`; decisions go to `deciding` (the same
    // replica on SQLite, the other one on PostgreSQL).
    let (waiting, deciding) = match backend {
        Backend::Sqlite => {
            std::fs::create_dir_all(&dir).expect("temporary directory");
            let url = format!("sqlite://{}", dir.join("gate.db").display());
            (replica(&url, channel.clone()).await, None)
        }
        Backend::Postgres(url) => {
            let first = replica(url, channel.clone()).await;
            fresh_postgres_table(&first.database).await;
            (first, Some(replica(url, channel.clone()).await))
        }
    };
    let deciders_replica = deciding.as_ref().unwrap_or(&waiting);

    let mut calls = Calls {
        registry: waiting.registry.clone(),
        tag: tag.clone(),
        resumed: Arc::default(),
        stop: Arc::new(AtomicBool::new(false)),
        next_call: Arc::new(AtomicU64::new(0)),
        tasks: Vec::new(),
    };
    let resident_before = resident_bytes();
    calls.grow_to(FEW).await;
    let idle_few = idle_statements_per_second(&channel, FEW).await;
    calls.grow_to(MANY).await;
    let idle_many = idle_statements_per_second(&channel, MANY).await;
    let bytes_per_waiting = resident_bytes().saturating_sub(resident_before) as f64 / MANY as f64;

    let audit = (audit_rate > 0).then(|| AuditTraffic::start(&waiting.database, audit_rate));

    let approver = Approver {
        user_id: "alice".into(),
        org_id: "acme".into(),
    };
    let decided: Arc<Mutex<Vec<(String, Instant, Instant)>>> = Arc::default();
    let mut ticks = tokio::time::interval(Duration::from_secs(1) / DECISIONS_PER_SECOND);
    let mut deciders = Vec::new();
    let started = Instant::now();
    while started.elapsed() < DECIDING {
        ticks.tick().await;
        let Some(id) = channel.next_card() else {
            continue;
        };
        let (approvals, approver, decided) = (
            deciders_replica.approvals.clone(),
            approver.clone(),
            decided.clone(),
        );
        // Each decision from its own task, on the clock: open loop.
        deciders.push(tokio::spawn(async move {
            let clicked = Instant::now();
            approvals
                .decide(&id, &approver, ApprovalDecision::Approve, None)
                .await
                .expect("decide");
            decided
                .lock()
                .expect("lock")
                .push((id, clicked, Instant::now()));
        }));
    }
    calls.stop.store(true, Ordering::Relaxed);
    for decider in deciders {
        decider.await.expect("decider");
    }
    let audit_rows_per_s = match audit {
        Some(audit) => Some(audit.finish().await),
        None => None,
    };
    let decided = std::mem::take(&mut *decided.lock().expect("lock"));
    // Every approved call runs; wait for the last ones.
    let mut numbers = HashMap::with_capacity(decided.len());
    for (id, _, _) in &decided {
        let request = waiting.store.get(id).await.expect("get").expect("request");
        numbers.insert(id.clone(), request.args["n"].as_u64().expect("n"));
    }
    let deadline = Instant::now() + Duration::from_secs(60);
    while numbers
        .values()
        .any(|n| !calls.resumed.lock().expect("lock").contains_key(n))
    {
        assert!(Instant::now() < deadline, "approved calls did not resume");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }

    let resumed = calls.resumed.lock().expect("lock").clone();
    let mut latencies = Vec::with_capacity(decided.len());
    let mut click_latencies = Vec::with_capacity(decided.len());
    for (id, clicked, committed) in &decided {
        let ran = resumed[&numbers[id]];
        // A gate may resume before its decider sees the commit return: 0 then.
        latencies.push(ran.saturating_duration_since(*committed).as_secs_f64() * 1000.0);
        click_latencies.push(ran.duration_since(*clicked).as_secs_f64() * 1000.0);
    }
    latencies.sort_by(f64::total_cmp);
    click_latencies.sort_by(f64::total_cmp);
    let at =
        |sorted: &[f64], p: f64| sorted[((sorted.len() as f64 * p) as usize).min(sorted.len() - 1)];

    // The calls still waiting are rejected so their tasks end.
    let give_up = Instant::now() + Duration::from_secs(60);
    while calls.tasks.iter().any(|call| !call.is_finished()) && Instant::now() < give_up {
        let rejections: Vec<_> = std::iter::from_fn(|| channel.next_card())
            .map(|id| {
                let (approvals, approver) = (deciders_replica.approvals.clone(), approver.clone());
                tokio::spawn(async move {
                    let _ = approvals
                        .decide(&id, &approver, ApprovalDecision::Reject, Some("bench over"))
                        .await;
                })
            })
            .collect();
        for rejection in rejections {
            let _ = rejection.await;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    for call in &calls.tasks {
        call.abort();
    }
    if deciding.is_some() {
        fresh_postgres_table(&waiting.database).await;
    }
    for replica in [Some(waiting), deciding].into_iter().flatten() {
        drop(replica.approvals);
        replica.database.close().await;
    }
    let _ = std::fs::remove_dir_all(&dir);
    Figures {
        decisions: decided.len(),
        p50_ms: at(&latencies, 0.50),
        p99_ms: at(&latencies, 0.99),
        click_p50_ms: at(&click_latencies, 0.50),
        click_p99_ms: at(&click_latencies, 0.99),
        idle_few,
        idle_many,
        bytes_per_waiting,
        audit_rows_per_s,
    }
}

/// Audit rows written at a paced rate through the audit log's own writer,
/// by 256 conversations each on a steady tick (one waiting for its row to be
/// durable catches up on the ticks it missed).
struct AuditTraffic {
    stop: Arc<AtomicBool>,
    written: Arc<AtomicU64>,
    started: Instant,
    writers: Vec<tokio::task::JoinHandle<()>>,
}

impl AuditTraffic {
    fn start(database: &Database, rows_per_second: u32) -> AuditTraffic {
        const CONVERSATIONS: u32 = 256;
        let registry = HookRegistry::builder()
            .observer(Arc::new(AuditLog::new(database.clone())))
            .build()
            .expect("registry");
        let stop = Arc::new(AtomicBool::new(false));
        let written = Arc::new(AtomicU64::new(0));
        let tick = Duration::from_secs(u64::from(CONVERSATIONS)) / rows_per_second;
        let writers = (0..CONVERSATIONS)
            .map(|conversation| {
                let (registry, stop, written) = (registry.clone(), stop.clone(), written.clone());
                tokio::spawn(async move {
                    let mut ticks = tokio::time::interval(tick);
                    let mut call = 0u64;
                    while !stop.load(Ordering::Relaxed) {
                        ticks.tick().await;
                        let ctx = HookContext::tool_call("crm__lookup", json!({"customer": call}))
                            .with_conversation(format!("audit-{conversation}"))
                            .with_tool_call_id(format!("call-{call}"));
                        let report = registry
                            .run_tool_call(ctx, async |_: &Value| Ok::<_, String>(json!("found")))
                            .await;
                        assert!(!report.observation.is_blocked(), "{}", report.observation);
                        call += 1;
                        written.fetch_add(1, Ordering::Relaxed);
                    }
                })
            })
            .collect();
        AuditTraffic {
            stop,
            written,
            started: Instant::now(),
            writers,
        }
    }

    /// Stops the writers; the rows/s that got through.
    async fn finish(self) -> f64 {
        let rows = self.written.load(Ordering::Relaxed);
        let rate = rows as f64 / self.started.elapsed().as_secs_f64();
        self.stop.store(true, Ordering::Relaxed);
        for writer in self.writers {
            writer.await.expect("audit writer");
        }
        rate
    }
}

/// Removes every request the bench made (this run's and any earlier run's
/// that stopped half-way) and vacuums the table, so each PostgreSQL phase
/// starts from the same table whatever ran before it. Without this, dead
/// rows pile up from run to run on a server without autovacuum (this
/// machine's has it off) and each run is slower than the last (in one
/// comparison here, p99 83 ms on a table earlier runs had left against
/// 38 ms on a fresh one).
async fn fresh_postgres_table(database: &Database) {
    let Some(pool) = database.postgres() else {
        return;
    };
    sqlx::query("DELETE FROM confirmation_requests WHERE channel_kind = 'bench'")
        .execute(pool)
        .await
        .expect("delete the bench's requests");
    sqlx::query("VACUUM (FULL, ANALYZE) confirmation_requests")
        .execute(pool)
        .await
        .expect("vacuum confirmation_requests");
}

fn main() {
    use tracing_subscriber::layer::SubscriberExt as _;
    tracing::subscriber::set_global_default(tracing_subscriber::registry().with(CountStatements))
        .expect("the statement counter is the only subscriber");
    let only = std::env::args().nth(1);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let mut runs = Vec::new();
    if only.as_deref() != Some("postgres") {
        runs.push((Backend::Sqlite, 0));
        runs.push((Backend::Sqlite, 10_000));
    }
    match std::env::var("HOOKS_TEST_POSTGRES_URL") {
        Ok(url) if !url.is_empty() && only.as_deref() != Some("sqlite") => {
            runs.push((Backend::Postgres(url), 0));
        }
        _ if only.as_deref() != Some("sqlite") => {
            println!("(PostgreSQL skipped: HOOKS_TEST_POSTGRES_URL is not set)");
        }
        _ => {}
    }
    let mut summary = Vec::new();
    for (backend, audit_rate) in &runs {
        let figures = runtime.block_on(run(backend, *audit_rate));
        let audit = figures.audit_rows_per_s.map_or(String::new(), |rows| {
            format!("; audit on the same file {rows:.0} rows/s (paced at {audit_rate})")
        });
        println!(
            "{:<9} {MANY} waiting, {DECISIONS_PER_SECOND} decisions/s ({} decided): \
             commit→resume p50 {:.2} ms, p99 {:.2} ms; click→resume p50 {:.2} ms, p99 {:.2} ms; \
             idle {:.2} statements/s at {FEW} waiting, {:.2} at {MANY}; \
             {:.0} resident bytes per waiting call{audit}",
            backend.name(),
            figures.decisions,
            figures.p50_ms,
            figures.p99_ms,
            figures.click_p50_ms,
            figures.click_p99_ms,
            figures.idle_few,
            figures.idle_many,
            figures.bytes_per_waiting,
        );
        if *audit_rate == 0 {
            summary.push(format!(
                "gate-{}: p50 {:.2} ms, p99 {:.2} ms ({MANY} waiting, {DECISIONS_PER_SECOND} decisions/s{}), \
                 idle {:.2} statements/s at {FEW} and {:.2} at {MANY} waiting, {:.0} bytes per waiting call",
                backend.name(),
                figures.p50_ms,
                figures.p99_ms,
                if matches!(backend, Backend::Postgres(_)) { ", 2 replicas" } else { "" },
                figures.idle_few,
                figures.idle_many,
                figures.bytes_per_waiting,
            ));
        }
    }
    for line in summary {
        println!("{line}");
    }
}
