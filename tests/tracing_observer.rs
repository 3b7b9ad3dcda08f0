//! The tracing observer: one root span per observed call with its fields, one
//! event per hook that ran, nothing a hostile model wrote copied raw into a
//! log line, no argument values, and never a withheld result.

use std::collections::BTreeMap;
use std::fmt;
use std::io;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use hooks::observer::{TRACING_TARGET, TracingObserver};
use hooks::prelude::*;
use serde_json::{Value, json};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Level, Subscriber};
use tracing_subscriber::layer::{Context, SubscriberExt as _};
use tracing_subscriber::registry::LookupSpan;
use tracing_subscriber::{Layer, Registry};

#[pre_tool_use(priority = 10, when = tool_name == "traced_read")]
async fn traced_allow(_: &HookContext) -> HookResult {
    HookResult::allow()
}

#[pre_tool_use(priority = 20, when = tool_name == "traced_read")]
async fn traced_rewrite(ctx: &HookContext) -> HookResult {
    let mut args = ctx.tool_args.clone();
    args["limit"] = json!(100);
    HookResult::allow().with_args(args)
}

#[pre_tool_use(priority = 5, when = tool_name == "traced_write")]
async fn traced_block(ctx: &HookContext) -> HookResult {
    let password = ctx.tool_args["password"].as_str().unwrap_or_default();
    HookResult::block(format!("no writes\nwith password {password}"))
}

#[pre_tool_use(priority = 90, when = tool_name == "traced_write")]
async fn traced_after_block(_: &HookContext) -> HookResult {
    HookResult::allow()
}

#[pre_tool_use(when = tool_name == "nothing_calls_this")]
async fn traced_unmatched(_: &HookContext) -> HookResult {
    HookResult::allow()
}

#[pre_tool_use(when = tool_name == "traced_slow")]
async fn traced_wait(_: &HookContext) -> HookResult {
    tokio::time::sleep(Duration::from_millis(5)).await;
    HookResult::allow()
}

#[pre_tool_use(when = tool_name == "traced_panic")]
async fn traced_panics(_: &HookContext) -> HookResult {
    panic!("guard bug")
}

#[post_tool_use(when = tool_name == "traced_withheld")]
async fn traced_withhold(_: &HookContext) -> HookResult {
    HookResult::block("result has customer emails")
}

const HOOKS: [&str; 8] = [
    "traced_allow",
    "traced_rewrite",
    "traced_block",
    "traced_after_block",
    "traced_unmatched",
    "traced_wait",
    "traced_panics",
    "traced_withhold",
];

fn registry_with(observer: TracingObserver) -> HookRegistry {
    HookRegistry::builder()
        .registered_named(HOOKS)
        .observer(Arc::new(observer))
        .build()
        .expect("registry")
}

async fn call(registry: &HookRegistry, ctx: HookContext) -> hooks::ToolCallReport {
    registry
        .run_tool_call(ctx, async |args: &Value| {
            if args.get("fail").is_some() {
                Err("connection refused".to_owned())
            } else {
                Ok(json!({"rows": 3}))
            }
        })
        .await
}

fn ctx(tool: &str, args: Value) -> HookContext {
    HookContext::tool_call(tool, args)
        .with_agent("finance")
        .with_user("alice")
        .with_org("acme")
        .with_conversation("conv-7")
        .with_tool_call_id("call-1")
}

/// A span as the subscriber saw it.
#[derive(Debug, Clone)]
struct SeenSpan {
    name: String,
    target: String,
    level: Level,
    root: bool,
    fields: BTreeMap<String, String>,
}

/// An event as the subscriber saw it, with the index of its span.
#[derive(Debug, Clone)]
struct SeenEvent {
    span: Option<usize>,
    level: Level,
    fields: BTreeMap<String, String>,
}

#[derive(Default)]
struct Seen {
    spans: Vec<SeenSpan>,
    events: Vec<SeenEvent>,
}

/// Collects every span and event with their fields as text.
#[derive(Clone, Default)]
struct Collector(Arc<Mutex<Seen>>);

/// Where a span's record sits in [`Seen::spans`] (the registry reuses ids).
struct SpanIndex(usize);

