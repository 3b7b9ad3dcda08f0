//! Conformance with the real MCP clients: the official Python SDK (PyPI
//! `mcp`, pinned in tests/mcp/requirements.txt) and the TypeScript SDK's
//! client (npm `@modelcontextprotocol/sdk`, pinned in
//! tests/mcp/package.json), unmodified, driven by tests/mcp/client.py and
//! client.mjs, as clients of `hooks mcp-proxy` in front of the reference
//! servers `server-filesystem` and `server-everything` (which declare
//! output schemas), over stdio (the `hooks` binary; and a proxy in this
//! process, with the approval gate, reached through a stdio relay) and
//! streamable HTTP (a proxy in this process). Both SDKs check a
//! result's `structuredContent` against the tool's `outputSchema`: every
//! allowed, blocked, truncated, withheld and gated call must be accepted,
//! with the content the hooks decided.
//!
//! Without Node, Python, the SDKs or the servers (`npm ci --prefix
//! tests/mcp`, `pip install -r tests/mcp/requirements.txt`) each test
//! prints SKIPPED and passes without running.
#![cfg(feature = "mcp")]

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use hooks::config::{AgentConfig, ConfigFormat};
use hooks::mcp_proxy::{McpProxy, McpProxyConfig};
use hooks::prelude::*;
use hooks::std_hooks::approval_gate::ApprovalDecision;
use hooks_testkit::feishu::CardClick;
use serde_json::{Value, json};
use tokio::io::AsyncWriteExt;

#[path = "support/mcp.rs"]
mod support;

use support::*;

/// The private key no client may receive.
const KEY_BODY: &str = "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ";

/// The two clients, by their driver scripts.
const CLIENTS: [&str; 2] = ["client.py", "client.mjs"];

/// The drivers and what they need, or why the tests skip.
fn clients() -> Option<PathBuf> {
    let peers = peers()?;
    let sdk = std::process::Command::new("python3")
        .args(["-c", "import mcp"])
        .output()
        .is_ok_and(|out| out.status.success());
    if !sdk
        || !peers
            .join("@modelcontextprotocol/sdk/package.json")
            .exists()
    {
        println!(
            "SKIPPED: the MCP SDKs are missing (run `pip install -r tests/mcp/requirements.txt` \
             and `npm ci --prefix tests/mcp`)"
        );
        return None;
    }
    Some(peers)
}

/// Runs one client with `args` (`stdio -- …` or `http URL --token T`) and
/// `calls`, and returns its line for each call.
async fn run_client(script: &str, args: &[String], calls: &[(&str, Value)]) -> Vec<Value> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp");
    let program = if script.ends_with(".py") {
        "python3"
    } else {
        "node"
    };
    let mut child = tokio::process::Command::new(program)
        .arg(dir.join(script))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("the client starts");
    let calls: Vec<Value> = calls
        .iter()
        .map(|(tool, args)| json!({"tool": tool, "args": args}))
        .collect();
    let mut stdin = child.stdin.take().expect("stdin");
    stdin
        .write_all(Value::Array(calls.clone()).to_string().as_bytes())
        .await
        .expect("calls written");
    drop(stdin);
    let out = tokio::time::timeout(Duration::from_secs(120), child.wait_with_output())
        .await
        .expect("the client finishes")
        .expect("the client runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "{script} {args:?}: {stdout}\n{stderr}"
    );
    // Closing an HTTP session is answered as the SDKs expect (200, not 202).
    assert!(
        !stderr.contains("Session termination failed"),
        "{script} {args:?}: {stderr}"
    );
    let lines: Vec<Value> = stdout
        .lines()
        .map(|line| serde_json::from_str(line).expect("a JSON line"))
        .collect();
    // A line per call, and with `--lists` one per list.
    let lists = if args.iter().any(|arg| arg == "--lists") {
        2
    } else {
        0
    };
    assert_eq!(
        lines.len(),
        calls.len() + lists,
        "{script}: {stdout}\n{stderr}"
    );
    lines
}

/// A call's result as the client accepted it (its SDK raised nothing).
fn accepted<'a>(script: &str, tool: &str, line: &'a Value) -> &'a Value {
    line.get("ok")
        .unwrap_or_else(|| panic!("{script} refused the result of {tool}: {line}"))
}

