//! Dispatch overhead benchmark.
//!
//! Measures, in one run, the per-call cost of:
//!   (a) calling the tool directly,
//!   (b) a hand-written inline `if` chain doing the same 16 checks (the floor),
//!   (c) a registry of 16 hooks of which none match,
//!   (d) a registry of 16 hooks of which 3 match and do nothing,
//! and counts heap allocations per call with a counting global allocator.
//! Every variant builds the same context per call, so differences are the
//! hooks' own cost.
//!
//! It also measures what the hook contract itself costs, so the figures can
//! be read against it: a matched hook that awaits reads the clock twice (the
//! trace records how long it waited), boxes its future (hooks are trait
//! objects with an async `execute`) and arms a timer for its timeout. A hook
//! that decides at once does none of these; the hooks here never await.
//!
//! Run with `cargo run --release --example bench_dispatch`.
//! Targets: a non-matching hook allocates nothing; (d) adds under 300 ns over (a).

use std::alloc::{GlobalAlloc, Layout, System};
use std::convert::Infallible;
use std::hint::black_box;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use hooks::prelude::*;
use serde_json::Value;

struct CountingAllocator;

static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);

unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: CountingAllocator = CountingAllocator;

/// Declares a pre hook named `$name` that allows, triggered by `$($when)*`.
macro_rules! noop_hook {
    ($name:ident, $($when:tt)*) => {
        #[pre_tool_use(when = $($when)*)]
        async fn $name(_ctx: &HookContext) -> HookResult {
            HookResult::allow()
        }
    };
}

noop_hook!(miss_00, tool_name == "crm__lookup");
noop_hook!(miss_01, tool_name starts_with "http_");
noop_hook!(miss_02, connector == "oa");
noop_hook!(miss_03, tool_name == "shell_exec");
noop_hook!(miss_04, metadata.requires_confirmation);
noop_hook!(miss_05, tool_name ends_with "_pay");
noop_hook!(miss_06, tool_name contains "delete");
noop_hook!(miss_07, org_id == "frozen-corp");
noop_hook!(miss_08, tool_name matches "mail_*");
noop_hook!(miss_09, user_id == "mallory");
noop_hook!(miss_10, surface == "dag_step");
noop_hook!(miss_11, tool_name == "files_write");
noop_hook!(miss_12, agent_id == "intern-bot");
noop_hook!(miss_13, tool_name starts_with "k8s_");
noop_hook!(miss_14, metadata.side_effects);
noop_hook!(miss_15, tool_name == "sql_exec");
noop_hook!(hit_0, tool_name starts_with "sql_");
noop_hook!(hit_1, tool_name == "sql_query");
noop_hook!(hit_2, org_id == "acme");

const CALLS: u64 = 200_000;
const ROUNDS: usize = 5;

fn context() -> HookContext {
    HookContext::tool_call("sql_query", Value::Null)
        .with_org("acme")
        .with_user("alice")
}

async fn tool(_args: &Value) -> Result<Value, Infallible> {
    Ok(Value::Null)
}

/// The floor: the same 16 checks written by hand, 3 of which match and do nothing.
#[inline(never)]
fn inline_checks(ctx: &HookContext) -> u32 {
    let name = ctx.tool_name.as_str();
    let mut hits = 0;
    let checks = [
        name == "crm__lookup",
        name.starts_with("http_"),
        ctx.connector() == Some("oa"),
        name == "shell_exec",
        ctx.flag("requires_confirmation"),
        name.ends_with("_pay"),
        name.contains("delete"),
        ctx.org_id == "frozen-corp",
        name.starts_with("mail_"),
        ctx.user_id == "mallory",
        ctx.surface == Surface::DagStep,
        name == "files_write",
        ctx.agent_id == "intern-bot",
        name.starts_with("sql_"),
        name == "sql_query",
        ctx.org_id == "acme",
    ];
    for matched in checks {
        if matched {
            hits += black_box(1);
        }
    }
    hits
}

struct Figures {
    ns_per_call: f64,
    allocs_per_call: f64,
}

