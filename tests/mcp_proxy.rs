//! `hooks mcp-proxy` in front of the reference MCP servers from the npm
//! registry (pinned in tests/mcp/package.json), driven by `rmcp`'s client.
//! Without `npm ci --prefix tests/mcp` (or Node) each test prints SKIPPED.
#![cfg(feature = "mcp")]

use std::sync::Arc;
use std::time::Duration;

use hooks::config::{AgentConfig, ConfigFormat};
use hooks::mcp_proxy::{McpProxy, McpProxyConfig, McpProxyError};
use hooks::prelude::*;
use hooks::std_hooks::approval_gate::{ApprovalDecision, ConfirmationStatus, ConfirmationStore};
use hooks_testkit::feishu::CardClick;
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, ClientRequest, GetPromptRequestParams,
    ReadResourceRequestParams, ServerResult,
};
use rmcp::service::{PeerRequestOptions, RunningService};
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Value, json};

#[path = "support/mcp.rs"]
mod support;

use support::*;

/// Upper-cases what `echo` says: the upstream's echo proves the rewrite.
#[pre_tool_use(when = tool_name == "echo")]
async fn loud_echo(ctx: &HookContext) -> HookResult {
    let mut args = ctx.tool_args.clone();
    let message = args["message"].as_str().unwrap_or_default().to_uppercase();
    args["message"] = json!(message);
    HookResult::allow().with_args(args)
}

/// Sums are capped, and only for the connector this proxy names.
#[pre_tool_use(when = connector == "everything" && tool_name == "get-sum" && args.a > 1000)]
async fn no_big_sums(_ctx: &HookContext) -> HookResult {
    HookResult::block("sums over 1000 need a human")
}

/// A read-only rule for the filesystem server: no write of any kind.
#[pre_tool_use(when = connector == "filesystem" && (tool_name starts_with "write" || tool_name starts_with "edit" || tool_name starts_with "create" || tool_name starts_with "move"))]
async fn files_read_only(_ctx: &HookContext) -> HookResult {
    HookResult::block("the filesystem is read-only for this agent")
}

/// Withholds results that mention a secret.
#[post_tool_use(when = tool_name == "echo")]
async fn no_secrets_back(ctx: &HookContext) -> HookResult {
    match ctx.result() {
        Some(result) if result.to_string().contains("SECRET") => {
            HookResult::block("the result holds a secret")
        }
        _ => HookResult::allow(),
    }
}

const AGENT: &str = r#"
agent: mcp-desktop
hooks:
  class_hooks:
    - loud_echo
    - no_big_sums
    - files_read_only
    - no_secrets_back
    - name: approval_gate
      config:
        when: 'tool_name == "get-sum" && args.b > 50000'
        approver_scope: org_members
        timeout: 20s
    - audit_log
"#;

async fn start(settings: McpProxyConfig) -> Running {
    start_agent(AGENT, settings).await
}

#[tokio::test]
async fn tools_are_listed_and_an_allowed_call_is_audited_under_the_server_name() {
    let Some(peers) = peers() else { return };
    let running = start(everything(&peers)).await;
    let info = running.client.peer_info().expect("initialized");
    let name = info
        .server_info
        .as_ref()
        .map(|i| i.name.clone())
        .unwrap_or_default();
    assert!(
        name.starts_with("hooks-mcp-proxy/"),
        "the proxy says it is one: {name}"
    );

    let tools = running.client.list_all_tools().await.expect("tools/list");
    let names: Vec<&str> = tools.iter().map(|tool| tool.name.as_ref()).collect();
    assert!(
        names.contains(&"echo") && names.contains(&"get-sum"),
        "{names:?}"
    );

    let result = running.call("get-sum", json!({"a": 2, "b": 3})).await;
    assert_ne!(result.is_error, Some(true), "{result:?}");
    assert!(text(&result).contains('5'), "{result:?}");

    let rows = running.audit(1).await;
    assert_eq!(rows.len(), 1);
    let row = &rows[0];
    assert_eq!(row.tool_name, "get-sum");
    assert_eq!(row.connector.as_deref(), Some("everything"));
    assert_eq!(
        (row.user_id.as_str(), row.org_id.as_str()),
        ("alice", "acme")
    );
    assert_eq!(row.agent_id, "mcp-desktop");
    assert_eq!(row.outcome, "ok");
    assert!(
        !row.tool_call_id.is_empty(),
        "the request id is the tool call id"
    );
}

