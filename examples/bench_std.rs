//! Standard hooks benchmark.
//!
//! In one run:
//!   * the audit log with 64 concurrent callers on a SQLite file in WAL mode
//!     (default durability: `synchronous = FULL`), group commit against one
//!     transaction per row;
//!   * in-memory rate-limit checks per second on one thread.
//!
//! With `HOOKS_TEST_POSTGRES_URL` set, the audit log on PostgreSQL too.
//!
//! Baselines, same run: SQLite's own rate for these rows on this disk —
//! one task committing transactions of as many rows as group commit gathers
//! (half the callers: the other half wait for the batch being synced), with
//! nothing else in the way (no hooks, no queue, no callers to wake) — once
//! syncing each commit (`synchronous = FULL`, what a writer that syncs
//! inside its commit can reach) and once not syncing at all (`NORMAL`: the
//! most any durable writer could reach, as it costs the same CPU and skips
//! every wait for the disk). Group commit, which syncs the WAL on another
//! task while the next batch commits, is reported as a share of both.
//!
//! Run with `cargo run --release --example bench_std`.
//! Targets: group commit ≥ 10× per-row; ≥ 50,000 audited calls/s (SQLite);
//! ≥ 2,000,000 limiter checks/s.

use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

use hooks::prelude::*;
use hooks::std_hooks::{AuditLogHook, Database, DatabaseOptions, MemoryLimiter, Quota};
use serde_json::{Value, json};

const CALLERS: usize = 64;

/// Audited calls per second with `CALLERS` tasks making `per_caller` calls each.
/// On `postgres` (a URL) when given, else on a fresh SQLite file.
async fn audited_calls_per_second(
    group_commit: bool,
    per_caller: usize,
    postgres: Option<&str>,
) -> f64 {
    let dir = std::env::temp_dir().join(format!(
        "hooks-bench-std-{}-{}",
        std::process::id(),
        group_commit
    ));
    std::fs::create_dir_all(&dir).expect("temporary directory");
    let url = match postgres {
        Some(url) => url.to_owned(),
        None => format!("sqlite://{}", dir.join("audit.db").display()),
    };
    let database = Database::connect(&url).await.expect("database");
    let audit = AuditLogHook::from_config(database.clone(), &json!({"group_commit": group_commit}))
        .expect("audit config");
    let registry = HookRegistry::builder()
        .observer(Arc::new(audit))
        .build()
        .expect("registry");

    let started = Instant::now();
    let callers: Vec<_> = (0..CALLERS)
        .map(|caller| {
            let registry = registry.clone();
            tokio::spawn(async move {
                for call in 0..per_caller {
                    let ctx = HookContext::tool_call(
                        "crm__lookup",
                        json!({"customer": call, "api_key": "secret"}),
                    )
                    .with_conversation(format!("bench-{caller}"))
                    .with_tool_call_id(format!("call-{call}"))
                    .with_user("alice");
                    let report = registry
                        .run_tool_call(ctx, async |_: &Value| Ok::<_, String>(json!("found")))
                        .await;
                    assert!(!report.observation.is_blocked(), "{}", report.observation);
                }
            })
        })
        .collect();
    for caller in callers {
        caller.await.expect("caller");
    }
    let elapsed = started.elapsed();
    let rows = (CALLERS * per_caller) as f64;
    database.close().await;
    let _ = std::fs::remove_dir_all(&dir);
    rows / elapsed.as_secs_f64()
}