fn text(result: &Value) -> String {
    result["content"]
        .as_array()
        .map(|blocks| {
            blocks
                .iter()
                .filter_map(|block| block["text"].as_str())
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default()
}

/// A scratch root for server-filesystem: a short file, a long one, a key.
fn files() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("dir");
    std::fs::write(dir.path().join("short.txt"), "hello\n").expect("short");
    let long: String = (1..=20)
        .map(|n| format!("line {n:02} of the file\n"))
        .collect();
    std::fs::write(dir.path().join("long.txt"), long).expect("long");
    let key = format!(
        "-----BEGIN OPENSSH PRIVATE KEY-----\n{KEY_BODY}\n-----END OPENSSH PRIVATE KEY-----\n"
    );
    std::fs::write(dir.path().join("id_rsa"), key).expect("key");
    dir
}

/// The calls both transports make, and what each client must get.
fn check_file_calls(script: &str, root: &Path, lines: &[Value]) {
    let short = accepted(script, "read short", &lines[0]);
    assert_eq!(short["isError"], false, "{short}");
    assert_eq!(text(short), "hello\n");
    assert_eq!(short["structuredContent"], json!({"content": "hello\n"}));

    let long = accepted(script, "read long", &lines[1]);
    assert_eq!(long["isError"], false, "{long}");
    let cut = text(long);
    assert!(cut.starts_with("line 01 of the file\nline 02"), "{cut}");
    assert!(
        cut.contains("[truncated: showing 40 of 400 characters]"),
        "{cut}"
    );
    assert_eq!(
        long["structuredContent"]["content"], cut,
        "the structured copy is cut like the text"
    );

    let key = accepted(script, "read key", &lines[2]);
    assert_eq!(key["isError"], true, "a withheld result is an error: {key}");
    assert!(!key.to_string().contains(KEY_BODY), "{key}");
    assert!(
        text(key).contains("the result holds a private key"),
        "{key}"
    );

    let move_file = accepted(script, "move_file", &lines[3]);
    assert_eq!(move_file["isError"], true, "{move_file}");
    assert!(text(move_file).contains("no moves"), "{move_file}");
    assert!(
        root.join("long.txt").exists(),
        "the server never saw the call"
    );
}

/// Over stdio, through the `hooks` binary: std hooks and command hooks
/// from a config file.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn real_clients_accept_every_answer_over_stdio() {
    let Some(peers) = clients() else { return };
    let scripts = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/scripts");
    let root = files();
    let config = root.path().join("agent.yaml");
    std::fs::write(
        &config,
        format!(
            r#"
agent: mcp-conformance
hooks:
  class_hooks:
    - name: result_truncate
      config: {{ max_chars: 40 }}
  commands:
    - event: PreToolUse
      when: 'tool_name == "move_file"'
      command: ["sh", "-c", "cat >/dev/null; echo 'no moves here' >&2; exit 2"]
    - event: PostToolUse
      command: ["{}"]
    - event: PostToolUse
      when: 'tool_name == "list_allowed_directories"'
      command: ["{}"]
"#,
            scripts.join("no_keys.sh").display(),
            scripts.join("replace.sh").display(),
        ),
    )
    .expect("config");
    let dir = root.path().display().to_string();
    let file = |name: &str| format!("{dir}/{name}");
    let hooks = env!("CARGO_BIN_EXE_hooks").to_owned();
    let proxy = |name: &str, server: Vec<String>| {
        let mut args = vec!["stdio".to_owned(), "--".to_owned(), hooks.clone()];
        args.extend(["mcp-proxy", "--config"].map(str::to_owned));
        args.push(config.display().to_string());
        args.extend(["--name".to_owned(), name.to_owned(), "--".to_owned()]);
        args.extend(server);
        args
    };
    let filesystem = proxy(
        "files",
        server_command(&peers, "server-filesystem", &[dir.as_str()]),
    );
    let everything = proxy(
        "everything",
        server_command(&peers, "server-everything", &["stdio"]),
    );
    for script in CLIENTS {
        let calls = [
            ("read_text_file", json!({"path": file("short.txt")})),
            ("read_text_file", json!({"path": file("long.txt")})),
            ("read_text_file", json!({"path": file("id_rsa")})),
            (
                "move_file",
                json!({"source": file("long.txt"), "destination": file("moved.txt")}),
            ),
            ("list_allowed_directories", json!({})),
        ];
        let lines = run_client(script, &filesystem, &calls).await;
        check_file_calls(script, root.path(), &lines);
        // A rewrite that cannot fit the output schema: an error result
        // with the hook's text, not a success the client refuses.
        let replaced = accepted(script, "list_allowed_directories", &lines[4]);
        assert_eq!(replaced["isError"], true, "{replaced}");
        assert!(text(replaced).contains("replaced by a hook"), "{replaced}");
        assert!(text(replaced).contains("output schema"), "{replaced}");

        let calls = [
            ("echo", json!({"message": "m".repeat(100)})),
            ("get-structured-content", json!({"location": "New York"})),
        ];
        let lines = run_client(script, &everything, &calls).await;
        let echo = accepted(script, "echo", &lines[0]);
        assert_eq!(echo["isError"], false, "{echo}");
        assert!(
            text(echo).contains("[truncated: showing 40 of 106 characters]"),
            "{echo}"
        );
        let structured = accepted(script, "get-structured-content", &lines[1]);
        assert_eq!(structured["isError"], false, "{structured}");
        assert!(
            structured["structuredContent"]["temperature"].is_number(),
            "{structured}"
        );
    }
}

