//! `hooks serve`: the hooks behind Claude Code's hook protocol, driven with
//! hook inputs of the shape Claude Code 2.1.337 sends (tests/fixtures/claude_code;
//! tests/claude_code.rs runs the real binary).

use std::process::Stdio;
use std::time::Duration;

use hooks::config::{AgentConfig, ConfigFormat};
use hooks::prelude::*;
use hooks::serve::{ServeConfig, serve};
use hooks::std_hooks::Database;
use hooks::std_hooks::approval_gate::ApprovalDecision;
use hooks_testkit::feishu::{CardClick, FakeFeishu};
use serde_json::{Value, json};
use tokio::io::AsyncWriteExt;

const TOKEN: &str = "test-token-7f3a";
const SESSION: &str = "9f2c1a7e-4b1d-4c36-a8a5-2f0d7e3b6c11";
#[path = "support/approval_stack.rs"]
mod approval_stack;
use approval_stack::{APPROVER, CHAT};

#[pre_tool_use(priority = 5, when = tool_name == "Bash" && args.command contains "rm -rf")]
async fn no_rm_rf(_ctx: &HookContext) -> HookResult {
    HookResult::block("`rm -rf` is not allowed in this repository")
}

/// Runs every `git push` without force.
#[pre_tool_use(priority = 30, when = tool_name == "Bash" && args.command starts_with "git push")]
async fn no_force_push(ctx: &HookContext) -> HookResult {
    let mut args = ctx.tool_args.clone();
    let command = args["command"]
        .as_str()
        .unwrap_or_default()
        .replace(" --force", "");
    args["command"] = json!(command);
    HookResult::allow().with_args(args)
}

#[post_tool_use(when = tool_name == "Read")]
async fn no_private_keys(ctx: &HookContext) -> HookResult {
    match ctx.result() {
        Some(result) if result.to_string().contains("PRIVATE KEY") => {
            HookResult::block("the file holds a private key")
        }
        _ => HookResult::allow(),
    }
}

/// A hook written for `hooks mcp-proxy`: it returns a whole MCP result.
#[post_tool_use(when = tool_name == "mcp__files__envelope")]
async fn mcp_envelope(_ctx: &HookContext) -> HookResult {
    HookResult::allow().with_result(json!({"content": [{"type": "text", "text": "enveloped"}]}))
}

#[session_start]
async fn house_rules(ctx: &HookContext) -> HookResult {
    HookResult::allow().with_context(format!(
        "House rules for {}: run tests before pushing.",
        ctx.user_id
    ))
}

const AGENT: &str = r#"
agent: claude-code
hooks:
  class_hooks:
    - no_rm_rf
    - no_force_push
    - no_private_keys
    - mcp_envelope
    - house_rules
    - name: approval_gate
      config:
        when: 'tool_name == "Bash" && args.command contains "deploy"'
        approver_scope: org_members
        timeout: 20s
    - name: result_truncate
      config: { max_chars: 40 }
    - audit_log
"#;

fn fixture(name: &str) -> Value {
    let path = format!(
        "{}/tests/fixtures/claude_code/{name}.json",
        env!("CARGO_MANIFEST_DIR")
    );
    serde_json::from_str(&std::fs::read_to_string(path).expect("fixture")).expect("fixture JSON")
}

/// A fixture with the tool call's fields replaced.
fn call(name: &str, id: &str, input: Value) -> Value {
    let mut value = fixture(name);
    value["tool_use_id"] = json!(id);
    value["tool_input"] = input;
    value
}

struct Running {
    url: String,
    database: Database,
    feishu: FakeFeishu,
    callback_url: String,
    http: reqwest::Client,
}

impl Running {
    async fn post(&self, body: &Value) -> (u16, Value) {
        self.post_raw(serde_json::to_vec(body).expect("json"), Some(TOKEN))
            .await
    }

    async fn post_raw(&self, body: Vec<u8>, token: Option<&str>) -> (u16, Value) {
        let mut request = self
            .http
            .post(&self.url)
            .header("content-type", "application/json")
            .body(body);
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        let response = request.send().await.expect("the server answers");
        let status = response.status().as_u16();
        let text = response.text().await.expect("body");
        (
            status,
            serde_json::from_str(&text).unwrap_or(Value::String(text)),
        )
    }