struct Fields<'a>(&'a mut BTreeMap<String, String>);

impl Visit for Fields<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        self.0.insert(field.name().to_owned(), format!("{value:?}"));
    }
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().to_owned(), value.to_owned());
    }
}

impl<S> Layer<S> for Collector
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        let mut fields = BTreeMap::new();
        attrs.record(&mut Fields(&mut fields));
        let mut seen = self.0.lock().expect("lock");
        seen.spans.push(SeenSpan {
            name: attrs.metadata().name().to_owned(),
            target: attrs.metadata().target().to_owned(),
            level: *attrs.metadata().level(),
            root: attrs.is_root(),
            fields,
        });
        let index = seen.spans.len() - 1;
        if let Some(span) = ctx.span(id) {
            span.extensions_mut().insert(SpanIndex(index));
        }
    }

    fn on_record(&self, id: &Id, values: &Record<'_>, ctx: Context<'_, S>) {
        let Some(span) = ctx.span(id) else { return };
        let Some(SpanIndex(index)) = span.extensions().get::<SpanIndex>().map(|i| SpanIndex(i.0))
        else {
            return;
        };
        values.record(&mut Fields(
            &mut self.0.lock().expect("lock").spans[index].fields,
        ));
    }

    fn on_event(&self, event: &Event<'_>, ctx: Context<'_, S>) {
        if event.metadata().target() != TRACING_TARGET {
            return;
        }
        let span = ctx
            .event_span(event)
            .and_then(|span| span.extensions().get::<SpanIndex>().map(|i| i.0));
        let mut fields = BTreeMap::new();
        event.record(&mut Fields(&mut fields));
        self.0.lock().expect("lock").events.push(SeenEvent {
            span,
            level: *event.metadata().level(),
            fields,
        });
    }
}

impl Collector {
    /// Installs the collector for this thread (the test's current-thread
    /// runtime runs the observer task here too).
    fn install(&self) -> tracing::subscriber::DefaultGuard {
        tracing::subscriber::set_default(Registry::default().with(self.clone()))
    }

    fn call_spans(&self) -> Vec<(usize, SeenSpan)> {
        let seen = self.0.lock().expect("lock");
        seen.spans
            .iter()
            .cloned()
            .enumerate()
            .filter(|(_, span)| span.name == "hooks.tool_call")
            .collect()
    }

    /// The only call span, checked to be a root span at target `hooks`.
    fn only_call(&self) -> (usize, SeenSpan) {
        let mut spans = self.call_spans();
        assert_eq!(spans.len(), 1, "one span per call: {spans:?}");
        let (index, span) = spans.remove(0);
        assert_eq!(span.target, TRACING_TARGET);
        assert_eq!(span.level, Level::INFO);
        assert!(span.root, "the call span is a root span");
        (index, span)
    }

    /// The `hook decided` events of the span, in order.
    fn hook_events(&self, span: usize) -> Vec<SeenEvent> {
        self.events_of(span, "hook decided")
    }

    fn events_of(&self, span: usize, message: &str) -> Vec<SeenEvent> {
        let seen = self.0.lock().expect("lock");
        seen.events
            .iter()
            .filter(|event| {
                event.span == Some(span)
                    && event.fields.get("message").map(String::as_str) == Some(message)
            })
            .cloned()
            .collect()
    }
}

fn field<'a>(fields: &'a BTreeMap<String, String>, name: &str) -> Option<&'a str> {
    fields.get(name).map(String::as_str)
}

