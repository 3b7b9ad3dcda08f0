//! Hook inputs meant to get a call or a result past `hooks serve`. The model
//! writes the tool's input (and so the size, depth and text of the hook
//! input); a client or another session may send post events of its own.
//! Claude Code takes any non-2xx answer from an HTTP hook as "go ahead", so
//! every row must be answered 200 with a deny (pre) or a withheld result
//! (post) — never `{}` or `allow`.

use std::sync::Arc;

use hooks::Agent;
use hooks::config::{AgentConfig, ConfigFormat};
use hooks::factory::Resources;
use hooks::serve::{ServeConfig, serve};
use hooks::std_hooks::{DATABASE, Database, ORG_MODES, OrgModeSource, StaticOrgModes};
use serde_json::{Value, json};

const TOKEN: &str = "bypass-token";

/// A server for org `frozen`, which is read-only; the agent runs the
/// read-only guard. The user header is believed from loopback (the tests'
/// own address).
async fn server() -> String {
    server_trusting(std::net::Ipv4Addr::LOCALHOST.into()).await
}

/// The same, believing the user header only from `proxy`.
async fn server_trusting(proxy: std::net::IpAddr) -> String {
    let database = Database::connect("sqlite::memory:")
        .await
        .expect("database");
    let modes: Arc<dyn OrgModeSource> = Arc::new(StaticOrgModes::with_read_only(["frozen"]));
    let resources = Resources::new()
        .with(DATABASE, database)
        .with(ORG_MODES, modes);
    let config = AgentConfig::parse(
        "agent: cc\nhooks:\n  class_hooks: [readonly_guard]\n",
        ConfigFormat::Yaml,
        "agent.yaml",
        None,
    )
    .expect("config");
    let agent = Agent::build(config, &resources).expect("agent");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let url = format!("http://{}/hook", listener.local_addr().expect("addr"));
    let settings = ServeConfig::with_token(TOKEN)
        .org("frozen")
        .user("dev")
        .user_header("x-hooks-user", [proxy]);
    tokio::spawn(serve(listener, agent, settings));
    url
}

fn pre(id: &str, tool: &str, input: Value) -> Value {
    json!({"session_id": "s1", "hook_event_name": "PreToolUse", "cwd": "/w",
           "tool_name": tool, "tool_input": input, "tool_use_id": id})
}

fn post(session: &str, id: &str, tool: &str, input: Value, response: Value) -> Value {
    json!({"session_id": session, "hook_event_name": "PostToolUse", "tool_name": tool,
           "tool_input": input, "tool_use_id": id, "tool_response": response})
}

/// Posts `body` (with `headers`) and says whether the answer stops the call
/// or its result: 200 and a deny or a block.
async fn stopped(url: &str, body: Vec<u8>, headers: &[(&str, &str)]) -> (bool, String) {
    let mut request = reqwest::Client::new()
        .post(url)
        .bearer_auth(TOKEN)
        .header("content-type", "application/json")
        .body(body);
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let response = request.send().await.expect("answer");
    let status = response.status().as_u16();
    let answer: Value = response.json().await.unwrap_or(Value::Null);
    let stops = status == 200
        && (answer["hookSpecificOutput"]["permissionDecision"] == "deny"
            || answer["decision"] == "block");
    (stops, format!("HTTP {status}: {answer}"))
}

