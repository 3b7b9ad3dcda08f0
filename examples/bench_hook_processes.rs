//! Hook processes benchmark: what one policy, written in Python, adds per
//! tool call when it runs as a spawned command hook, as a persistent hook
//! process, and as a Python function served by the shipped runner — in one
//! run, against the same registry with no hook.
//!
//! The policy blocks a payment over 1,000; calls alternate between an
//! allowed and a blocked amount. Each round makes one call through every
//! variant in turn (no hook, spawned, persistent, function), so a pause of
//! the machine falls on all alike; a variant's added time is its call's
//! time minus the no-hook call's of the same round.
//!
//! Run with `cargo run --release --example bench_hook_processes`; it needs
//! `python3` and prints one line per kind: `<kind>: <N> calls added p50 …
//! p99 … ms`, the function's with its target (p50 under 1 ms, p99 under 5 ms).

use std::process::ExitCode;
use std::time::{Duration, Instant};

use hooks::command::{CommandHook, CommandLine, CommandSpec, FunctionLanguage, HookFunction};
use hooks::{HookContext, HookPoint, HookRegistry, Observation};
use serde_json::{Value, json};

const CALLS: usize = 300;
const WARM_UP: usize = 20;

/// The policy as a command hook script: one call per process.
const SPAWNED: &str = r#"
import json, sys
call = json.load(sys.stdin)
if call["tool_input"]["amount"] > 1000:
    print(json.dumps({"decision": "block", "reason": "over the limit"}))
"#;

/// The policy as a hand-written persistent process: one call per line.
const PERSISTENT: &str = r#"
import json, sys
for line in sys.stdin:
    call = json.loads(line)
    answer = {"id": call["id"]}
    if not call.get("probe") and call["tool_input"]["amount"] > 1000:
        answer.update(decision="block", reason="over the limit")
    sys.stdout.write(json.dumps(answer) + "\n")
    sys.stdout.flush()
"#;

/// The policy as a Python function.
const FUNCTION: &str = r#"
def check(call):
    if call["tool_input"]["amount"] > 1000:
        return {"decision": "block", "reason": "over the limit"}
"#;

fn registry(spec: Option<CommandSpec>) -> HookRegistry {
    let mut builder = HookRegistry::builder();
    if let Some(spec) = spec {
        let hook = CommandHook::new(spec.with_name("policy"), None).expect("valid spec");
        builder = builder.hook(hook.into_registered());
    }
    builder.build().expect("registry")
}

/// Milliseconds for one call of `amount` through `registry`, which must
/// block it when `guarded` and the amount is over the limit.
async fn call(registry: &HookRegistry, amount: u64, guarded: bool) -> f64 {
    let ctx = HookContext::tool_call("oa__purchase_pay", json!({"amount": amount}));
    let started = Instant::now();
    let report = registry
        .run_tool_call(ctx, async |_: &Value| Ok::<_, String>(json!("paid")))
        .await;
    let taken = started.elapsed().as_secs_f64() * 1000.0;
    let blocked = matches!(report.observation, Observation::Blocked { .. });
    assert_eq!(
        blocked,
        guarded && amount > 1000,
        "{:?}",
        report.observation
    );
    taken
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    let rank = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[rank.min(sorted.len() - 1)]
}

fn main() -> ExitCode {
    let python = std::process::Command::new("python3")
        .arg("--version")
        .output();
    if !python.is_ok_and(|out| out.status.success()) {
        eprintln!("bench_hook_processes needs python3 on PATH");
        return ExitCode::FAILURE;
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(bench());
    ExitCode::SUCCESS
}

async fn bench() {
    let dir = std::env::temp_dir().join(format!("bench-hook-processes-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    for (name, source) in [
        ("spawned.py", SPAWNED),
        ("persistent.py", PERSISTENT),
        ("bench_policy.py", FUNCTION),
    ] {
        std::fs::write(dir.join(name), source).expect("write the policy");
    }
    let path = |name: &str| dir.join(name).to_string_lossy().into_owned();
    let timeout = Duration::from_secs(30);
    let variants = [
        registry(None),
        registry(Some(
            CommandSpec::new(
                HookPoint::PreToolUse,
                CommandLine::exec(["python3".to_owned(), path("spawned.py")]),
            )
            .with_timeout(timeout),
        )),
        registry(Some(
            CommandSpec::new(
                HookPoint::PreToolUse,
                CommandLine::exec(["python3".to_owned(), path("persistent.py")]),
            )
            .persistent_process()
            .with_timeout(timeout),
        )),
        registry(Some(
            CommandSpec::new(
                HookPoint::PreToolUse,
                CommandLine::Function(
                    HookFunction::new(FunctionLanguage::Python, "bench_policy:check", None)
                        .expect("target"),
                ),
            )
            .with_cwd(&dir)
            .with_timeout(timeout),
        )),
    ];
    let mut added: [Vec<f64>; 3] = Default::default();
    for round in 0..WARM_UP + CALLS {
        let amount = if round % 2 == 0 { 10 } else { 5_000 };
        let bare = call(&variants[0], amount, false).await;
        for (index, registry) in variants[1..].iter().enumerate() {
            let taken = call(registry, amount, true).await;
            if round >= WARM_UP {
                added[index].push(taken - bare);
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    for list in &mut added {
        list.sort_by(f64::total_cmp);
    }
    let [spawned, persistent, function] = added;
    let line = |times: &[f64]| {
        format!(
            "{CALLS} calls added p50 {:.3} p99 {:.3} ms",
            percentile(times, 0.5),
            percentile(times, 0.99)
        )
    };
    println!("spawned-command: {}", line(&spawned));
    println!("persistent-process: {}", line(&persistent));
    let met = percentile(&function, 0.5) < 1.0 && percentile(&function, 0.99) < 5.0;
    println!(
        "python-function: {} ({:.0}x faster than spawned at p50; target p50 < 1 ms, p99 < 5 ms: {})",
        line(&function),
        percentile(&spawned, 0.5) / percentile(&function, 0.5).max(0.001),
        if met { "met" } else { "missed" }
    );
}
