//! `HookLayer` around plain `service_fn` executors and hand-written
//! services: what the executor receives, what the caller gets back, what the
//! observers (the audit log) see, and that `poll_ready` is the executor's.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use hooks_runtime::observer::{CallObserver, CallRecord};
use hooks_runtime::tower::{HookLayer, HookService, ToolCall, ToolCallError};
use hooks_runtime::{
    Hook, HookContext, HookFuture, HookOutcome, HookRegistry, HookResult, Observation,
    PostToolUseHook, PreToolUseHook,
};
use serde_json::{Value, json};
use tower::{Service, ServiceBuilder, ServiceExt as _, service_fn};

/// A hook whose decision is a function of the context.
struct Scripted {
    name: &'static str,
    decide: fn(&HookContext) -> HookResult,
}

impl Hook for Scripted {
    fn name(&self) -> &str {
        self.name
    }
    fn execute<'a>(&'a self, ctx: &'a HookContext) -> HookOutcome<'a> {
        HookOutcome::ready((self.decide)(ctx))
    }
}
impl PreToolUseHook for Scripted {}
impl PostToolUseHook for Scripted {}

/// Blocks `rm`, caps `limit` at 100.
fn guard(ctx: &HookContext) -> HookResult {
    if ctx.tool_args["cmd"]
        .as_str()
        .is_some_and(|cmd| cmd.starts_with("rm"))
    {
        return HookResult::block("rm is not allowed");
    }
    match ctx.tool_args["limit"].as_u64() {
        Some(limit) if limit > 100 => {
            let mut args = ctx.tool_args.clone();
            args["limit"] = json!(100);
            HookResult::allow().with_args(args)
        }
        _ => HookResult::allow(),
    }
}

/// Withholds results that mention a secret; cuts long strings to 8 characters.
fn redact(ctx: &HookContext) -> HookResult {
    match ctx.result() {
        Some(result) if result.to_string().contains("secret") => {
            HookResult::block("the result holds a secret")
        }
        Some(Value::String(text)) if text.chars().count() > 8 => {
            HookResult::allow().with_result(json!(text.chars().take(8).collect::<String>()))
        }
        _ => HookResult::allow(),
    }
}

#[derive(Default)]
struct Audit(Mutex<Vec<(String, Observation, bool)>>);

impl CallObserver for Audit {
    fn name(&self) -> &str {
        "audit"
    }
    fn observe<'a>(&'a self, record: CallRecord<'a>) -> HookFuture<'a> {
        self.0.lock().unwrap().push((
            record.ctx.tool_name.clone(),
            record.report.observation.clone(),
            record.report.tool_ran,
        ));
        Box::pin(async { Ok(HookResult::allow()) })
    }
}

fn registry(audit: &Arc<Audit>) -> HookRegistry {
    HookRegistry::builder()
        .pre(Scripted {
            name: "guard",
            decide: guard,
        })
        .post(Scripted {
            name: "redact",
            decide: redact,
        })
        .observer(audit.clone())
        .build()
        .unwrap()
}

/// An executor that answers `"done"`, and how many calls reached it.
fn counting_executor() -> (
    Arc<AtomicUsize>,
    impl Service<ToolCall, Response = Value, Error = String, Future: Send> + Clone + Send + 'static,
) {
    let calls = Arc::new(AtomicUsize::new(0));
    let counted = calls.clone();
    let executor = service_fn(move |_: ToolCall| {
        counted.fetch_add(1, Ordering::SeqCst);
        async { Ok::<_, String>(json!("done")) }
    });
    (calls, executor)
}

async fn audited(registry: &HookRegistry, audit: &Audit) -> Vec<(String, Observation, bool)> {
    registry.flush_observers().await;
    audit.0.lock().unwrap().clone()
}