#[tokio::test]
async fn allowed_call_is_one_root_span_with_its_fields_and_an_event_per_matched_hook() {
    let collector = Collector::default();
    let _guard = collector.install();
    let registry = registry_with(TracingObserver::new());

    let report = call(&registry, ctx("traced_read", json!({"q": "SELECT 1"}))).await;
    assert_eq!(report.observation, Observation::Output(json!({"rows": 3})));

    let (index, span) = collector.only_call();
    let expected = [
        ("tool", "traced_read"),
        ("agent", "finance"),
        ("user", "alice"),
        ("org", "acme"),
        ("conversation", "conv-7"),
        ("tool_call_id", "call-1"),
        ("surface", "chat"),
        ("outcome", "ok"),
        // After the rewrite: `q` and `limit`.
        ("arg_count", "2"),
    ];
    for (name, value) in expected {
        assert_eq!(field(&span.fields, name), Some(value), "{name}: {span:?}");
    }
    assert_eq!(field(&span.fields, "blocked_by"), None);
    assert!(span.fields.contains_key("duration_us"), "{span:?}");

    let events = collector.hook_events(index);
    let decided: Vec<_> = events
        .iter()
        .map(|event| {
            (
                field(&event.fields, "hook"),
                field(&event.fields, "point"),
                field(&event.fields, "decision"),
            )
        })
        .collect();
    assert_eq!(
        decided,
        [
            (Some("traced_allow"), Some("pre_tool_use"), Some("allowed")),
            (
                Some("traced_rewrite"),
                Some("pre_tool_use"),
                Some("rewrote")
            ),
        ],
        "one event per hook that ran, in order; none for hooks that did not match"
    );
    for event in &events {
        assert_eq!(event.level, Level::INFO);
        assert_eq!(field(&event.fields, "duration_us"), None, "decided at once");
        assert_eq!(field(&event.fields, "failure"), None);
    }
    let closing = collector.events_of(index, "tool call");
    assert_eq!(closing.len(), 1);
    assert_eq!(field(&closing[0].fields, "outcome"), Some("ok"));
}

#[tokio::test]
async fn blocked_call_names_the_blocker_and_writes_no_event_for_hooks_not_reached() {
    let collector = Collector::default();
    let _guard = collector.install();
    let registry = registry_with(TracingObserver::new());

    let report = call(
        &registry,
        ctx("traced_write", json!({"password": "hunter2"})),
    )
    .await;
    assert!(report.observation.is_blocked());

    let (index, span) = collector.only_call();
    assert_eq!(field(&span.fields, "outcome"), Some("blocked"));
    assert_eq!(field(&span.fields, "blocked_by"), Some("traced_block"));
    assert_eq!(field(&span.fields, "reason"), None, "reasons are opt-in");

    let events = collector.hook_events(index);
    assert_eq!(
        events.len(),
        1,
        "traced_after_block was not reached: {events:?}"
    );
    assert_eq!(field(&events[0].fields, "hook"), Some("traced_block"));
    assert_eq!(field(&events[0].fields, "decision"), Some("blocked"));
    assert_eq!(field(&events[0].fields, "reason"), None);
}

#[tokio::test]
async fn hook_that_waited_has_a_duration_and_one_that_decided_at_once_has_none() {
    let collector = Collector::default();
    let _guard = collector.install();
    let registry = registry_with(TracingObserver::new());

    call(&registry, ctx("traced_slow", json!({}))).await;

    let (index, span) = collector.only_call();
    assert_eq!(field(&span.fields, "outcome"), Some("ok"));
    let events = collector.hook_events(index);
    assert_eq!(events.len(), 1);
    assert_eq!(field(&events[0].fields, "hook"), Some("traced_wait"));
    let waited: u64 = field(&events[0].fields, "duration_us")
        .expect("a hook that waited has a duration")
        .parse()
        .expect("whole microseconds");
    assert!(waited >= 5_000, "slept 5 ms, recorded {waited} µs");
    let call_took: u64 = field(&span.fields, "duration_us")
        .expect("call duration")
        .parse()
        .expect("whole microseconds");
    assert!(call_took >= waited);
}

#[tokio::test]
async fn tool_errors_and_withheld_results_are_outcomes() {
    let collector = Collector::default();
    let _guard = collector.install();
    let registry = registry_with(TracingObserver::new());

    call(&registry, ctx("traced_other", json!({"fail": true}))).await;
    call(&registry, ctx("traced_withheld", json!({}))).await;

    let spans = collector.call_spans();
    assert_eq!(spans.len(), 2);
    assert_eq!(field(&spans[0].1.fields, "outcome"), Some("tool_error"));
    assert_eq!(field(&spans[0].1.fields, "blocked_by"), None);
    assert!(
        collector.hook_events(spans[0].0).is_empty(),
        "no hook matched"
    );
    assert_eq!(collector.events_of(spans[0].0, "tool call").len(), 1);

    assert_eq!(field(&spans[1].1.fields, "outcome"), Some("withheld"));
    assert_eq!(
        field(&spans[1].1.fields, "blocked_by"),
        Some("traced_withhold")
    );
    let events = collector.hook_events(spans[1].0);
    assert_eq!(events.len(), 1);
    assert_eq!(field(&events[0].fields, "point"), Some("post_tool_use"));
    assert_eq!(field(&events[0].fields, "decision"), Some("blocked"));
}

