//! Approval gate benchmark: many calls waiting, decisions arriving steadily.
//!
//! Each phase keeps `pending` gated calls waiting (a call that is approved
//! and has run makes its next gated call at once, so the number waiting stays
//! put) and decides them at a steady rate for at least five seconds, each
//! decision through the same scope-checked path a channel callback takes.
//! It reports:
//!   * commit→resume: from the decision's commit returning to the tool
//!     running (the wake-up, the gate's read and its approval stamp);
//!   * click→resume: from the start of the decision (its own durable write
//!     included) to the tool running;
//!   * idle queries/s: statements per second while every call waits and
//!     nothing is decided (it must not grow with the number pending);
//!   * statements per decision cycle: what the store issued while deciding
//!     (the decision, the wake-up, the approval stamp, the card redraw, the
//!     resumed call's next request and card), per decision.
//!
//! Backends: a SQLite file with the default durability (`synchronous =
//! FULL`, WAL); and, when `HOOKS_TEST_POSTGRES_URL` is set, PostgreSQL with
//! two replicas — two `Approvals` on separate pools, decisions delivered to
//! one, the gates waiting on the other and woken by `LISTEN/NOTIFY`.
//! Cards go to an in-process channel that only records them, so the figures
//! are the gate's own, not an IM platform's.
//!
//! On SQLite one more phase (10,000 pending, 1,000/s) runs with audit rows
//! written to the same file at a paced 10,000 rows/s by 64 conversations
//! through the audit log's own writer, as when one database serves both: it
//! reports the audit rows/s that got through beside the gate's figures.
//!
//! Run with `cargo run --release --example bench_gate [sqlite|postgres]`;
//! `bench_gate sqlite 10000 2000 [audit rows/s]` runs one phase.
//! Targets: SQLite, 10,000 pending, 1,000 decisions/s: p99 commit→resume
//! under 10 ms; 2,000/s: under 50 ms. PostgreSQL, two replicas, 10,000
//! pending, 1,000/s: under 20 ms. Idle load independent of the number
//! pending. The last lines:
//! `gate: 10000 pending: p50 <A> ms, p99 <B> ms, idle <C> queries/s` (SQLite, 1,000/s) and
//! `gate-pg: 10000 pending, 2 replicas: p50 <A> ms, p99 <B> ms, idle <C> queries/s`.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use hooks::prelude::*;
use hooks::std_hooks::gate::channel::{
    Callback, CallbackError, CallbackReply, Channel, ChannelFuture, RawCallback,
};
use hooks::std_hooks::gate::{
    ApprovalGate, ApprovalGateConfig, Approvals, ApprovalsConfig, Approver, ConfirmationRequest,
    ConfirmationStore, Decision, StaticDirectory,
};
use hooks::std_hooks::{AuditLogHook, Database, DatabaseOptions};
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

/// Where the phase runs.
#[derive(Clone)]
enum Backend {
    /// A fresh SQLite file, default durability.
    Sqlite,
    /// Two replicas on this PostgreSQL database.
    Postgres(String),
}

impl Backend {
    fn name(&self) -> &'static str {
        match self {
            Backend::Sqlite => "sqlite",
            Backend::Postgres(_) => "postgres, 2 replicas",
        }
    }
}

/// How long decisions arrive in each phase.
const DECIDING: Duration = Duration::from_secs(5);

struct Figures {
    decisions: usize,
    p50_ms: f64,
    p99_ms: f64,
    click_p50_ms: f64,
    click_p99_ms: f64,
    idle_queries_per_s: f64,
    statements_per_decision: f64,
    /// Audit rows/s written to the same file during the decisions.
    audit_rows_per_s: Option<f64>,
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

async fn run(backend: &Backend, pending: usize, per_second: u32, audit_rate: u32) -> Figures {
    let tag = format!(
        "{}-{}",
        std::process::id(),
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_millis())
            .unwrap_or_default()
    );
    let dir = std::env::temp_dir().join(format!("hooks-bench-gate-{tag}-{pending}"));
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
    let queries = || {
        waiting.store.queries_issued()
            + deciding
                .as_ref()
                .map_or(0, |replica| replica.store.queries_issued())
    };