/// Withholds results that hold a private key, reading the text the model
/// would read.
#[post_tool_use(priority = 10)]
async fn conformance_no_keys(ctx: &HookContext) -> HookResult {
    match ctx.output() {
        Some(output) if output.text().contains("PRIVATE KEY") => {
            HookResult::block("the result holds a private key")
        }
        _ => HookResult::allow(),
    }
}

#[pre_tool_use(when = tool_name == "move_file")]
async fn conformance_no_moves(_ctx: &HookContext) -> HookResult {
    HookResult::block("no moves here")
}

const HTTP_AGENT: &str = r#"
agent: mcp-conformance-http
hooks:
  class_hooks:
    - conformance_no_keys
    - conformance_no_moves
    - name: approval_gate
      config:
        when: 'tool_name == "write_file"'
        approver_scope: org_members
        timeout: 60s
    - name: result_truncate
      config: { max_chars: 40 }
    - audit_log
"#;

/// A proxy in this process, reached over streamable HTTP and over stdio
/// (the client's stdio server is tests/mcp/stdio_relay.py, which relays to
/// the proxy): the same answers, and a call the approval gate holds until
/// a person approves it in Feishu.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn real_clients_accept_every_answer_and_wait_for_approval_in_process() {
    let Some(peers) = clients() else { return };
    let root = files();
    let dir = root.path().display().to_string();
    let (resources, _database, feishu, callback_url) = resources().await;
    let start = async |server: &str, command: Vec<String>| {
        let config =
            AgentConfig::parse(HTTP_AGENT, ConfigFormat::Yaml, "agent.yaml", None).expect("config");
        let settings = McpProxyConfig::from_value(&json!({
            "server": server, "command": command, "user": "alice", "org": "acme",
        }))
        .expect("settings");
        McpProxy::start(config, settings, &resources)
            .await
            .expect("the proxy starts")
    };
    let files_proxy = start(
        "files",
        server_command(&peers, "server-filesystem", &[dir.as_str()]),
    )
    .await;
    let token = "conformance-http-token";
    let http_url = serve_http(&files_proxy, Some(token)).await;
    let port = relay_to(&files_proxy).await;
    let relay = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/stdio_relay.py");
    let transports = [
        (
            "stdio",
            vec![
                "stdio".to_owned(),
                "--".to_owned(),
                "python3".to_owned(),
                relay.display().to_string(),
                port,
            ],
        ),
        (
            "http",
            vec![
                "http".to_owned(),
                http_url,
                "--token".to_owned(),
                token.to_owned(),
            ],
        ),
    ];
    let file = |name: &str| format!("{dir}/{name}");
    let mut cards = 0;
    for (transport, args) in &transports {
        for script in CLIENTS {
            let written = format!("written-by-{script}-over-{transport}.txt");
            let calls = vec![
                ("read_text_file", json!({"path": file("short.txt")})),
                ("read_text_file", json!({"path": file("long.txt")})),
                ("read_text_file", json!({"path": file("id_rsa")})),
                (
                    "move_file",
                    json!({"source": file("long.txt"), "destination": file("moved.txt")}),
                ),
                (
                    "write_file",
                    json!({"path": file(&written), "content": "approved\n"}),
                ),
            ];
            let args = args.clone();
            let client = tokio::spawn(async move { run_client(script, &args, &calls).await });
            cards += 1;
            let card = feishu
                .wait_for_card(cards, Duration::from_secs(60))
                .await
                .expect("a card reaches the approvers");
            assert!(
                !root.path().join(&written).exists(),
                "{script} over {transport}: nothing is written before the approval"
            );
            let request = card.request_id().expect("buttons").to_owned();
            let click = CardClick::new(&request, ApprovalDecision::Approve, APPROVER, CHAT);
            feishu.click(&callback_url, &click).await.expect("click");
            let lines = client.await.expect("the client task");
            check_file_calls(script, root.path(), &lines);
            let gated = accepted(script, "write_file", &lines[4]);
            assert_eq!(gated["isError"], false, "{transport}: {gated}");
            assert!(text(gated).contains("Successfully wrote"), "{gated}");
            assert_eq!(gated["structuredContent"]["content"], text(gated));
            assert_eq!(
                std::fs::read_to_string(root.path().join(&written)).expect("written"),
                "approved\n"
            );
        }
    }

    // server-everything over HTTP: a result without an output schema cut,
    // one with a schema passed as it came.
    let everything = start(
        "everything",
        server_command(&peers, "server-everything", &["stdio"]),
    )
    .await;
    let url = serve_http(&everything, Some(token)).await;
    let args = [
        "http".to_owned(),
        url,
        "--token".to_owned(),
        token.to_owned(),
    ];
    for script in CLIENTS {
        let calls = [
            ("echo", json!({"message": "m".repeat(100)})),
            ("get-structured-content", json!({"location": "New York"})),
        ];
        let lines = run_client(script, &args, &calls).await;
        let echo = accepted(script, "echo", &lines[0]);
        assert!(
            text(echo).contains("[truncated: showing 40 of 106 characters]"),
            "{echo}"
        );
        let structured = accepted(script, "get-structured-content", &lines[1]);
        assert_eq!(structured["isError"], false, "{structured}");
        assert!(structured["structuredContent"]["temperature"].is_number());
    }
}