    /// The audit rows of the session, waiting briefly for the writer.
    async fn audit(&self, expected: usize) -> Vec<hooks::std_hooks::AuditEntry> {
        for _ in 0..100 {
            let rows = self.database.audit_entries(SESSION).await.expect("audit");
            if rows.len() >= expected {
                return rows;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        self.database.audit_entries(SESSION).await.expect("audit")
    }
}

async fn start() -> Running {
    start_with_ttl(hooks::serve::DEFAULT_PENDING_TTL).await
}

async fn start_with_ttl(pending_ttl: Duration) -> Running {
    start_with(AGENT, |settings| settings.pending_ttl = pending_ttl).await
}

/// A server for the agent `agent_yaml`, with the tests' settings as
/// `adjust` leaves them.
async fn start_with(agent_yaml: &str, adjust: impl FnOnce(&mut ServeConfig)) -> Running {
    let (resources, database, feishu, callback_url) = approval_stack::resources().await;
    let config =
        AgentConfig::parse(agent_yaml, ConfigFormat::Yaml, "agent.yaml", None).expect("config");
    let agent = Agent::build(config, &resources).expect("agent");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let url = format!("http://{}/hook", listener.local_addr().expect("addr"));
    let mut settings = ServeConfig::with_token(TOKEN)
        .org("acme")
        .user("dev")
        .user_header("x-hooks-user", [std::net::Ipv4Addr::LOCALHOST.into()]);
    adjust(&mut settings);
    tokio::spawn(serve(listener, agent, settings));
    Running {
        url,
        database,
        feishu,
        callback_url,
        http: reqwest::Client::new(),
    }
}

#[tokio::test]
async fn an_allowed_call_and_its_result_make_one_audit_row() {
    let server = start().await;
    let (status, answer) = server.post(&fixture("pre_tool_use")).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer, json!({}), "let through unchanged: nothing said");

    // The result is over result_truncate's 40 characters: rewritten.
    let (status, answer) = server.post(&fixture("post_tool_use")).await;
    assert_eq!(status, 200);
    let output = &answer["hookSpecificOutput"];
    assert_eq!(output["hookEventName"], "PostToolUse");
    // In Bash's own shape (Claude Code ignores any other): stdout cut to
    // 40 characters of the 52 the model would read, the rest kept.
    assert_eq!(
        output["updatedToolOutput"],
        json!({
            "stdout": "On branch main\nnothing to commit, workin\n…[truncated: showing 40 of 52 characters]",
            "stderr": "",
            "interrupted": false,
            "isImage": false,
            "noOutputExpected": false
        }),
        "{answer}"
    );
    assert!(
        output.get("updatedMCPToolOutput").is_none(),
        "not an MCP tool"
    );

    let rows = server.audit(1).await;
    assert_eq!(rows.len(), 1, "one row per call, pre and post paired");
    let row = &rows[0];
    assert_eq!(
        (row.tool_call_id.as_str(), row.tool_name.as_str()),
        ("toolu_01ABCxyz", "Bash")
    );
    assert_eq!(
        (
            row.user_id.as_str(),
            row.org_id.as_str(),
            row.outcome.as_str()
        ),
        ("dev", "acme", "ok")
    );
    // What the model was given: rewritten, and how much of it it reads
    // (stdout and stderr, not Bash's JSON).
    assert_eq!(row.sent.as_deref(), Some("rewritten"));
    assert_eq!(row.result_size, Some(52));
    let marker = "\n…[truncated: showing 40 of 52 characters]"
        .chars()
        .count();
    assert_eq!(
        row.observation_size,
        i64::try_from(40 + marker).expect("small")
    );
}

#[tokio::test]
async fn a_denied_call_says_why_and_is_recorded_blocked() {
    let server = start().await;
    let (status, answer) = server
        .post(&call(
            "pre_tool_use",
            "toolu_rm",
            json!({"command": "rm -rf /"}),
        ))
        .await;
    assert_eq!(status, 200);
    let output = &answer["hookSpecificOutput"];
    assert_eq!(output["permissionDecision"], "deny");
    assert_eq!(
        output["permissionDecisionReason"],
        "Blocked by hook `no_rm_rf`: `rm -rf` is not allowed in this repository"
    );
    let rows = server.audit(1).await;
    assert_eq!(rows[0].outcome, "blocked");
    assert_eq!(rows[0].blocked_by.as_deref(), Some("no_rm_rf"));

    // Its post event (if a client sent one anyway) finds no call to pair.
    let mut post = fixture("post_tool_use");
    post["tool_use_id"] = json!("toolu_rm");
    let (_, answer) = server.post(&post).await;
    assert_eq!(answer["decision"], "block", "{answer}");
}

#[tokio::test]
async fn a_rewritten_input_is_sent_back_as_updated_input() {
    let server = start().await;
    let (_, answer) = server
        .post(&call(
            "pre_tool_use",
            "toolu_push",
            json!({"command": "git push --force origin main"}),
        ))
        .await;
    let output = &answer["hookSpecificOutput"];
    assert_eq!(output["permissionDecision"], "allow");
    assert_eq!(output["updatedInput"]["command"], "git push origin main");
}

#[tokio::test]
async fn a_post_hook_withholds_a_result_and_a_failure_runs_the_post_phase() {
    let server = start().await;
    let read = call(
        "pre_tool_use",
        "toolu_read",
        json!({"file_path": "/home/dev/.ssh/id_rsa"}),
    );
    let mut read = read;
    read["tool_name"] = json!("Read");
    let (_, answer) = server.post(&read).await;
    assert_eq!(answer, json!({}));
    let mut post = read.clone();
    post["hook_event_name"] = json!("PostToolUse");
    post["tool_response"] = json!({"type": "text", "file": {
        "filePath": "/home/dev/.ssh/id_rsa",
        "content": "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk=\n",
        "numLines": 2, "startLine": 1, "totalLines": 2,
    }});
    let (_, answer) = server.post(&post).await;
    let reason = "Result withheld by hook `no_private_keys`: the file holds a private key";
    assert_eq!(answer["decision"], "block");
    assert_eq!(answer["reason"], reason);
    // The result itself is replaced, in Read's own shape: a block alone
    // would leave it in the model's context, and Claude Code ignores a
    // replacement of another shape.
    assert_eq!(
        answer["hookSpecificOutput"]["updatedToolOutput"],
        json!({"type": "text", "file": {
            "filePath": "/home/dev/.ssh/id_rsa", "content": reason,
            "numLines": 2, "startLine": 1, "totalLines": 2,
        }})
    );
    assert!(!answer.to_string().contains("b3BlbnNzaC1rZXk"), "{answer}");

    let (_, answer) = server.post(&fixture("pre_tool_use")).await;
    assert_eq!(answer, json!({}));
    let (status, answer) = server.post(&fixture("post_tool_use_failure")).await;
    assert_eq!((status, answer), (200, json!({})));
    let rows = server.audit(2).await;
    let withheld = rows
        .iter()
        .find(|r| r.tool_call_id == "toolu_read")
        .expect("row");
    assert_eq!(withheld.sent.as_deref(), Some("withheld"));
    let failed = rows
        .iter()
        .find(|r| r.tool_call_id == "toolu_01ABCxyz")
        .expect("row");
    assert_eq!(failed.outcome, "tool_error");
    assert!(
        failed
            .reason
            .as_deref()
            .is_some_and(|r| r.contains("not a git repository"))
    );
}

#[tokio::test]
async fn session_start_gives_the_hooks_context_for_the_user_the_header_names() {
    let server = start().await;
    let response = server
        .http
        .post(&server.url)
        .bearer_auth(TOKEN)
        .header("x-hooks-user", "li.lei")
        .json(&fixture("session_start"))
        .send()
        .await
        .expect("answer");
    let answer: Value = response.json().await.expect("json");
    assert_eq!(
        answer["hookSpecificOutput"]["additionalContext"],
        "House rules for li.lei: run tests before pushing."
    );
}

#[tokio::test]
async fn a_gated_call_waits_for_the_approver_in_feishu_then_is_allowed() {
    let server = start().await;
    let pre = call(
        "pre_tool_use",
        "toolu_deploy",
        json!({"command": "./deploy.sh production"}),
    );
    let url = server.url.clone();
    let waiting = tokio::spawn(async move {
        reqwest::Client::new()
            .post(url)
            .bearer_auth(TOKEN)
            .json(&pre)
            .send()
            .await
            .expect("answer")
            .json::<Value>()
            .await
            .expect("json")
    });
    let card = server
        .feishu
        .wait_for_card(1, Duration::from_secs(10))
        .await
        .expect("a card reaches the approvers");
    assert!(
        !waiting.is_finished(),
        "the request is held while the approver decides"
    );
    let request = card.request_id().expect("buttons").to_owned();
    let click = CardClick::new(&request, ApprovalDecision::Approve, APPROVER, CHAT);
    server
        .feishu
        .click(&server.callback_url, &click)
        .await
        .expect("click");
    let answer = tokio::time::timeout(Duration::from_secs(10), waiting)
        .await
        .expect("answered after the click")
        .expect("task");
    assert_eq!(
        answer["hookSpecificOutput"]["permissionDecision"], "allow",
        "{answer}"
    );
}

#[tokio::test]
async fn requests_not_from_the_client_are_refused_and_run_nothing() {
    let server = start().await;
    let body = serde_json::to_vec(&call(
        "pre_tool_use",
        "toolu_x",
        json!({"command": "rm -rf /"}),
    ))
    .expect("json");
    for token in [
        None,
        Some("wrong-token"),
        Some("test-token-7f3"),
        Some("test-token-7f3a-"),
    ] {
        let (status, answer) = server.post_raw(body.clone(), token).await;
        assert_eq!(status, 401, "{token:?}: {answer}");
    }
    // A page in a browser posts text/plain (no preflight): refused.
    let response = server
        .http
        .post(&server.url)
        .bearer_auth(TOKEN)
        .header("content-type", "text/plain")
        .body(body)
        .send()
        .await
        .expect("answer");
    assert_eq!(response.status().as_u16(), 415);
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(server.audit(0).await.is_empty(), "nothing recorded");
}

/// What the model can make unreadable (a tool input over the size cap or
/// nested deeper than the parser goes) or the client sends broken is
/// answered 200 with a block: Claude Code takes a non-2xx answer from an
/// HTTP hook as "go ahead".
#[tokio::test]
async fn unreadable_inputs_are_blocked_not_refused() {
    let server = start().await;
    let huge = call(
        "pre_tool_use",
        "toolu_big",
        json!({"command": "x".repeat(2 << 20)}),
    );
    let (status, answer) = server.post(&huge).await;
    assert_eq!(status, 200);
    assert_eq!(answer["decision"], "block", "{answer}");
    assert!(
        answer["reason"]
            .as_str()
            .is_some_and(|r| r.contains("over the server's"))
    );

    let deep = format!(
        r#"{{"session_id": "{SESSION}", "hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_use_id": "toolu_deep", "tool_input": {{"command": "ls", "x": {}1{}}}}}"#,
        "[".repeat(300),
        "]".repeat(300)
    );
    let (status, answer) = server.post_raw(deep.into_bytes(), Some(TOKEN)).await;
    assert_eq!(status, 200);
    assert_eq!(
        answer["hookSpecificOutput"]["permissionDecision"], "deny",
        "{answer}"
    );

    for broken in [
        &b"{\"hook_event_name\": \"PreToolUse\","[..],
        br#"{"hook_event_name": "PreToolUse", "session_id": "s"}"#,
        br#"{"hook_event_name": "Stop", "session_id": "s"}"#,
    ] {
        let (status, answer) = server.post_raw(broken.to_vec(), Some(TOKEN)).await;
        assert_eq!(status, 200);
        assert_eq!(answer["decision"], "block", "{answer}");
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(server.audit(0).await.is_empty(), "nothing recorded");
}

/// Every post event the server cannot check is answered with the reason in
/// place of its result, in the tool's shape: a block alone would leave the
/// raw result in front of the model.
#[tokio::test]
async fn every_refused_post_event_carries_a_replacement() {
    let server = start().await;
    let secret = "-----BEGIN OPENSSH PRIVATE KEY-----";
    // Over the size cap: only the start of the body is read.
    let mut huge = fixture("post_tool_use");
    huge["tool_response"]["stdout"] = json!(format!("{secret}{}", "x".repeat(2 << 20)));
    // Nested deeper than the parser reads.
    let deep = format!(
        r#"{{"session_id": "{SESSION}", "hook_event_name": "PostToolUse", "tool_name": "Bash", "tool_use_id": "toolu_deep", "tool_input": {{"command": "ls"}}, "tool_response": {{"stdout": "{secret}", "x": {}1{}}}}}"#,
        "[".repeat(300),
        "]".repeat(300)
    );
    // A lone surrogate: not text.
    let surrogate = format!(
        r#"{{"session_id": "{SESSION}", "hook_event_name": "PostToolUse", "tool_name": "Bash", "tool_use_id": "toolu_lone", "tool_input": {{"command": "ls"}}, "tool_response": {{"stdout": "{secret} \ud800"}}}}"#
    );
    for body in [
        serde_json::to_vec(&huge).expect("json"),
        deep.into_bytes(),
        surrogate.into_bytes(),
    ] {
        let (status, answer) = server.post_raw(body, Some(TOKEN)).await;
        assert_eq!(status, 200);
        assert_eq!(answer["decision"], "block", "{answer}");
        let replaced = &answer["hookSpecificOutput"]["updatedToolOutput"];
        assert_eq!(answer["hookSpecificOutput"]["hookEventName"], "PostToolUse");
        assert!(
            replaced["stdout"]
                .as_str()
                .is_some_and(|out| out.contains("is blocked")),
            "Bash's shape, the reason as stdout: {answer}"
        );
        assert_eq!(replaced["interrupted"], false);
        assert!(!answer.to_string().contains(secret));
    }

    // An MCP tool: both keys, content blocks.
    let mut mcp = call("post_tool_use", "toolu_mcp", json!({"path": "/k"}));
    mcp["tool_name"] = json!("mcp__files__read_text_file");
    mcp["tool_response"] = json!([{"type": "text", "text": secret}]);
    let (_, answer) = server.post(&mcp).await;
    let specific = &answer["hookSpecificOutput"];
    assert_eq!(
        specific["updatedToolOutput"],
        specific["updatedMCPToolOutput"]
    );
    assert_eq!(specific["updatedToolOutput"][0]["type"], "text");
    assert!(!answer.to_string().contains(secret), "{answer}");
}

/// No slot free: a pre event is denied, a post event gets its replacement;
/// a session that holds its share leaves the others theirs.
#[tokio::test]
async fn a_busy_server_blocks_pre_events_and_replaces_post_results() {
    let server = start_with(AGENT, |settings| settings.max_concurrent_per_session = 0).await;
    let (_, answer) = server.post(&fixture("pre_tool_use")).await;
    assert_eq!(
        answer["hookSpecificOutput"]["permissionDecision"], "deny",
        "{answer}"
    );
    let (_, answer) = server.post(&fixture("post_tool_use")).await;
    let replaced = &answer["hookSpecificOutput"]["updatedToolOutput"];
    assert!(
        replaced["stdout"]
            .as_str()
            .is_some_and(|out| out.contains("requests waiting")),
        "{answer}"
    );
    assert!(!answer.to_string().contains("nothing to commit"));
}

/// One peer sending bodies slowly holds at most half the reading turns
/// (here one): its next request waits for the turn, and is answered once
/// the slow one is gone; the slow body holds no answering slot meanwhile.
#[tokio::test]
async fn a_peer_sending_slowly_holds_only_its_share_of_reads() {
    let server = start_with(AGENT, |settings| settings.max_concurrent = 2).await;
    let address = server
        .url
        .trim_start_matches("http://")
        .trim_end_matches("/hook")
        .to_owned();
    let mut slow = tokio::net::TcpStream::connect(&address)
        .await
        .expect("connect");
    let head = format!(
        "POST /hook HTTP/1.1\r\nHost: {address}\r\nAuthorization: Bearer {TOKEN}\r\n\
         Content-Type: application/json\r\nContent-Length: 100000\r\n\r\n{{\"session_id\": "
    );
    slow.write_all(head.as_bytes()).await.expect("write");
    tokio::time::sleep(Duration::from_millis(300)).await;
    let (url, http) = (server.url.clone(), server.http.clone());
    let next = tokio::spawn(async move {
        http.post(url)
            .bearer_auth(TOKEN)
            .json(&fixture("pre_tool_use"))
            .send()
            .await
            .expect("answer")
            .json::<Value>()
            .await
            .expect("json")
    });
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(!next.is_finished(), "the peer's one turn is taken");
    drop(slow);
    let answer = tokio::time::timeout(Duration::from_secs(10), next)
        .await
        .expect("answered once the turn is back")
        .expect("task");
    assert_eq!(answer, json!({}), "{answer}");
}

/// A session whose calls wait for a person holds only its own share of
/// the slots: another session's calls are still answered.
#[tokio::test]
async fn a_session_holding_its_share_leaves_the_others_theirs() {
    let server = start_with(AGENT, |settings| settings.max_concurrent_per_session = 1).await;
    let held = call(
        "pre_tool_use",
        "toolu_held",
        json!({"command": "./deploy.sh"}),
    );
    let (url, http) = (server.url.clone(), server.http.clone());
    let waiting =
        tokio::spawn(async move { http.post(url).bearer_auth(TOKEN).json(&held).send().await });
    server
        .feishu
        .wait_for_card(1, Duration::from_secs(15))
        .await
        .expect("the gate holds the first call");
    // The same session again: over its share.
    let (_, answer) = server
        .post(&call(
            "pre_tool_use",
            "toolu_more",
            json!({"command": "ls"}),
        ))
        .await;
    assert_eq!(answer["hookSpecificOutput"]["permissionDecision"], "deny");
    assert!(answer.to_string().contains("requests waiting"), "{answer}");
    // Another session: answered as usual.
    let mut other = call("pre_tool_use", "toolu_other", json!({"command": "ls"}));
    other["session_id"] = json!("another-session");
    let (_, answer) = server.post(&other).await;
    assert_eq!(answer, json!({}), "{answer}");
    waiting.abort();
}

/// Anyone holding the server's token (the agent's own shell commands can
/// read it) may send pre events and never their post events. One session
/// doing so fills its own cap of held calls; the other sessions' calls are
/// still let through, and the session gets a slot back when a result comes.
#[tokio::test]
async fn a_session_at_its_cap_of_held_calls_leaves_the_others_theirs() {
    let server = start_with(AGENT, |settings| {
        settings.max_in_flight = 10;
        settings.max_in_flight_per_session = 3;
    })
    .await;
    let ls = json!({"command": "ls"});
    for n in 0..3 {
        let (_, answer) = server
            .post(&call("pre_tool_use", &format!("toolu_{n}"), ls.clone()))
            .await;
        assert_eq!(answer, json!({}), "held within the cap: {answer}");
    }
    let (_, answer) = server
        .post(&call("pre_tool_use", "toolu_over", ls.clone()))
        .await;
    assert_eq!(answer["hookSpecificOutput"]["permissionDecision"], "deny");
    assert!(
        answer.to_string().contains("as many as one session may"),
        "{answer}"
    );
    for n in 0..3 {
        let mut other = call("pre_tool_use", &format!("toolu_other_{n}"), ls.clone());
        other["session_id"] = json!("another-session");
        let (_, answer) = server.post(&other).await;
        assert_eq!(
            answer,
            json!({}),
            "another session is let through: {answer}"
        );
    }
    // A result for one of the held calls gives the session a slot back.
    let mut post = call("post_tool_use", "toolu_0", ls.clone());
    post["tool_response"] = json!({"stdout": "a\nb", "stderr": "", "interrupted": false});
    server.post(&post).await;
    let (_, answer) = server.post(&call("pre_tool_use", "toolu_after", ls)).await;
    assert_eq!(answer, json!({}), "{answer}");
}

/// Claude Code names an MCP tool `mcp__<server>__<tool>`: its connector is
/// the server, as under `hooks mcp-proxy`.
#[tokio::test]
async fn an_mcp_tools_connector_is_its_server() {
    let server = start().await;
    let mut pre = call("pre_tool_use", "toolu_gh", json!({"title": "t"}));
    pre["tool_name"] = json!("mcp__github__create_issue");
    let (_, answer) = server.post(&pre).await;
    assert_eq!(answer, json!({}));
    let mut post = pre.clone();
    post["hook_event_name"] = json!("PostToolUse");
    post["tool_response"] = json!([{"type": "text", "text": "created"}]);
    server.post(&post).await;
    let rows = server.audit(1).await;
    let row = rows
        .iter()
        .find(|r| r.tool_call_id == "toolu_gh")
        .expect("row");
    assert_eq!(row.connector.as_deref(), Some("github"));
}

/// A rewrite in a form Claude Code does not read in place of an MCP tool's
/// result (a whole MCP result) is sent as its content blocks.
#[tokio::test]
async fn an_mcp_rewrite_is_sent_as_content_blocks() {
    let server = start().await;
    let mut pre = call("pre_tool_use", "toolu_env", json!({}));
    pre["tool_name"] = json!("mcp__files__envelope");
    server.post(&pre).await;
    let mut post = pre.clone();
    post["hook_event_name"] = json!("PostToolUse");
    post["tool_response"] = json!([{"type": "text", "text": "original"}]);
    let (_, answer) = server.post(&post).await;
    let specific = &answer["hookSpecificOutput"];
    assert_eq!(
        specific["updatedToolOutput"],
        json!([{"type": "text", "text": "enveloped"}]),
        "{answer}"
    );
    assert_eq!(
        specific["updatedMCPToolOutput"],
        specific["updatedToolOutput"]
    );
}

/// A post event pairs only with its own session's pre event, and only when
/// the tool ran with the input the hooks allowed.
#[tokio::test]
async fn a_post_event_from_another_session_or_with_other_input_is_withheld() {
    let server = start().await;
    server.post(&fixture("pre_tool_use")).await;
    let mut foreign = fixture("post_tool_use");
    foreign["session_id"] = json!("another-session");
    foreign["tool_response"] = json!({"stdout": "forged"});
    let (_, answer) = server.post(&foreign).await;
    assert_eq!(answer["decision"], "block", "{answer}");
    // The real post event still pairs; a null response is a response.
    let mut own = fixture("post_tool_use");
    own["tool_response"] = Value::Null;
    let (_, answer) = server.post(&own).await;
    assert_eq!(answer, json!({}), "{answer}");

    server
        .post(&call(
            "pre_tool_use",
            "toolu_swap",
            json!({"command": "git status"}),
        ))
        .await;
    let mut swapped = call(
        "post_tool_use",
        "toolu_swap",
        json!({"command": "git push --force"}),
    );
    swapped["tool_response"] = json!("pushed");
    let (_, answer) = server.post(&swapped).await;
    assert_eq!(answer["decision"], "block");
    assert!(
        answer["reason"]
            .as_str()
            .is_some_and(|r| r.contains("other than the input the hooks allowed")),
        "{answer}"
    );
    let rows = server.audit(2).await;
    let row = rows
        .iter()
        .find(|r| r.tool_call_id == "toolu_swap")
        .expect("recorded");
    assert_eq!(row.outcome, "tool_error");
}

#[tokio::test]
async fn a_user_header_sent_twice_is_blocked() {
    let server = start().await;
    let response = server
        .http
        .post(&server.url)
        .bearer_auth(TOKEN)
        .header("x-hooks-user", "mallory")
        .header("x-hooks-user", "li.lei")
        .json(&call("pre_tool_use", "toolu_two", json!({"command": "ls"})))
        .send()
        .await
        .expect("answer");
    let answer: Value = response.json().await.expect("json");
    assert_eq!(
        answer["hookSpecificOutput"]["permissionDecision"], "deny",
        "{answer}"
    );
}

/// Without a token, only requests addressed to a loopback name are
/// answered: a page whose domain was rebound to 127.0.0.1 sends its own.
#[tokio::test]
async fn without_a_token_only_loopback_hosts_are_answered() {
    let resources = hooks::std_hooks::offline_resources([] as [&str; 0])
        .await
        .expect("resources");
    let config = AgentConfig::parse("agent: open\n", ConfigFormat::Yaml, "agent.yaml", None)
        .expect("config");
    let agent = Agent::build(config, &resources).expect("agent");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let url = format!("http://{}/hook", listener.local_addr().expect("addr"));
    tokio::spawn(serve(
        listener,
        agent,
        ServeConfig::unauthenticated().answer_allow(),
    ));
    let http = reqwest::Client::new();
    let send = |host: Option<&'static str>| {
        let mut request = http.post(&url).json(&fixture("pre_tool_use"));
        if let Some(host) = host {
            request = request.header("host", host);
        }
        request.send()
    };
    let allowed = send(None).await.expect("answer");
    assert_eq!(allowed.status().as_u16(), 200);
    let answer: Value = allowed.json().await.expect("json");
    assert_eq!(
        answer["hookSpecificOutput"]["permissionDecision"], "allow",
        "answer_allow"
    );
    let rebound = send(Some("attacker.example:8377")).await.expect("answer");
    assert_eq!(rebound.status().as_u16(), 403);
}

#[tokio::test]
async fn a_second_pre_event_for_a_call_in_flight_is_denied() {
    let server = start().await;
    let (_, first) = server.post(&fixture("pre_tool_use")).await;
    assert_eq!(first, json!({}), "let through unchanged: nothing said");
    let (_, second) = server.post(&fixture("pre_tool_use")).await;
    assert_eq!(second["hookSpecificOutput"]["permissionDecision"], "deny");
    assert!(
        second["hookSpecificOutput"]["permissionDecisionReason"]
            .as_str()
            .is_some_and(|r| r.contains("already waiting")),
        "{second}"
    );
}

/// Runs `hooks hook-client` with `input` on stdin.
async fn hook_client(url: &str, input: &Value) -> std::process::Output {
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_hooks"))
        .args(["hook-client", "--url", url, "--timeout", "20"])
        .env("HOOKS_SERVE_TOKEN", TOKEN)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("hooks runs");
    let mut stdin = child.stdin.take().expect("stdin");
    // hook-client stops reading an input over its cap: the rest of the
    // write then fails, as it would for the client.
    let _ = stdin
        .write_all(&serde_json::to_vec(input).expect("json"))
        .await;
    drop(stdin);
    child.wait_with_output().await.expect("exits")
}

#[tokio::test]
async fn hook_client_prints_an_allow_and_exits_2_on_a_deny_or_a_server_that_is_down() {
    let server = start().await;
    let out = hook_client(&server.url, &fixture("pre_tool_use")).await;
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let answer: Value = serde_json::from_slice(&out.stdout).expect("json on stdout");
    assert_eq!(answer, json!({}), "let through unchanged: nothing said");

    let out = hook_client(
        &server.url,
        &call("pre_tool_use", "toolu_rm", json!({"command": "rm -rf ~"})),
    )
    .await;
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("`rm -rf` is not allowed"));

