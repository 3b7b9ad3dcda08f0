//! `hooks mcp-proxy` in front of the reference "everything" server from the
//! npm registry, attacked through a real `rmcp` client: results whose
//! blocks the post hooks never saw, tool names the upstream never listed or
//! listed in another casing, hidden tools in another casing, and the
//! requests besides `tools/call` that read the upstream's data, and HTTP
//! clients that try another's identity or session. Without
//! `npm ci --prefix tests/mcp` (or Node) each case prints SKIPPED and passes.

use hooks::mcp_proxy::McpProxyConfig;
use hooks::prelude::*;
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, ClientRequest, GetPromptRequestParams,
    ReadResourceRequestParams, ServerResult,
};
use rmcp::service::PeerRequestOptions;
use serde_json::json;

use crate::mcp_support::{
    ANNOTATION_POLICY_AGENT, Running, everything, hex_sha256, peers, post_mcp, post_mcp_with,
    serve_http, start_agent, text,
};

/// Withholds any result that carries the text of a demo resource: the
/// secret here is in an embedded resource, not in the text blocks.
#[post_tool_use(when = tool_name == "get-resource-reference" || tool_name == "get-tiny-image")]
async fn bypass_mcp_no_resource_text(ctx: &HookContext) -> HookResult {
    let seen = ctx.result().map(ToString::to_string).unwrap_or_default();
    if seen.contains("This is a plaintext resource") || seen.contains("\"image\"") {
        HookResult::block("the result carries a resource or an image")
    } else {
        HookResult::allow()
    }
}

/// Rewrites the structured result: the client gets only what it left.
#[post_tool_use(when = tool_name == "get-structured-content")]
async fn bypass_mcp_redact_structured(_ctx: &HookContext) -> HookResult {
    HookResult::allow().with_result(json!("weather: redacted"))
}

/// No static document may be read through the proxy.
#[pre_tool_use(when = tool_name == "resources/read" && args.uri starts_with "demo://resource/static/document/")]
async fn bypass_mcp_no_documents(_ctx: &HookContext) -> HookResult {
    HookResult::block("documents are not for this agent")
}

/// What a prompt says is governed like a tool's result.
#[post_tool_use(when = tool_name == "prompts/get")]
async fn bypass_mcp_prompt_replaced(_ctx: &HookContext) -> HookResult {
    HookResult::allow().with_result(json!("the prompt, as the hooks left it"))
}

const AGENT: &str = r#"
agent: mcp-bypass
hooks:
  class_hooks:
    - bypass_mcp_no_resource_text
    - bypass_mcp_redact_structured
    - bypass_mcp_no_documents
    - bypass_mcp_prompt_replaced
    - audit_log
"#;

async fn start(settings: McpProxyConfig) -> Running {
    start_agent(AGENT, settings).await
}

#[tokio::test]
async fn blocks_the_hooks_did_not_see_never_reach_the_client() {
    let Some(peers) = peers() else { return };
    let running = start(everything(&peers)).await;

    // Text around an embedded resource: the resource is what the hook withholds.
    let result = running
        .call(
            "get-resource-reference",
            json!({"resourceType": "Text", "resourceId": 1}),
        )
        .await;
    assert_eq!(result.is_error, Some(true), "{result:?}");
    let shown = format!("{result:?}");
    assert!(!shown.contains("plaintext resource"), "{shown}");
    assert!(
        text(&result).contains("bypass_mcp_no_resource_text"),
        "{result:?}"
    );

    // An image between two texts: the hook saw it, so it can withhold it.
    let result = running.call("get-tiny-image", json!({})).await;
    assert_eq!(result.is_error, Some(true), "{result:?}");
    assert!(
        result.content.iter().all(|block| block.as_text().is_some()),
        "{result:?}"
    );

    // Structured content rewritten to text: the client gets the text only,
    // as an error result (a success without the structured content the
    // tool's outputSchema requires is one real clients refuse).
    let result = running
        .call("get-structured-content", json!({"location": "New York"}))
        .await;
    assert_eq!(result.is_error, Some(true), "{result:?}");
    assert_eq!(result.structured_content, None, "{result:?}");
    assert!(text(&result).ends_with("\nweather: redacted"), "{result:?}");
    assert!(text(&result).contains("output schema"), "{result:?}");
    assert_eq!(result.content.len(), 2, "{result:?}");
}

