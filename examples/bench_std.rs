//! Standard hooks benchmark: the audit log at a paced load, and the
//! in-memory rate limiter.
//!
//! The audit log: 256 callers, each making audited calls on its own steady
//! tick so that together they arrive at 10,000 calls per second for five
//! seconds — open loop: a call's time is set by the clock, and a caller
//! that fell behind starts its late calls at once, their wait counted from
//! when they were due. A call's wait runs from when it was due to its row's
//! commit (the audit log answers after the commit). On a SQLite file (WAL,
//! `synchronous = FULL`: each commit synced) and, with
//! `HOOKS_TEST_POSTGRES_URL` set, on PostgreSQL. Baseline, same run and
//! load: the audit log committing each row in a transaction of its own
//! (`group_commit: false`); a caller stops making calls five seconds past
//! the window, so the baseline's rows/s is what it got through.
//!
//! The limiter: in-memory checks per second on one thread.
//!
//! Run with `cargo run --release --features postgres --example bench_std`.
//! Targets: every paced row gets through (10,000 rows/s) with a p99 wait
//! under 50 ms, on SQLite and on PostgreSQL. The summary lines:
//! `audit-sqlite: rows/s <R>, p50 <A> ms, p99 <B> ms, …`,
//! `audit-postgres: …` and `limiter: <L> checks/s`.

use std::hint::black_box;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use hooks::prelude::*;
use hooks::std_hooks::{AuditLog, Database, MemoryLimiter, Quota};
use serde_json::{Value, json};

const CALLERS: u32 = 256;
const ROWS_PER_SECOND: u32 = 10_000;
const WINDOW: Duration = Duration::from_secs(5);
/// How far past the window a caller behind its schedule keeps calling.
const GRACE: Duration = Duration::from_secs(5);

struct Figures {
    rows: usize,
    rows_per_s: f64,
    p50_ms: f64,
    p99_ms: f64,
}

/// The audit log at the paced load, on `postgres` (a URL) when given, else
/// on a fresh SQLite file.
async fn paced_audit(group_commit: bool, postgres: Option<&str>) -> Figures {
    let dir = std::env::temp_dir().join(format!(
        "hooks-bench-std-{}-{group_commit}",
        std::process::id()
    ));
    std::fs::create_dir_all(&dir).expect("temporary directory");
    let url = match postgres {
        Some(url) => url.to_owned(),
        None => format!("sqlite://{}", dir.join("audit.db").display()),
    };
    let database = Database::connect(&url).await.expect("database");
    let audit = AuditLog::from_config(database.clone(), &json!({"group_commit": group_commit}))
        .expect("audit config");
    let registry = HookRegistry::builder()
        .observer(Arc::new(audit))
        .build()
        .expect("registry");

    let interval = Duration::from_secs(u64::from(CALLERS)) / ROWS_PER_SECOND;
    let started = tokio::time::Instant::now() + Duration::from_millis(100);
    let waits: Arc<Mutex<Vec<f64>>> = Arc::default();
    let callers: Vec<_> = (0..CALLERS)
        .map(|caller| {
            let (registry, waits) = (registry.clone(), waits.clone());
            // Callers' ticks spread evenly over one interval.
            let first = started + interval * caller / CALLERS;
            tokio::spawn(async move {
                let mut mine = Vec::new();
                for call in 0.. {
                    let due = first + interval * call;
                    if due >= started + WINDOW
                        || tokio::time::Instant::now() > started + WINDOW + GRACE
                    {
                        break;
                    }
                    tokio::time::sleep_until(due).await;
                    let ctx = HookContext::tool_call(
                        "crm__lookup",
                        json!({"customer": call, "api_key": "sk-bench"}),
                    )
                    .with_conversation(format!("bench-{caller}"))
                    .with_tool_call_id(format!("call-{call}"));
                    let report = registry
                        .run_tool_call(ctx, async |_: &Value| Ok::<_, String>(json!("found")))
                        .await;
                    assert!(!report.observation.is_blocked(), "{}", report.observation);
                    mine.push(due.elapsed().as_secs_f64() * 1000.0);
                }
                waits.lock().expect("lock").extend(mine);
            })
        })
        .collect();
    for caller in callers {
        caller.await.expect("caller");
    }
    let elapsed = started.elapsed().max(WINDOW);
    database.close().await;
    let _ = std::fs::remove_dir_all(&dir);
    let mut waits = std::mem::take(&mut *waits.lock().expect("lock"));
    waits.sort_by(f64::total_cmp);
    let at = |p: f64| waits[((waits.len() as f64 * p) as usize).min(waits.len() - 1)];
    Figures {
        rows: waits.len(),
        rows_per_s: waits.len() as f64 / elapsed.as_secs_f64(),
        p50_ms: at(0.50),
        p99_ms: at(0.99),
    }
}

/// In-memory limiter checks per second on one thread, over 64 users of 4 connectors.
fn limiter_checks_per_second() -> f64 {
    let limiter = MemoryLimiter::new();
    let quota = Quota {
        calls: 1_000_000_000,
        period: Duration::from_secs(1),
    };
    let users: Vec<String> = (0..64).map(|i| format!("user-{i}")).collect();
    let connectors = ["crm", "oa", "http", "sql"];
    let checks = 4_000_000u32;
    let started = Instant::now();
    for i in 0..checks {
        let now = Duration::from_nanos(u64::from(i) * 10);
        let user = &users[i as usize % users.len()];
        let connector = connectors[i as usize % connectors.len()];
        black_box(limiter.check(connector, user, &quota, now));
    }
    f64::from(checks) / started.elapsed().as_secs_f64()
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let mut backends = vec![("sqlite", None)];
    match std::env::var("HOOKS_TEST_POSTGRES_URL") {
        Ok(url) if !url.is_empty() => backends.push(("postgres", Some(url))),
        _ => println!("(audit on PostgreSQL skipped: HOOKS_TEST_POSTGRES_URL is not set)"),
    }
    let mut summary = Vec::new();
    for (name, url) in &backends {
        let queued = runtime.block_on(paced_audit(true, url.as_deref()));
        let per_row = runtime.block_on(paced_audit(false, url.as_deref()));
        for (how, figures) in [
            ("queued writer", &queued),
            ("a transaction per row", &per_row),
        ] {
            println!(
                "audit on {name:<8}, {how:<21}: {:>6} rows in {:.1} s, {:>7.0} rows/s \
                 (paced at {ROWS_PER_SECOND}, {CALLERS} callers); wait p50 {:.2} ms, p99 {:.2} ms",
                figures.rows,
                figures.rows as f64 / figures.rows_per_s,
                figures.rows_per_s,
                figures.p50_ms,
                figures.p99_ms
            );
        }
        summary.push(format!(
            "audit-{name}: rows/s {:.0} (paced at {ROWS_PER_SECOND}, {CALLERS} callers), \
             p50 {:.2} ms, p99 {:.2} ms; {:.1}x the rows/s of a transaction per row",
            queued.rows_per_s,
            queued.p50_ms,
            queued.p99_ms,
            queued.rows_per_s / per_row.rows_per_s
        ));
    }
    let limiter = limiter_checks_per_second();
    println!("rate limit, in memory: {limiter:.0} checks/s (one thread)");
    for line in summary {
        println!("{line}");
    }
    println!("limiter: {limiter:.0} checks/s");
}