#[tokio::test]
async fn a_blocked_call_is_an_error_result_with_the_reason_and_never_reaches_the_server() {
    let Some(peers) = peers() else { return };
    let running = start(everything(&peers)).await;
    let result = running.call("get-sum", json!({"a": 5000, "b": 1})).await;
    assert_eq!(result.is_error, Some(true));
    assert_eq!(
        text(&result),
        "Blocked by hook `no_big_sums`: sums over 1000 need a human"
    );
    let rows = running.audit(1).await;
    assert_eq!(rows[0].outcome, "blocked");
    assert_eq!(rows[0].blocked_by.as_deref(), Some("no_big_sums"));
}

#[tokio::test]
async fn the_upstream_receives_the_rewritten_arguments_and_post_hooks_see_its_result() {
    let Some(peers) = peers() else { return };
    let running = start(everything(&peers)).await;
    let result = running
        .call("echo", json!({"message": "hello proxy"}))
        .await;
    assert_ne!(result.is_error, Some(true), "{result:?}");
    assert!(
        text(&result).contains("HELLO PROXY"),
        "the server echoed what the hook rewrote: {result:?}"
    );
    // A post hook withholds a result: the client sees why, not the result.
    let result = running
        .call("echo", json!({"message": "the secret is 42"}))
        .await;
    assert_eq!(result.is_error, Some(true));
    assert_eq!(
        text(&result),
        "Result withheld by hook `no_secrets_back`: the result holds a secret"
    );
    assert!(!format!("{result:?}").contains("42"), "{result:?}");
}

#[tokio::test]
async fn arguments_that_break_the_upstream_schema_are_blocked_by_the_registered_guard() {
    let Some(peers) = peers() else { return };
    let running = start(everything(&peers)).await;
    assert!(
        running.proxy.unusable_schemas().is_empty(),
        "{:?}",
        running.proxy.unusable_schemas()
    );
    let result = running.call("get-sum", json!({"a": "two", "b": 3})).await;
    assert_eq!(result.is_error, Some(true));
    assert!(text(&result).contains("args_schema"), "{result:?}");
    let result = running.call("echo", json!({})).await;
    assert_eq!(result.is_error, Some(true));
    assert!(text(&result).contains("args_schema"), "{result:?}");
}

#[tokio::test]
async fn the_upstream_gets_a_scrubbed_environment() {
    let Some(peers) = peers() else { return };
    let running = start(everything(&peers)).await;
    let result = running.call("get-env", json!({})).await;
    let env = text(&result);
    assert!(
        env.contains("PROXY_GIVEN"),
        "the config's env is set: {env}"
    );
    assert!(env.contains("PATH"), "PATH is inherited: {env}");
    // cargo sets these for the test process; the upstream must not see them.
    assert!(!env.contains("CARGO_MANIFEST_DIR"), "{env}");
    assert!(!env.contains("CARGO_PKG_NAME"), "{env}");
}