#[tokio::test]
async fn only_names_the_upstream_listed_exactly_are_called_and_refusals_are_audited() {
    let Some(peers) = peers() else { return };
    let mut settings = everything(&peers);
    settings.hide_tools = vec!["get-env".to_owned()];
    let running = start(settings).await;
    let cases = [
        ("no-such-tool", "lists no tool `no-such-tool`"),
        ("Echo", "tool names are exact: it lists `echo`"),
        ("ECHO", "tool names are exact: it lists `echo`"),
        ("get-env", "hidden by the proxy's config"),
        ("GET-ENV", "hidden by the proxy's config"),
        ("Get-Env", "hidden by the proxy's config"),
        ("resources/read", "not an upstream tool"),
    ];
    for (name, why) in cases {
        let result = running.call(name, json!({"message": "hi"})).await;
        assert_eq!(result.is_error, Some(true), "{name}: {result:?}");
        assert!(text(&result).contains(why), "{name}: {result:?}");
        assert!(
            !text(&result).contains("PATH"),
            "{name}: the upstream ran it"
        );
    }
    let rows = running.audit(cases.len()).await;
    assert_eq!(rows.len(), cases.len(), "one row per refusal: {rows:?}");
    for (row, (name, why)) in rows.iter().zip(cases) {
        assert_eq!(row.tool_name, name);
        assert_eq!(row.outcome, "blocked", "{row:?}");
        assert_eq!(row.blocked_by.as_deref(), Some("mcp_proxy"), "{row:?}");
        assert_eq!(row.connector.as_deref(), Some("everything"), "{row:?}");
        assert!(
            row.reason
                .as_deref()
                .is_some_and(|reason| reason.contains(why)),
            "{row:?}"
        );
    }
    // The listed name itself still works.
    let result = running.call("echo", json!({"message": "hi"})).await;
    assert_ne!(result.is_error, Some(true), "{result:?}");
    let listed = running.client.list_all_tools().await.expect("tools/list");
    assert!(
        listed.iter().all(|tool| tool.name != "get-env"),
        "hidden from the list too"
    );
}

#[tokio::test]
async fn resources_and_prompts_go_through_the_hooks() {
    let Some(peers) = peers() else { return };
    let running = start(everything(&peers)).await;
    let resources = running
        .client
        .list_all_resources()
        .await
        .expect("resources/list");
    let document = resources
        .iter()
        .find(|resource| resource.uri.starts_with("demo://resource/static/document/"))
        .expect("the server lists documents");
    let error = running
        .client
        .read_resource(ReadResourceRequestParams::new(document.uri.clone()))
        .await
        .expect_err("blocked");
    assert!(
        error
            .to_string()
            .contains("documents are not for this agent"),
        "{error}"
    );
    let dynamic = running
        .client
        .read_resource(ReadResourceRequestParams::new(
            "demo://resource/dynamic/text/1",
        ))
        .await
        .expect("other resources are read");
    assert!(!dynamic.contents.is_empty(), "{dynamic:?}");

    let prompt = running
        .client
        .get_prompt(GetPromptRequestParams::new("simple-prompt"))
        .await
        .expect("prompts/get");
    assert_eq!(prompt.messages.len(), 1, "{prompt:?}");
    let said = prompt.messages[0]
        .content
        .as_text()
        .map(|block| block.text.as_str());
    assert_eq!(said, Some("the prompt, as the hooks left it"), "{prompt:?}");

    let rows = running.audit(3).await;
    let names: Vec<&str> = rows.iter().map(|row| row.tool_name.as_str()).collect();
    assert_eq!(
        names,
        ["resources/read", "resources/read", "prompts/get"],
        "{rows:?}"
    );
    assert_eq!(rows[0].outcome, "blocked");
    assert_eq!(
        rows[0].blocked_by.as_deref(),
        Some("bypass_mcp_no_documents")
    );
}

/// `initialize` over streamable HTTP with `origin`: the status.
async fn initialize_from(url: &str, token: &str, origin: Option<&str>) -> u16 {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "a-page", "version": "1"}}});
    let mut request = reqwest::Client::new()
        .post(url)
        .bearer_auth(token)
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .body(body.to_string());
    if let Some(origin) = origin {
        request = request.header("origin", origin);
    }
    request.send().await.expect("answered").status().as_u16()
}

