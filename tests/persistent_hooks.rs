//! Persistent hook processes and Python functions: a program started once
//! that answers every call of its hook, one JSON line each way; what each
//! way of failing does to the call, and the process coming back.
//!
//! The programs are Python: `tests/scripts/persistent.py` (a hand-written
//! process that does what the call's `action` says) and
//! `examples/hooks/payments_policy.py` (a policy served by the shipped
//! runner). Without `python3` on `PATH` each test prints `SKIPPED`.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use hooks::command::{CommandHook, CommandLine, CommandSpec, FunctionLanguage, HookFunction};
use hooks::config::AgentConfig;
use hooks::factory::Resources;
use hooks::{ErrorPolicy, HookContext, HookPoint, HookRegistry, Observation, ToolCallReport};
use serde_json::{Value, json};

/// A call that must be answered gets this long: generous, for a loaded machine.
const ANSWERS: Duration = Duration::from_secs(20);

fn repo(path: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(path)
}

fn python() -> bool {
    hooks_testkit::programs::needed(
        "python3",
        "persistent hook processes are tested with Python programs",
    )
}

/// `tests/scripts/persistent.py` as a persistent hook named `proc`.
fn process_spec(event: HookPoint, timeout: Duration) -> CommandSpec {
    let script = repo("tests/scripts/persistent.py");
    CommandSpec::new(
        event,
        CommandLine::exec(["python3", script.to_str().expect("utf8")]),
    )
    .persistent_process()
    .with_name("proc")
    .with_timeout(timeout)
}

fn registry(spec: CommandSpec) -> HookRegistry {
    HookRegistry::builder()
        .hook(
            CommandHook::new(spec, None)
                .expect("valid")
                .into_registered(),
        )
        .build()
        .expect("builds")
}

/// Runs a call whose `action` tells the test process what to do; the tool
/// echoes its arguments.
async fn act(registry: &HookRegistry, args: Value) -> ToolCallReport {
    registry
        .run_tool_call(
            HookContext::tool_call("sql_exec", args),
            async |args: &Value| Ok::<_, String>(json!({"ran_with": args})),
        )
        .await
}

fn reason(report: &ToolCallReport) -> String {
    match &report.observation {
        Observation::Blocked { reason, .. } => reason.clone(),
        other => panic!("expected a block, got {other:?}"),
    }
}

/// The process's pid, which it gives as a deny reason.
async fn pid(registry: &HookRegistry) -> String {
    let report = act(registry, json!({"action": "pid"})).await;
    reason(&report)
}

fn side_effects(report: &ToolCallReport) -> Vec<String> {
    report.trace.side_effects().map(str::to_owned).collect()
}

#[tokio::test]
async fn answers_decide_like_a_commands_json_output_from_one_process() {
    if !python() {
        return;
    }
    let pre = registry(process_spec(HookPoint::PreToolUse, ANSWERS));
    let first = pid(&pre).await;
    assert!(first.starts_with("pid="), "{first}");
    let allowed = act(&pre, json!({"action": "allow"})).await;
    assert_eq!(
        allowed.observation,
        Observation::Output(json!({"ran_with": {"action": "allow"}}))
    );
    let denied = act(&pre, json!({"action": "deny", "why": "no refunds"})).await;
    assert_eq!(reason(&denied), "denied: no refunds");
    let rewritten = act(&pre, json!({"action": "rewrite"})).await;
    assert_eq!(
        rewritten.observation,
        Observation::Output(json!({"ran_with": {"action": "rewritten"}}))
    );
    assert_eq!(pid(&pre).await, first, "one process answers every call");

    let post = registry(process_spec(HookPoint::PostToolUse, ANSWERS));
    let redacted = act(&post, json!({"action": "redact"})).await;
    assert_eq!(
        redacted.observation,
        Observation::Output(json!("[redacted]"))
    );
}

#[tokio::test]
async fn concurrent_calls_get_their_own_answers() {
    if !python() {
        return;
    }
    let registry = Arc::new(registry(process_spec(HookPoint::PreToolUse, ANSWERS)));
    let mut calls = tokio::task::JoinSet::new();
    for n in 0..16u64 {
        let registry = Arc::clone(&registry);
        // The first calls sleep longest, so the answers come back reversed.
        let ms = (16 - n) * 40;
        calls.spawn(async move {
            let report = act(&registry, json!({"action": "slow", "ms": ms, "n": n})).await;
            (n, reason(&report))
        });
    }
    let mut answered = 0;
    while let Some(joined) = calls.join_next().await {
        let (n, reason) = joined.expect("the call ran");
        assert_eq!(reason, format!("n={n}"));
        answered += 1;
    }
    assert_eq!(answered, 16);
}