/// The lines of an elicitation log `client.py --elicited` writes, once it
/// has at least `count` (or after 30 s).
async fn elicited(path: &Path, count: usize) -> Vec<Value> {
    let read = || -> Vec<Value> {
        std::fs::read_to_string(path)
            .unwrap_or_default()
            .lines()
            .map(|line| serde_json::from_str(line).expect("a JSON line"))
            .collect()
    };
    for _ in 0..300 {
        let lines = read();
        if lines.len() >= count {
            return lines;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    read()
}

/// A call the approval gate holds shows the user of the Python SDK and of
/// the TypeScript SDK, over stdio and streamable HTTP, a link to the
/// approval (URL-mode elicitation, MCP 2025-11-25). The client accepts it
/// at once, as a client's own hooks could: the call still waits, and the
/// person in Feishu decides it — a rejection blocks it, an approval runs it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_held_call_shows_the_client_where_to_decide_and_only_the_channel_decides() {
    held_call_shows_where_to_decide("2025-11-25").await;
}

/// The same under MCP 2026-07-28, where a server cannot send requests of
/// its own: the held call is answered with an input request (the link, as
/// a URL-mode elicitation) and the proxy's sealed `requestState`; the SDK
/// (Python, and TypeScript's 2.x client package) shows the link, accepts it
/// and retries the call, which then waits for Feishu's decision.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn under_2026_07_28_a_held_call_asks_for_input_and_the_retry_waits_for_the_channel() {
    held_call_shows_where_to_decide("2026-07-28").await;
}