#[tokio::test]
async fn http_refuses_an_empty_token_and_foreign_browser_origins() {
    let Some(peers) = peers() else { return };
    let mut settings = everything(&peers);
    settings.allowed_origins = vec!["https://app.example".to_owned()];
    let running = start(settings).await;
    for empty in ["", "  "] {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let error = running
            .proxy
            .serve_http(listener, Some(empty.to_owned()))
            .await
            .expect_err("an empty token is refused");
        assert!(
            matches!(error, hooks::mcp_proxy::McpProxyError::EmptyToken),
            "{error}"
        );
    }
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let address = listener.local_addr().expect("addr");
    let url = format!("http://{address}{}", hooks::mcp_proxy::MCP_PATH);
    let serving = running.proxy.clone();
    tokio::spawn(async move { serving.serve_http(listener, Some("t0ken".into())).await });
    let same = format!("http://{address}");
    for (origin, status) in [
        (Some("http://evil.example"), 403),
        (Some("http://localhost:1"), 403),
        (Some("null"), 403),
        (None, 200),
        (Some(same.as_str()), 200),
        (Some("https://app.example"), 200),
    ] {
        assert_eq!(
            initialize_from(&url, "t0ken", origin).await,
            status,
            "{origin:?}"
        );
    }
}

#[tokio::test]
async fn a_call_while_the_tool_list_is_not_known_is_refused_before_any_hook() {
    let Some(peers) = peers() else { return };
    let mut settings = everything(&peers);
    settings.max_restarts = 0;
    let running = start(settings).await;
    let pid = running.proxy.upstream_pid().await.expect("pid");
    let killed = std::process::Command::new("kill")
        .args(["-9", &pid.to_string()])
        .status()
        .expect("kill");
    assert!(killed.success());
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    // The first call finds the upstream dead: what it listed no longer holds.
    let first = running.call("echo", json!({"message": "a"})).await;
    assert_eq!(first.is_error, Some(true), "{first:?}");
    // From then on no list is known, and nothing is admitted.
    let second = running.call("echo", json!({"message": "b"})).await;
    assert_eq!(second.is_error, Some(true), "{second:?}");
    assert!(
        text(&second).contains("does not know the tools"),
        "{second:?}"
    );
    let rows = running.audit(2).await;
    assert_eq!(rows.len(), 2, "{rows:?}");
    assert_eq!(rows[1].outcome, "blocked", "{rows:?}");
    assert_eq!(rows[1].blocked_by.as_deref(), Some("mcp_proxy"));
}

/// An agent whose only hook is the audit log.
const HOSTILE_AGENT: &str = "agent: mcp-hostile\nhooks:\n  class_hooks:\n    - audit_log\n";

/// The proxy in front of tests/mcp/hostile-server.mjs, with `extra`
/// settings.
fn hostile(peers: &std::path::Path, extra: serde_json::Value) -> McpProxyConfig {
    let script = peers
        .parent()
        .expect("tests/mcp")
        .join("hostile-server.mjs");
    let mut settings = json!({
        "server": "hostile",
        "command": ["node", script.display().to_string()],
    });
    for (key, value) in extra.as_object().expect("an object") {
        settings[key] = value.clone();
    }
    McpProxyConfig::from_value(&settings).expect("settings")
}

/// A hostile server talks around its results: a log message, progress text
/// and an error's `data`, none of which any hook sees. None of it may reach
/// the client (and so the client's model).
#[tokio::test]
async fn what_a_hostile_server_says_outside_its_results_never_reaches_the_client() {
    let Some(peers) = peers() else { return };
    let running = start_agent(HOSTILE_AGENT, hostile(&peers, json!({}))).await;

    // With a progress token, so the server may send progress.
    let params = CallToolRequestParams::new("chatty").with_arguments(Default::default());
    let handle = running
        .client
        .send_cancellable_request(
            ClientRequest::CallToolRequest(CallToolRequest::new(params)),
            PeerRequestOptions::no_options(),
        )
        .await
        .expect("sent");
    let ServerResult::CallToolResult(result) = handle.await_response().await.expect("answer")
    else {
        panic!("a tool result")
    };
    assert_eq!(text(&result), "ok");

    let error = running
        .client
        .read_resource(ReadResourceRequestParams::new("hostile://note"))
        .await
        .expect_err("the server refuses");
    let shown = format!("{error:?}");
    assert!(shown.contains("no such note"), "{shown}");
    assert!(!shown.contains("SECRET"), "error data passed on: {shown}");

    // Give stray notifications time to arrive before looking.
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    let progress = running.heard.progress.lock().expect("lock").clone();
    assert!(
        progress.iter().all(|note| note.message.is_none()),
        "progress text passed on: {progress:?}"
    );
    let logs = running.heard.logs.lock().expect("lock").clone();
    assert!(logs.is_empty(), "log messages passed on: {logs:?}");
}