    // Nothing listens on a port just released.
    let closed = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        listener.local_addr().expect("addr")
    };
    let out = hook_client(&format!("http://{closed}/hook"), &fixture("pre_tool_use")).await;
    assert_eq!(out.status.code(), Some(2), "fail closed");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("cannot reach the hook server"), "{stderr}");

    // A post event: exit 2 would leave the result in front of the model;
    // the reason replaces it instead, in Bash's shape.
    let out = hook_client(&format!("http://{closed}/hook"), &fixture("post_tool_use")).await;
    assert_eq!(out.status.code(), Some(0));
    let answer: Value = serde_json::from_slice(&out.stdout).expect("json on stdout");
    assert_eq!(answer["decision"], "block");
    let replaced = &answer["hookSpecificOutput"]["updatedToolOutput"];
    assert!(
        replaced["stdout"]
            .as_str()
            .is_some_and(|out| out.contains("cannot reach the hook server")),
        "{answer}"
    );
    assert!(!answer.to_string().contains("nothing to commit"));

    // A post event over hook-client's own cap: not forwarded, and the
    // result still replaced (its tool read from the start of the input).
    let mut huge = fixture("post_tool_use");
    huge["tool_response"]["stdout"] = json!(format!("SECRET{}", "x".repeat(2 << 20)));
    let out = hook_client(&server.url, &huge).await;
    assert_eq!(out.status.code(), Some(0));
    let answer: Value = serde_json::from_slice(&out.stdout).expect("json on stdout");
    let replaced = &answer["hookSpecificOutput"]["updatedToolOutput"];
    assert!(
        replaced["stdout"]
            .as_str()
            .is_some_and(|out| out.contains("over")),
        "{answer}"
    );
    assert!(!answer.to_string().contains("SECRET"));

    // A failure whose error cannot be checked: the session stops.
    let failure = fixture("post_tool_use_failure");
    let out = hook_client(&format!("http://{closed}/hook"), &failure).await;
    let answer: Value = serde_json::from_slice(&out.stdout).expect("json on stdout");
    assert_eq!(answer["continue"], false, "{answer}");
}