/// SQLite alone: audit rows per second written by one task in transactions
/// of `rows_per_transaction` rows, each one round trip (`BEGIN IMMEDIATE;
/// INSERT …; COMMIT`), in the schema the audit log uses; each commit synced
/// when `sync_full`.
async fn sqlite_alone(rows_per_transaction: usize, transactions: usize, sync_full: bool) -> f64 {
    let dir = std::env::temp_dir().join(format!(
        "hooks-bench-std-{}-alone-{sync_full}",
        std::process::id()
    ));
    std::fs::create_dir_all(&dir).expect("temporary directory");
    let url = format!("sqlite://{}", dir.join("audit.db").display());
    let options = DatabaseOptions {
        sync_full,
        ..DatabaseOptions::default()
    };
    let database = Database::connect_with(&url, &options)
        .await
        .expect("database");
    let Database::Sqlite(pool) = &database else {
        unreachable!("a sqlite:// URL")
    };
    let row = format!("({})", vec!["?"; 16].join(", "));
    let script = format!(
        "BEGIN IMMEDIATE; INSERT INTO connector_call_logs (conversation_id, tool_call_id, \
         agent_id, user_id, org_id, surface, tool_name, connector, action, outcome, blocked_by, \
         reason, args, result_size, observation_size, duration_ms) VALUES {}; COMMIT",
        vec![row; rows_per_transaction].join(", ")
    );
    let mut connection = pool.acquire().await.expect("connection");
    let started = Instant::now();
    for transaction in 0..transactions {
        let mut query = sqlx::query(&script);
        for index in 0..rows_per_transaction {
            let call = transaction * rows_per_transaction + index;
            query = query
                .bind(format!("bench-{}", call % CALLERS))
                .bind(format!("call-{}", call / CALLERS))
                .bind("")
                .bind("alice")
                .bind("")
                .bind("api")
                .bind("crm__lookup")
                .bind("crm")
                .bind("lookup")
                .bind("ok")
                .bind(None::<&str>)
                .bind(None::<&str>)
                .bind(json!({"customer": call, "api_key": "[redacted]"}).to_string())
                .bind(7_i64)
                .bind(7_i64)
                .bind(0_i64);
        }
        query.execute(&mut *connection).await.expect("insert");
    }
    let elapsed = started.elapsed();
    drop(connection);
    database.close().await;
    let _ = std::fs::remove_dir_all(&dir);
    (rows_per_transaction * transactions) as f64 / elapsed.as_secs_f64()
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
    let per_row = runtime.block_on(audited_calls_per_second(false, 30, None));
    let grouped = runtime.block_on(audited_calls_per_second(true, 600, None));
    let synced = runtime.block_on(sqlite_alone(CALLERS / 2, 1200, true));
    let unsynced = runtime.block_on(sqlite_alone(CALLERS / 2, 1200, false));
    let limiter = limiter_checks_per_second();
    println!("audit, one transaction per row: {per_row:>12.0} rows/s ({CALLERS} callers)");
    println!("audit, group commit:            {grouped:>12.0} rows/s ({CALLERS} callers)");
    println!(
        "baseline, SQLite syncing:       {synced:>12.0} rows/s (one task, {} rows per transaction, \
         each commit synced); group commit reaches {:.0}% of it",
        CALLERS / 2,
        grouped / synced * 100.0
    );
    println!(
        "baseline, SQLite not syncing:   {unsynced:>12.0} rows/s (the same, nothing synced: \
         no durable writer gets past it); group commit reaches {:.0}% of it",
        grouped / unsynced * 100.0
    );
    match std::env::var("HOOKS_TEST_POSTGRES_URL") {
        Ok(url) if !url.is_empty() => {
            let per_row = runtime.block_on(audited_calls_per_second(false, 30, Some(&url)));
            let grouped = runtime.block_on(audited_calls_per_second(true, 300, Some(&url)));
            println!("audit on PostgreSQL, per row:   {per_row:>12.0} rows/s ({CALLERS} callers)");
            println!("audit on PostgreSQL, grouped:   {grouped:>12.0} rows/s ({CALLERS} callers)");
        }
        _ => println!("(audit on PostgreSQL skipped: HOOKS_TEST_POSTGRES_URL is not set)"),
    }
    println!("rate limit, in memory:          {limiter:>12.0} checks/s (one thread)");
    println!(
        "std: audit {grouped:.0} rows/s (group commit {:.1}x per-row), limiter {limiter:.0} checks/s",
        grouped / per_row
    );
}