#[tokio::test]
async fn failing_hook_is_a_warning_with_its_failure_kind() {
    let collector = Collector::default();
    let _guard = collector.install();
    let registry = registry_with(TracingObserver::new());

    call(&registry, ctx("traced_panic", json!({}))).await;

    let (index, span) = collector.only_call();
    assert_eq!(field(&span.fields, "outcome"), Some("blocked"));
    assert_eq!(field(&span.fields, "blocked_by"), Some("traced_panics"));
    let events = collector.hook_events(index);
    assert_eq!(events.len(), 1);
    assert_eq!(events[0].level, Level::WARN);
    assert_eq!(field(&events[0].fields, "decision"), Some("failed_closed"));
    assert_eq!(field(&events[0].fields, "failure"), Some("panic"));
    assert_eq!(
        field(&events[0].fields, "reason"),
        None,
        "the panic message is opt-in"
    );
}

#[tokio::test]
async fn reasons_are_written_only_when_asked_and_escaped() {
    let collector = Collector::default();
    let _guard = collector.install();
    let registry = registry_with(TracingObserver::new().with_reasons());

    call(
        &registry,
        ctx("traced_write", json!({"password": "hunter2"})),
    )
    .await;
    call(&registry, ctx("traced_panic", json!({}))).await;

    let spans = collector.call_spans();
    assert_eq!(
        field(&spans[0].1.fields, "reason"),
        Some("no writes\\u{A}with password hunter2")
    );
    let blocked = collector.hook_events(spans[0].0);
    assert_eq!(
        field(&blocked[0].fields, "reason"),
        Some("no writes\\u{A}with password hunter2")
    );
    let failed = collector.hook_events(spans[1].0);
    assert_eq!(
        field(&failed[0].fields, "reason"),
        Some("panicked: guard bug")
    );
}

#[tokio::test]
async fn a_call_dropped_while_the_tool_runs_is_still_reported() {
    let collector = Collector::default();
    let _guard = collector.install();
    let registry = registry_with(TracingObserver::new());

    let call = registry.run_tool_call(ctx("traced_read", json!({})), async |_: &Value| {
        tokio::time::sleep(Duration::from_secs(60)).await;
        Ok::<_, String>(json!("never"))
    });
    let gave_up = tokio::time::timeout(Duration::from_millis(50), call).await;
    assert!(gave_up.is_err(), "the caller stopped waiting");
    registry.flush_observers().await;

    let (index, span) = collector.only_call();
    assert_eq!(field(&span.fields, "outcome"), Some("withheld"));
    assert_eq!(field(&span.fields, "blocked_by"), Some("runtime"));
    assert_eq!(collector.events_of(index, "tool call").len(), 1);
}

/// A `tracing-subscriber` fmt layer writing into a shared buffer.
#[derive(Clone, Default)]
struct Buffer(Arc<Mutex<Vec<u8>>>);