#[tokio::test]
async fn a_gated_call_waits_for_the_approver_with_progress_then_runs() {
    let Some(peers) = peers() else { return };
    let running = Arc::new(start(everything(&peers)).await);
    let caller = running.clone();
    let waiting = tokio::spawn(async move {
        // rmcp's client asks for progress on every request.
        let params = CallToolRequestParams::new("get-sum").with_arguments(
            json!({"a": 1, "b": 60000})
                .as_object()
                .cloned()
                .expect("object"),
        );
        caller.client.call_tool(params).await
    });
    let card = running
        .feishu
        .wait_for_card(1, Duration::from_secs(15))
        .await
        .expect("a card reaches the approvers");
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert!(
        !waiting.is_finished(),
        "the client waits while the approver decides"
    );
    let request = card.request_id().expect("buttons").to_owned();
    let click = CardClick::new(&request, ApprovalDecision::Approve, APPROVER, CHAT);
    running
        .feishu
        .click(&running.callback_url, &click)
        .await
        .expect("click");
    let result = tokio::time::timeout(Duration::from_secs(15), waiting)
        .await
        .expect("answered after the click")
        .expect("task")
        .expect("the proxy answers");
    assert_ne!(result.is_error, Some(true), "{result:?}");
    assert!(text(&result).contains("60001"), "{result:?}");
    let progress = running.heard.progress.lock().expect("lock").clone();
    assert!(
        progress.iter().any(|note| note
            .message
            .as_deref()
            .is_some_and(|m| m.contains("waiting"))),
        "the client heard that its call waits: {progress:?}"
    );
}