/// Ids are not a counter the model could guess.
#[tokio::test]
async fn request_ids_cannot_be_guessed() {
    if !python() {
        return;
    }
    let registry = registry(process_spec(HookPoint::PreToolUse, ANSWERS));
    let mut ids = Vec::new();
    for _ in 0..3 {
        let report = act(&registry, json!({"action": "id"})).await;
        let id: u64 = reason(&report)
            .strip_prefix("id=")
            .and_then(|id| id.parse().ok())
            .expect("an id");
        assert!(id < 1 << 53);
        ids.push(id);
    }
    assert!(
        ids.windows(2).all(|pair| pair[1].abs_diff(pair[0]) > 1000),
        "{ids:?}"
    );
}

/// A call cancelled while its request is half written (the process is not
/// reading, the pipe is full) still leaves a whole line: the next request
/// is read as it was sent, by the same process.
#[tokio::test]
async fn a_call_cancelled_mid_write_leaves_the_stream_whole() {
    if !python() {
        return;
    }
    let registry = Arc::new(registry(process_spec(HookPoint::PreToolUse, ANSWERS)));
    let before = pid(&registry).await;
    let stalled = {
        let registry = Arc::clone(&registry);
        tokio::spawn(async move { act(&registry, json!({"action": "stall", "ms": 1500})).await })
    };
    tokio::time::sleep(Duration::from_millis(300)).await;
    let big = json!({"action": "allow", "pad": "p".repeat(1 << 20)});
    let cancelled = tokio::time::timeout(Duration::from_millis(300), act(&registry, big)).await;
    assert!(
        cancelled.is_err(),
        "the big call was to be cut off mid-write"
    );
    let stalled = stalled.await.expect("the stalled call ran");
    assert!(matches!(stalled.observation, Observation::Output(_)));
    assert_eq!(pid(&registry).await, before, "the same process answers");
}

#[tokio::test]
async fn a_crash_blocks_and_the_process_comes_back() {
    if !python() {
        return;
    }
    let registry = registry(process_spec(HookPoint::PreToolUse, ANSWERS));
    let before = pid(&registry).await;
    let crashed = act(&registry, json!({"action": "crash"})).await;
    let why = reason(&crashed);
    assert!(why.contains("exited with code 3"), "{why}");
    let again = act(&registry, json!({"action": "pid"})).await;
    let after = reason(&again);
    assert!(
        after.starts_with("pid=") && after != before,
        "{before} then {after}"
    );
    assert!(
        side_effects(&again)
            .iter()
            .any(|note| note.contains("started the hook process again")
                && note.contains("exited with code 3")),
        "{:?}",
        side_effects(&again)
    );
}

#[tokio::test]
async fn a_crash_of_a_fail_open_hook_lets_the_call_through() {
    if !python() {
        return;
    }
    let spec = process_spec(HookPoint::PreToolUse, ANSWERS).with_on_error(ErrorPolicy::FailOpen);
    let registry = registry(spec);
    let crashed = act(&registry, json!({"action": "crash"})).await;
    assert!(matches!(crashed.observation, Observation::Output(_)));
}

#[tokio::test]
async fn a_hang_past_the_timeout_blocks_and_the_process_is_replaced() {
    if !python() {
        return;
    }
    let registry = registry(process_spec(HookPoint::PreToolUse, Duration::from_secs(2)));
    let before = pid(&registry).await;
    let started = Instant::now();
    let hung = act(&registry, json!({"action": "hang"})).await;
    let why = reason(&hung);
    assert!(why.contains("did not answer within 2s"), "{why}");
    assert!(started.elapsed() < Duration::from_secs(10));
    let after = pid(&registry).await;
    assert!(
        after.starts_with("pid=") && after != before,
        "{before} then {after}"
    );
}