/// `hooks serve` from the command line: the std hooks of a config file,
/// answering `hook-client`; and no token on a public address is refused.
#[tokio::test]
async fn the_cli_serves_a_config_and_refuses_a_public_address_without_a_token() {
    let dir = tempfile::tempdir().expect("dir");
    let config = dir.path().join("agent.yaml");
    std::fs::write(
        &config,
        "agent: claude-code\nhooks:\n  class_hooks:\n    - readonly_guard\n    - name: approval_gate\n      config:\n        when: 'tool_name == \"Bash\" && args.command contains \"deploy\"'\n",
    )
    .expect("write");
    let config = config.to_str().expect("utf-8").to_owned();

    let refused = tokio::process::Command::new(env!("CARGO_BIN_EXE_hooks"))
        .args(["serve", &config, "--listen", "0.0.0.0:0"])
        .env_remove("HOOKS_SERVE_TOKEN")
        .output()
        .await
        .expect("runs");
    assert_eq!(refused.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("refusing to serve without a token"));

    // A user header with no proxy to believe it from is a usage error.
    let refused = tokio::process::Command::new(env!("CARGO_BIN_EXE_hooks"))
        .args(["serve", &config, "--user-header", "x-hooks-user"])
        .output()
        .await
        .expect("runs");
    assert_eq!(refused.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains("--user-header-from"),
        "{}",
        String::from_utf8_lossy(&refused.stderr)
    );

    let mut server = tokio::process::Command::new(env!("CARGO_BIN_EXE_hooks"))
        .args([
            "serve",
            "--config",
            &config,
            "--listen",
            "127.0.0.1:0",
            "--org",
            "acme-frozen",
            "--read-only-org",
            "acme-frozen",
        ])
        .env("HOOKS_SERVE_TOKEN", TOKEN)
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("serves");
    let mut lines = tokio::io::AsyncBufReadExt::lines(tokio::io::BufReader::new(
        server.stdout.take().expect("stdout"),
    ));
    let first = tokio::time::timeout(Duration::from_secs(20), lines.next_line())
        .await
        .expect("the server starts")
        .expect("read")
        .expect("a line");
    let url = first
        .split_whitespace()
        .find(|word| word.starts_with("http://"))
        .expect("the address")
        .to_owned();

    let sql = {
        let mut input = call(
            "pre_tool_use",
            "toolu_sql",
            json!({"sql": "DELETE FROM orders"}),
        );
        input["tool_name"] = json!("sql_exec");
        input
    };
    let out = hook_client(&url, &sql).await;
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("read-only mode"));

    // The gate has no approval channel here: a call needing approval is
    // blocked, closed, and says so.
    let deploy = call(
        "pre_tool_use",
        "toolu_deploy",
        json!({"command": "./deploy.sh"}),
    );
    let out = hook_client(&url, &deploy).await;
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("no approval channel is configured"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    server.kill().await.expect("stops");
}