#[tokio::test]
async fn a_gated_call_the_client_cancels_withdraws_its_request_and_redraws_the_card() {
    let Some(peers) = peers() else { return };
    let running = start(everything(&peers)).await;
    let handle = cancellable(&running, "get-sum", json!({"a": 1, "b": 70000})).await;
    let card = running
        .feishu
        .wait_for_card(1, Duration::from_secs(15))
        .await
        .expect("a card reaches the approvers");
    let request = card.request_id().expect("buttons").to_owned();
    handle
        .cancel(Some("the user pressed stop".into()))
        .await
        .expect("cancelled");

    let store = ConfirmationStore::new(running.database.clone());
    let mut status = None;
    for _ in 0..200 {
        status = store.get(&request).await.expect("read").map(|r| r.status);
        if status == Some(ConfirmationStatus::Cancelled) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(
        status,
        Some(ConfirmationStatus::Cancelled),
        "the request is withdrawn"
    );
    let withdrawn = store.get(&request).await.expect("read").expect("request");
    assert!(
        withdrawn
            .reason
            .as_deref()
            .is_some_and(|reason| reason.contains("cancelled")),
        "{withdrawn:?}"
    );

    let mut updates = running.feishu.card_updates();
    for _ in 0..200 {
        if !updates.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
        updates = running.feishu.card_updates();
    }
    assert_eq!(updates.len(), 1, "the card is redrawn: {updates:?}");
    let redrawn = updates[0].1.to_string();
    assert!(redrawn.contains("Cancelled"), "{redrawn}");
    assert!(
        !redrawn.contains("\"button\""),
        "no buttons left: {redrawn}"
    );

    // A click on the old card changes nothing, and nothing runs.
    let click = CardClick::new(&request, ApprovalDecision::Approve, APPROVER, CHAT);
    let (_, reply) = running
        .feishu
        .click(&running.callback_url, &click)
        .await
        .expect("click");
    assert_eq!(
        reply["toast"]["content"], "This request was cancelled; nothing changed.",
        "{reply}"
    );
    let after = store.get(&request).await.expect("read").expect("request");
    assert_eq!(after.status, ConfirmationStatus::Cancelled);
    assert_eq!(after.consumed_at_ms, None, "the approval never ran a call");
    let rows = running.audit(1).await;
    assert!(
        rows.iter().all(|row| row.outcome != "ok"),
        "the call never ran: {rows:?}"
    );
}

#[tokio::test]
async fn a_filesystem_write_is_blocked_by_the_read_only_rule_while_reads_pass() {
    let Some(peers) = peers() else { return };
    let dir = tempfile::tempdir().expect("dir");
    let root = std::fs::canonicalize(dir.path()).expect("canonical");
    std::fs::write(root.join("notes.txt"), "kept as it is").expect("write");
    let root_text = root.display().to_string();
    let settings = McpProxyConfig::from_value(&json!({
        "server": "filesystem",
        "command": server_command(&peers, "server-filesystem", &[&root_text]),
        "max_restarts": 0,
    }))
    .expect("settings");
    let running = start(settings).await;
    let file = root.join("notes.txt").display().to_string();
    let read = running.call("read_text_file", json!({"path": file})).await;
    assert_ne!(read.is_error, Some(true), "{read:?}");
    assert!(text(&read).contains("kept as it is"), "{read:?}");

    let write = running
        .call(
            "write_file",
            json!({"path": file, "content": "overwritten"}),
        )
        .await;
    assert_eq!(write.is_error, Some(true));
    assert_eq!(
        text(&write),
        "Blocked by hook `files_read_only`: the filesystem is read-only for this agent"
    );
    assert_eq!(
        std::fs::read_to_string(root.join("notes.txt")).expect("read"),
        "kept as it is"
    );
}

#[tokio::test]
async fn an_upstream_killed_mid_session_fails_calls_closed_and_is_restarted_per_config() {
    let Some(peers) = peers() else { return };
    for restarts in [0, 1] {
        let mut settings = everything(&peers);
        settings.max_restarts = restarts;
        let running = start(settings).await;
        let first = running.call("echo", json!({"message": "before"})).await;
        assert_ne!(first.is_error, Some(true), "{first:?}");
        let pid = running.proxy.upstream_pid().await.expect("pid");
        let killed = std::process::Command::new("kill")
            .args(["-9", &pid.to_string()])
            .status()
            .expect("kill");
        assert!(killed.success());
        tokio::time::sleep(Duration::from_millis(300)).await;
        let after = running.call("echo", json!({"message": "after"})).await;
        if restarts == 0 {
            assert_eq!(after.is_error, Some(true), "fails closed: {after:?}");
            assert!(text(&after).contains("stopped"), "{after:?}");
            let rows = running.audit(2).await;
            assert_eq!(
                rows.last().map(|row| row.outcome.as_str()),
                Some("tool_error")
            );
        } else {
            assert_ne!(after.is_error, Some(true), "restarted: {after:?}");
            assert!(text(&after).contains("AFTER"), "{after:?}");
            assert_ne!(running.proxy.upstream_pid().await, Some(pid));
        }
    }
}

#[tokio::test]
async fn an_upstream_that_does_not_start_or_speak_mcp_is_a_start_error() {
    let (resources, ..) = resources().await;
    let config =
        || AgentConfig::parse(AGENT, ConfigFormat::Yaml, "agent.yaml", None).expect("config");
    let missing = McpProxyConfig::from_value(&json!({"command": ["/nonexistent/mcp-server"]}))
        .expect("settings");
    let error = McpProxy::start(config(), missing, &resources)
        .await
        .err()
        .expect("refused");
    assert!(matches!(error, McpProxyError::Spawn { .. }), "{error}");
    assert!(
        error.to_string().contains("/nonexistent/mcp-server"),
        "{error}"
    );

    let silent =
        McpProxyConfig::from_value(&json!({"command": ["sh", "-c", "echo not-json; exit 0"]}))
            .expect("settings");
    let error = McpProxy::start(config(), silent, &resources)
        .await
        .err()
        .expect("refused");
    assert!(matches!(error, McpProxyError::Initialize { .. }), "{error}");

    let none = McpProxyConfig::default();
    let error = McpProxy::start(config(), none, &resources)
        .await
        .err()
        .expect("refused");
    assert!(matches!(error, McpProxyError::NoUpstream), "{error}");
}

/// An MCP client of `hooks mcp-proxy --config CONFIG FLAGS -- UPSTREAM`,
/// started as Claude Desktop starts a server.
async fn cli_client(
    config: &std::path::Path,
    flags: &[&str],
    upstream: Vec<String>,
) -> RunningService<RoleClient, ()> {
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_hooks"));
    command
        .arg("mcp-proxy")
        .arg("--config")
        .arg(config)
        .args(flags)
        .arg("--")
        .args(upstream);
    let transport = rmcp::transport::TokioChildProcess::new(command).expect("spawn hooks");
    ().serve(transport)
        .await
        .expect("handshake through the proxy")
}

#[test]
fn the_cli_refuses_to_start_with_a_clear_message_and_a_non_zero_exit() {
    let dir = tempfile::tempdir().expect("dir");
    let bad = dir.path().join("bad.yaml");
    std::fs::write(&bad, "agent: x\nhooks:\n  class_hooks: [no_such_hook]\n").expect("write");
    let good = dir.path().join("agent.yaml");
    std::fs::write(
        &good,
        "agent: x\nhooks:\n  class_hooks: [audit_log]\nmcp_proxy:\n  server: files\n",
    )
    .expect("write");
    let unknown = dir.path().join("unknown.yaml");
    std::fs::write(&unknown, "agent: x\nmcp_proxy:\n  sever: files\n").expect("write");

    let (code, err) = cli(&["--config", bad.to_str().expect("path"), "--", "true"]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("no_such_hook"), "{err}");

    let (code, err) = cli(&["--config", unknown.to_str().expect("path"), "--", "true"]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("sever"), "the misspelt key is named: {err}");

    let (code, err) = cli(&[
        "--config",
        good.to_str().expect("path"),
        "--",
        "/nonexistent/mcp-server",
    ]);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("cannot start the upstream MCP server `/nonexistent/mcp-server`"),
        "{err}"
    );

    let (code, err) = cli(&["--config", good.to_str().expect("path")]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("give its command after `--`"), "{err}");

    let (code, err) = cli(&["--", "true"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("<AGENT_CONFIG>"), "{err}");
}

#[tokio::test]
async fn the_cli_proxies_a_reference_server_for_a_real_client_over_stdio() {
    let Some(peers) = peers() else { return };
    let dir = tempfile::tempdir().expect("dir");
    let config = dir.path().join("agent.yaml");
    std::fs::write(
        &config,
        "agent: desktop\nhooks:\n  class_hooks:\n    - name: approval_gate\n      config:\n        \
         when: 'connector == \"everything\" && tool_name == \"get-sum\"'\n    - audit_log\n",
    )
    .expect("write");
    let client = cli_client(
        &config,
        &["--name", "everything"],
        server_command(&peers, "server-everything", &["stdio"]),
    )
    .await;
    let tools = client.list_all_tools().await.expect("tools/list");
    assert!(tools.iter().any(|tool| tool.name == "echo"));
    let echoed = client
        .call_tool(
            CallToolRequestParams::new("echo").with_arguments(
                json!({"message": "hi"})
                    .as_object()
                    .cloned()
                    .expect("object"),
            ),
        )
        .await
        .expect("answer");
    assert_ne!(echoed.is_error, Some(true), "{echoed:?}");
    assert!(text(&echoed).contains("hi"), "{echoed:?}");
    // The hooks binary has no approval channel: a call that needs approval
    // is held back, never run unapproved.
    let held = client
        .call_tool(
            CallToolRequestParams::new("get-sum").with_arguments(
                json!({"a": 1, "b": 2})
                    .as_object()
                    .cloned()
                    .expect("object"),
            ),
        )
        .await
        .expect("answer");
    assert_eq!(held.is_error, Some(true), "{held:?}");
    assert!(text(&held).contains("approval_gate"), "{held:?}");
    client.cancel().await.expect("close");
}

/// Sends `tools/call` as a request the test can cancel, and whose progress
/// token it knows.
async fn cancellable(
    running: &Running,
    tool: &str,
    args: Value,
) -> rmcp::service::RequestHandle<RoleClient> {
    let params = CallToolRequestParams::new(tool.to_owned())
        .with_arguments(args.as_object().cloned().expect("object"));
    running
        .client
        .send_cancellable_request(
            ClientRequest::CallToolRequest(CallToolRequest::new(params)),
            PeerRequestOptions::no_options(),
        )
        .await
        .expect("sent")
}

#[tokio::test]
async fn the_upstreams_progress_reaches_the_client_under_the_clients_token() {
    let Some(peers) = peers() else { return };
    let running = start(everything(&peers)).await;
    let handle = cancellable(
        &running,
        "trigger-long-running-operation",
        json!({"duration": 1, "steps": 3}),
    )
    .await;
    let token = handle.progress_token.clone();
    let answer = handle.await_response().await.expect("answer");
    let ServerResult::CallToolResult(result) = answer else {
        panic!("a tool result: {answer:?}")
    };
    assert!(text(&result).contains("completed"), "{result:?}");
    let progress = running.heard.progress.lock().expect("lock").clone();
    let steps: Vec<f64> = progress
        .iter()
        .filter(|note| note.total == Some(3.0))
        .map(|note| note.progress)
        .collect();
    assert_eq!(steps, [1.0, 2.0, 3.0], "{progress:?}");
    assert!(
        progress.iter().all(|note| note.progress_token == token),
        "every note names the client's request: {progress:?}"
    );
}

#[tokio::test]
async fn a_call_the_client_cancels_is_cancelled_and_recorded_as_failed() {
    let Some(peers) = peers() else { return };
    let running = start(everything(&peers)).await;
    let handle = cancellable(
        &running,
        "trigger-long-running-operation",
        json!({"duration": 20, "steps": 20}),
    )
    .await;
    tokio::time::sleep(Duration::from_millis(1500)).await;
    handle
        .cancel(Some("the user pressed stop".into()))
        .await
        .expect("cancelled");
    let rows = running.audit(1).await;
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(rows[0].outcome, "tool_error");
    assert!(
        rows[0]
            .reason
            .as_deref()
            .is_some_and(|r| r.contains("cancelled")),
        "{:?}",
        rows[0].reason
    );
    assert!(
        rows[0].duration_ms < 15_000,
        "not left to run to its end: {} ms",
        rows[0].duration_ms
    );
    // The session goes on.
    let result = running.call("echo", json!({"message": "still here"})).await;
    assert!(text(&result).contains("STILL HERE"), "{result:?}");
}

#[tokio::test]
async fn resources_and_prompts_pass_through() {
    let Some(peers) = peers() else { return };
    let running = start(everything(&peers)).await;
    let resources = running
        .client
        .list_all_resources()
        .await
        .expect("resources/list");
    let first = resources.first().expect("the server lists resources");
    let read = running
        .client
        .read_resource(ReadResourceRequestParams::new(first.uri.clone()))
        .await
        .expect("resources/read");
    assert!(!read.contents.is_empty(), "{read:?}");

    let prompts = running
        .client
        .list_all_prompts()
        .await
        .expect("prompts/list");
    assert!(
        prompts.iter().any(|prompt| prompt.name == "simple-prompt"),
        "{prompts:?}"
    );
    let prompt = running
        .client
        .get_prompt(GetPromptRequestParams::new("simple-prompt"))
        .await
        .expect("prompts/get");
    assert!(!prompt.messages.is_empty(), "{prompt:?}");
}

#[tokio::test]
async fn the_cli_blocks_a_filesystem_write_with_the_docs_command_hook_while_reads_pass() {
    let Some(peers) = peers() else { return };
    let dir = tempfile::tempdir().expect("dir");
    let root = std::fs::canonicalize(dir.path()).expect("canonical");
    let data = root.join("data");
    std::fs::create_dir(&data).expect("mkdir");
    std::fs::write(data.join("plan.txt"), "ship on friday").expect("write");
    let config = root.join("agent.yaml");
    // The read-only rule of docs/mcp-proxy.md, as a command hook.
    std::fs::write(
        &config,
        r#"agent: desktop
hooks:
  class_hooks:
    - audit_log
  commands:
    - name: no_writes
      event: PreToolUse
      when: 'connector == "filesystem" && (tool_name starts_with "write" || tool_name starts_with "edit" || tool_name starts_with "move" || tool_name starts_with "create")'
      command: ["sh", "-c", "cat >/dev/null; echo 'the filesystem is read-only for this agent' >&2; exit 2"]
mcp_proxy:
  server: filesystem
"#,
    )
    .expect("write");
    let client = cli_client(
        &config,
        &[],
        server_command(&peers, "server-filesystem", &[data.to_str().expect("path")]),
    )
    .await;
    let file = data.join("plan.txt").display().to_string();
    let call = |tool: &str, args: Value| {
        CallToolRequestParams::new(tool.to_owned())
            .with_arguments(args.as_object().cloned().expect("object"))
    };
    let read = client
        .call_tool(call("read_text_file", json!({"path": file})))
        .await
        .expect("answer");
    assert!(text(&read).contains("ship on friday"), "{read:?}");
    let write = client
        .call_tool(call(
            "write_file",
            json!({"path": file, "content": "never"}),
        ))
        .await
        .expect("answer");
    assert_eq!(write.is_error, Some(true), "{write:?}");
    assert!(
        text(&write).contains("the filesystem is read-only for this agent"),
        "{write:?}"
    );
    assert_eq!(
        std::fs::read_to_string(data.join("plan.txt")).expect("read"),
        "ship on friday"
    );
    client.cancel().await.expect("close");
}

#[tokio::test]
async fn streamable_http_serves_sessions_behind_the_token() {
    let Some(peers) = peers() else { return };
    let (resources, database, ..) = resources().await;
    let config = AgentConfig::parse(AGENT, ConfigFormat::Yaml, "agent.yaml", None).expect("config");
    let proxy = McpProxy::start(config, everything(&peers), &resources)
        .await
        .expect("the proxy starts");
    let url = serve_http(&proxy, Some("s3cret-9")).await;
    let http = reqwest::Client::new();
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "curl-like", "version": "1"}}});

    let (status, _, _) = post_mcp(&http, &url, None, None, initialize.clone()).await;
    assert_eq!(status, 401, "no token, no session");
    let (status, _, _) = post_mcp(&http, &url, Some("s3cret-8"), None, initialize.clone()).await;
    assert_eq!(status, 401, "the wrong token, no session");

    let (status, session, answer) = post_mcp(&http, &url, Some("s3cret-9"), None, initialize).await;
    assert_eq!(status, 200, "{answer}");
    let session = session.expect("a session id");
    assert!(
        answer["result"]["serverInfo"]["name"]
            .as_str()
            .is_some_and(|name| name.starts_with("hooks-mcp-proxy/")),
        "{answer}"
    );
    post_mcp(
        &http,
        &url,
        Some("s3cret-9"),
        Some(&session),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    )
    .await;
    let call = |id: u64, a: u64| {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
               "params": {"name": "get-sum", "arguments": {"a": a, "b": 1}}})
    };
    let (_, _, answer) = post_mcp(&http, &url, Some("s3cret-9"), Some(&session), call(2, 4)).await;
    assert_ne!(answer["result"]["isError"], json!(true), "{answer}");
    assert!(
        answer["result"]["content"][0]["text"]
            .as_str()
            .is_some_and(|t| t.contains('5')),
        "{answer}"
    );
    let (_, _, answer) =
        post_mcp(&http, &url, Some("s3cret-9"), Some(&session), call(3, 4000)).await;
    assert_eq!(answer["result"]["isError"], json!(true), "{answer}");
    assert_eq!(
        answer["result"]["content"][0]["text"],
        "Blocked by hook `no_big_sums`: sums over 1000 need a human"
    );
    let conversation = format!("{}-http-1", proxy.session_id());
    let mut rows = Vec::new();
    for _ in 0..100 {
        rows = database.audit_entries(&conversation).await.expect("audit");
        if rows.len() >= 2 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(
        rows.len(),
        2,
        "the HTTP session's calls, under its own conversation id"
    );
}

#[tokio::test]
async fn streamable_http_without_a_token_is_refused_off_loopback() {
    let Some(peers) = peers() else { return };
    let (resources, ..) = resources().await;
    let config = AgentConfig::parse(AGENT, ConfigFormat::Yaml, "agent.yaml", None).expect("config");
    let proxy = McpProxy::start(config, everything(&peers), &resources)
        .await
        .expect("the proxy starts");
    let listener = tokio::net::TcpListener::bind("0.0.0.0:0")
        .await
        .expect("bind");
    let error = proxy.serve_http(listener, None).await.expect_err("refused");
    assert!(matches!(error, McpProxyError::TokenRequired(_)), "{error}");
}
