//! Command hooks (the Claude Code hook protocol): real scripts from `tests/scripts/`, run through a
//! registry the way an agent runs them.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use hooks::{
    ErrorPolicy, Hook, HookContext, HookError, HookFuture, HookPoint, HookRegistry, HookResult,
    Observation, ToolCallReport,
    command::{CommandHook, CommandLine, CommandSpec, CommandSpecError},
    factory::AskHandler,
    trace::{Decision, EntryStatus, ExplainVerdict},
};
use serde_json::{Value, json};

/// A script that must finish gets this long: generous, for a loaded machine.
const FINISHES: Duration = Duration::from_secs(20);

fn script(name: &str) -> String {
    format!("{}/tests/scripts/{name}", env!("CARGO_MANIFEST_DIR"))
}

/// A spec running `tests/scripts/<argv[0]>` with the rest as its arguments.
fn spec(event: HookPoint, argv: &[&str]) -> CommandSpec {
    let mut line = vec![script(argv[0])];
    line.extend(argv[1..].iter().map(|arg| (*arg).to_owned()));
    CommandSpec::new(event, CommandLine::exec(line))
        .with_name("cmd")
        .with_timeout(FINISHES)
}

fn registry(spec: CommandSpec, ask: Option<Arc<dyn AskHandler>>) -> HookRegistry {
    let hook = CommandHook::new(spec, ask).expect("the spec is valid");
    HookRegistry::builder()
        .hook(hook.into_registered())
        .build()
        .expect("the registry builds")
}

/// Runs `ctx` with a tool that echoes the arguments it received.
async fn call(registry: &HookRegistry, ctx: HookContext) -> ToolCallReport {
    registry
        .run_tool_call(ctx, async |args: &Value| {
            Ok::<_, String>(json!({"ran_with": args}))
        })
        .await
}

fn sql_call() -> HookContext {
    HookContext::tool_call("sql_exec", json!({"q": "DELETE FROM orders"}))
        .with_conversation("conv-1")
        .with_tool_call_id("call-7")
        .with_agent("finance-bot")
        .with_user("u-42")
        .with_org("acme")
        .with_agent_path(["root", "finance-bot"])
        .with_metadata("requires_confirmation", true)
}

fn decision(report: &ToolCallReport) -> Decision {
    report
        .trace
        .entry("cmd")
        .and_then(|entry| entry.decision().cloned())
        .expect("the command hook ran")
}

fn blocked_reason(report: &ToolCallReport) -> &str {
    match &report.observation {
        Observation::Blocked { hook, reason } => {
            assert_eq!(hook, "cmd");
            reason
        }
        other => panic!("expected the call to be blocked, got {other:?}"),
    }
}

/// A fresh directory under the system temp dir, removed afterwards.
struct TempDir(PathBuf);

impl TempDir {
    fn new(tag: &str) -> Self {
        let path = std::env::temp_dir().join(format!("hooks-command-{}-{tag}", std::process::id()));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).expect("temp dir");
        TempDir(path)
    }

    fn path(&self) -> &Path {
        &self.0
    }

    fn arg(&self) -> &str {
        self.0.to_str().expect("a UTF-8 temp path")
    }

    fn read(&self, name: &str) -> String {
        std::fs::read_to_string(self.0.join(name)).unwrap_or_else(|error| panic!("{name}: {error}"))
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Records the reason it was asked with, and approves.
#[derive(Default)]
struct ApproveAndRecord {
    asked: Mutex<Vec<(String, Value)>>,
}

impl AskHandler for ApproveAndRecord {
    fn ask<'a>(&'a self, ctx: &'a HookContext, reason: &'a str) -> HookFuture<'a> {
        self.asked
            .lock()
            .unwrap()
            .push((reason.to_owned(), ctx.tool_args.clone()));
        Box::pin(async { Ok(HookResult::allow().with_side_effect("approved by a test")) })
    }

    fn max_wait(&self) -> Duration {
        Duration::from_secs(1)
    }
}

/// An approval mechanism that is down.
struct BrokenGate;

impl AskHandler for BrokenGate {
    fn ask<'a>(&'a self, _: &'a HookContext, _: &'a str) -> HookFuture<'a> {
        Box::pin(async { Err(HookError::new("database unavailable")) })
    }

    fn max_wait(&self) -> Duration {
        Duration::from_secs(1)
    }
}

// ---- exit codes ----------------------------------------------------------

#[tokio::test]
async fn exit_0_without_output_allows() {
    let registry = registry(spec(HookPoint::PreToolUse, &["allow.sh"]), None);
    let report = call(&registry, sql_call()).await;
    assert!(report.tool_ran);
    assert_eq!(
        report.observation,
        Observation::Output(json!({"ran_with": {"q": "DELETE FROM orders"}}))
    );
    assert_eq!(decision(&report), Decision::Allowed { rewrote: false });
}

#[tokio::test]
async fn exit_2_blocks_with_stderr_as_the_reason() {
    let registry = registry(spec(HookPoint::PreToolUse, &["block.sh"]), None);
    let report = call(&registry, sql_call()).await;
    assert!(!report.tool_ran);
    assert_eq!(blocked_reason(&report), "no writes on Fridays");
    assert_eq!(
        decision(&report),
        Decision::Blocked("no writes on Fridays".into())
    );
}

#[tokio::test]
async fn exit_2_with_empty_stderr_still_gives_a_reason() {
    let registry = registry(spec(HookPoint::PreToolUse, &["emit.sh", "", "", "2"]), None);
    let report = call(&registry, sql_call()).await;
    assert_eq!(
        blocked_reason(&report),
        "blocked by command hook cmd (exit 2)"
    );
}

#[tokio::test]
async fn another_exit_code_is_a_failure_that_blocks_unless_fail_open() {
    let registry = registry(spec(HookPoint::PreToolUse, &["crash.sh"]), None);
    let report = call(&registry, sql_call()).await;
    assert!(!report.tool_ran);
    let reason = blocked_reason(&report);
    assert!(reason.contains("crash.sh` exited with code 1"), "{reason}");
    assert!(reason.contains("database unreachable"), "{reason}");
    assert!(reason.contains("fails closed"), "{reason}");
    assert!(matches!(
        decision(&report),
        Decision::Failed {
            policy: ErrorPolicy::FailClosed,
            ..
        }
    ));

    let open = spec(HookPoint::PreToolUse, &["crash.sh"]).with_on_error(ErrorPolicy::FailOpen);
    let report = call(&registry_of(open), sql_call()).await;
    assert!(report.tool_ran, "fail_open lets the call through");
    match decision(&report) {
        Decision::Failed {
            failure,
            policy: ErrorPolicy::FailOpen,
        } => assert!(
            failure.to_string().contains("exited with code 1"),
            "{failure}"
        ),
        other => panic!("the failure must show in the trace, got {other:?}"),
    }
}