#[tokio::test]
async fn service_builder_runs_the_executor_with_the_rewritten_arguments() {
    let audit = Arc::new(Audit::default());
    let registry = registry(&audit);
    let received = Arc::new(Mutex::new(Vec::new()));
    let seen = received.clone();
    let executor = service_fn(move |call: ToolCall| {
        seen.lock().unwrap().push(call.clone());
        async move { Ok::<_, String>(json!({"rows": call.args()["limit"]})) }
    });
    let service = ServiceBuilder::new()
        .layer(HookLayer::new(registry.clone()))
        .service(executor);

    let ctx = HookContext::tool_call("sql_query", json!({"limit": 5000}))
        .with_user("alice")
        .with_org("acme");
    let result = service.oneshot(ToolCall::from_context(ctx)).await.unwrap();

    assert_eq!(result, json!({"rows": 100}));
    let received = received.lock().unwrap().clone();
    assert_eq!(received.len(), 1);
    assert_eq!(received[0].args(), &json!({"limit": 100}));
    assert_eq!(received[0].tool_name(), "sql_query");
    assert_eq!(received[0].context().user_id, "alice");
    assert_eq!(received[0].context().org_id, "acme");
    let rows = audited(&registry, &audit).await;
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].1, Observation::Output(json!({"rows": 100})));
}

#[tokio::test]
async fn a_blocked_call_never_reaches_the_executor() {
    let audit = Arc::new(Audit::default());
    let registry = registry(&audit);
    let (calls, executor) = counting_executor();
    let service = ServiceBuilder::new()
        .layer(HookLayer::new(registry.clone()))
        .service(executor);

    let error = service
        .oneshot(ToolCall::new("shell", json!({"cmd": "rm -rf /"})))
        .await
        .unwrap_err();

    assert_eq!(calls.load(Ordering::SeqCst), 0);
    let ToolCallError::Blocked {
        hook,
        reason,
        report,
    } = &error
    else {
        panic!("expected a block, got {error:?}");
    };
    assert_eq!(
        (hook.as_str(), reason.as_str()),
        ("guard", "rm is not allowed")
    );
    assert!(!report.tool_ran);
    assert_eq!(
        error.to_string(),
        "the tool call was blocked by hook `guard`: rm is not allowed"
    );
    assert_eq!(
        error.observation().to_string(),
        "Blocked by hook `guard`: rm is not allowed"
    );
    let rows = audited(&registry, &audit).await;
    assert_eq!(rows.len(), 1);
    assert!(rows[0].1.is_blocked() && !rows[0].2);
}

#[tokio::test]
async fn a_hostile_tool_name_is_refused_before_any_hook_or_the_executor() {
    let audit = Arc::new(Audit::default());
    let registry = registry(&audit);
    let (calls, executor) = counting_executor();
    let service = HookLayer::new(registry.clone()).layer_service(executor);
    let error = service
        .oneshot(ToolCall::new("sql\u{202e}query", json!({})))
        .await
        .unwrap_err();
    assert_eq!(calls.load(Ordering::SeqCst), 0);
    assert!(matches!(&error, ToolCallError::Blocked { hook, .. } if hook == "runtime"));
    assert_eq!(audited(&registry, &audit).await.len(), 1);
}

trait LayerService {
    fn layer_service<S>(&self, inner: S) -> HookService<S>;
}
impl LayerService for HookLayer {
    fn layer_service<S>(&self, inner: S) -> HookService<S> {
        tower::Layer::layer(self, inner)
    }
}

#[tokio::test]
async fn post_hooks_rewrite_or_withhold_the_result() {
    let audit = Arc::new(Audit::default());
    let registry = registry(&audit);
    let executor = service_fn(|call: ToolCall| async move {
        Ok::<_, String>(json!(format!(
            "{} and more",
            call.args()["text"].as_str().unwrap_or("")
        )))
    });
    let mut service = ServiceBuilder::new()
        .layer(HookLayer::new(registry.clone()))
        .service(executor);

    let cut = service
        .ready()
        .await
        .unwrap()
        .call(ToolCall::new("echo", json!({"text": "a long answer"})))
        .await
        .unwrap();
    assert_eq!(cut, json!("a long a"));

    let error = service
        .ready()
        .await
        .unwrap()
        .call(ToolCall::new("echo", json!({"text": "the secret"})))
        .await
        .unwrap_err();
    let ToolCallError::Withheld { hook, report, .. } = &error else {
        panic!("expected a withheld result, got {error:?}");
    };
    assert_eq!(hook, "redact");
    assert!(report.tool_ran);
    assert_eq!(report.raw_result(), Some(&json!("the secret and more")));
    assert_eq!(audited(&registry, &audit).await.len(), 2);
}