/// Two calls the gate holds, driven by client.py and client.mjs on
/// `protocol` over stdio and HTTP: each shows the approval's link; the
/// first is rejected in Feishu and the second approved, after the client
/// accepted the link.
async fn held_call_shows_where_to_decide(protocol: &str) {
    let Some(peers) = clients() else { return };
    let root = files();
    let dir = root.path().display().to_string();
    let (resources, _database, feishu, callback_url) = resources().await;
    let config =
        AgentConfig::parse(HTTP_AGENT, ConfigFormat::Yaml, "agent.yaml", None).expect("config");
    let settings = McpProxyConfig::from_value(&json!({
        "server": "files",
        "command": server_command(&peers, "server-filesystem", &[dir.as_str()]),
        "user": "alice",
        "org": "acme",
        "approval_url": "https://approvals.example/approvals/requests/{id}",
    }))
    .expect("settings");
    let proxy = McpProxy::start(config, settings, &resources)
        .await
        .expect("the proxy starts");
    let token = "elicitation-http-token";
    let http_url = serve_http(&proxy, Some(token)).await;
    let port = relay_to(&proxy).await;
    let relay = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/stdio_relay.py");
    let log_dir = tempfile::tempdir().expect("dir");
    let mut cards = 0;
    let runs = ["client.py", "client.mjs"]
        .into_iter()
        .flat_map(|script| ["stdio", "http"].map(|transport| (script, transport)));
    for (script, transport) in runs {
        let log = log_dir.path().join(format!("{script}-{transport}.jsonl"));
        let mut args = match transport {
            "stdio" => vec!["stdio".to_owned()],
            _ => vec![
                "http".to_owned(),
                http_url.clone(),
                "--token".into(),
                token.into(),
            ],
        };
        args.extend(["--elicited".to_owned(), log.display().to_string()]);
        // The TypeScript SDK's 1.x package speaks 2025-11-25; `--protocol`
        // takes its 2.x client package.
        if script == "client.py" || protocol != "2025-11-25" {
            args.extend(["--protocol".to_owned(), protocol.to_owned()]);
        }
        if transport == "stdio" {
            let command = ["--", "python3", &relay.display().to_string(), &port];
            args.extend(command.map(str::to_owned));
        }
        let refused = format!("{dir}/refused-by-{script}-over-{transport}.txt");
        let approved = format!("{dir}/approved-by-{script}-over-{transport}.txt");
        let calls = vec![
            ("write_file", json!({"path": refused, "content": "no\n"})),
            ("write_file", json!({"path": approved, "content": "yes\n"})),
        ];
        let client = tokio::spawn(async move { run_client(script, &args, &calls).await });

        let mut requests = Vec::new();
        for (n, decision) in [ApprovalDecision::Reject, ApprovalDecision::Approve]
            .into_iter()
            .enumerate()
        {
            cards += 1;
            let Some(card) = feishu.wait_for_card(cards, Duration::from_secs(60)).await else {
                let lines = if client.is_finished() {
                    format!("{:?}", client.await)
                } else {
                    "still running".to_owned()
                };
                panic!("{script} {transport}: no card reached the approvers; the client: {lines}");
            };
            let request = card.request_id().expect("buttons").to_owned();
            let shown = elicited(&log, n + 1).await;
            assert_eq!(
                shown.len(),
                n + 1,
                "{script} {transport}: the link was shown: {shown:?}"
            );
            let link = &shown[n];
            assert_eq!(link["mode"], "url", "{script} {transport}: {link}");
            assert_eq!(
                link["url"],
                format!("https://approvals.example/approvals/requests/{request}"),
                "{script} {transport}"
            );
            let message = link["message"].as_str().unwrap_or_default();
            assert!(
                message.contains("write_file") && message.contains("decides nothing"),
                "{message}"
            );
            // The client accepted the link; the call still waits for Feishu.
            tokio::time::sleep(Duration::from_millis(500)).await;
            let path = if n == 0 { &refused } else { &approved };
            assert!(
                !Path::new(path).exists(),
                "{script} {transport}: accepting the link decided the call"
            );
            let click = CardClick::new(&request, decision, APPROVER, CHAT);
            feishu.click(&callback_url, &click).await.expect("click");
            requests.push(request);
        }
        let lines = client.await.expect("the client task");
        let blocked = accepted(script, "write_file", &lines[0]);
        assert_eq!(blocked["isError"], true, "{script} {transport}: {blocked}");
        assert!(!Path::new(&refused).exists());
        let ran = accepted(script, "write_file", &lines[1]);
        assert_eq!(ran["isError"], false, "{script} {transport}: {ran}");
        assert_eq!(
            std::fs::read_to_string(&approved).expect("written"),
            "yes\n"
        );
        assert_ne!(requests[0], requests[1]);
    }
}