/// Clients put a server's `instructions` into the model's system prompt
/// and show its name and title; a refused list's message reaches the
/// model as an error. A hostile server fills each with orders. None of it
/// reaches the client: the proxy introduces itself, with the config's
/// instructions, and a refusal keeps its code and loses its text.
#[tokio::test]
async fn a_hostile_servers_introduction_and_refusals_never_reach_the_client() {
    let Some(peers) = peers() else { return };
    let quiet = start_agent(HOSTILE_AGENT, hostile(&peers, json!({}))).await;
    let info = quiet
        .client
        .peer_info()
        .expect("the proxy introduced itself");
    let shown = serde_json::to_string(&*info).expect("json");
    assert!(!shown.contains("SYSTEM"), "{shown}");
    assert_eq!(info.instructions, None, "{shown}");
    assert_eq!(info.capabilities.experimental, None, "{shown}");
    let resources = info.capabilities.resources.as_ref().expect("resources");
    assert_eq!(resources.subscribe, None, "subscriptions are not passed on");
    let server = info.server_info.as_ref().expect("server info");
    assert_eq!(server.name, "hooks-mcp-proxy/hostile");
    assert_eq!(
        server.title.as_deref(),
        Some("hostile (through hooks mcp-proxy)")
    );

    let told = start_agent(
        HOSTILE_AGENT,
        hostile(
            &peers,
            json!({"instructions": "Files under /srv/data only; ask before writing."}),
        ),
    )
    .await;
    let info = told
        .client
        .peer_info()
        .expect("the proxy introduced itself");
    assert_eq!(
        info.instructions.as_deref(),
        Some("Files under /srv/data only; ask before writing.")
    );

    let page =
        || Some(rmcp::model::PaginatedRequestParams::default().with_cursor(Some("2".into())));
    let client = &quiet.client;
    #[allow(deprecated)] // logging/setLevel, still sent by clients of earlier revisions
    let set_level = client
        .set_level(rmcp::model::SetLevelRequestParams::new(
            rmcp::model::LoggingLevel::Debug,
        ))
        .await
        .err();
    let refusals = [
        ("tools/list", client.list_tools(page()).await.err()),
        ("resources/list", client.list_resources(page()).await.err()),
        (
            "resources/templates/list",
            client.list_resource_templates(None).await.err(),
        ),
        ("prompts/list", client.list_prompts(None).await.err()),
        ("logging/setLevel", set_level),
    ];
    for (method, error) in refusals {
        let Some(rmcp::ServiceError::McpError(error)) = error else {
            panic!("{method}: the server's refusal is a protocol error")
        };
        let shown = format!("{error:?}");
        assert!(
            !shown.contains("SYSTEM") && !shown.contains("SECRET"),
            "{method}: {shown}"
        );
        assert!(
            error.message.contains(&format!("refused `{method}`")),
            "{method}: {shown}"
        );
        assert_eq!(error.data, None, "{method}");
        let expected = if method == "tools/list" {
            -32602
        } else {
            -32600
        };
        assert_eq!(
            error.code.0, expected,
            "{method}: the server's code is kept"
        );
    }
}

/// The documented policy on tool annotations: a hint the server gives can
/// add a check, and lets a call through only when the config trusts the
/// server. The hostile server calls `peek` read-only (and destructive),
/// `append` additive, `lookup` read-only, and says nothing of `chatty`.
#[tokio::test]
async fn untrusted_annotations_only_add_checks() {
    let Some(peers) = peers() else { return };
    for (trusted, expected) in [
        (
            false,
            [
                ("chatty", false),
                ("peek", false),
                ("append", false),
                ("lookup", true),
            ],
        ),
        (
            true,
            [
                ("chatty", false),
                ("peek", true),
                ("append", true),
                ("lookup", true),
            ],
        ),
    ] {
        let running = start_agent(
            ANNOTATION_POLICY_AGENT,
            hostile(&peers, json!({"trust_annotations": trusted})),
        )
        .await;
        for (tool, runs) in expected {
            let result = running.call(tool, json!({})).await;
            if runs {
                assert_ne!(result.is_error, Some(true), "trusted {trusted}: {tool}");
                assert_eq!(text(&result), "ok", "trusted {trusted}: {tool}");
            } else {
                assert_eq!(result.is_error, Some(true), "trusted {trusted}: {tool}");
                assert!(
                    text(&result).contains("would ask a person first"),
                    "trusted {trusted}: {tool}: {}",
                    text(&result)
                );
            }
        }
    }
}

