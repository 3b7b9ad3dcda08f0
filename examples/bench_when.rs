//! `when` evaluation benchmark: one five-clause predicate, compiled by the
//! attribute vs parsed at run time and interpreted, against the same context.
//!
//! The baseline, measured in the same run, is the same five tests written by
//! hand in idiomatic Rust against the context's fields: what a developer
//! would write without the `when` language.
//!
//! Run with `cargo run --release --example bench_when`.
//! Targets: compiled ≤ 10 ns per evaluation; interpreted ≤ 5× compiled.

use std::hint::black_box;
use std::time::Instant;

use hooks::prelude::*;
use hooks::{Surface, when::When};
use serde_json::{Value, json};

#[pre_tool_use(when = tool_name starts_with "oa__" && args.amount > 50000 && metadata.requires_confirmation && user_id != "root" && surface in ["chat", "api"])]
async fn five_clauses(_ctx: &HookContext) -> HookResult {
    HookResult::allow()
}

/// The same five tests, by hand.
#[inline(never)]
fn by_hand(ctx: &HookContext) -> bool {
    ctx.tool_name.starts_with("oa__")
        && matches!(ctx.tool_args.get("amount").and_then(Value::as_f64), Some(amount) if amount > 50000.0)
        && ctx.metadata.get("requires_confirmation") == Some(&Value::Bool(true))
        && ctx.user_id != "root"
        && matches!(ctx.surface, Surface::Chat | Surface::Api)
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

    let by_hand_ns = time(|| by_hand(black_box(&ctx)));
    let compiled_ns = time(|| hook.should_trigger(black_box(&ctx)));
    let interpreted_ns = time(|| interpreted.matches(black_box(&ctx)));
    println!("predicate: {source}");
    println!("evaluations per round: {EVALUATIONS}, best of {ROUNDS} rounds");
    println!("by hand (baseline): {by_hand_ns:.1} ns");
    println!(
        "compiled / by hand: {:.2}x, interpreted / compiled: {:.2}x",
        compiled_ns / by_hand_ns,
        interpreted_ns / compiled_ns
    );
    println!("when: compiled {compiled_ns:.1} ns, interpreted {interpreted_ns:.1} ns");
}
