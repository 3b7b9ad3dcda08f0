//! Call observers see every attempted call exactly once, whatever happened,
//! and a failing observer withholds the observation.

use std::sync::{Arc, Mutex};

use hooks::prelude::*;
use hooks::{
    HookError, HookFuture,
    observer::{CallObserver, CallRecord},
};
use serde_json::{Value, json};

#[pre_tool_use(when = tool_name == "observed_block")]
async fn observed_blocker(_: &HookContext) -> HookResult {
    HookResult::block("not today")
}

#[pre_tool_use(when = tool_name == "observed_panic")]
async fn observed_panicker(_: &HookContext) -> HookResult {
    panic!("guard bug")
}

#[pre_tool_use(when = tool_name == "observed_slow_pre")]
async fn observed_slow_approval(_: &HookContext) -> HookResult {
    tokio::time::sleep(std::time::Duration::from_secs(30)).await;
    HookResult::allow()
}

#[post_tool_use(when = tool_name == "observed_slow_post")]
async fn observed_slow_post(_: &HookContext) -> HookResult {
    tokio::time::sleep(std::time::Duration::from_secs(30)).await;
    HookResult::allow()
}

#[post_tool_use(when = tool_name == "observed_rewrite")]
async fn observed_shortener(ctx: &HookContext) -> HookResult {
    let text = ctx.result().and_then(Value::as_str).unwrap_or_default();
    HookResult::allow().with_result(json!(text.chars().take(3).collect::<String>()))
}

/// One observed call: tool, what stopped it, raw result.
type Seen = (String, Option<String>, Option<Value>);

/// Records each call it sees.
#[derive(Default)]
struct Recorder {
    seen: Mutex<Vec<Seen>>,
}

impl CallObserver for Recorder {
    fn name(&self) -> &str {
        "recorder"
    }
    fn observe<'a>(&'a self, record: CallRecord<'a>) -> HookFuture<'a> {
        Box::pin(async move {
            self.seen.lock().expect("lock").push((
                record.ctx.tool_name.clone(),
                record.report.stopped_by().map(str::to_owned),
                record.report.raw_result().cloned(),
            ));
            Ok(HookResult::allow())
        })
    }
}

struct BrokenStore;

impl CallObserver for BrokenStore {
    fn name(&self) -> &str {
        "audit_store"
    }
    fn observe<'a>(&'a self, _: CallRecord<'a>) -> HookFuture<'a> {
        Box::pin(async { Err(HookError::new("disk full")) })
    }
}

fn registry(observer: Arc<dyn CallObserver>) -> HookRegistry {
    HookRegistry::builder()
        .registered_named([
            "observed_blocker",
            "observed_panicker",
            "observed_shortener",
            "observed_slow_approval",
            "observed_slow_post",
        ])
        .observer(observer)
        .build()
        .expect("registry")
}

#[tokio::test]
async fn every_call_is_observed_once_on_every_path() {
    let recorder = Arc::new(Recorder::default());
    let registry = registry(recorder.clone());
    let calls: [(&str, Result<Value, String>); 5] = [
        ("observed_ok", Ok(json!("fine"))),
        ("observed_block", Ok(json!("never"))),
        ("observed_panic", Ok(json!("never"))),
        ("observed_tool_error", Err("boom".into())),
        ("observed_rewrite", Ok(json!("abcdef"))),
    ];
    for (tool, outcome) in calls {
        let report = registry
            .run_tool_call(
                HookContext::tool_call(tool, json!({})),
                async |_: &Value| outcome,
            )
            .await;
        if tool == "observed_rewrite" {
            assert_eq!(report.observation, Observation::Output(json!("abc")));
            assert_eq!(
                report.raw_result(),
                Some(&json!("abcdef")),
                "the raw result survives the rewrite"
            );
        }
    }
    let seen = recorder.seen.lock().expect("lock").clone();
    assert_eq!(
        seen,
        [
            ("observed_ok".into(), None, Some(json!("fine"))),
            (
                "observed_block".into(),
                Some("observed_blocker".into()),
                None
            ),
            (
                "observed_panic".into(),
                Some("observed_panicker".into()),
                None
            ),
            ("observed_tool_error".into(), None, None),
            ("observed_rewrite".into(), None, Some(json!("abcdef"))),
        ]
    );
}