/// The docs' rule for `resources/read`: an allow-list on the normalised
/// URI. Every other spelling of a file outside it is refused before the
/// server hears of it; so is a URI that cannot be normalised.
#[tokio::test]
async fn every_spelling_of_a_file_outside_the_allow_list_is_refused() {
    let Some(peers) = peers() else { return };
    let agent = r#"
agent: mcp-resources
hooks:
  commands:
    - name: resources_under_data_only
      event: PreToolUse
      when: 'tool_name == "resources/read" && !(metadata.uri starts_with "file:///srv/data/")'
      command: ["sh", "-c", "cat >/dev/null; echo 'only resources under /srv/data may be read' >&2; exit 2"]
  class_hooks:
    - audit_log
"#;
    let running = start_agent(agent, hostile(&peers, json!({}))).await;
    let read = |uri: &str| {
        running
            .client
            .read_resource(ReadResourceRequestParams::new(uri))
    };
    for allowed in [
        "file:///srv/data/report.txt",
        "FILE://LOCALHOST/srv/data/./report.txt",
    ] {
        let answer = read(allowed).await.expect(allowed);
        let shown = serde_json::to_string(&answer).expect("json");
        assert!(shown.contains(&format!("read {allowed}")), "{shown}");
    }
    for refused in [
        "file:///etc/passwd",
        "file:///srv/../etc/passwd",
        "file:///srv/data/../../etc/passwd",
        "FILE:///etc/passwd",
        "file://localhost/etc/passwd",
        "file:///%65tc/passwd",
        "file:////etc/passwd",
        "file:///srv/data/%2e%2e/%2e%2e/etc/passwd",
        "file:///srv/data%2F..%2F..%2Fetc/passwd",
        "file:///srv/data/%252e%252e/secret",
        "file:///srv/data/a%2Fb%2Fc/../../../etc/passwd",
        "file:///srv/data/a%5Cb%5Cc/../../../etc/passwd",
        "file:///srv/data/a\\b\\c/../../../etc/passwd",
        "file:///srv/data/?/../../../etc/passwd",
        "file:///srv/data/%zz",
        "/srv/data/report.txt",
        // Found by fuzzing: a relative path, and `?` hidden in an escape.
        "file:srv/data/report.txt",
        "file:///srv/data/%3f/../../../etc/passwd",
        "file:///srv/data/report%23.txt",
    ] {
        let error = read(refused).await.expect_err(refused);
        let shown = format!("{error:?}");
        assert!(
            shown.contains("only resources under /srv/data may be read"),
            "{refused}: {shown}"
        );
        assert!(
            !shown.contains(&format!("read {refused}")),
            "{refused} reached the server: {shown}"
        );
    }
}

const ALICE_TOKEN: &str = "alice-9b3e5d7f1a2c4e6b8d0f1a3c5e7b9d1f";
const BOB_TOKEN: &str = "bob-2c4e6a8b0d1f3a5c7e9b1d3f5a7c9e1b";

/// Initializes a session with `token`: the status and the session id.
async fn open_session(url: &str, token: &str) -> (u16, Option<String>) {
    let http = reqwest::Client::new();
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "curl-like", "version": "1"}}});
    let (status, session, _) = post_mcp(&http, url, Some(token), None, initialize).await;
    if let Some(session) = &session {
        post_mcp(
            &http,
            url,
            Some(token),
            Some(session),
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        )
        .await;
    }
    (status, session)
}

/// The proxy in front of the everything server, serving HTTP to Alice
/// (user alice, org acme) and Bob (bob, globex), each with a token; its
/// own configured user and org are never theirs.
async fn alice_and_bob(peers: &std::path::Path) -> (Running, String) {
    let settings = json!({
        "server": "everything",
        "command": everything(peers).command,
        "user": "configured-user",
        "org": "configured-org",
        "max_restarts": 0,
        "clients": [
            {"token_sha256": hex_sha256(ALICE_TOKEN), "user": "alice", "org": "acme"},
            {"token_sha256": hex_sha256(BOB_TOKEN), "user": "bob", "org": "globex"},
        ],
    });
    let running = start(McpProxyConfig::from_value(&settings).expect("settings")).await;
    let url = serve_http(&running.proxy, None).await;
    (running, url)
}