#[derive(Debug, PartialEq)]
struct Unreachable {
    host: String,
}
impl std::fmt::Display for Unreachable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} is unreachable", self.host)
    }
}
impl std::error::Error for Unreachable {}

#[tokio::test]
async fn an_executor_error_keeps_its_value_and_a_panic_is_one_tool_error() {
    let audit = Arc::new(Audit::default());
    let registry = registry(&audit);
    let failing = service_fn(|_: ToolCall| async {
        Err::<Value, _>(Unreachable {
            host: "db1".to_owned(),
        })
    });
    let error = HookLayer::new(registry.clone())
        .layer_service(failing)
        .oneshot(ToolCall::new("sql_query", json!({})))
        .await
        .unwrap_err();
    assert_eq!(error.to_string(), "the tool failed: db1 is unreachable");
    let source = error.report().and_then(|report| report.tool_error_source());
    assert_eq!(
        source.and_then(|source| source.downcast_ref::<Unreachable>()),
        Some(&Unreachable {
            host: "db1".to_owned()
        })
    );

    let panicking = service_fn(|call: ToolCall| async move {
        if call.tool_name() == "explode" {
            panic!("the executor fell over");
        }
        Ok::<_, String>(Value::Null)
    });
    let error = HookLayer::new(registry.clone())
        .layer_service(panicking)
        .oneshot(ToolCall::new("explode", json!({})))
        .await
        .unwrap_err();
    assert!(
        matches!(&error, ToolCallError::Tool { message, .. } if message.contains("the executor fell over")),
        "{error:?}"
    );
    let rows = audited(&registry, &audit).await;
    assert_eq!(rows.len(), 2, "one row per call: {rows:?}");
    assert!(
        rows.iter()
            .all(|(_, observation, ran)| *ran && matches!(observation, Observation::ToolError(_)))
    );
}

/// A service that is not ready until told, then fails its readiness check.
#[derive(Clone)]
struct Gated {
    state: Arc<Mutex<Readiness>>,
    calls: Arc<AtomicUsize>,
}

#[derive(Clone, Copy, PartialEq)]
enum Readiness {
    Pending,
    Ready,
    Broken,
}

impl Service<ToolCall> for Gated {
    type Response = Value;
    type Error = String;
    type Future = std::future::Ready<Result<Value, String>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), String>> {
        match *self.state.lock().unwrap() {
            Readiness::Pending => Poll::Pending,
            Readiness::Ready => Poll::Ready(Ok(())),
            Readiness::Broken => Poll::Ready(Err("the connection pool is closed".to_owned())),
        }
    }

    fn call(&mut self, _: ToolCall) -> Self::Future {
        self.calls.fetch_add(1, Ordering::SeqCst);
        std::future::ready(Ok(json!("ok")))
    }
}

#[tokio::test]
async fn poll_ready_is_the_executors() {
    let audit = Arc::new(Audit::default());
    let registry = registry(&audit);
    let state = Arc::new(Mutex::new(Readiness::Pending));
    let calls = Arc::new(AtomicUsize::new(0));
    let mut service = HookLayer::new(registry.clone()).layer_service(Gated {
        state: state.clone(),
        calls: calls.clone(),
    });
    let waker = std::task::Waker::noop();
    let mut cx = Context::from_waker(waker);

    assert!(service.poll_ready(&mut cx).is_pending());
    *state.lock().unwrap() = Readiness::Ready;
    assert!(matches!(service.poll_ready(&mut cx), Poll::Ready(Ok(()))));
    assert_eq!(
        service
            .call(ToolCall::new("ping", json!({})))
            .await
            .unwrap(),
        json!("ok")
    );

    *state.lock().unwrap() = Readiness::Broken;
    let Poll::Ready(Err(error)) = service.poll_ready(&mut cx) else {
        panic!("a broken executor must say so");
    };
    assert!(matches!(error, ToolCallError::NotReady(_)));
    assert_eq!(
        error.to_string(),
        "the tool service is not ready: the connection pool is closed"
    );
    assert!(error.report().is_none());
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    // Readiness checks are not calls: the audit log has the one call made.
    assert_eq!(audited(&registry, &audit).await.len(), 1);
}