/// A call whose post event never comes is recorded once, as abandoned,
/// after the TTL; its late post event is then withheld.
#[tokio::test]
async fn a_call_without_its_post_event_is_recorded_as_abandoned() {
    let server = start_with_ttl(Duration::from_millis(300)).await;
    let (_, answer) = server.post(&fixture("pre_tool_use")).await;
    assert_eq!(answer, json!({}), "let through unchanged: nothing said");
    tokio::time::sleep(Duration::from_millis(400)).await;
    // Any request sweeps.
    server
        .post(&call(
            "pre_tool_use",
            "toolu_other",
            json!({"command": "ls"}),
        ))
        .await;
    let rows = server.audit(1).await;
    let abandoned = rows
        .iter()
        .find(|r| r.tool_call_id == "toolu_01ABCxyz")
        .expect("recorded");
    assert_eq!(abandoned.outcome, "blocked", "{abandoned:?}");
    let (_, late) = server.post(&fixture("post_tool_use")).await;
    assert_eq!(late["decision"], "block");
}

/// A quota on the `github` connector counts Claude Code's
/// `mcp__github__…` calls: 2 a minute, the third denied.
#[tokio::test]
async fn a_connector_quota_applies_to_claude_codes_mcp_tools() {
    let server = start_with(
        "agent: cc\nhooks:\n  class_hooks:\n    - name: connector_rate_limit\n      config:\n        \
         default: { calls: 100, period: 1m }\n        connectors: { github: { calls: 2, period: 1m } }\n",
        |_| {},
    )
    .await;
    let mut decisions = Vec::new();
    for n in 0..3 {
        let mut pre = call(
            "pre_tool_use",
            &format!("toolu_gh_{n}"),
            json!({"title": "t"}),
        );
        pre["tool_name"] = json!("mcp__github__create_issue");
        let (_, answer) = server.post(&pre).await;
        decisions.push(answer["hookSpecificOutput"]["permissionDecision"].clone());
    }
    assert_eq!(decisions, [Value::Null, Value::Null, json!("deny")]);
}