#[tokio::test]
async fn an_http_clients_identity_comes_from_its_token_alone() {
    let Some(peers) = peers() else { return };
    let (running, url) = alice_and_bob(&peers).await;

    // Wrong tokens, in every near spelling, open no session.
    let alice_digest = hex_sha256(ALICE_TOKEN);
    let near_misses = [
        "",
        "alice",
        &ALICE_TOKEN[..ALICE_TOKEN.len() - 1],
        &alice_digest,
        "configured-user",
    ];
    for wrong in near_misses {
        let (status, session) = open_session(&url, wrong).await;
        assert_eq!((status, session), (401, None), "{wrong:?}");
    }
    let uppercase = ALICE_TOKEN.to_uppercase();
    assert_eq!(open_session(&url, &uppercase).await.0, 401);

    // Alice says she is someone else, by header and by `_meta`: her calls
    // are still hers.
    let (status, session) = open_session(&url, ALICE_TOKEN).await;
    assert_eq!(status, 200);
    let session = session.expect("a session");
    let forged = [
        ("x-user-id", "root"),
        ("x-hooks-user", "root"),
        ("x-org-id", "globex"),
        ("x-forwarded-user", "bob"),
    ];
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "get-sum", "arguments": {"a": 1, "b": 2},
        "_meta": {"user_id": "root", "userId": "root", "org_id": "globex", "user": "bob"}}});
    let http = reqwest::Client::new();
    let (status, _, answer) = post_mcp_with(
        &http,
        &url,
        Some(ALICE_TOKEN),
        Some(&session),
        &forged,
        call.clone(),
    )
    .await;
    assert_eq!(status, 200, "{answer}");
    assert_ne!(answer["result"]["isError"], json!(true), "{answer}");

    // Bob's token does not reach Alice's session.
    let (status, _, answer) = post_mcp(&http, &url, Some(BOB_TOKEN), Some(&session), call).await;
    assert_eq!(status, 404, "{answer}");

    let conversation = format!("{}-http-1", running.proxy.session_id());
    let mut rows = Vec::new();
    for _ in 0..100 {
        rows = running
            .database
            .audit_entries(&conversation)
            .await
            .expect("audit");
        if !rows.is_empty() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert_eq!(rows.len(), 1, "Bob's call never ran: {rows:?}");
    assert_eq!(
        (rows[0].user_id.as_str(), rows[0].org_id.as_str()),
        ("alice", "acme")
    );
}

#[tokio::test]
async fn a_client_that_never_closes_its_sessions_keeps_only_its_latest_ones() {
    let Some(peers) = peers() else { return };
    // The proxy lives while `_running` does.
    let (_running, url) = alice_and_bob(&peers).await;
    let http = reqwest::Client::new();
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "get-sum", "arguments": {"a": 1, "b": 2}}});
    let status_of = |token: &'static str, session: String| {
        let (http, url, call) = (http.clone(), url.clone(), call.clone());
        async move {
            post_mcp(&http, &url, Some(token), Some(&session), call)
                .await
                .0
        }
    };

    let bob = open_session(&url, BOB_TOKEN)
        .await
        .1
        .expect("Bob's session");
    let mut alices = Vec::new();
    for _ in 0..65 {
        let (status, session) = open_session(&url, ALICE_TOKEN).await;
        assert_eq!(status, 200);
        alices.push(session.expect("a session"));
    }
    // Alice's 64 latest sessions work; her first is forgotten, and with it
    // no token reaches it.
    assert_eq!(status_of(ALICE_TOKEN, alices[0].clone()).await, 404);
    assert_eq!(status_of(BOB_TOKEN, alices[0].clone()).await, 404);
    assert_eq!(status_of(ALICE_TOKEN, alices[1].clone()).await, 200);
    assert_eq!(status_of(ALICE_TOKEN, alices[64].clone()).await, 200);
    // Another client's sessions are not hers to push out.
    assert_eq!(status_of(BOB_TOKEN, bob.clone()).await, 200);
    // An id nobody was given opens nothing either.
    let made_up = "00000000-0000-4000-8000-000000000000".to_owned();
    assert_eq!(status_of(ALICE_TOKEN, made_up).await, 404);
}

