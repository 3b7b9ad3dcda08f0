//! Call observers see every attempted call exactly once, whatever happened,
//! and a failing observer withholds the observation.

use std::sync::{Arc, Mutex};

use hooks::prelude::*;
use hooks::{CallObserver, CallRecord, HookError, HookFuture};
use serde_json::{Value, json};

#[pre_tool_use(when = tool_name == "observed_block")]
async fn observed_blocker(_: &HookContext) -> HookResult {
    HookResult::block("not today")
}

#[pre_tool_use(when = tool_name == "observed_panic")]
async fn observed_panicker(_: &HookContext) -> HookResult {
    panic!("guard bug")
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