#[tokio::test]
async fn a_failing_observer_withholds_the_result() {
    let registry = registry(Arc::new(BrokenStore));
    let report = registry
        .run_tool_call(
            HookContext::tool_call("observed_ok", json!({})),
            async |_: &Value| Ok::<_, String>(json!("secret payroll")),
        )
        .await;
    assert!(report.tool_ran);
    assert_eq!(report.observation.output(), None);
    assert_eq!(
        report.observation.to_string(),
        "Result withheld by hook `audit_store`: observer `audit_store` returned an error: disk full; the result is withheld because the observer fails closed"
    );
    assert_eq!(report.raw_result(), Some(&json!("secret payroll")));
}

#[tokio::test]
async fn evaluation_runs_bypass_observers_too() {
    let recorder = Arc::new(Recorder::default());
    let registry = registry(recorder.clone());
    let ctx = HookContext::tool_call("observed_ok", json!({})).with_surface(Surface::Evaluation);
    let report = registry
        .run_tool_call(ctx, async |_: &Value| Ok::<_, String>(json!(1)))
        .await;
    assert!(report.trace.bypassed());
    assert!(recorder.seen.lock().expect("lock").is_empty());
}

/// Records each call it sees, after taking its time (a slow database).
struct SlowRecorder {
    inner: Recorder,
}

impl CallObserver for SlowRecorder {
    fn name(&self) -> &str {
        "slow_recorder"
    }
    fn observe<'a>(&'a self, record: CallRecord<'a>) -> HookFuture<'a> {
        Box::pin(async move {
            tokio::time::sleep(std::time::Duration::from_millis(300)).await;
            self.inner.observe(record).await
        })
    }
}