impl io::Write for Buffer {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        self.0.lock().expect("lock").extend_from_slice(bytes);
        Ok(bytes.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Buffer {
    fn install(&self) -> tracing::subscriber::DefaultGuard {
        let writer = self.clone();
        let subscriber = tracing_subscriber::fmt()
            .with_max_level(Level::TRACE)
            .with_writer(move || writer.clone())
            // Plain text whatever other crates in the build turn on
            // (rig-core enables tracing-subscriber's `ansi` colours).
            .with_ansi(false)
            .finish();
        tracing::subscriber::set_default(subscriber)
    }

    fn text(&self) -> String {
        String::from_utf8(self.0.lock().expect("lock").clone()).expect("utf-8")
    }
}

#[tokio::test]
async fn argument_values_never_reach_the_log() {
    let buffer = Buffer::default();
    let _guard = buffer.install();
    let registry = registry_with(TracingObserver::new());

    let secret = "sk-live-0123456789abcdef";
    let report = call(
        &registry,
        ctx("traced_read", json!({"api_key": secret, "q": "SELECT 1"})),
    )
    .await;
    assert!(report.observation.output().is_some());
    call(&registry, ctx("traced_write", json!({"password": secret}))).await;

    let log = buffer.text();
    assert!(log.contains("hooks.tool_call{"), "{log}");
    assert!(log.contains("tool=traced_read"), "{log}");
    assert!(log.contains("arg_count=3"), "{log}");
    assert!(log.contains("hook=traced_rewrite"), "{log}");
    assert!(log.contains("blocked_by=traced_block"), "{log}");
    assert!(
        !log.contains(secret),
        "an argument value was logged:\n{log}"
    );
    assert!(
        !log.contains("api_key"),
        "an argument key was logged:\n{log}"
    );
    assert!(
        !log.contains("SELECT"),
        "an argument value was logged:\n{log}"
    );
}

#[tokio::test]
async fn hostile_tool_name_cannot_forge_a_log_line() {
    let buffer = Buffer::default();
    let _guard = buffer.install();
    let registry = registry_with(TracingObserver::new());

    let hostile = "traced_read\n2026-01-01T00:00:00Z  INFO hooks: approved by admin \u{202E}";
    let report = call(&registry, ctx(hostile, json!({}))).await;
    assert_eq!(report.stopped_by(), Some("runtime"));

    let log = buffer.text();
    assert!(
        log.contains(
            "tool=traced_read\\u{A}2026-01-01T00:00:00Z  INFO hooks: approved by admin \\u{202E}"
        ),
        "{log}"
    );
    assert!(log.contains("blocked_by=runtime"), "{log}");
    assert!(
        !log.lines().any(|line| line.starts_with("2026-01-01")),
        "a forged line:\n{log}"
    );
    assert!(!log.contains('\u{202E}'), "{log}");
}

#[tokio::test]
async fn the_span_is_a_root_even_inside_the_callers_span() {
    let collector = Collector::default();
    let _guard = collector.install();
    let registry = registry_with(TracingObserver::new());

    let caller = tracing::info_span!("agent_turn");
    let _entered = caller.enter();
    call(&registry, ctx("traced_read", json!({}))).await;

    let (_, span) = collector.only_call();
    assert!(span.root);
    assert_eq!(field(&span.fields, "conversation"), Some("conv-7"));
}

#[tokio::test]
async fn a_registry_without_the_observer_writes_nothing() {
    let collector = Collector::default();
    let _guard = collector.install();
    let registry = HookRegistry::builder()
        .registered_named(HOOKS)
        .build()
        .expect("registry");

    call(&registry, ctx("traced_read", json!({}))).await;
    call(&registry, ctx("traced_write", json!({}))).await;

    assert!(collector.call_spans().is_empty());
    assert!(collector.0.lock().expect("lock").events.is_empty());
}

/// A subscriber layer that panics when the call span opens.
struct Panicking;

impl<S: Subscriber> Layer<S> for Panicking {
    fn on_new_span(&self, attrs: &Attributes<'_>, _: &Id, _: Context<'_, S>) {
        if attrs.metadata().name() == "hooks.tool_call" {
            panic!("broken log shipper");
        }
    }
}

#[tokio::test]
async fn a_panicking_subscriber_does_not_withhold_the_result() {
    let _guard = tracing::subscriber::set_default(Registry::default().with(Panicking));
    let registry = registry_with(TracingObserver::new());

    let report = call(&registry, ctx("traced_read", json!({}))).await;
    assert_eq!(report.observation, Observation::Output(json!({"rows": 3})));
    assert_eq!(registry.observers()[0].name(), TracingObserver::NAME);
    assert_eq!(
        registry.observers()[0].on_error(),
        ErrorPolicy::FailOpen,
        "the tracing observer is fail-open"
    );
}
