//! A hook input POSTed to `hooks serve` (Claude Code's and Codex's shape),
//! answered by a server running the standard hooks; and the same input
//! with a server answer, as `hook-client --client codex` reshapes them.
//! Beyond not failing: the server answers every input without failing
//! itself; a refusal the server made is never turned into a call let
//! through, or a result kept, for Codex.

#![no_main]

use std::sync::LazyLock;

use axum::body::Body;
use axum::http::{Request, StatusCode};
use hooks::serve::client::ClientAnswer;
use hooks::serve::fuzzing::{codex_answer, codex_request, hook_input};
use hooks::serve::{ServeConfig, router};
use hooks_runtime::Agent;
use hooks_runtime::config::{AgentConfig, ConfigFormat};
use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use tower::ServiceExt as _;

const AGENT: &str = r#"
agent: fuzz
hooks:
  class_hooks:
    - readonly_guard
    - name: result_truncate
      config: { max_chars: 40 }
    - audit_log
"#;

static RUNTIME: LazyLock<tokio::runtime::Runtime> = LazyLock::new(|| {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("a runtime")
});

static ROUTER: LazyLock<axum::Router> = LazyLock::new(|| {
    RUNTIME.block_on(async {
        let config = AgentConfig::parse(AGENT, ConfigFormat::Yaml, "fuzz.yaml", None)
            .expect("the agent config");
        let resources = hooks::std_hooks::offline_resources([] as [&str; 0])
            .await
            .expect("offline resources");
        let agent = Agent::build(config, &resources).expect("the agent");
        router(
            agent,
            ServeConfig::unauthenticated().org("acme").user("dev"),
        )
    })
});

fn event(input: &[u8]) -> Option<String> {
    let value: Value = serde_json::from_slice(input).ok()?;
    value.get("hook_event_name")?.as_str().map(str::to_owned)
}

fuzz_target!(|data: &[u8]| {
    // The hook input, a NUL, and what the server answered for it.
    let (input, answer) = match data.iter().position(|&b| b == 0) {
        Some(at) => (&data[..at], &data[at + 1..]),
        None => (data, &[][..]),
    };
    let _ = hook_input(input);

    let router = ROUTER.clone();
    let request = Request::post("/hook")
        .header("host", "127.0.0.1")
        .header("content-type", "application/json")
        .body(Body::from(input.to_vec()))
        .expect("a request");
    let response = RUNTIME
        .block_on(router.oneshot(request))
        .expect("an answer");
    assert!(
        response.status() != StatusCode::INTERNAL_SERVER_ERROR,
        "the server failed on {:?}",
        String::from_utf8_lossy(input)
    );

    // hook-client for Codex.
    let _ = codex_request(input.to_vec());
    let Ok(stdout) = std::str::from_utf8(answer) else {
        return;
    };
    let printed = codex_answer(
        input,
        ClientAnswer {
            code: 0,
            stdout: stdout.to_owned(),
            stderr: String::new(),
        },
    );
    let server: Value = serde_json::from_str(stdout).unwrap_or(Value::Null);
    let refused = match event(input).as_deref() {
        Some("PreToolUse") => {
            server.pointer("/hookSpecificOutput/permissionDecision") == Some(&"deny".into())
                || server.get("decision") == Some(&"block".into())
        }
        Some("PostToolUse") => server.get("decision") == Some(&"block".into()),
        _ => false,
    };
    if refused {
        // Exit 2, or (a post event) a block whose reason replaces the
        // result.
        let replaced = serde_json::from_str::<Value>(&printed.stdout)
            .is_ok_and(|shown| shown.get("decision") == Some(&"block".into()));
        assert!(
            printed.code == 2 || replaced,
            "a refusal became {printed:?} for {:?}",
            String::from_utf8_lossy(input)
        );
    }
});