/// Runs `call` CALLS times per round and keeps the fastest round.
async fn measure<F, Fut>(mut call: F) -> Figures
where
    F: FnMut() -> Fut,
    Fut: Future<Output = ()>,
{
    let mut best = f64::MAX;
    let mut allocs = 0.0;
    for _ in 0..ROUNDS {
        let allocations_before = ALLOCATIONS.load(Ordering::Relaxed);
        let started = Instant::now();
        for _ in 0..CALLS {
            call().await;
        }
        let elapsed = started.elapsed().as_nanos() as f64 / CALLS as f64;
        allocs = (ALLOCATIONS.load(Ordering::Relaxed) - allocations_before) as f64 / CALLS as f64;
        best = best.min(elapsed);
    }
    Figures {
        ns_per_call: best,
        allocs_per_call: allocs,
    }
}

/// Fastest of several rounds of `op`, in ns per run.
fn per_op(mut op: impl FnMut()) -> f64 {
    const OPS: u32 = 1_000_000;
    let mut best = f64::MAX;
    for _ in 0..ROUNDS {
        let started = Instant::now();
        for _ in 0..OPS {
            op();
        }
        best = best.min(started.elapsed().as_nanos() as f64 / f64::from(OPS));
    }
    best
}

fn registry(names: &[&str]) -> HookRegistry {
    HookRegistry::builder()
        .registered_named(names)
        .build()
        .expect("bench hooks are registered")
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let misses: Vec<String> = (0..16).map(|i| format!("miss_{i:02}")).collect();
    let miss_names: Vec<&str> = misses.iter().map(String::as_str).collect();
    let none_match = registry(&miss_names);
    let mut mixed_names = miss_names[..13].to_vec();
    mixed_names.extend(["hit_0", "hit_1", "hit_2"]);
    let three_match = registry(&mixed_names);

    // Sanity: the registries do what the labels say.
    let report = three_match.run_tool_call(context(), tool).await;
    assert_eq!(report.trace.runs().len(), 3, "three hooks must match");
    let report = none_match.run_tool_call(context(), tool).await;
    assert!(report.trace.runs().is_empty(), "no hook may match");

    let bare = measure(|| async {
        let ctx = black_box(context());
        black_box(tool(&ctx.tool_args).await.ok());
    })
    .await;
    let inline = measure(|| async {
        let ctx = black_box(context());
        black_box(inline_checks(&ctx));
        black_box(tool(&ctx.tool_args).await.ok());
    })
    .await;
    let none = measure(|| async {
        black_box(none_match.run_tool_call(black_box(context()), tool).await);
    })
    .await;
    let three = measure(|| async {
        black_box(three_match.run_tool_call(black_box(context()), tool).await);
    })
    .await;

    let clock_ns = per_op(|| {
        black_box(Instant::now());
    });
    let boxed_ns = per_op(|| {
        let future: Pin<Box<dyn Future<Output = HookResult> + Send>> =
            Box::pin(async { HookResult::allow() });
        drop(black_box(future));
    });

    let future_size = std::mem::size_of_val(&three_match.run_tool_call(context(), tool));
    println!("run_tool_call future: {future_size} bytes");
    println!("calls per round: {CALLS}, best of {ROUNDS} rounds");
    println!(
        "{:<42} {:>10} {:>14} {:>14}",
        "variant", "ns/call", "over bare", "allocs/call"
    );
    for (label, figures) in [
        ("(a) tool called directly", &bare),
        ("(b) inline if chain, 16 checks", &inline),
        ("(c) registry, 16 hooks, none match", &none),
        ("(d) registry, 16 hooks, 3 match", &three),
    ] {
        println!(
            "{label:<42} {:>10.1} {:>+14.1} {:>14.2}",
            figures.ns_per_call,
            figures.ns_per_call - bare.ns_per_call,
            figures.allocs_per_call
        );
    }
    println!(
        "by contract, per matched hook that awaits (none here): two clock reads of {clock_ns:.1} ns \
         and a boxed future of {boxed_ns:.1} ns, plus a timer; a hook that decides at once: none"
    );
    let non_matching_allocs = none.allocs_per_call - bare.allocs_per_call;
    println!(
        "dispatch: 16 hooks/3 match: {:.0} ns/call (+{:.0} over bare), {:.0} allocs for non-matching",
        three.ns_per_call,
        three.ns_per_call - bare.ns_per_call,
        non_matching_allocs
    );
}