/// Waits (up to 5 s) until the recorder has seen `count` calls.
async fn seen_eventually(recorder: &Recorder, count: usize) -> Vec<Seen> {
    for _ in 0..500 {
        let seen = recorder.seen.lock().expect("lock").clone();
        if seen.len() >= count {
            return seen;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    recorder.seen.lock().expect("lock").clone()
}

#[tokio::test]
async fn a_tool_that_panics_before_returning_its_future_is_a_tool_error_and_observed() {
    let recorder = Arc::new(Recorder::default());
    let registry = registry(recorder.clone());
    #[allow(unreachable_code, reason = "the tool panics while creating its future")]
    let tool = |_: &Value| {
        panic!("bad tool");
        async { Ok::<Value, String>(json!("never")) }
    };
    let report = registry
        .run_tool_call(HookContext::tool_call("observed_ok", json!({})), tool)
        .await;
    assert_eq!(
        report.observation,
        Observation::ToolError("the tool panicked: bad tool".into())
    );
    assert_eq!(
        recorder.seen.lock().expect("lock").clone(),
        [("observed_ok".to_owned(), None, None)]
    );
}

#[tokio::test]
async fn a_call_dropped_after_the_tool_ran_is_still_observed_once() {
    let recorder = Arc::new(Recorder::default());
    let registry = registry(recorder.clone());
    let call = registry.run_tool_call(
        HookContext::tool_call("observed_slow_post", json!({})),
        async |_: &Value| Ok::<_, String>(json!("paid")),
    );
    // The caller gives up while the slow post hook runs.
    let gave_up = tokio::time::timeout(std::time::Duration::from_millis(200), call).await;
    assert!(gave_up.is_err());
    let seen = seen_eventually(&recorder, 1).await;
    assert_eq!(
        seen,
        [(
            "observed_slow_post".to_owned(),
            Some("runtime".to_owned()),
            Some(json!("paid"))
        )],
        "the row names the tool's real result and who stopped it"
    );
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    assert_eq!(recorder.seen.lock().expect("lock").len(), 1, "exactly once");
}

#[tokio::test]
async fn a_call_dropped_while_a_pre_hook_waits_is_observed_as_not_run() {
    let recorder = Arc::new(Recorder::default());
    let registry = registry(recorder.clone());
    let ran = Arc::new(Mutex::new(false));
    let flag = ran.clone();
    let call = registry.run_tool_call(
        HookContext::tool_call("observed_slow_pre", json!({})),
        async move |_: &Value| {
            *flag.lock().expect("lock") = true;
            Ok::<_, String>(json!("paid"))
        },
    );
    assert!(
        tokio::time::timeout(std::time::Duration::from_millis(100), call)
            .await
            .is_err()
    );
    let seen = seen_eventually(&recorder, 1).await;
    assert_eq!(
        seen,
        [(
            "observed_slow_pre".to_owned(),
            Some("runtime".to_owned()),
            None
        )]
    );
    assert!(!*ran.lock().expect("lock"));
}

#[tokio::test]
async fn observers_finish_even_when_the_caller_stops_waiting_for_them() {
    let slow = Arc::new(SlowRecorder {
        inner: Recorder::default(),
    });
    let registry = registry(slow.clone());
    let call = registry.run_tool_call(
        HookContext::tool_call("observed_ok", json!({})),
        async |_: &Value| Ok::<_, String>(json!("fine")),
    );
    // Gives up while the observer is still writing.
    assert!(
        tokio::time::timeout(std::time::Duration::from_millis(100), call)
            .await
            .is_err()
    );
    let seen = seen_eventually(&slow.inner, 1).await;
    assert_eq!(
        seen,
        [("observed_ok".to_owned(), None, Some(json!("fine")))]
    );
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    assert_eq!(
        slow.inner.seen.lock().expect("lock").len(),
        1,
        "exactly once"
    );
}

#[tokio::test]
async fn a_failing_observer_keeps_the_block_reason() {
    let registry = registry(Arc::new(BrokenStore));
    let report = registry
        .run_tool_call(
            HookContext::tool_call("observed_block", json!({})),
            async |_: &Value| Ok::<_, String>(json!("never")),
        )
        .await;
    assert!(!report.tool_ran);
    assert_eq!(report.stopped_by(), Some("observed_blocker"));
    let text = report.observation.to_string();
    assert!(text.contains("not today"), "{text}");
    assert!(
        text.contains("observer `audit_store` returned an error: disk full"),
        "{text}"
    );

    let failed = registry
        .run_tool_call(
            HookContext::tool_call("observed_ok", json!({})),
            async |_: &Value| Err::<Value, _>("upstream 503"),
        )
        .await;
    let text = failed.observation.to_string();
    assert!(
        text.contains("upstream 503") && text.contains("disk full"),
        "{text}"
    );
    assert_eq!(failed.tool_error(), Some("upstream 503"));
}

#[tokio::test]
async fn a_tool_name_with_control_characters_is_blocked_before_any_hook_and_observed() {
    let recorder = Arc::new(Recorder::default());
    let registry = registry(recorder.clone());
    for name in ["observed_block\0", "pay\u{202E}yap", "", "observed_ok\n"] {
        let report = registry
            .run_tool_call(
                HookContext::tool_call(name, json!({})),
                async |_: &Value| Ok::<_, String>(json!("ran")),
            )
            .await;
        assert!(!report.tool_ran, "{name:?}");
        assert_eq!(report.stopped_by(), Some("runtime"), "{name:?}");
        assert!(report.trace.runs().is_empty(), "no hook ran for {name:?}");
    }
    assert_eq!(recorder.seen.lock().expect("lock").len(), 4, "all observed");
}

#[test]
fn flush_observers_waits_for_the_rows_of_dropped_calls_before_shutdown() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let recorder = Arc::new(Recorder::default());
    let registry = registry(recorder.clone());
    let call = registry.run_tool_call(
        HookContext::tool_call("observed_slow_post", json!({})),
        async |_: &Value| Ok::<_, String>(json!("paid")),
    );
    let gave_up = runtime
        .block_on(async { tokio::time::timeout(std::time::Duration::from_millis(50), call).await });
    assert!(gave_up.is_err());
    // On a current-thread runtime the detached task has not run yet.
    runtime.block_on(registry.flush_observers());
    assert_eq!(
        recorder.seen.lock().expect("lock").clone(),
        [(
            "observed_slow_post".to_owned(),
            Some("runtime".to_owned()),
            Some(json!("paid"))
        )]
    );
    drop(runtime);
}

/// An observer that makes a tool call of its own through the registry it
/// observes, and may flush it (an audit log that looks something up).
#[derive(Default)]
struct CallsTools {
    registry: std::sync::OnceLock<HookRegistry>,
    flush: bool,
    inner: Recorder,
}

impl CallObserver for CallsTools {
    fn name(&self) -> &str {
        "calls_tools"
    }
    fn timeout(&self) -> std::time::Duration {
        std::time::Duration::from_secs(2)
    }
    fn observe<'a>(&'a self, record: CallRecord<'a>) -> HookFuture<'a> {
        Box::pin(async move {
            let registry = self.registry.get().expect("registry set");
            registry
                .run_tool_call(
                    HookContext::tool_call("lookup", json!({})),
                    async |_: &Value| Ok::<_, String>(json!("found")),
                )
                .await;
            if self.flush {
                registry.flush_observers().await;
            }
            self.inner.observe(record).await
        })
    }
}

#[tokio::test]
async fn an_observer_that_calls_tools_does_not_observe_its_own_calls_or_wait_for_itself() {
    for flush in [false, true] {
        let observer = Arc::new(CallsTools {
            flush,
            ..CallsTools::default()
        });
        let registry = registry(observer.clone());
        observer
            .registry
            .set(registry.clone())
            .unwrap_or_else(|_| panic!("set once"));
        let report = tokio::time::timeout(
            std::time::Duration::from_secs(5),
            registry.run_tool_call(
                HookContext::tool_call("observed_ok", json!({})),
                async |_: &Value| Ok::<_, String>(json!("fine")),
            ),
        )
        .await
        .expect("the call finishes");
        assert_eq!(
            report.observation,
            Observation::Output(json!("fine")),
            "flush: {flush}"
        );
        tokio::time::timeout(
            std::time::Duration::from_secs(5),
            registry.flush_observers(),
        )
        .await
        .expect("the flush finishes");
        assert_eq!(
            observer.inner.seen.lock().expect("lock").clone(),
            [("observed_ok".to_owned(), None, Some(json!("fine")))],
            "the outer call once, the observer's own call not at all (flush: {flush})"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flush_waits_for_earlier_tasks_not_for_steady_traffic() {
    let slow = Arc::new(SlowRecorder {
        inner: Recorder::default(),
    });
    let registry = registry(slow.clone());
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let mut callers = Vec::new();
    for _ in 0..8 {
        let (registry, stop) = (registry.clone(), stop.clone());
        callers.push(tokio::spawn(async move {
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                registry
                    .run_tool_call(
                        HookContext::tool_call("observed_ok", json!({})),
                        async |_: &Value| Ok::<_, String>(json!("fine")),
                    )
                    .await;
            }
        }));
    }
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    let flushed = tokio::time::timeout(
        std::time::Duration::from_secs(5),
        registry.flush_observers(),
    )
    .await;
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    for caller in callers {
        caller.await.expect("caller");
    }
    assert!(flushed.is_ok(), "the flush returned while traffic went on");
}