fn registry_of(spec: CommandSpec) -> HookRegistry {
    registry(spec, None)
}

#[tokio::test]
async fn a_program_that_cannot_start_blocks() {
    let spec = CommandSpec::new(
        HookPoint::PreToolUse,
        CommandLine::exec(["/nonexistent/hooks/check.sh"]),
    )
    .with_name("cmd");
    let report = call(&registry_of(spec), sql_call()).await;
    let reason = blocked_reason(&report);
    assert!(reason.contains("could not be run"), "{reason}");
    assert!(reason.contains("exists and is executable"), "{reason}");
}

// ---- JSON decisions ------------------------------------------------------

fn emit(event: HookPoint, output: &Value) -> CommandSpec {
    spec(event, &["emit.sh", &output.to_string()])
}

#[tokio::test]
async fn permission_decision_allow_lets_the_call_run() {
    let output = json!({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow", "permissionDecisionReason": "read-only"}});
    let report = call(
        &registry_of(emit(HookPoint::PreToolUse, &output)),
        sql_call(),
    )
    .await;
    assert!(report.tool_ran);
}

#[tokio::test]
async fn permission_decision_deny_blocks_with_its_reason() {
    let output = json!({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": "DELETE needs a ticket"}});
    let report = call(
        &registry_of(emit(HookPoint::PreToolUse, &output)),
        sql_call(),
    )
    .await;
    assert!(!report.tool_ran);
    assert_eq!(blocked_reason(&report), "DELETE needs a ticket");
}

#[tokio::test]
async fn permission_decision_ask_goes_to_the_ask_handler() {
    let output = json!({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "ask", "permissionDecisionReason": "deletes rows"}});
    let handler = Arc::new(ApproveAndRecord::default());
    let registry = registry(emit(HookPoint::PreToolUse, &output), Some(handler.clone()));
    let report = call(&registry, sql_call()).await;
    assert!(report.tool_ran, "the handler approved");
    assert_eq!(
        *handler.asked.lock().unwrap(),
        [(
            "deletes rows".to_owned(),
            json!({"q": "DELETE FROM orders"})
        )]
    );
    let effects: Vec<&str> = report.trace.side_effects().collect();
    assert!(effects.contains(&"approved by a test"), "{effects:?}");
}

#[tokio::test]
async fn ask_with_rewritten_input_asks_about_what_will_run() {
    let output = json!({"hookSpecificOutput": {"permissionDecision": "ask", "permissionDecisionReason": "limited", "updatedInput": {"q": "DELETE FROM orders LIMIT 1"}}});
    let handler = Arc::new(ApproveAndRecord::default());
    let registry = registry(emit(HookPoint::PreToolUse, &output), Some(handler.clone()));
    let report = call(&registry, sql_call()).await;
    let limited = json!({"q": "DELETE FROM orders LIMIT 1"});
    assert_eq!(handler.asked.lock().unwrap()[0].1, limited);
    assert_eq!(report.args, limited);
    assert_eq!(
        report.observation,
        Observation::Output(json!({"ran_with": limited}))
    );
}

#[tokio::test]
async fn a_failing_approval_blocks_even_a_fail_open_command() {
    let output = json!({"hookSpecificOutput": {"permissionDecision": "ask", "permissionDecisionReason": "deletes rows"}});
    let spec = emit(HookPoint::PreToolUse, &output).with_on_error(ErrorPolicy::FailOpen);
    let report = call(&registry(spec, Some(Arc::new(BrokenGate))), sql_call()).await;
    assert!(
        !report.tool_ran,
        "fail_open covers the command, never the approval"
    );
    assert!(blocked_reason(&report).contains("asking failed: database unavailable"));
}

#[tokio::test]
async fn a_dry_run_reports_ask_without_asking() {
    let output = json!({"hookSpecificOutput": {"permissionDecision": "ask", "permissionDecisionReason": "deletes rows"}});
    let handler = Arc::new(ApproveAndRecord::default());
    let registry = registry(emit(HookPoint::PreToolUse, &output), Some(handler.clone()));
    let explanation = registry.explain(sql_call(), true).await;
    assert_eq!(explanation.steps[0].verdict, ExplainVerdict::WouldAsk);
    assert!(handler.asked.lock().unwrap().is_empty(), "nobody was asked");
}

#[tokio::test]
async fn ask_without_a_handler_blocks() {
    let output = json!({"hookSpecificOutput": {"permissionDecision": "ask", "permissionDecisionReason": "deletes rows"}});
    let report = call(
        &registry_of(emit(HookPoint::PreToolUse, &output)),
        sql_call(),
    )
    .await;
    assert!(!report.tool_ran);
    let reason = blocked_reason(&report);
    assert!(reason.contains("\"ask\""), "{reason}");
    assert!(reason.contains("approval gate"), "{reason}");
    assert!(reason.contains("deletes rows"), "{reason}");
}

/// With nobody to ask (an agent without approvals gets no ask handler), a
/// dry run shows the block the real call gets, not "would ask".
#[tokio::test]
async fn a_dry_run_without_a_handler_shows_the_block() {
    let output = json!({"hookSpecificOutput": {"permissionDecision": "ask", "permissionDecisionReason": "deletes rows"}});
    let registry = registry_of(emit(HookPoint::PreToolUse, &output));
    let explanation = registry.explain(sql_call(), true).await;
    assert!(
        matches!(explanation.steps[0].verdict, ExplainVerdict::Block { .. }),
        "{:?}",
        explanation.steps[0].verdict
    );
    assert_eq!(explanation.outcome, hooks::trace::ExplainOutcome::Blocked);
}

#[tokio::test]
async fn updated_input_rewrites_the_arguments_the_tool_receives() {
    let output = json!({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow", "updatedInput": {"q": "SELECT 1"}}});
    let report = call(
        &registry_of(emit(HookPoint::PreToolUse, &output)),
        sql_call(),
    )
    .await;
    assert!(report.tool_ran);
    assert_eq!(report.args, json!({"q": "SELECT 1"}));
    assert_eq!(
        report.observation,
        Observation::Output(json!({"ran_with": {"q": "SELECT 1"}}))
    );
    assert_eq!(decision(&report), Decision::Allowed { rewrote: true });
}

#[tokio::test]
async fn updated_input_that_is_not_an_object_is_a_failure() {
    let output = json!({"hookSpecificOutput": {"updatedInput": "SELECT 1"}});
    let report = call(
        &registry_of(emit(HookPoint::PreToolUse, &output)),
        sql_call(),
    )
    .await;
    assert!(!report.tool_ran);
    assert!(matches!(decision(&report), Decision::Failed { .. }));
}

#[tokio::test]
async fn continue_false_blocks_with_the_stop_reason() {
    let output = json!({"continue": false, "stopReason": "maintenance window"});
    let report = call(
        &registry_of(emit(HookPoint::PreToolUse, &output)),
        sql_call(),
    )
    .await;
    assert_eq!(blocked_reason(&report), "maintenance window");
}

#[tokio::test]
async fn a_post_hook_decision_block_withholds_the_result() {
    let output = json!({"decision": "block", "reason": "the result contains card numbers"});
    let report = call(
        &registry_of(emit(HookPoint::PostToolUse, &output)),
        sql_call(),
    )
    .await;
    assert!(report.tool_ran);
    assert_eq!(
        report.observation,
        Observation::Withheld {
            hook: "cmd".into(),
            reason: "the result contains card numbers".into()
        }
    );
}

#[tokio::test]
async fn updated_tool_output_rewrites_the_result() {
    let output = json!({"hookSpecificOutput": {"hookEventName": "PostToolUse", "updatedToolOutput": {"rows": "[redacted]"}}});
    let report = call(
        &registry_of(emit(HookPoint::PostToolUse, &output)),
        sql_call(),
    )
    .await;
    assert_eq!(
        report.observation,
        Observation::Output(json!({"rows": "[redacted]"}))
    );
    assert_eq!(
        report.raw_result(),
        Some(&json!({"ran_with": {"q": "DELETE FROM orders"}}))
    );
}

#[tokio::test]
async fn plain_stdout_of_a_tool_hook_is_only_a_side_effect() {
    let report = call(
        &registry_of(spec(HookPoint::PreToolUse, &["emit.sh", "looks fine"])),
        sql_call(),
    )
    .await;
    assert!(report.tool_ran);
    let effects: Vec<&str> = report.trace.side_effects().collect();
    assert_eq!(effects, ["stdout: looks fine"]);
}

#[tokio::test]
async fn stdout_that_starts_like_json_but_is_not_blocks() {
    let report = call(
        &registry_of(spec(
            HookPoint::PreToolUse,
            &["emit.sh", "{\"oops, not json"],
        )),
        sql_call(),
    )
    .await;
    assert!(!report.tool_ran);
    let reason = blocked_reason(&report);
    assert!(reason.contains("not valid JSON"), "{reason}");
}

// ---- session start -------------------------------------------------------

#[tokio::test]
async fn session_start_plain_stdout_becomes_context() {
    let registry = registry_of(spec(HookPoint::SessionStart, &["context.sh"]));
    let started = registry
        .start_session(HookContext::session().with_agent("finance-bot"))
        .await
        .expect("the session starts");
    assert_eq!(started.context, "Project rules: answer in French.");
}

#[tokio::test]
async fn session_start_json_additional_context_becomes_context() {
    let output = json!({"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": "Today is a holiday."}});
    let registry = registry_of(emit(HookPoint::SessionStart, &output));
    let started = registry
        .start_session(HookContext::session())
        .await
        .unwrap();
    assert_eq!(started.context, "Today is a holiday.");
}

#[tokio::test]
async fn session_start_exit_2_stops_the_session() {
    let registry = registry_of(spec(HookPoint::SessionStart, &["block.sh"]));
    let stopped = registry
        .start_session(HookContext::session())
        .await
        .expect_err("the session must not start");
    assert_eq!(stopped.hook, "cmd");
    assert!(
        stopped.reason.contains("no writes on Fridays"),
        "{}",
        stopped.reason
    );
}

// ---- timeouts and process groups -----------------------------------------

#[tokio::test]
async fn a_command_that_overruns_its_timeout_is_killed_and_blocks() {
    let spec = spec(HookPoint::PreToolUse, &["slow.sh"]).with_timeout(Duration::from_secs(1));
    let started = Instant::now();
    let report = call(&registry_of(spec), sql_call()).await;
    let elapsed = started.elapsed();
    assert!(elapsed < Duration::from_secs(10), "took {elapsed:?}");
    assert!(!report.tool_ran);
    let reason = blocked_reason(&report);
    assert!(reason.contains("timed out"), "{reason}");
}

#[tokio::test]
async fn a_timeout_kills_the_whole_process_group() {
    let dir = TempDir::new("orphan");
    let spec =
        spec(HookPoint::PreToolUse, &["orphan.sh", dir.arg()]).with_timeout(Duration::from_secs(1));
    let started = Instant::now();
    let report = call(&registry_of(spec), sql_call()).await;
    let elapsed = started.elapsed();
    assert!(elapsed < Duration::from_secs(10), "took {elapsed:?}");
    assert!(!report.tool_ran);
    assert!(blocked_reason(&report).contains("timed out"));
    assert_eq!(dir.read("started"), "started", "the background child ran");
    // Unkilled, the background child would write the marker 3 s after it started.
    tokio::time::sleep(Duration::from_secs(4)).await;
    assert!(
        !dir.path().join("marker").exists(),
        "the background child outlived the hook"
    );
}

// ---- what the command receives -------------------------------------------

#[tokio::test]
async fn the_call_reaches_the_command_on_stdin_only_and_secrets_stay_out() {
    // SAFETY: this is the only test that changes the environment, std
    // serialises its own environment access, and nothing in this test binary
    // reads the environment through libc directly.
    unsafe {
        std::env::set_var("HOOKS_TEST_SECRET", "hunter2");
        std::env::set_var("HOOKS_TEST_PASS", "passed-through");
    }
    let dir = TempDir::new("record");
    let spec = spec(HookPoint::PreToolUse, &["record.sh", dir.arg()])
        .with_env(["HOOKS_TEST_PASS"])
        .with_cwd(dir.path());
    let ctx = HookContext::tool_call("sql_exec", json!({"q": "SELECT 'arg-value-77'"}))
        .with_conversation("conv-1")
        .with_tool_call_id("call-7")
        .with_agent("finance-bot")
        .with_user("u-42")
        .with_org("acme")
        .with_agent_path(["root", "finance-bot"])
        .with_metadata("requires_confirmation", true);
    let report = call(&registry_of(spec), ctx).await;
    assert!(report.tool_ran, "{}", report.observation);

    let stdin: Value =
        serde_json::from_str(&dir.read("stdin.json")).expect("stdin is one JSON object");
    assert_eq!(stdin["session_id"], "conv-1");
    assert_eq!(stdin["hook_event_name"], "PreToolUse");
    assert_eq!(stdin["cwd"], dir.arg());
    assert_eq!(stdin["tool_name"], "sql_exec");
    assert_eq!(stdin["tool_input"], json!({"q": "SELECT 'arg-value-77'"}));
    assert_eq!(stdin["tool_use_id"], "call-7");
    assert_eq!(stdin["agent_id"], "finance-bot");
    assert_eq!(stdin["user_id"], "u-42");
    assert_eq!(stdin["org_id"], "acme");
    assert_eq!(stdin["surface"], "chat");
    assert_eq!(stdin["agent_path"], json!(["root", "finance-bot"]));
    assert_eq!(stdin["metadata"], json!({"requires_confirmation": true}));
    assert!(stdin.get("tool_response").is_none());

    let argv = dir.read("argv.txt");
    assert_eq!(argv.trim(), dir.arg(), "only the configured arguments");
    let variables = dir.read("variables.txt");
    assert!(
        !variables.contains("arg-value-77"),
        "args leaked into the environment"
    );
    assert!(
        !variables.contains("hunter2"),
        "a secret leaked into the environment"
    );
    let env = dir.read("env.txt");
    let env: Vec<&str> = env.lines().collect();
    assert_eq!(
        env,
        [
            "secret=unset",
            "passed=passed-through",
            "event=PreToolUse",
            "tool=unset",
            &format!("project={}", dir.arg()),
            "path=set",
        ]
    );
}

#[tokio::test]
async fn a_post_hook_sees_the_tool_error() {
    let dir = TempDir::new("post-error");
    let spec = spec(HookPoint::PostToolUse, &["record.sh", dir.arg()]);
    let report = registry_of(spec)
        .run_tool_call(sql_call(), async |_: &Value| {
            Err::<Value, _>("connection refused")
        })
        .await;
    assert_eq!(report.tool_error(), Some("connection refused"));
    let stdin: Value = serde_json::from_str(&dir.read("stdin.json")).unwrap();
    assert_eq!(stdin["hook_event_name"], "PostToolUse");
    assert_eq!(
        stdin["tool_response"],
        json!({"error": "connection refused"})
    );
}

// ---- output caps -----------------------------------------------------------

#[tokio::test]
async fn stdout_beyond_10_000_characters_fails_and_stderr_is_cut() {
    // 200,000 characters on stdout: far more than a pipe holds, so the
    // command would stall if the reader stopped at the cap. Cut and read,
    // stdout could hide a decision past the cap: the hook fails instead.
    let registry = registry_of(spec(HookPoint::SessionStart, &["big.sh", "out", "2000"]));
    let stopped = registry
        .start_session(HookContext::session())
        .await
        .expect_err("unreadable output stops the session");
    assert!(
        stopped.reason.contains("more than 10000 characters"),
        "{}",
        stopped.reason
    );

    let registry = registry_of(spec(HookPoint::PreToolUse, &["big.sh", "err", "300", "2"]));
    let report = call(&registry, sql_call()).await;
    assert_eq!(blocked_reason(&report).len(), 10_000);
}

// ---- config ---------------------------------------------------------------

#[test]
fn a_string_command_without_shell_true_is_a_config_error() {
    let error = serde_json::from_value::<CommandSpec>(
        json!({"event": "PreToolUse", "command": "./hooks/check.sh $ARGS"}),
    )
    .unwrap_err()
    .to_string();
    assert!(error.contains("array form"), "{error}");
    assert!(error.contains("shell: true"), "{error}");

    let mut spec = CommandSpec::new(HookPoint::PreToolUse, CommandLine::shell("./check.sh"));
    spec.shell = false;
    assert_eq!(
        CommandHook::new(spec, None).unwrap_err(),
        CommandSpecError::StringWithoutShell
    );
}

#[tokio::test]
async fn shell_true_runs_the_string_through_sh() {
    let spec: CommandSpec = serde_json::from_value(json!({
        "name": "cmd",
        "event": "PreToolUse",
        "command": "cat > /dev/null; printf '%s via sh' \"$HOOKS_EVENT\" | cat >&2; exit 2",
        "shell": true,
        "timeout": 20,
    }))
    .unwrap();
    let report = call(&registry_of(spec), sql_call()).await;
    assert_eq!(blocked_reason(&report), "PreToolUse via sh");
}

#[tokio::test]
async fn the_matcher_is_a_full_match_over_the_tool_name() {
    let spec = spec(HookPoint::PreToolUse, &["block.sh"]).with_matcher("Bash|sql_.*");
    let hook = CommandHook::new(spec.clone(), None).unwrap();
    let on = |tool: &str| hook.should_trigger(&HookContext::tool_call(tool, json!({})));
    assert!(on("sql_exec") && on("Bash"));
    assert!(!on("my_sql_exec") && !on("Bashful"));
    assert_eq!(hook.when_source(), Some("matcher: Bash|sql_.*"));

    let registry = registry_of(spec);
    let report = call(&registry, HookContext::tool_call("my_sql_exec", json!({}))).await;
    assert!(report.tool_ran);
    assert!(matches!(
        report.trace.entry("cmd").unwrap().status,
        EntryStatus::NotMatched
    ));
    let report = call(&registry, sql_call()).await;
    assert!(!report.tool_ran);
}

#[test]
fn when_and_matcher_must_both_match() {
    let spec = spec(HookPoint::PreToolUse, &["block.sh"])
        .with_matcher("sql_.*")
        .with_when("org_id == \"acme\"");
    let hook = CommandHook::new(spec, None).unwrap();
    assert!(hook.should_trigger(&HookContext::tool_call("sql_exec", json!({})).with_org("acme")));
    assert!(!hook.should_trigger(&HookContext::tool_call("sql_exec", json!({})).with_org("other")));
    assert!(!hook.should_trigger(&HookContext::tool_call("Bash", json!({})).with_org("acme")));
}

#[test]
fn specs_deserialize_from_config_json() {
    let spec: CommandSpec =
        serde_json::from_str(r#"{"event":"PreToolUse","command":["./x.sh"],"timeout":"10s"}"#)
            .unwrap();
    assert_eq!(spec.event, HookPoint::PreToolUse);
    assert_eq!(spec.command, CommandLine::exec(["./x.sh"]));
    assert_eq!(spec.timeout, Duration::from_secs(10));
    assert_eq!(spec.on_error, ErrorPolicy::FailClosed);
    assert_eq!(spec.priority, 50);
    assert_eq!(spec.hook_name(), "command:PreToolUse:./x.sh");

    let spec: CommandSpec = serde_json::from_str(
        r#"{"name": "audit", "event": "PostToolUse", "command": ["./audit.sh", "-v"], "timeout": 60,
            "on_error": "fail_open", "priority": 90, "cwd": "/srv", "env": ["AUDIT_URL"],
            "when": "tool_name starts_with \"oa__\"", "matcher": "*"}"#,
    )
    .unwrap();
    assert_eq!(spec.timeout, Duration::from_secs(60));
    assert_eq!(spec.on_error, ErrorPolicy::FailOpen);
    assert_eq!(
        (spec.priority, spec.env.as_slice()),
        (90, ["AUDIT_URL".to_owned()].as_slice())
    );
    assert_eq!(spec.cwd.as_deref(), Some(Path::new("/srv")));

    let hook = CommandHook::new(spec, None).unwrap();
    assert_eq!(hook.name(), "audit");
    assert_eq!(hook.priority(), 90);
    assert_eq!(hook.on_error(), ErrorPolicy::FailOpen);
    assert!(
        hook.timeout() > Duration::from_secs(60),
        "a margin for killing the command"
    );
    assert_eq!(hook.when_source(), Some("tool_name starts_with \"oa__\""));
    assert_eq!(hook.into_registered().point(), HookPoint::PostToolUse);

    let error = serde_json::from_str::<CommandSpec>(
        r#"{"event":"PreToolUse","command":["./x.sh"],"when":"tool_name ==","timeout":"10s"}"#,
    )
    .unwrap_err()
    .to_string();
    assert!(error.contains("line 1, column"), "{error}");
    let error = serde_json::from_str::<CommandSpec>(
        r#"{"event":"PreToolUse","command":["./x.sh"],"matcher":"sql_("}"#,
    )
    .unwrap_err()
    .to_string();
    assert!(error.contains("not a valid regular expression"), "{error}");
}

#[tokio::test]
async fn misspelt_or_buried_decisions_block_instead_of_allowing() {
    for output in [
        json!({"permissionDecision": "deny"}),
        json!({"hookSpecificOuput": {"permissionDecision": "deny"}}),
        json!({"hookSpecificOutput": {"permissionDecison": "deny"}}),
    ] {
        let report = call(
            &registry_of(emit(HookPoint::PreToolUse, &output)),
            sql_call(),
        )
        .await;
        assert!(!report.tool_ran, "{output}");
        assert!(
            blocked_reason(&report).contains("unknown field"),
            "{output}"
        );
    }
    let spec = spec(
        HookPoint::PreToolUse,
        &[
            "emit.sh",
            "checking...\n{\"decision\": \"block\", \"reason\": \"no\"}",
        ],
    );
    let report = call(&registry_of(spec), sql_call()).await;
    assert!(!report.tool_ran);
    assert!(
        blocked_reason(&report).contains("after other output"),
        "{}",
        blocked_reason(&report)
    );
}

// ---- decisions hidden in stdout (issue 11) -----------------------------------

/// A block decision a script may print; every test below hides it somehow.
const HIDDEN_BLOCK: &str = r#"{"decision": "block", "reason": "hidden block"}"#;

/// The call the `printf.sh` script answers with `format` (octal escapes give any bytes).
async fn printf_call(event: HookPoint, format: &str) -> ToolCallReport {
    call(
        &registry_of(spec(event, &["printf.sh", format])),
        sql_call(),
    )
    .await
}

#[tokio::test]
async fn a_decision_after_a_utf8_bom_is_read() {
    let report = printf_call(
        HookPoint::PreToolUse,
        &format!("\\357\\273\\277{HIDDEN_BLOCK}"),
    )
    .await;
    assert!(!report.tool_ran, "{}", report.observation);
    assert_eq!(blocked_reason(&report), "hidden block");
}

#[tokio::test]
async fn a_decision_after_leading_whitespace_is_read() {
    let registry = registry_of(spec(
        HookPoint::PreToolUse,
        &[
            "repeat.sh",
            "5000",
            " ",
            &format!("\\n\\t{HIDDEN_BLOCK}\\n"),
        ],
    ));
    let report = call(&registry, sql_call()).await;
    assert!(!report.tool_ran, "{}", report.observation);
    assert_eq!(blocked_reason(&report), "hidden block");
}

#[tokio::test]
async fn a_decision_after_12_000_spaces_blocks() {
    let registry = registry_of(spec(
        HookPoint::PreToolUse,
        &["repeat.sh", "12000", " ", HIDDEN_BLOCK],
    ));
    let report = call(&registry, sql_call()).await;
    assert!(!report.tool_ran, "{}", report.observation);
    let reason = blocked_reason(&report);
    assert!(reason.contains("10000 characters"), "{reason}");
}

#[tokio::test]
async fn a_decision_after_bytes_ff_fe_blocks() {
    let report = printf_call(HookPoint::PreToolUse, &format!("\\377\\376{HIDDEN_BLOCK}")).await;
    assert!(!report.tool_ran, "{}", report.observation);
    let reason = blocked_reason(&report);
    assert!(reason.contains("not valid UTF-8"), "{reason}");
}

#[tokio::test]
async fn a_decision_after_10_000_characters_of_progress_lines_blocks() {
    let registry = registry_of(spec(
        HookPoint::PreToolUse,
        &["repeat.sh", "1000", "checking...\\n", HIDDEN_BLOCK],
    ));
    let report = call(&registry, sql_call()).await;
    assert!(!report.tool_ran, "{}", report.observation);
    assert!(
        blocked_reason(&report).contains("10000 characters"),
        "{}",
        blocked_reason(&report)
    );
}

#[tokio::test]
async fn output_over_the_cap_fails_even_when_it_looks_harmless() {
    // Plain text the hook would have allowed: cut and read, it could hide anything.
    let registry = registry_of(spec(HookPoint::PreToolUse, &["big.sh", "out", "101"]));
    let report = call(&registry, sql_call()).await;
    assert!(!report.tool_ran, "{}", report.observation);
    assert!(matches!(decision(&report), Decision::Failed { .. }));
}

#[tokio::test]
async fn a_decision_that_starts_any_line_of_plain_text_blocks() {
    for format in [
        format!("checking...\\r{HIDDEN_BLOCK}"),
        format!("checking...\\n\\342\\200\\213{HIDDEN_BLOCK}"),
        format!("checking...\\n\\000{HIDDEN_BLOCK}"),
        format!("checking...\\n\\342\\200\\256{HIDDEN_BLOCK}"),
        format!("checking...\\342\\200\\250{HIDDEN_BLOCK}"),
        "done\\n  {\"decision\": \"block\", \"reason\": \"cut".to_owned(),
    ] {
        let report = printf_call(HookPoint::PreToolUse, &format).await;
        assert!(!report.tool_ran, "{format}: {}", report.observation);
        assert!(
            matches!(decision(&report), Decision::Failed { .. }),
            "{format}"
        );
    }
}

#[tokio::test]
async fn session_start_context_with_a_json_line_stops_the_session() {
    let registry = registry_of(spec(
        HookPoint::SessionStart,
        &["printf.sh", "Rules:\\n{\"continue\": false}\\n"],
    ));
    let stopped = registry
        .start_session(HookContext::session())
        .await
        .expect_err("the session must not start");
    assert!(stopped.reason.contains("JSON"), "{}", stopped.reason);
}

#[tokio::test]
async fn json_after_blank_lines_still_decides() {
    let report = printf_call(
        HookPoint::PreToolUse,
        "\\n\\n  {\"hookSpecificOutput\": {\"permissionDecision\": \"allow\"}}\\n",
    )
    .await;
    assert!(report.tool_ran, "{}", report.observation);
    assert_eq!(decision(&report), Decision::Allowed { rewrote: false });
}

// ---- odd tool names (issue 11) ------------------------------------------------

/// Runs the hook itself, as dispatch would once it let the call through:
/// dispatch blocks such names before any hook, but the command hook must not
/// depend on that.
#[tokio::test]
async fn a_tool_name_with_control_characters_still_runs_the_command() {
    let name = "sql\u{0}exec\u{202E}";
    for policy in [ErrorPolicy::FailClosed, ErrorPolicy::FailOpen] {
        let blocking = spec(HookPoint::PreToolUse, &["block.sh"]).with_on_error(policy);
        let hook = CommandHook::new(blocking, None).unwrap();
        let result = hook
            .execute(&HookContext::tool_call(name, json!({})))
            .await
            .unwrap_or_else(|error| panic!("{policy:?}: the command must run: {error}"));
        assert!(result.is_blocked(), "{policy:?}");
        assert_eq!(result.block_reason(), Some("no writes on Fridays"));

        let dir = TempDir::new(&format!("odd-name-{policy:?}"));
        let recording =
            spec(HookPoint::PreToolUse, &["record.sh", dir.arg()]).with_on_error(policy);
        let hook = CommandHook::new(recording, None).unwrap();
        let result = hook
            .execute(&HookContext::tool_call(name, json!({"a": "\u{0}"})))
            .await
            .unwrap_or_else(|error| panic!("{policy:?}: the command must run: {error}"));
        assert!(!result.is_blocked(), "{policy:?}");
        let stdin: Value = serde_json::from_str(&dir.read("stdin.json")).unwrap();
        assert_eq!(stdin["tool_name"], name);
        assert_eq!(stdin["tool_input"], json!({"a": "\u{0}"}));
        assert_eq!(dir.read("env.txt").lines().nth(3), Some("tool=unset"));
    }
}

// ---- processes end with their hook (issue 11, Linux) --------------------------

/// A unique `sleep` duration: the marker a lingering process is found by in /proc.
#[cfg(target_os = "linux")]
struct Lingering(String);

#[cfg(target_os = "linux")]
impl Lingering {
    fn new(test: u32) -> Self {
        Lingering(format!(
            "121.{:07}{test:03}",
            std::process::id() % 10_000_000
        ))
    }

    /// The processes still running `sleep <marker>`.
    fn survivors(&self) -> Vec<u32> {
        let Ok(entries) = std::fs::read_dir("/proc") else {
            return Vec::new();
        };
        entries
            .flatten()
            .filter_map(|entry| entry.file_name().to_str()?.parse::<u32>().ok())
            .filter(|pid| {
                std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|cmdline| {
                    cmdline
                        .split(|byte| *byte == 0)
                        .any(|arg| arg == self.0.as_bytes())
                })
            })
            .collect()
    }
}

#[cfg(target_os = "linux")]
impl Drop for Lingering {
    /// Whatever the test found, nothing it started stays behind.
    fn drop(&mut self) {
        for pid in self.survivors() {
            let _ = std::process::Command::new("kill")
                .args(["-9", &pid.to_string()])
                .status();
        }
    }
}

#[cfg(target_os = "linux")]
async fn linger(mode: &str, test: u32, timeout: Duration) -> (ToolCallReport, Lingering) {
    let marker = Lingering::new(test);
    let spec = spec(HookPoint::PreToolUse, &["linger.sh", mode, &marker.0]).with_timeout(timeout);
    let report = call(&registry_of(spec), sql_call()).await;
    (report, marker)
}

#[cfg(target_os = "linux")]
#[tokio::test]
async fn a_setsid_child_does_not_survive_the_timeout() {
    let (report, marker) = linger("setsid-timeout", 1, Duration::from_secs(1)).await;
    assert!(!report.tool_ran);
    assert!(blocked_reason(&report).contains("timed out"));
    assert_eq!(
        marker.survivors(),
        Vec::<u32>::new(),
        "a process outlived the hook"
    );
}

#[cfg(target_os = "linux")]
#[tokio::test]
async fn a_setsid_child_does_not_survive_a_normal_exit() {
    let (report, marker) = linger("setsid-exit", 2, FINISHES).await;
    assert!(report.tool_ran, "{}", report.observation);
    assert_eq!(
        marker.survivors(),
        Vec::<u32>::new(),
        "a process outlived the hook"
    );
}

#[cfg(target_os = "linux")]
#[tokio::test]
async fn a_background_child_does_not_survive_a_normal_exit() {
    let (report, marker) = linger("background-exit", 3, FINISHES).await;
    assert!(report.tool_ran, "{}", report.observation);
    assert_eq!(decision(&report), Decision::Allowed { rewrote: false });
    assert_eq!(
        marker.survivors(),
        Vec::<u32>::new(),
        "a process outlived the hook"
    );
}

#[cfg(target_os = "linux")]
#[tokio::test]
async fn a_grandchild_holding_stdout_neither_delays_the_decision_nor_survives() {
    // Held open, stdout never ends: before the fix this allow became a timeout block.
    let (report, marker) = linger("hold-stdout", 4, FINISHES).await;
    assert!(report.tool_ran, "{}", report.observation);
    assert_eq!(decision(&report), Decision::Allowed { rewrote: false });
    assert_eq!(
        marker.survivors(),
        Vec::<u32>::new(),
        "a process outlived the hook"
    );
}

/// Review D 5: a catchable signal to the supervisor (the script's own
/// `kill -HUP $PPID`, or an operator's `pkill -HUP <agent>`, which matches
/// supervisors by name) neither ends it early — letting a fail_open hook's
/// call through — nor lets the tree escape. TERM, the runtime's own stop
/// signal, counts only when the runtime sends it.
#[cfg(target_os = "linux")]
#[tokio::test]
async fn a_signal_to_the_supervisor_neither_lets_the_call_through_nor_the_tree_escape() {
    for (test, signal) in [
        (6, "HUP"),
        (7, "INT"),
        (8, "QUIT"),
        (9, "USR1"),
        (10, "ALRM"),
        (11, "TERM"),
    ] {
        let marker = Lingering::new(test);
        let spec = spec(
            HookPoint::PreToolUse,
            &["linger.sh", "signal-parent", &marker.0, signal],
        );
        let report = call(&fail_open(spec), sql_call()).await;
        assert!(!report.tool_ran, "SIG{signal}: {}", report.observation);
        assert_eq!(
            blocked_reason(&report),
            format!("blocked after SIG{signal}"),
            "SIG{signal}"
        );
        assert_eq!(
            marker.survivors(),
            Vec::<u32>::new(),
            "SIG{signal}: a process outlived the hook"
        );
    }
}

#[cfg(target_os = "linux")]
#[tokio::test]
async fn an_abandoned_hook_leaves_no_process_behind() {
    let marker = Lingering::new(5);
    let spec = spec(
        HookPoint::PreToolUse,
        &["linger.sh", "setsid-timeout", &marker.0],
    );
    let registry = registry_of(spec);
    // The caller gives up long before the command's own 20 s timeout.
    let abandoned = tokio::time::timeout(Duration::from_secs(1), call(&registry, sql_call())).await;
    assert!(abandoned.is_err(), "the call was still running");
    // Dropping the call stops the supervisor, which cleans up on its own.
    let deadline = Instant::now() + FINISHES;
    while !marker.survivors().is_empty() && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(
        marker.survivors(),
        Vec::<u32>::new(),
        "a process outlived the hook"
    );
}

#[tokio::test]
async fn a_decision_overwritten_by_a_duplicate_key_blocks() {
    let report = printf_call(
        HookPoint::PreToolUse,
        r#"{"decision": "block", "reason": "first", "decision": null}"#,
    )
    .await;
    assert!(!report.tool_ran, "{}", report.observation);
    assert!(
        blocked_reason(&report).contains("appears twice"),
        "{}",
        blocked_reason(&report)
    );
}

// ---- output the runtime cannot read in full blocks, fail_open or not (review) --

fn pay_call(to: &str) -> HookContext {
    HookContext::tool_call("pay", json!({"to": to, "amount": 10}))
}

async fn pay(registry: &HookRegistry, to: &str) -> ToolCallReport {
    registry
        .run_tool_call(pay_call(to), async |_: &Value| {
            Ok::<_, String>(json!("paid"))
        })
        .await
}

fn fail_open(spec: CommandSpec) -> HookRegistry {
    registry_of(spec.with_on_error(ErrorPolicy::FailOpen))
}

#[tokio::test]
async fn a_fail_open_deny_cannot_be_made_an_allow_by_a_long_argument() {
    let registry = fail_open(spec(HookPoint::PreToolUse, &["deny_payee.sh"]));
    let report = pay(&registry, "evil").await;
    assert_eq!(blocked_reason(&report), "payee evil is blacklisted");

    // The model makes the quoted payee longer than the runtime reads.
    let long = format!("evil{}", "x".repeat(12_000));
    let report = pay(&registry, &long).await;
    assert!(!report.tool_ran, "{}", report.observation);
    let reason = blocked_reason(&report);
    for part in [
        "hook `cmd` printed output that cannot be read in full",
        "more than 10000 characters",
        "blocked even though it is fail_open, because a decision may be in it",
    ] {
        assert!(reason.contains(part), "{part:?} missing from {reason}");
    }
    assert!(
        matches!(decision(&report), Decision::Blocked(_)),
        "{:?}",
        decision(&report)
    );
}

#[tokio::test]
async fn a_fail_open_deny_cannot_be_made_an_allow_by_breaking_its_json() {
    let registry = fail_open(spec(HookPoint::PreToolUse, &["deny_payee.sh"]));
    // `"` reaches the script as `\"`; the printf-built JSON is then invalid.
    let report = pay(&registry, "evil\" x").await;
    assert!(!report.tool_ran, "{}", report.observation);
    let reason = blocked_reason(&report);
    assert!(reason.contains("not valid JSON"), "{reason}");
    assert!(reason.contains("even though it is fail_open"), "{reason}");
}

#[tokio::test]
async fn a_fail_open_redaction_cannot_be_skipped_by_a_long_result() {
    let registry = fail_open(spec(HookPoint::PostToolUse, &["redact.sh"]));
    let run = async |result: String| {
        registry
            .run_tool_call(sql_call(), async move |_: &Value| {
                Ok::<_, String>(json!(result))
            })
            .await
    };
    let report = run("the secret is 42".into()).await;
    assert_eq!(
        report.observation,
        Observation::Output(json!("the [redacted] is 42"))
    );

    let long = format!("the secret is 42 {}", "x".repeat(12_000));
    let report = run(long).await;
    match &report.observation {
        Observation::Withheld { hook, reason } => {
            assert_eq!(hook, "cmd");
            assert!(reason.contains("cannot be read in full"), "{reason}");
        }
        other => panic!(
            "the unredacted result must not reach the LLM: {}",
            &format!("{other:?}")[..100]
        ),
    }
}

#[tokio::test]
async fn fail_open_does_not_cover_unreadable_or_hidden_decisions() {
    for format in [
        format!("\\377\\376{HIDDEN_BLOCK}"),
        format!("checking...\\n{HIDDEN_BLOCK}"),
        format!("checking... {HIDDEN_BLOCK}"),
        "{\"decision\": \"allow\"}".to_owned(),
    ] {
        let open = spec(HookPoint::PreToolUse, &["printf.sh", &format]);
        let report = call(&fail_open(open), sql_call()).await;
        assert!(!report.tool_ran, "{format}: {}", report.observation);
        assert!(
            blocked_reason(&report).contains("even though it is fail_open"),
            "{format}: {}",
            blocked_reason(&report)
        );
    }
}

#[tokio::test]
async fn fail_open_still_covers_a_crash_a_timeout_and_other_exit_codes() {
    for open in [
        spec(HookPoint::PreToolUse, &["crash.sh"]),
        spec(
            HookPoint::PreToolUse,
            &["printf.sh", "checked 3 rules\\n", "3"],
        ),
        spec(
            HookPoint::PreToolUse,
            &["printf.sh", "checking\\n", "signal"],
        ),
        spec(HookPoint::PreToolUse, &["slow.sh"]).with_timeout(Duration::from_millis(300)),
    ] {
        let report = call(&fail_open(open), sql_call()).await;
        assert!(report.tool_ran, "{}", report.observation);
        assert!(matches!(decision(&report), Decision::Failed { .. }));
    }
}

/// Review D 1: the model can make a script fail after it printed its deny
/// (`set -e` and a step that breaks on a hostile argument).
#[tokio::test]
async fn fail_open_does_not_cover_a_decision_printed_before_a_failure() {
    let deny = r#"{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": "no"}}"#;
    for (argv, timeout, failure) in [
        (
            ["printf.sh", HIDDEN_BLOCK, "3"],
            FINISHES,
            "exited with code 3",
        ),
        (["printf.sh", deny, "1"], FINISHES, "exited with code 1"),
        (
            ["printf.sh", HIDDEN_BLOCK, "signal"],
            FINISHES,
            "killed by signal 9",
        ),
        (
            ["printf.sh", HIDDEN_BLOCK, "hang"],
            Duration::from_secs(1),
            "timed out",
        ),
    ] {
        let open = spec(HookPoint::PreToolUse, &argv).with_timeout(timeout);
        let report = call(&fail_open(open), sql_call()).await;
        assert!(!report.tool_ran, "{argv:?}: {}", report.observation);
        let reason = blocked_reason(&report);
        assert!(
            reason.contains(failure) && reason.contains("printed a block first"),
            "{argv:?}: {reason}"
        );
    }
    let ask = r#"{"hookSpecificOutput": {"permissionDecision": "ask"}}"#;
    let open = spec(HookPoint::PreToolUse, &["printf.sh", ask, "1"]);
    let report = call(&fail_open(open), sql_call()).await;
    assert!(!report.tool_ran, "{}", report.observation);
    assert!(blocked_reason(&report).contains("printed \"ask\" first"));
}

/// Review D 4: a decision written to the wrong stream is not an allow.
#[tokio::test]
async fn a_decision_on_stderr_after_exit_0_blocks() {
    for policy in [ErrorPolicy::FailClosed, ErrorPolicy::FailOpen] {
        let spec =
            spec(HookPoint::PreToolUse, &["emit.sh", "", HIDDEN_BLOCK, "0"]).with_on_error(policy);
        let report = call(&registry_of(spec), sql_call()).await;
        assert!(!report.tool_ran, "{policy:?}: {}", report.observation);
        assert!(
            blocked_reason(&report).contains("on stderr"),
            "{policy:?}: {}",
            blocked_reason(&report)
        );
    }
    // Diagnostics and structured logs on stderr are not decisions.
    let spec = spec(
        HookPoint::PreToolUse,
        &[
            "emit.sh",
            "",
            "{\"level\": \"warn\", \"reason\": \"slow\"}\nretrying {x}",
            "0",
        ],
    );
    let report = call(&registry_of(spec), sql_call()).await;
    assert!(report.tool_ran, "{}", report.observation);
}

/// At session start the model has written nothing, so output it cannot
/// read follows the hook's own policy (review D 2).
#[tokio::test]
async fn unreadable_session_start_output_follows_the_hooks_own_policy() {
    let open = fail_open(spec(HookPoint::SessionStart, &["big.sh", "out", "2000"]));
    open.start_session(HookContext::session())
        .await
        .expect("a fail_open hook's unreadable output does not stop the session");
    let closed = registry_of(spec(HookPoint::SessionStart, &["big.sh", "out", "2000"]));
    let stopped = closed
        .start_session(HookContext::session())
        .await
        .expect_err("a fail_closed hook's unreadable output stops the session");
    assert!(
        stopped.reason.contains("10000 characters"),
        "{}",
        stopped.reason
    );
}

#[tokio::test]
async fn session_start_context_with_code_and_quoted_words_is_context() {
    for policy in [ErrorPolicy::FailClosed, ErrorPolicy::FailOpen] {
        let spec = spec(
            HookPoint::SessionStart,
            &[
                "printf.sh",
                "Example:\\n  {\\n    run();\\n  }\\nSet the \"reason\" field.\\n",
            ],
        )
        .with_on_error(policy);
        let context = match registry_of(spec)
            .start_session(HookContext::session())
            .await
        {
            Ok(hooks::SessionStart { context, .. }) => context,
            Err(stopped) => panic!("{policy:?}: {}", stopped.reason),
        };
        assert!(
            context.contains("Set the \"reason\" field."),
            "{policy:?}: {context}"
        );
    }
}

// ---- decisions hidden inside plain text (review) ------------------------------

/// Stdout a script may print that hides [`HIDDEN_BLOCK`] from a reader that
/// looks for `{` at line starts only.
fn hidden_decisions() -> Vec<String> {
    let block = HIDDEN_BLOCK;
    vec![
        // On the same line as progress text (printf without a newline).
        format!("checking... {block}"),
        // `tput sgr0` on xterm: a 3-character ESC sequence.
        format!("\\033(B\\033[m{block}"),
        // Device control, application program command, privacy message, start of string.
        format!("\\033Pq#0;2;0;0;0\\033\\\\{block}"),
        format!("\\033_app\\033\\\\{block}"),
        format!("\\033^pm\\033\\\\{block}"),
        format!("\\033Xsos\\033\\\\{block}"),
        // Default-ignorable U+FFF0, and the C1 control sequence introducer U+009B.
        format!("\\357\\277\\260{block}"),
        format!("\\302\\2330m{block}"),
        // A JSON array.
        format!("[{block}]"),
        "[[{}]]".to_owned(),
        // A decision key with its value but no braces around it.
        "result: \"decision\": \"block\"".to_owned(),
        "ok \"hookSpecificOutput\" : {".to_owned(),
        // Review D 3 and 9: double-encoded JSON, and a Python dict.
        r#""{\"decision\":\"block\"}""#.to_owned(),
        r#"checking "{\"decision\":\"block\"}""#.to_owned(),
        "result: {'decision': 'block'}".to_owned(),
    ]
}

#[tokio::test]
async fn decisions_hidden_inside_plain_text_block() {
    for format in hidden_decisions() {
        let report = printf_call(HookPoint::PreToolUse, &format).await;
        assert!(!report.tool_ran, "{format}: {}", report.observation);
        assert!(
            matches!(decision(&report), Decision::Failed { .. }),
            "{format}: {:?}",
            decision(&report)
        );
        let report = printf_call(HookPoint::PostToolUse, &format).await;
        assert!(
            matches!(report.observation, Observation::Withheld { .. }),
            "{format}: {}",
            report.observation
        );
    }
}

#[tokio::test]
async fn plain_progress_text_with_brackets_and_braces_still_allows() {
    for format in [
        "[1/3] checking",
        "[INFO] all good",
        "checked {a} and {b}",
        "\\033[32mok\\033[0m",
        "a reason to continue",
        // Review D 2: none of these holds a decision.
        "[ ] lint skipped",
        "warning: config lacks \"reason\"; using default",
        "Press \"continue\" in the UI",
        "int main()\\n{\\n    return 0;\\n}\\n",
        "{Name:acme Limit:500}",
        "{src,dst}/y done",
        "[\"a.txt\", \"b.txt\"] unchanged",
        "input ok: {\"payee\": \"acme\"}",
        "args: {'payee': 'acme'}",
    ] {
        let report = printf_call(HookPoint::PreToolUse, format).await;
        assert!(report.tool_ran, "{format}: {}", report.observation);
    }
}

#[tokio::test]
async fn session_start_context_with_json_inside_a_line_stops_the_session() {
    let registry = registry_of(spec(
        HookPoint::SessionStart,
        &["printf.sh", "Rules: {\"continue\": false}\\n"],
    ));
    let stopped = registry
        .start_session(HookContext::session())
        .await
        .expect_err("the session must not start");
    assert!(
        stopped.reason.contains("additionalContext"),
        "{}",
        stopped.reason
    );
}