/// Two clients of one person (a laptop and a CI job, each with its own
/// token, both user alice in acme) do not reach each other's sessions; a
/// closed session is answered 200 and is gone.
#[tokio::test]
async fn a_session_belongs_to_the_token_that_opened_it() {
    let Some(peers) = peers() else { return };
    const LAPTOP: &str = "laptop-4d6f8a0c2e4b6d8f0a2c4e6b8d0f2a4c";
    const CI: &str = "ci-job-7e9a1c3e5b7d9f1a3c5e7b9d1f3a5c7e";
    let settings = json!({
        "server": "everything",
        "command": everything(&peers).command,
        "max_restarts": 0,
        "clients": [
            {"token_sha256": hex_sha256(LAPTOP), "user": "alice", "org": "acme"},
            {"token_sha256": hex_sha256(CI), "user": "alice", "org": "acme"},
        ],
    });
    let running = start(McpProxyConfig::from_value(&settings).expect("settings")).await;
    let url = serve_http(&running.proxy, None).await;
    let http = reqwest::Client::new();
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "get-sum", "arguments": {"a": 1, "b": 2}}});

    let laptop = open_session(&url, LAPTOP).await.1.expect("a session");
    let (status, _, answer) = post_mcp(&http, &url, Some(CI), Some(&laptop), call.clone()).await;
    assert_eq!(
        status, 404,
        "the CI job drove the laptop's session: {answer}"
    );
    let (status, _, answer) =
        post_mcp(&http, &url, Some(LAPTOP), Some(&laptop), call.clone()).await;
    assert_eq!(status, 200, "{answer}");

    // Nor may the CI job close it.
    let close = |token: &'static str| {
        http.delete(&url)
            .bearer_auth(token)
            .header("mcp-session-id", &laptop)
            .send()
    };
    assert_eq!(close(CI).await.expect("answered").status().as_u16(), 404);
    assert_eq!(
        close(LAPTOP).await.expect("answered").status().as_u16(),
        200
    );
    let (status, _, _) = post_mcp(&http, &url, Some(LAPTOP), Some(&laptop), call).await;
    assert_eq!(status, 404, "a closed session is gone");
}

/// An agent whose approval gate holds every `get-sum`.
const HELD_AGENT: &str = r#"
agent: mcp-held
hooks:
  class_hooks:
    - name: approval_gate
      config:
        when: 'tool_name == "get-sum"'
        approver_scope: org_members
        timeout: 60s
    - audit_log
"#;

/// A `tools/call` of `get-sum` as a client of MCP 2026-07-28 that takes
/// URL elicitations sends it, carrying `state` back when given.
fn modern_sum(id: u64, args: serde_json::Value, state: Option<&str>) -> serde_json::Value {
    let mut params = json!({"name": "get-sum", "arguments": args, "_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"url": {}}},
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"}}});
    if let Some(state) = state {
        params["requestState"] = json!(state);
        params["inputResponses"] = json!({"approval": {"action": "accept"}});
    }
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params})
}

/// The proxy with [`HELD_AGENT`] in front of the everything server,
/// serving HTTP to `tokens` (each a client of user alice, org acme) with an
/// approval link; and its URL.
async fn held_for_approval(peers: &std::path::Path, tokens: &[&str]) -> (Running, String) {
    let clients: Vec<serde_json::Value> = tokens
        .iter()
        .map(|token| json!({"token_sha256": hex_sha256(token), "user": "alice", "org": "acme"}))
        .collect();
    let settings = json!({
        "server": "everything",
        "command": everything(peers).command,
        "max_restarts": 0,
        "approval_url": "https://approvals.example/requests/{id}",
        "clients": clients,
    });
    let running = start_agent(
        HELD_AGENT,
        McpProxyConfig::from_value(&settings).expect("settings"),
    )
    .await;
    let url = serve_http(&running.proxy, None).await;
    (running, url)
}

/// The headers a 2026-07-28 client sends with a `tools/call` of `get-sum`.
const MODERN_HEADERS: [(&str, &str); 3] = [
    ("mcp-protocol-version", "2026-07-28"),
    ("mcp-method", "tools/call"),
    ("mcp-name", "get-sum"),
];