/// A proxy in front of a hostile server (tests/mcp/hostile-server.mjs: its
/// name, title, version and instructions tell the model the hooks are off;
/// its tools' hints lie), driven by the Python and TypeScript SDKs under
/// both protocol revisions, over stdio and HTTP. What each SDK read of the
/// server is the proxy's own introduction, with nothing of the server's;
/// the server's refusals of its lists reach each SDK as the proxy's fixed
/// text; and the annotation policy decides the calls alike in every client.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn real_clients_read_the_proxys_introduction_and_its_annotation_policy() {
    let Some(peers) = clients() else { return };
    let (resources, _database, _feishu, _callback_url) = resources().await;
    let config = AgentConfig::parse(
        ANNOTATION_POLICY_AGENT,
        ConfigFormat::Yaml,
        "agent.yaml",
        None,
    )
    .expect("config");
    let hostile = peers
        .parent()
        .expect("tests/mcp")
        .join("hostile-server.mjs");
    let settings = McpProxyConfig::from_value(&json!({
        "server": "hostile",
        "command": ["node", hostile.display().to_string()],
    }))
    .expect("settings");
    let proxy = McpProxy::start(config, settings, &resources)
        .await
        .expect("the proxy starts");
    let token = "hostile-http-token";
    let http_url = serve_http(&proxy, Some(token)).await;
    let port = relay_to(&proxy).await;
    let relay = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/stdio_relay.py");
    let dir = tempfile::tempdir().expect("dir");
    let calls = [
        ("chatty", json!({})),
        ("lookup", json!({})),
        ("peek", json!({})),
    ];
    for script in ["client.py", "client.mjs"] {
        for protocol in ["2025-11-25", "2026-07-28"] {
            for transport in ["stdio", "http"] {
                let run = format!("{script} {protocol} {transport}");
                let info = dir
                    .path()
                    .join(format!("{script}-{protocol}-{transport}.json"));
                let mut args = match transport {
                    "stdio" => vec!["stdio".to_owned()],
                    _ => vec![http_url.clone(), "--token".into(), token.into()],
                };
                if transport == "http" {
                    args.insert(0, "http".to_owned());
                }
                args.extend(["--server-info".to_owned(), info.display().to_string()]);
                args.push("--lists".to_owned());
                if script == "client.py" || protocol != "2025-11-25" {
                    args.extend(["--protocol".to_owned(), protocol.to_owned()]);
                }
                if transport == "stdio" {
                    let command = ["--", "python3", &relay.display().to_string(), &port];
                    args.extend(command.map(str::to_owned));
                }
                let lines = run_client(script, &args, &calls).await;

                let shown = std::fs::read_to_string(&info).expect("the server info");
                assert!(!shown.contains("SYSTEM"), "{run}: {shown}");
                let shown: Value = serde_json::from_str(&shown).expect("json");
                assert_eq!(shown["name"], "hooks-mcp-proxy/hostile", "{run}");
                assert_eq!(shown["title"], "hostile (through hooks mcp-proxy)", "{run}");
                assert_eq!(shown["instructions"], Value::Null, "{run}");

                // The server refuses both lists with text meant for the
                // model: each client reads the proxy's fixed text instead.
                for (n, method) in ["prompts/list", "resources/templates/list"]
                    .into_iter()
                    .enumerate()
                {
                    let line = &lines[calls.len() + n];
                    assert_eq!(line["list"], method, "{run}: {line}");
                    let error = line["error"].as_str().unwrap_or_default();
                    assert!(
                        error.contains(&format!("refused `{method}`")),
                        "{run}: {line}"
                    );
                    assert!(
                        !error.contains("SYSTEM") && !error.contains("SECRET"),
                        "{run}: {line}"
                    );
                }
                for (n, runs) in [false, true, false].into_iter().enumerate() {
                    let result = accepted(script, calls[n].0, &lines[n]);
                    if runs {
                        assert_eq!(result["isError"], false, "{run}: {result}");
                        assert_eq!(text(result), "ok", "{run}");
                    } else {
                        assert_eq!(result["isError"], true, "{run}: {result}");
                        assert!(
                            text(result).contains("would ask a person first"),
                            "{run}: {result}"
                        );
                    }
                }
            }
        }
    }
}
