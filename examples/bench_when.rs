//! `when` evaluation benchmark: one five-clause predicate, compiled by the
//! attribute vs parsed at run time and interpreted, against the same context.
//!
//! Run with `cargo run --release --example bench_when`.
//! Targets: compiled ≤ 10 ns per evaluation; interpreted ≤ 5× compiled.

use std::hint::black_box;
use std::time::Instant;

use hooks::When;
use hooks::prelude::*;
use serde_json::json;

#[pre_tool_use(when = tool_name starts_with "oa__" && args.amount > 50000 && metadata.requires_confirmation && user_id != "root" && surface in ["chat", "api"])]
async fn five_clauses(_ctx: &HookContext) -> HookResult {
    HookResult::allow()
}

const EVALUATIONS: u32 = 20_000_000;
const ROUNDS: usize = 5;

/// Fastest of several rounds, in ns per evaluation.
fn time(mut evaluate: impl FnMut() -> bool) -> f64 {
    let mut best = f64::MAX;
    for _ in 0..ROUNDS {
        let started = Instant::now();
        let mut hits = 0u32;
        for _ in 0..EVALUATIONS {
            hits += u32::from(black_box(evaluate()));
        }
        assert_eq!(
            hits, EVALUATIONS,
            "the benchmark context satisfies every clause"
        );
        best = best.min(started.elapsed().as_nanos() as f64 / f64::from(EVALUATIONS));
    }
    best
}

fn main() {
    let registry = HookRegistry::builder()
        .registered_named(["five_clauses"])
        .build()
        .expect("registered");
    let hook = registry.pre_tool_use()[0].clone();
    let source = hook.when_source().expect("has a when").to_owned();
    let interpreted =
        When::parse(&source, HookPoint::PreToolUse).expect("same text parses at run time");

    let ctx = HookContext::tool_call(
        "oa__purchase_pay",
        json!({"amount": 50000.5, "currency": "CNY"}),
    )
    .with_user("alice")
    .with_org("acme")
    .with_metadata("requires_confirmation", true)
    .with_metadata("connector", "oa");

    let compiled_ns = time(|| hook.should_trigger(black_box(&ctx)));
    let interpreted_ns = time(|| interpreted.matches(black_box(&ctx)));
    println!("predicate: {source}");
    println!("evaluations per round: {EVALUATIONS}, best of {ROUNDS} rounds");
    println!(
        "interpreted / compiled: {:.2}x",
        interpreted_ns / compiled_ns
    );
    println!("when: compiled {compiled_ns:.1} ns, interpreted {interpreted_ns:.1} ns");
}