/// A case: its name, the body sent, and extra headers.
type Row = (&'static str, Vec<u8>, Vec<(&'static str, &'static str)>);

fn bytes(value: &Value) -> Vec<u8> {
    serde_json::to_vec(value).expect("json")
}

/// Every hostile hook input of the corpus, after a plain read `t-ok` of
/// session `s1` was let through (some rows aim at it).
fn hostile_inputs() -> Vec<Row> {
    let write = json!({"sql": "DELETE FROM orders"});
    let deep = format!(
        r#"{{"session_id": "s1", "hook_event_name": "PreToolUse", "tool_name": "sql_exec", "tool_use_id": "t-deep", "tool_input": {{"sql": "DELETE FROM orders", "x": {}1{}}}}}"#,
        "[".repeat(400),
        "]".repeat(400)
    );
    let surrogate = r#"{"session_id": "s1", "hook_event_name": "PreToolUse", "tool_name": "sql_exec", "tool_use_id": "t-sur", "tool_input": {"sql": "DELETE FROM orders", "note": "\ud800"}}"#;
    vec![
        (
            "a write in a read-only org",
            bytes(&pre("t1", "sql_exec", write.clone())),
            vec![],
        ),
        (
            "a write behind a version comment",
            bytes(&pre(
                "t2",
                "sql_exec",
                json!({"sql": "/*!50000 DELETE FROM orders */"}),
            )),
            vec![],
        ),
        (
            "tool input over the server's size cap",
            bytes(&pre(
                "t3",
                "sql_exec",
                json!({"sql": "DELETE FROM orders", "pad": "x".repeat(2 << 20)}),
            )),
            vec![],
        ),
        (
            "tool input nested past the parser's depth",
            deep.into_bytes(),
            vec![],
        ),
        (
            "a lone surrogate in the tool input",
            surrogate.as_bytes().to_vec(),
            vec![],
        ),
        (
            "a tool name with a line break",
            bytes(&pre("t4", "sql_query\nsql_exec", write.clone())),
            vec![],
        ),
        (
            "the user header twice",
            bytes(&pre("t5", "sql_query", json!({"sql": "SELECT 1"}))),
            vec![("x-hooks-user", "mallory"), ("x-hooks-user", "dev")],
        ),
        (
            "a post event from another session for a call in flight",
            bytes(&post(
                "s2",
                "t-ok",
                "sql_query",
                json!({"sql": "SELECT 1"}),
                json!("forged"),
            )),
            vec![],
        ),
        (
            "a post event whose input is not what the hooks allowed",
            bytes(&post(
                "s1",
                "t-ok",
                "sql_query",
                json!({"sql": "DELETE FROM orders"}),
                json!("done"),
            )),
            vec![],
        ),
        (
            "a post event for a call no pre event let through",
            bytes(&post(
                "s1",
                "t-never",
                "sql_exec",
                write.clone(),
                Value::Null,
            )),
            vec![],
        ),
        (
            "an event the server does not answer",
            bytes(
                &json!({"session_id": "s1", "hook_event_name": "PermissionRequest", "tool_name": "sql_exec", "tool_input": write}),
            ),
            vec![],
        ),
    ]
}

/// Lets the plain read `t-ok` through, which some hostile rows aim at.
async fn allow_the_plain_read(url: &str) {
    let (stops, answer) = stopped(
        url,
        bytes(&pre("t-ok", "sql_query", json!({"sql": "SELECT 1"}))),
        &[],
    )
    .await;
    assert!(!stops, "a plain read goes ahead: {answer}");
}

#[tokio::test]
async fn every_hostile_hook_input_is_stopped_with_a_200() {
    let url = server().await;
    allow_the_plain_read(&url).await;
    for (name, body, headers) in hostile_inputs() {
        let (stops, answer) = stopped(&url, body, &headers).await;
        assert!(stops, "{name}: {answer}");
    }
}

/// The same corpus through `hooks hook-client --client codex`: Codex lets a
/// call go ahead (and keeps a result) on anything but exit 2 with a reason
/// or `decision: "block"` with one, so every row must come to one of those,
/// in Codex's fields only. (The rows that need headers of their own are
/// for the server alone: hook-client sends none.)
#[tokio::test]
async fn every_hostile_hook_input_is_stopped_for_codex() {
    use hooks::serve::client::{HookClient, forward_to};
    let url = server().await;
    allow_the_plain_read(&url).await;
    for (name, body, headers) in hostile_inputs() {
        if !headers.is_empty() {
            continue;
        }
        let timeout = std::time::Duration::from_secs(30);
        let answer = forward_to(HookClient::Codex, &url, Some(TOKEN), body, timeout).await;
        let printed: Value = serde_json::from_str(&answer.stdout).unwrap_or(Value::Null);
        let stops = match answer.code {
            2 => !answer.stderr.trim().is_empty(),
            0 => {
                printed["decision"] == "block"
                    && printed["reason"]
                        .as_str()
                        .is_some_and(|r| !r.trim().is_empty())
                    && printed.as_object().is_some_and(|o| o.len() == 2)
            }
            _ => false,
        };
        assert!(stops, "{name}: {answer:?}");
    }
}

/// Codex runs a shell command the hooks let through under `hooks
/// run-buffered`; a post event whose command is anything but that form of
/// the command the pre event saw (something spliced after it, another
/// command inside) is a changed input, and its result is withheld.
#[tokio::test]
async fn a_codex_command_other_than_the_one_let_through_is_withheld() {
    use hooks::serve::client::{HookClient, forward_to};
    let url = server().await;
    let timeout = std::time::Duration::from_secs(30);
    let send =
        |body: Value| forward_to(HookClient::Codex, &url, Some(TOKEN), bytes(&body), timeout);
    let secret = "-----BEGIN OPENSSH PRIVATE KEY----- b3BlbnNzaC1rZXk";
    type Form = fn(&str) -> String;
    let cases: [(&str, Form); 4] = [
        ("as it was let through", |wrapped| wrapped.to_owned()),
        ("spliced after", |wrapped| {
            format!("{wrapped}; cat ~/.ssh/id_rsa")
        }),
        ("another inside", |wrapped| {
            wrapped.replace("'ls'", "'cat ~/.ssh/id_rsa'")
        }),
        ("the bare command", |_| "cat ~/.ssh/id_rsa".to_owned()),
    ];
    for (n, (name, command)) in cases.into_iter().enumerate() {
        let id = format!("t-codex-{n}");
        let mut pre = pre(&id, "Bash", json!({"command": "ls"}));
        pre["session_id"] = json!("s-codex");
        let answer = send(pre).await;
        let printed: Value = serde_json::from_str(&answer.stdout).expect("an answer");
        let wrapped = printed["hookSpecificOutput"]["updatedInput"]["command"]
            .as_str()
            .expect("the command, rewritten");
        assert!(wrapped.contains(" run-buffered -- "), "{wrapped}");
        let input = json!({"command": command(wrapped)});
        let answer = send(post(
            "s-codex",
            &id,
            "Bash",
            input,
            json!(format!("{secret} listing")),
        ))
        .await;
        let printed: Value = serde_json::from_str(&answer.stdout).unwrap_or(Value::Null);
        let withheld = printed["decision"] == "block" && !answer.stdout.contains("BEGIN OPENSSH");
        // The command let through is checked as the model's own: this
        // server withholds nothing it can check.
        assert_eq!(withheld, n > 0, "{name}: {answer:?}");
    }
}

/// A post event the server cannot check must not leave its result in front
/// of the model: Claude Code keeps a built-in tool's result unless the
/// replacement has that tool's shape, so each answer must carry the reason
/// in the tool's shape (an object or content blocks), or stop the session
/// (`continue: false`). Never the secret itself, never a bare block.
#[tokio::test]
async fn no_unchecked_post_event_leaves_its_result_in_place() {
    let url = server().await;
    let secret = "-----BEGIN OPENSSH PRIVATE KEY----- b3BlbnNzaC1rZXk";
    let big = "x".repeat(2 << 20);
    let deep = |event: &str, tool: &str| {
        format!(
            r#"{{"session_id": "s1", "hook_event_name": "{event}", "tool_name": "{tool}", "tool_use_id": "t-deep", "tool_input": {{}}, "tool_response": {{"stdout": "{secret}", "x": {}1{}}}}}"#,
            "[".repeat(400),
            "]".repeat(400)
        )
    };
    let bash = json!({"stdout": format!("{secret}{big}"), "stderr": "", "interrupted": false, "isImage": false});
    let rows: Vec<(&str, Vec<u8>)> = vec![
        (
            "Bash output over the size cap",
            bytes(&post("s1", "t1", "Bash", json!({"command": "cat k"}), bash.clone())),
        ),
        ("Bash output nested past the parser's depth", deep("PostToolUse", "Bash").into_bytes()),
        (
            "Read output over the size cap",
            bytes(&post(
                "s1",
                "t2",
                "Read",
                json!({"file_path": "/k"}),
                json!({"type": "text", "file": {"filePath": "/k", "content": format!("{secret}{big}"),
                       "numLines": 1, "startLine": 1, "totalLines": 1}}),
            )),
        ),
        (
            "an MCP tool's output over the size cap",
            bytes(&post(
                "s1",
                "t3",
                "mcp__files__read_text_file",
                json!({"path": "/k"}),
                json!(format!("{secret}{big}")),
            )),
        ),
        (
            "a tool whose shape the server does not know, over the size cap",
            bytes(&post("s1", "t4", "Write", json!({"file_path": "/k"}), json!({"filePath": format!("{secret}{big}")}))),
        ),
        (
            "the result written before the event's name, over the size cap",
            format!(
                r#"{{"tool_response": {{"stdout": "{secret}{big}"}}, "session_id": "s1", "hook_event_name": "PostToolUse", "tool_name": "Bash", "tool_use_id": "t5", "tool_input": {{}}}}"#
            )
            .into_bytes(),
        ),
        (
            "a tool name spelled with an escape",
            format!(
                r#"{{"session_id": "s1", "hook_event_name": "PostToolUse", "tool_name": "Ba\u0073h", "tool_use_id": "t6", "tool_input": {{}}, "tool_response": {{"stdout": "{secret}{big}"}}}}"#
            )
            .into_bytes(),
        ),
        (
            "a tool failure nested past the parser's depth",
            deep("PostToolUseFailure", "Bash").into_bytes(),
        ),
    ];
    for (name, body) in rows {
        let response = reqwest::Client::new()
            .post(&url)
            .bearer_auth(TOKEN)
            .header("content-type", "application/json")
            .body(body)
            .send()
            .await
            .expect("answer");
        assert_eq!(response.status().as_u16(), 200, "{name}");
        let answer: Value = response.json().await.expect("JSON");
        assert!(
            !answer.to_string().contains("b3BlbnNzaC1rZXk"),
            "{name}: {answer}"
        );
        let replaced = &answer["hookSpecificOutput"]["updatedToolOutput"];
        let shaped = answer["hookSpecificOutput"]["hookEventName"] == "PostToolUse"
            && (replaced.is_object() || replaced.is_array());
        let stops = answer["continue"] == false;
        assert!(
            answer["decision"] == "block" && (shaped || stops),
            "{name}: the result would stay in place: {answer}"
        );
    }
}

/// The token is readable by the agent's own commands, so it cannot vouch
/// for a user: a user header from a peer that is not the trusted proxy
/// stops the call, whoever it names; without the header the call is the
/// configured user's, as usual.
#[tokio::test]
async fn a_user_header_from_a_peer_other_than_the_proxy_is_stopped() {
    let url = server_trusting([10, 0, 0, 5].into()).await;
    let read = bytes(&pre("t-u1", "sql_query", json!({"sql": "SELECT 1"})));
    for user in ["root", "dev", ""] {
        let (stops, answer) = stopped(&url, read.clone(), &[("x-hooks-user", user)]).await;
        assert!(stops, "a user header {user:?} from loopback: {answer}");
        assert!(answer.contains("not a proxy trusted"), "{answer}");
    }
    let (stops, answer) = stopped(&url, read.clone(), &[]).await;
    assert!(!stops, "no header: the configured user's call: {answer}");
    // The trusted proxy itself, named in its IPv4-mapped IPv6 spelling, is
    // believed: the spelling of an address does not change whose it is.
    let mapped = server_trusting("::ffff:127.0.0.1".parse().expect("address")).await;
    let (stops, answer) = stopped(&mapped, read, &[("x-hooks-user", "li.lei")]).await;
    assert!(!stops, "the proxy, spelled as IPv6: {answer}");
}