    // Request id → call number (from the card), call number → when its tool ran.
    let resumed: Arc<Mutex<HashMap<u64, Instant>>> = Arc::default();
    let stop = Arc::new(AtomicBool::new(false));
    let next_call = Arc::new(std::sync::atomic::AtomicU64::new(0));
    let calls: Vec<_> = (0..pending)
        .map(|_| {
            let registry = waiting.registry.clone();
            let (resumed, stop, next_call, tag) = (
                resumed.clone(),
                stop.clone(),
                next_call.clone(),
                tag.clone(),
            );
            tokio::spawn(async move {
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
                        // Rejected at the end of the phase.
                        return;
                    }
                }
            })
        })
        .collect();

    while channel.sent.load(Ordering::Relaxed) < pending {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // Let every gate reach its wait (the statement count stops climbing),
    // then measure the idle load.
    loop {
        let before = queries();
        tokio::time::sleep(Duration::from_millis(500)).await;
        if queries() - before < 5 {
            break;
        }
    }
    let idle_window = Duration::from_secs(6);
    let before = queries();
    tokio::time::sleep(idle_window).await;
    let idle_queries_per_s = (queries() - before) as f64 / idle_window.as_secs_f64();

    let audit = (audit_rate > 0).then(|| AuditTraffic::start(&waiting.database, audit_rate));

    let approver = Approver {
        user_id: "alice".into(),
        org_id: "acme".into(),
    };
    let decided: Arc<Mutex<Vec<(String, Instant, Instant)>>> = Arc::default();
    let mut ticks = tokio::time::interval(Duration::from_secs(1) / per_second);
    let mut deciders = Vec::new();
    let statements_before = queries();
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
        // Each decision from its own task, so the figure is the wake-up
        // path's latency, not the length of a queue the bench built.
        deciders.push(tokio::spawn(async move {
            let clicked = Instant::now();
            approvals
                .decide(&id, &approver, Decision::Approve, None)
                .await
                .expect("decide");
            decided
                .lock()
                .expect("lock")
                .push((id, clicked, Instant::now()));
        }));
    }
    stop.store(true, Ordering::Relaxed);
    for decider in deciders {
        decider.await.expect("decider");
    }
    let audit_rows_per_s = match audit {
        Some(audit) => Some(audit.finish().await),
        None => None,
    };
    let decided = std::mem::take(&mut *decided.lock().expect("lock"));
    let statements_per_decision =
        (queries() - statements_before) as f64 / decided.len().max(1) as f64;
    // Every approved call runs; wait for the last ones.
    let mut numbers = HashMap::with_capacity(decided.len());
    for (id, _, _) in &decided {
        let request = waiting.store.get(id).await.expect("get").expect("request");
        numbers.insert(id.clone(), request.args["n"].as_u64().expect("n"));
    }
    let deadline = Instant::now() + Duration::from_secs(60);
    while numbers
        .values()
        .any(|n| !resumed.lock().expect("lock").contains_key(n))
    {
        assert!(Instant::now() < deadline, "approved calls did not resume");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }

    let resumed = resumed.lock().expect("lock").clone();
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

    // The calls still waiting are rejected (all at once) so their tasks end.
    let give_up = Instant::now() + Duration::from_secs(30);
    while calls.iter().any(|call| !call.is_finished()) && Instant::now() < give_up {
        let rejections: Vec<_> = std::iter::from_fn(|| channel.next_card())
            .map(|id| {
                let (approvals, approver) = (deciders_replica.approvals.clone(), approver.clone());
                tokio::spawn(async move {
                    let _ = approvals
                        .decide(&id, &approver, Decision::Reject, Some("bench over"))
                        .await;
                })
            })
            .collect();
        for rejection in rejections {
            let _ = rejection.await;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    for call in &calls {
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
        idle_queries_per_s,
        statements_per_decision,
        audit_rows_per_s,
    }
}

/// Audit rows written at a paced rate through the audit log's own writer,
/// by 64 conversations each on a steady tick (one waiting for its row to be
/// durable catches up on the ticks it missed).
struct AuditTraffic {
    stop: Arc<AtomicBool>,
    written: Arc<AtomicU64>,
    started: Instant,
    writers: Vec<tokio::task::JoinHandle<()>>,
}

impl AuditTraffic {
    fn start(database: &Database, rows_per_second: u32) -> AuditTraffic {
        const CONVERSATIONS: u32 = 64;
        let registry = HookRegistry::builder()
            .observer(Arc::new(AuditLogHook::new(database.clone())))
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
    let Database::Postgres(pool) = database else {
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
    let args: Vec<String> = std::env::args().skip(1).collect();
    let only = args.first().cloned();
    // `bench_gate sqlite 10000 2000` runs that one phase (for profiling).
    // (pending, decisions/s, audit rows/s on the same file: SQLite only).
    let phases = match (args.get(1), args.get(2)) {
        (Some(pending), Some(rate)) => vec![(
            pending.parse().expect("pending: a number"),
            rate.parse().expect("decisions per second: a number"),
            args.get(3).map_or(0, |audit| {
                audit.parse().expect("audit rows per second: a number")
            }),
        )],
        _ => vec![
            (1_000, 1_000, 0),
            (1_000, 2_000, 0),
            (10_000, 1_000, 0),
            (10_000, 2_000, 0),
            (10_000, 1_000, 10_000),
        ],
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let mut backends = Vec::new();
    if only.as_deref() != Some("postgres") {
        backends.push(Backend::Sqlite);
    }
    match std::env::var("HOOKS_TEST_POSTGRES_URL") {
        Ok(url) if !url.is_empty() && only.as_deref() != Some("sqlite") => {
            backends.push(Backend::Postgres(url));
        }
        _ if only.as_deref() != Some("sqlite") => {
            println!("(PostgreSQL skipped: HOOKS_TEST_POSTGRES_URL is not set)");
        }
        _ => {}
    }
    let mut summary = Vec::new();
    for backend in &backends {
        for &(pending, per_second, audit_rate) in &phases {
            let audit_rate = match backend {
                Backend::Sqlite => audit_rate,
                Backend::Postgres(_) if audit_rate > 0 => continue,
                Backend::Postgres(_) => 0,
            };
            let figures = runtime.block_on(run(backend, pending, per_second, audit_rate));
            let audit = figures.audit_rows_per_s.map_or(String::new(), |rows| {
                format!("; audit on the same file {rows:.0} rows/s (paced at {audit_rate})")
            });
            println!(
                "{:<20} {pending:>6} pending, {per_second} decisions/s ({} decided): \
                 commit→resume p50 {:.2} ms, p99 {:.2} ms; click→resume p50 {:.2} ms, p99 {:.2} ms; \
                 idle {:.2} queries/s; {:.1} statements per decision cycle{audit}",
                backend.name(),
                figures.decisions,
                figures.p50_ms,
                figures.p99_ms,
                figures.click_p50_ms,
                figures.click_p99_ms,
                figures.idle_queries_per_s,
                figures.statements_per_decision
            );
            if pending == 10_000 && per_second == 1_000 && audit_rate == 0 {
                summary.push(match backend {
                    Backend::Sqlite => format!(
                        "gate: {pending} pending: p50 {:.2} ms, p99 {:.2} ms, idle {:.2} queries/s",
                        figures.p50_ms, figures.p99_ms, figures.idle_queries_per_s
                    ),
                    Backend::Postgres(_) => format!(
                        "gate-pg: {pending} pending, 2 replicas: p50 {:.2} ms, p99 {:.2} ms, idle {:.2} queries/s",
                        figures.p50_ms, figures.p99_ms, figures.idle_queries_per_s
                    ),
                });
            }
        }
    }
    for line in summary {
        println!("{line}");
    }
}