/// Output that is no answer cannot be told apart from a decision: it blocks
/// even a `fail_open` hook, and the process is replaced.
#[tokio::test]
async fn output_that_is_no_answer_blocks_even_fail_open() {
    if !python() {
        return;
    }
    let spec = process_spec(HookPoint::PreToolUse, ANSWERS).with_on_error(ErrorPolicy::FailOpen);
    let registry = registry(spec);
    for (action, expected) in [
        ("garbage", "not a JSON answer"),
        ("unknown_id", "which no call is waiting for"),
        ("big", "longer than 1048576 bytes"),
        ("not_protocol", "unknown field `permissionDecison`"),
    ] {
        let before = pid(&registry).await;
        let report = act(&registry, json!({"action": action})).await;
        let why = reason(&report);
        assert!(why.contains(expected), "{action}: {why}");
        assert!(
            why.contains("blocked even though it is fail_open"),
            "{action}: {why}"
        );
        let after = pid(&registry).await;
        if action == "not_protocol" {
            // One bad answer to one call: the process is not to blame for others.
            assert_eq!(before, after);
        } else {
            assert_ne!(before, after, "{action}: the process was replaced");
        }
    }
}

/// An id answered twice: the second answer is for no waiting call, so the
/// process is replaced and the next call is answered by the new one.
#[tokio::test]
async fn an_id_answered_twice_replaces_the_process() {
    if !python() {
        return;
    }
    let registry = registry(process_spec(HookPoint::PreToolUse, ANSWERS));
    let before = pid(&registry).await;
    let report = act(&registry, json!({"action": "twice"})).await;
    assert!(matches!(report.observation, Observation::Output(_)));
    // The duplicate arrives right after; wait until the process is replaced.
    let deadline = Instant::now() + ANSWERS;
    loop {
        let after = pid(&registry).await;
        if after != before && after.starts_with("pid=") {
            break;
        }
        assert!(Instant::now() < deadline, "the process was never replaced");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn an_error_answer_is_a_failure_and_closing_stdout_blocks() {
    if !python() {
        return;
    }
    let registry = registry(process_spec(HookPoint::PreToolUse, ANSWERS));
    let failed = act(&registry, json!({"action": "error"})).await;
    let why = reason(&failed);
    assert!(
        why.contains("failed on this call: ValueError: no amount"),
        "{why}"
    );
    let closed = act(&registry, json!({"action": "close"})).await;
    let why = reason(&closed);
    assert!(why.contains("closed its stdout"), "{why}");
}

/// A program that cannot stay up: the first calls fail with how it ended,
/// then calls fail at once while the back-off runs, and none waits for it.
#[tokio::test]
async fn calls_while_the_process_is_down_are_blocked_at_once() {
    let spec = CommandSpec::new(
        HookPoint::PreToolUse,
        CommandLine::exec(["sh", "-c", "printf 'se%s\\n' cret >&2; exit 1"]),
    )
    .persistent_process()
    .with_name("proc")
    .with_timeout(ANSWERS);
    let registry = registry(spec);
    let first = reason(&act(&registry, json!({})).await);
    assert!(first.contains("exited with code 1"), "{first}");
    // What it wrote on stderr goes to the log, not to the reason the model
    // reads: the process serves every session.
    assert!(!first.contains("secret"), "{first}");
    // Started again at once after the first failure, which fails again…
    let second = reason(&act(&registry, json!({})).await);
    assert!(second.contains("exited with code 1"), "{second}");
    // …and now the back-off holds the next start off: blocked at once.
    let started = Instant::now();
    let third = reason(&act(&registry, json!({})).await);
    assert!(third.contains("is down (exited with code 1"), "{third}");
    assert!(third.contains("started again in"), "{third}");
    assert!(started.elapsed() < Duration::from_secs(1));
}

#[tokio::test]
async fn a_program_that_does_not_exist_blocks() {
    let spec = CommandSpec::new(
        HookPoint::PreToolUse,
        CommandLine::exec(["/nonexistent/hook-process"]),
    )
    .persistent_process()
    .with_name("proc");
    let registry = registry(spec);
    let why = reason(&act(&registry, json!({})).await);
    assert!(why.contains("could not be started"), "{why}");
}

/// The process gets the scrubbed environment of a command hook, and on
/// Linux what it started dies with it.
#[tokio::test]
async fn the_environment_is_scrubbed_and_descendants_die_with_the_process() {
    if !python() {
        return;
    }
    let registry = registry(process_spec(HookPoint::PreToolUse, ANSWERS));
    let env: Value = serde_json::from_str(&reason(&act(&registry, json!({"action": "env"})).await))
        .expect("the environment as JSON");
    assert_eq!(env["HOOKS_EVENT"], "PreToolUse");
    // Cargo's variables (set for this test process) must not reach it.
    // (Only those: an interpreter such as a pyenv shim sets others anew.)
    for (name, _) in std::env::vars().filter(|(name, _)| name.starts_with("CARGO")) {
        assert!(env.get(&name).is_none(), "{name} reached the hook process");
    }

    if !cfg!(target_os = "linux") {
        return;
    }
    let child = reason(&act(&registry, json!({"action": "child"})).await);
    let child = child.strip_prefix("child=").expect("a pid").to_owned();
    let alive = || {
        std::fs::read_to_string(format!("/proc/{child}/stat"))
            .is_ok_and(|stat| !stat.contains(") Z "))
    };
    assert!(alive(), "the child runs while the process does");
    let _ = act(&registry, json!({"action": "crash"})).await;
    let deadline = Instant::now() + ANSWERS;
    while alive() {
        assert!(Instant::now() < deadline, "the process's child outlived it");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// A probe (what `hooks check` sends) is answered by a working process and
/// fails, with the reason, for one that cannot serve.
#[tokio::test]
async fn a_probe_starts_the_process_and_checks_that_it_answers() {
    if !python() {
        return;
    }
    let hook = CommandHook::new(process_spec(HookPoint::PreToolUse, ANSWERS), None).unwrap();
    hook.probe()
        .await
        .expect("the test process answers a probe");

    let missing = CommandSpec::new(
        HookPoint::PreToolUse,
        CommandLine::Function(
            HookFunction::new(FunctionLanguage::Python, "no_such_policy:check", None).unwrap(),
        ),
    )
    .with_cwd(repo("examples/hooks"))
    .with_timeout(ANSWERS);
    let hook = CommandHook::new(missing, None).unwrap();
    let error = hook.probe().await.unwrap_err();
    assert!(
        error.contains("exited with code 1") && error.contains("No module named 'no_such_policy'"),
        "{error}"
    );
    let plain = CommandSpec::new(HookPoint::PreToolUse, CommandLine::exec(["true"]));
    let error = CommandHook::new(plain, None)
        .unwrap()
        .probe()
        .await
        .unwrap_err();
    assert!(error.contains("not a persistent hook process"), "{error}");
}

/// The example policy, declared in a config file next to it as users
/// write it: it blocks and rewrites before the tool, redacts after it, and
/// an exception (an amount that is no number) blocks.
#[tokio::test]
async fn a_python_function_blocks_and_rewrites_like_an_attribute_hook() {
    if !python() {
        return;
    }
    let dir = tempfile::tempdir().expect("dir");
    std::fs::copy(
        repo("examples/hooks/payments_policy.py"),
        dir.path().join("payments_policy.py"),
    )
    .expect("copy the policy");
    // Files an agent could drop beside the policy cannot stand in for the
    // modules the runner imports.
    for shadow in ["json.py", "inspect.py", "asyncio.py", "traceback.py"] {
        std::fs::write(dir.path().join(shadow), "raise SystemExit('shadowed')\n").expect("write");
    }
    let config = dir.path().join("agent.yaml");
    std::fs::write(
        &config,
        r#"
agent: payments
hooks:
  commands:
    - name: payments_policy
      event: PreToolUse
      matcher: "oa__.*"
      python: "payments_policy:check"
      timeout: 20s
    - name: card_numbers
      event: PostToolUse
      python: "payments_policy:redact"
      timeout: 20s
"#,
    )
    .expect("write the config");
    let registry = AgentConfig::load(&config)
        .expect("the config loads")
        .build_registry(&Resources::new())
        .expect("the registry builds");
    let pay = |args: Value| {
        let registry = &registry;
        async move {
            registry
                .run_tool_call(
                    HookContext::tool_call("oa__purchase_pay", args),
                    async |args: &Value| {
                        Ok::<_, String>(json!(format!(
                            "paid {} with card 4111 1111 1111 1234",
                            args["currency"].as_str().unwrap_or("?")
                        )))
                    },
                )
                .await
        }
    };
    let over = pay(json!({"amount": "5000", "currency": "EUR"})).await;
    assert_eq!(
        reason(&over),
        "oa__purchase_pay: 5000 is over the limit of 1000 per payment"
    );
    let nan = pay(json!({"amount": "nan", "currency": "EUR"})).await;
    assert!(reason(&nan).contains("over the limit"), "{}", reason(&nan));
    let rewritten = pay(json!({"amount": 20, "currency": "eur"})).await;
    assert_eq!(
        rewritten.observation,
        Observation::Output(json!("paid EUR with card **** 1234"))
    );
    let broken = pay(json!({"amount": "twenty", "currency": "EUR"})).await;
    let why = reason(&broken);
    assert!(
        why.contains("ValueError: could not convert string to float: 'twenty'"),
        "{why}"
    );
    // The exception was one call's: the process still serves the next.
    let fine = pay(json!({"amount": 1, "currency": "EUR"})).await;
    assert!(matches!(fine.observation, Observation::Output(_)));
}

fn node() -> bool {
    hooks_testkit::programs::needed("node", "JavaScript functions are served by Node")
}

/// The JavaScript example, an ES module, and a CommonJS one beside it: they
/// block, rewrite and fail like the Python function, and Node serves
/// calls concurrently.
#[tokio::test]
async fn a_javascript_function_blocks_and_rewrites_too() {
    if !node() {
        return;
    }
    let dir = tempfile::tempdir().expect("dir");
    std::fs::copy(
        repo("examples/hooks/payments_policy.mjs"),
        dir.path().join("payments_policy.mjs"),
    )
    .expect("copy the policy");
    // `wait` answers a waiter only once an opener has come: served one
    // call at a time, the waiter would hold the opener off for good.
    std::fs::write(
        dir.path().join("slow.cjs"),
        "let open;\n\
         const opened = new Promise((done) => { open = done; });\n\
         module.exports.guards = { async wait(call) {\n\
           const { role, n, fail } = call.tool_input;\n\
           if (fail) throw new RangeError('no ' + n);\n\
           if (role === 'waiter') await opened; else open();\n\
           return { decision: 'block', reason: 'n=' + n };\n\
         } };\n",
    )
    .expect("write the CommonJS module");
    let spec = |target: &str| {
        CommandSpec::from_value(&json!({
            "name": "proc", "event": "PreToolUse", "node": target, "timeout": "20s",
        }))
        .expect("valid")
        .with_cwd(dir.path())
    };
    let policy = registry(spec("./payments_policy.mjs:check"));
    let over = act(&policy, json!({"amount": "5000"})).await;
    assert_eq!(
        reason(&over),
        "sql_exec: 5000 is over the limit of 1000 per payment"
    );
    let nan = act(&policy, json!({"amount": "NaN"})).await;
    assert!(reason(&nan).contains("over the limit"));
    let rewritten = act(&policy, json!({"amount": 3, "currency": "eur"})).await;
    assert_eq!(
        rewritten.observation,
        Observation::Output(json!({"ran_with": {"amount": 3, "currency": "EUR"}}))
    );

    let slow = Arc::new(registry(spec("./slow.cjs:guards.wait")));
    let waiter = {
        let slow = Arc::clone(&slow);
        tokio::spawn(async move { act(&slow, json!({"role": "waiter", "n": 0})).await })
    };
    tokio::time::sleep(Duration::from_millis(200)).await;
    let opener = act(&slow, json!({"role": "opener", "n": 1})).await;
    assert_eq!(reason(&opener), "n=1");
    assert_eq!(reason(&waiter.await.expect("the waiter ran")), "n=0");
    let thrown = act(&slow, json!({"ms": 1, "n": 9, "fail": true})).await;
    let why = reason(&thrown);
    assert!(
        why.contains("failed on this call: RangeError: no 9"),
        "{why}"
    );
}

#[test]
fn python_entries_are_checked_when_the_config_loads() {
    let spec = CommandSpec::from_value(&json!({
        "event": "PreToolUse", "python": "policies.payments:check", "interpreter": "python3.12",
    }))
    .unwrap();
    assert!(spec.persistent);
    assert_eq!(
        spec.hook_name(),
        "python:PreToolUse:policies.payments:check"
    );
    for (entry, expected) in [
        (
            json!({"event": "PreToolUse", "python": "policies"}),
            "module:function",
        ),
        (
            json!({"event": "PreToolUse", "python": "a:b", "command": ["x"]}),
            "not several",
        ),
        (
            json!({"event": "PreToolUse", "python": "a:b", "node": "./a.mjs:b"}),
            "not both",
        ),
        (
            json!({"event": "PreToolUse", "node": "./a b.mjs:b"}),
            "a JavaScript name",
        ),
        (
            json!({"event": "PreToolUse", "python": "a:b", "persistent": false}),
            "always served by a persistent process",
        ),
        (
            json!({"event": "PreToolUse", "command": ["x"], "interpreter": "python3"}),
            "`interpreter` names the program",
        ),
        (
            json!({"event": "PreToolUse", "url": "http://127.0.0.1:1/h", "persistent": true}),
            "has no program",
        ),
    ] {
        let error = CommandSpec::from_value(&entry).unwrap_err().to_string();
        assert!(error.contains(expected), "{entry}: {error}");
    }
}