/// Under 2026-07-28 a held call is answered with an input request and a
/// sealed `requestState`. Carried back by another token (of the same user
/// and org), with other arguments, altered, or a second time, the state
/// runs nothing; only its own client's retry waits for the approval and
/// gets the result, once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_state_runs_only_its_own_call_for_its_own_client_once() {
    let Some(peers) = peers() else { return };
    const LAPTOP: &str = "laptop-1a3c5e7b9d1f3a5c7e9b1d3f5a7c9e1b";
    const CI: &str = "ci-job-2b4d6f8a0c2e4b6d8f0a2c4e6b8d0f2a";
    let (running, url) = held_for_approval(&peers, &[LAPTOP, CI]).await;
    let http = reqwest::Client::new();
    let post = async |token: &str, body: serde_json::Value| {
        let (status, _, answer) =
            post_mcp_with(&http, &url, Some(token), None, &MODERN_HEADERS, body).await;
        assert_eq!(status, 200, "{answer}");
        answer["result"].clone()
    };
    let refused = |result: &serde_json::Value, what: &str| {
        assert_eq!(result["isError"], true, "{what}: {result}");
        let text = result["content"][0]["text"].as_str().unwrap_or_default();
        assert!(text.contains("requestState"), "{what}: {text}");
    };

    let args = json!({"a": 1, "b": 2});
    let first = post(LAPTOP, modern_sum(1, args.clone(), None)).await;
    assert_eq!(first["resultType"], "input_required", "{first}");
    let asked = &first["inputRequests"]["approval"];
    assert_eq!(asked["method"], "elicitation/create", "{first}");
    assert_eq!(asked["params"]["mode"], "url", "{first}");
    let card = running
        .feishu
        .wait_for_card(1, std::time::Duration::from_secs(30))
        .await
        .expect("a card");
    let request = card.request_id().expect("buttons").to_owned();
    assert_eq!(
        asked["params"]["url"],
        format!("https://approvals.example/requests/{request}")
    );
    let state = first["requestState"].as_str().expect("a state").to_owned();

    // Another token of the same user and org; other arguments; the same
    // arguments spelt with their keys in another order are the same call.
    refused(
        &post(CI, modern_sum(2, args.clone(), Some(&state))).await,
        "another client",
    );
    refused(
        &post(
            LAPTOP,
            modern_sum(3, json!({"a": 1, "b": 2000}), Some(&state)),
        )
        .await,
        "other arguments",
    );
    // Altered in one character; made up.
    let mut altered = state.clone().into_bytes();
    let last = altered.len() - 1;
    altered[last] = if altered[last] == b'A' { b'B' } else { b'A' };
    let altered = String::from_utf8(altered).expect("ascii");
    refused(
        &post(LAPTOP, modern_sum(4, args.clone(), Some(&altered))).await,
        "altered",
    );
    refused(
        &post(
            LAPTOP,
            modern_sum(5, args.clone(), Some("AAAAAAAAAAAAAAAAAAAAAAAA")),
        )
        .await,
        "made up",
    );

    // Its own client's retry waits for the approval, then runs.
    let retry = tokio::spawn({
        let (http, url, state) = (http.clone(), url.clone(), state.clone());
        let args = json!({"b": 2, "a": 1});
        async move {
            post_mcp_with(
                &http,
                &url,
                Some(LAPTOP),
                None,
                &MODERN_HEADERS,
                modern_sum(6, args, Some(&state)),
            )
            .await
        }
    });
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    assert!(!retry.is_finished(), "the retry waits for the approval");
    let click = hooks_testkit::feishu::CardClick::new(
        &request,
        hooks::std_hooks::approval_gate::ApprovalDecision::Approve,
        crate::mcp_support::APPROVER,
        crate::mcp_support::CHAT,
    );
    running
        .feishu
        .click(&running.callback_url, &click)
        .await
        .expect("click");
    let (status, _, answer) = retry.await.expect("the retry");
    assert_eq!(status, 200, "{answer}");
    let result = &answer["result"];
    assert_ne!(result["isError"], true, "{result}");
    assert!(result.to_string().contains('3'), "{result}");

    // Once only.
    refused(
        &post(LAPTOP, modern_sum(7, args.clone(), Some(&state))).await,
        "used again",
    );
}

/// A client that leaves its held calls behind (it never comes back with
/// their states) holds at most 32 at once: its 33rd held call waits in its
/// own request, without a link, and holds nothing for a retry.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_holds_at_most_32_calls_for_retries() {
    let Some(peers) = peers() else { return };
    const LAPTOP: &str = "laptop-9c1e3a5c7e9b1d3f5a7c9e1b3d5f7a9c";
    let (_running, url) = held_for_approval(&peers, &[LAPTOP]).await;
    let http = reqwest::Client::new();
    let mut calls = tokio::task::JoinSet::new();
    for n in 0..33u64 {
        let (http, url) = (http.clone(), url.clone());
        calls.spawn(async move {
            let call = modern_sum(n + 1, json!({"a": n, "b": 1}), None);
            post_mcp_with(&http, &url, Some(LAPTOP), None, &MODERN_HEADERS, call).await
        });
    }
    let mut asked = 0;
    while asked < 32 {
        let answered = tokio::time::timeout(std::time::Duration::from_secs(60), calls.join_next())
            .await
            .expect("32 held calls are answered with an input request")
            .expect("a call")
            .expect("the call's task");
        let (status, _, answer) = answered;
        assert_eq!(status, 200, "{answer}");
        assert_eq!(answer["result"]["resultType"], "input_required", "{answer}");
        asked += 1;
    }
    let more = tokio::time::timeout(std::time::Duration::from_secs(3), calls.join_next()).await;
    assert!(
        more.is_err(),
        "the 33rd held call waits in its request: {more:?}"
    );
    assert_eq!(calls.len(), 1);
    calls.abort_all();
}
