//! The approvals page in a real browser: headless Chromium driven over
//! WebDriver (Debian's `chromium` and `chromium-driver`). An operator signs
//! in, sees a pending request appear live (no reload), approves it and sees
//! it leave the list; another rejects with a reason that reaches the agent;
//! an operator out of scope sees nothing, and a forged POST without the CSRF
//! token is refused; a request the gate sent to (a fake) Feishu shows
//! read-only to the operator allowed to watch that chat, and leaves the
//! list when it is decided in Feishu; a request flagged for hidden
//! characters or look-alike letters is decided only on its own page; a
//! request that needs two approvals shows the first and waits for the
//! second; a long request is read whole on its
//! own page, above Approve, and the page shows the decision without a
//! reload. Screenshots are kept under
//! `target/tmp/web-approvals/`.
//!
//! Without `chromium` or `chromedriver` on the PATH each test prints
//! `SKIPPED: …` and passes.

mod support;

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use fantoccini::elements::Element;
use fantoccini::{Client, ClientBuilder, Locator};
use hooks_runtime::{HookContext, ToolCallReport};
use hooks_std::approval_gate::ConfirmationStatus;
use serde_json::{Value, json};
use support::web::{Page, call_with, page, start};
use tokio::task::JoinHandle;

/// One browser at a time: the machine is small.
static ONE_BROWSER: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// The programs the browser needs, or why the test is skipped.
fn browser_programs() -> Result<(PathBuf, PathBuf), String> {
    let find = |name: &str| {
        std::env::var_os("PATH").and_then(|path| {
            std::env::split_paths(&path)
                .map(|dir| dir.join(name))
                .find(|candidate| candidate.is_file())
        })
    };
    let chromium = find("chromium")
        .or_else(|| find("chromium-browser"))
        .ok_or("no `chromium` on the PATH (apt-get install -y chromium chromium-driver)")?;
    let driver = find("chromedriver")
        .ok_or("no `chromedriver` on the PATH (apt-get install -y chromium-driver)")?;
    Ok((chromium, driver))
}

/// chromedriver on a free loopback port; killed when dropped.
struct Driver {
    child: Child,
    url: String,
    _profile: tempfile::TempDir,
    chromium: PathBuf,
}

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Driver {
    async fn start(chromium: PathBuf, driver: PathBuf) -> Driver {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|listener| listener.local_addr())
            .expect("a free port")
            .port();
        let child = Command::new(driver)
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("chromedriver starts");
        let until = Instant::now() + Duration::from_secs(20);
        while tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .is_err()
        {
            assert!(Instant::now() < until, "chromedriver did not listen");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        Driver {
            child,
            url: format!("http://127.0.0.1:{port}"),
            _profile: tempfile::tempdir().expect("profile dir"),
            chromium,
        }
    }

    async fn browser(&self) -> Client {
        let mut capabilities = serde_json::Map::new();
        capabilities.insert(
            "goog:chromeOptions".into(),
            json!({
                "binary": self.chromium,
                "args": [
                    "--headless", "--no-sandbox", "--disable-gpu",
                    "--disable-background-networking", "--no-first-run",
                    "--disable-dev-shm-usage", "--window-size=420,900",
                    format!("--user-data-dir={}", self._profile.path().display()),
                ],
            }),
        );
        ClientBuilder::new(hyper_util::client::legacy::connect::HttpConnector::new())
            .capabilities(capabilities)
            .connect(&self.url)
            .await
            .expect("a WebDriver session")
    }
}

fn payment(call_id: &str, args: Value) -> HookContext {
    call_with(call_id, "finance-bot", "alice", args)
}

async fn sign_in(browser: &Client, page: &Page, operator: &str) {
    browser
        .goto(&page.callback_url)
        .await
        .expect("open the page");
    let url = browser.current_url().await.expect("url");
    assert!(
        url.path().ends_with("/login"),
        "sent to the login form: {url}"
    );
    browser
        .find(Locator::Id("operator"))
        .await
        .expect("operator field")
        .send_keys(operator)
        .await
        .expect("type");
    browser
        .find(Locator::Id("token"))
        .await
        .expect("token field")
        .send_keys(&format!("{operator}-token"))
        .await
        .expect("type");
    browser
        .find(Locator::Css("form.login button"))
        .await
        .expect("sign-in button")
        .click()
        .await
        .expect("click");
    wait_for(browser, "the list after signing in", async |browser| {
        browser.find(Locator::Id("pending-title")).await.is_ok()
    })
    .await;
}

/// Polls `check` for up to 10 s.
async fn wait_for(browser: &Client, what: &str, check: impl AsyncFn(&Client) -> bool) {
    let until = Instant::now() + Duration::from_secs(10);
    while !check(browser).await {
        assert!(Instant::now() < until, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Presses `button` in `row`; once the row has left the list, the report
/// of the call it held.
async fn press(
    browser: &Client,
    row: &Element,
    button: &str,
    call: JoinHandle<ToolCallReport>,
) -> ToolCallReport {
    row.find(Locator::Css(button))
        .await
        .expect("the button")
        .click()
        .await
        .expect("click");
    wait_for(browser, "the request to leave the list", async |browser| {
        rows(browser).await == 0
    })
    .await;
    tokio::time::timeout(Duration::from_secs(10), call)
        .await
        .expect("the call resumes")
        .expect("task")
}

/// Waits for the list to hold exactly one request; its row.
async fn only_row(browser: &Client, what: &str) -> Element {
    wait_for(browser, what, async |browser| rows(browser).await == 1).await;
    browser
        .find(Locator::Css("#pending li.request"))
        .await
        .expect("row")
}

async fn rows(browser: &Client) -> usize {
    browser
        .find_all(Locator::Css("#pending li.request"))
        .await
        .map_or(0, |rows| rows.len())
}

async fn screenshot(browser: &Client, name: &str) {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("web-approvals");
    let png = browser.screenshot().await.expect("screenshot");
    std::fs::create_dir_all(&dir).expect("artifact dir");
    let path = dir.join(format!("{name}.png"));
    std::fs::write(&path, png).expect("write screenshot");
    eprintln!("screenshot: {}", path.display());
}

/// Runs `body` with a browser, or prints why it is skipped.
async fn with_browser(test: &str, body: impl AsyncFnOnce(&Client)) {
    let (chromium, driver) = match browser_programs() {
        Ok(programs) => programs,
        Err(why) => {
            eprintln!("SKIPPED: {test}: {why}");
            return;
        }
    };
    let _one = ONE_BROWSER.lock().await;
    let driver = Driver::start(chromium, driver).await;
    let browser = driver.browser().await;
    body(&browser).await;
    let _ = browser.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_operator_approves_a_request_that_appears_live() {
    with_browser(
        "an_operator_approves_a_request_that_appears_live",
        async |browser| {
            let page = page().await;
            sign_in(browser, &page, "alice").await;
            assert_eq!(rows(browser).await, 0);

            // The agent asks while the page is open: the row appears by itself.
            let args = json!({"amount": 60_000, "payee": "ACME Ltd"});
            let call = start(&page, payment("c1", args));
            let row = only_row(browser, "the new request on the page").await;
            let text = row.text().await.expect("row text");
            assert!(text.contains("oa__purchase_pay"), "{text}");
            assert!(text.contains("finance-bot"), "{text}");
            assert!(!text.contains("contains"), "nothing flagged: {text}");
            screenshot(browser, "pending").await;

            let report = press(browser, &row, "button.approve", call).await;
            assert!(report.tool_ran, "{}", report.observation);
            wait_for(
                browser,
                "the decision under recent decisions",
                async |browser| {
                    let Ok(recent) = browser.find(Locator::Id("recent")).await else {
                        return false;
                    };
                    recent
                        .text()
                        .await
                        .is_ok_and(|text| text.to_lowercase().contains("approved"))
                },
            )
            .await;
            screenshot(browser, "approved").await;
        },
    )
    .await;
}

/// On a request's own page, every argument of a long request is on the
/// page above Approve (no inner scroll box hides any of them), with the
/// size and key count; once approved, the page says so at once — state,
/// who, when — without a reload. The header says who decides as whom.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_request_is_read_whole_and_its_page_shows_the_decision() {
    with_browser(
        "a_long_request_is_read_whole_and_its_page_shows_the_decision",
        async |browser| {
            let page = page().await;
            // About 5,500 characters over many lines: the padding the model
            // could put before the field that matters.
            let lines: Vec<String> = (0..120)
                .map(|at| format!("line {at}: nothing to see"))
                .collect();
            let args = json!({"amount": 60_000, "notes": lines, "payee": "the part that matters"});
            let call = start(&page, payment("c-long", args));
            sign_in(browser, &page, "alice").await;
            let header = browser
                .find(Locator::Css("header.top"))
                .await
                .expect("header")
                .text()
                .await
                .expect("text");
            assert!(
                header.contains("Signed in as alice, deciding as alice (acme)"),
                "{header}"
            );
            let row = only_row(browser, "the long request").await;
            // Cut in the list: decided from its own page only.
            assert!(row.find(Locator::Css("button.approve")).await.is_err());
            row.find(Locator::Css("a[href*='/requests/']"))
                .await
                .expect("a link to its page")
                .click()
                .await
                .expect("open it");
            wait_for(browser, "the request's page", async |browser| {
                browser.find(Locator::Css("pre.args")).await.is_ok()
            })
            .await;
            let size = browser
                .find(Locator::Css(".args-size"))
                .await
                .expect("the size line")
                .text()
                .await
                .expect("text");
            assert!(size.contains("characters, 3 keys"), "{size}");
            // No inner scrolling, and Approve comes after the last argument.
            let layout = browser
                .execute(
                    "const args = document.querySelector('pre.args');\
                     const approve = document.querySelector('button.approve');\
                     return [args.scrollHeight - args.clientHeight,\
                             approve.getBoundingClientRect().top + window.scrollY,\
                             args.getBoundingClientRect().bottom + window.scrollY,\
                             args.textContent.includes('the part that matters')];",
                    vec![],
                )
                .await
                .expect("layout");
            assert_eq!(
                layout[0],
                json!(0),
                "the arguments scroll inside a box: {layout}"
            );
            assert!(
                layout[1].as_f64().unwrap() > layout[2].as_f64().unwrap(),
                "Approve sits above the end of the arguments: {layout}"
            );
            assert_eq!(layout[3], json!(true), "{layout}");
            screenshot(browser, "long-request").await;

            browser
                .find(Locator::Css("button.approve"))
                .await
                .expect("Approve on the request's page")
                .click()
                .await
                .expect("click");
            wait_for(browser, "the outcome on the page", async |browser| {
                browser.find(Locator::Id("outcome")).await.is_ok()
            })
            .await;
            let outcome = browser
                .find(Locator::Id("outcome"))
                .await
                .expect("outcome")
                .text()
                .await
                .expect("text");
            assert!(outcome.starts_with("Approved by alice at "), "{outcome}");
            assert!(outcome.contains(" UTC"), "{outcome}");
            let status = browser
                .find(Locator::Id("status"))
                .await
                .expect("status")
                .text()
                .await
                .expect("text");
            assert_eq!(status.to_lowercase(), "approved");
            assert!(browser.find(Locator::Css("button.approve")).await.is_err());
            let report = tokio::time::timeout(Duration::from_secs(10), call)
                .await
                .expect("the call resumes")
                .expect("task");
            assert!(report.tool_ran, "{}", report.observation);
            screenshot(browser, "long-request-approved").await;

            // Recent decisions: when, what, and a link to the record.
            browser.goto(&page.callback_url).await.expect("the list");
            let recent = browser
                .find(Locator::Css("#recent li.decided"))
                .await
                .expect("a recent decision");
            let text = recent.text().await.expect("text");
            assert!(text.contains(" UTC"), "{text}");
            assert!(text.contains("\"amount\":60000"), "{text}");
            recent
                .find(Locator::Css("a[href*='/requests/']"))
                .await
                .expect("a link to the record");
        },
    )
    .await;
}

/// A request whose values hold hidden characters or look-alike letters is
/// flagged, offers no decision on the list, and is decided on its own
/// page, where the flags are explained.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flagged_request_is_decided_only_on_its_own_page() {
    with_browser(
        "a_flagged_request_is_decided_only_on_its_own_page",
        async |browser| {
            let page = page().await;
            sign_in(browser, &page, "alice").await;
            for (call_id, payee, flag) in [
                ("c-hidden", "ACME\u{202E}dtL", "contains hidden characters"),
                // A Cyrillic А among Latin letters.
                (
                    "c-look",
                    "\u{410}cme Components",
                    "contains look-alike letters",
                ),
            ] {
                let args = json!({"amount": 60_000, "payee": payee});
                let call = start(&page, payment(call_id, args));
                let row = only_row(browser, "the flagged request").await;
                let text = row.text().await.expect("row text");
                assert!(text.contains(flag), "{text}");
                assert!(
                    row.find(Locator::Css("button.approve")).await.is_err(),
                    "{text}"
                );
                assert!(
                    row.find(Locator::Css("button.reject")).await.is_err(),
                    "{text}"
                );
                screenshot(browser, &format!("flagged-{call_id}")).await;
                row.find(Locator::Css("a[href*='/requests/']"))
                    .await
                    .expect("a link to its page")
                    .click()
                    .await
                    .expect("open it");
                wait_for(browser, "the request's page", async |browser| {
                    browser.find(Locator::Css("button.approve")).await.is_ok()
                })
                .await;
                let body = browser
                    .find(Locator::Css("main"))
                    .await
                    .expect("main")
                    .text()
                    .await
                    .expect("text");
                assert!(body.contains(flag), "{body}");
                browser
                    .find(Locator::Css("button.approve"))
                    .await
                    .expect("Approve")
                    .click()
                    .await
                    .expect("click");
                wait_for(browser, "the outcome", async |browser| {
                    browser.find(Locator::Id("outcome")).await.is_ok()
                })
                .await;
                let report = tokio::time::timeout(Duration::from_secs(10), call)
                    .await
                    .expect("the call resumes")
                    .expect("task");
                assert!(report.tool_ran, "{}", report.observation);
                browser.goto(&page.callback_url).await.expect("the list");
            }
        },
    )
    .await;
}

/// A request that needs two approvals: the first operator's approval is
/// counted and the page shows the progress (the request stays); a second
/// press by the same operator counts nothing; the second operator's
/// approval runs the call.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_operators_approve_a_request_that_needs_two() {
    with_browser(
        "two_operators_approve_a_request_that_needs_two",
        async |browser| {
            let database = hooks_std::Database::in_memory().await.expect("db");
            let gate = json!({"approver_scope": "org_members", "timeout": "60s", "approvals": 2});
            let page = support::web::page_with(
                database,
                gate,
                support::web::tokens(),
                hooks_std::approval_gate::channel::web::WebConfig::default(),
            )
            .await;
            let call = start(
                &page,
                payment("c-two", json!({"amount": 90_000, "payee": "ACME Ltd"})),
            );
            sign_in(browser, &page, "alice").await;
            let row = only_row(browser, "the request").await;
            let text = row.text().await.expect("row text");
            assert!(text.contains("0 of 2 approvals"), "{text}");
            for attempt in ["first", "again"] {
                row.find(Locator::Css("button.approve"))
                    .await
                    .expect("Approve")
                    .click()
                    .await
                    .expect("click");
                let expected = if attempt == "first" {
                    "counted"
                } else {
                    "already approved"
                };
                wait_for(browser, "the answer", async |browser| {
                    let Ok(live) = browser.find(Locator::Id("live")).await else {
                        return false;
                    };
                    live.text().await.is_ok_and(|text| text.contains(expected))
                })
                .await;
            }
            let progress = row
                .find(Locator::Css(".quorum"))
                .await
                .expect("the progress")
                .text()
                .await
                .expect("text");
            assert!(
                progress.contains("1 of 2 approvals (by alice)"),
                "{progress}"
            );
            assert_eq!(
                rows(browser).await,
                1,
                "still waiting for a second approver"
            );
            assert!(!call.is_finished());
            screenshot(browser, "quorum-counted").await;

            // Bob, in a fresh session.
            browser.delete_all_cookies().await.expect("sign out");
            sign_in(browser, &page, "bob").await;
            let row = only_row(browser, "the request for bob").await;
            let report = press(browser, &row, "button.approve", call).await;
            assert!(report.tool_ran, "{}", report.observation);
            screenshot(browser, "quorum-approved").await;
        },
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_operator_rejects_with_a_reason() {
    with_browser("an_operator_rejects_with_a_reason", async |browser| {
        let page = page().await;
        let call = start(
            &page,
            payment("c2", json!({"amount": 250_000, "payee": "Unknown Ltd"})),
        );
        sign_in(browser, &page, "alice").await;
        let row = only_row(browser, "the pending request").await;
        // Keyboard: the reason field has a label and takes typing; Reject is a button.
        let reason = row
            .find(Locator::Css("input[name=reason]"))
            .await
            .expect("reason");
        let id = reason.attr("id").await.expect("attr").expect("id");
        browser
            .find(Locator::Css(&format!("label[for='{id}']")))
            .await
            .expect("the reason field is labelled");
        reason.send_keys("no purchase order").await.expect("type");
        let report = press(browser, &row, "button.reject", call).await;
        assert!(!report.tool_ran);
        assert!(
            report.observation.to_string().contains("no purchase order"),
            "{}",
            report.observation
        );
        screenshot(browser, "rejected").await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_operator_out_of_scope_sees_nothing_and_a_forged_post_is_refused() {
    with_browser(
        "an_operator_out_of_scope_sees_nothing_and_a_forged_post_is_refused",
        async |browser| {
            let page = page().await;
            let call = start(&page, payment("c3", json!({"amount": 70_000, "payee": "ACME Ltd"})));
            let id = loop {
                let found = page.approvals.store().by_key("6:conv-1:c3").await.expect("read");
                if let Some(found) = found.filter(|found| found.status == ConfirmationStatus::Pending) {
                    break found.id;
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            };
            sign_in(browser, &page, "mallory").await;
            tokio::time::sleep(Duration::from_millis(500)).await;
            assert_eq!(rows(browser).await, 0, "an outsider sees no request");
            let source = browser.source().await.expect("source");
            assert!(!source.contains(&id));
            screenshot(browser, "out-of-scope").await;

            // A forged POST without the CSRF token, and mallory's own POST
            // with her token: both refused.
            let post = r#"
                const [url, csrf, done] = arguments;
                const headers = { "Content-Type": "application/json" };
                if (csrf) { headers["X-CSRF-Token"] = csrf; }
                fetch(url, { method: "POST", headers, body: JSON.stringify({ decision: "approve" }) })
                    .then(r => done(r.status), () => done(-1));
            "#;
            let url = format!("{}/api/requests/{id}/decide", page.callback_url);
            let csrf = browser
                .find(Locator::Css("body"))
                .await
                .expect("body")
                .attr("data-csrf")
                .await
                .expect("attr")
                .expect("csrf");
            let without = browser
                .execute_async(post, vec![json!(url), Value::Null])
                .await
                .expect("script");
            assert_eq!(without, json!(403));
            let with = browser
                .execute_async(post, vec![json!(url), json!(csrf)])
                .await
                .expect("script");
            assert_eq!(with, json!(404), "out of scope: no such request for her");

            // alice's session in the same browser, forging without the token.
            browser.delete_all_cookies().await.expect("sign out");
            sign_in(browser, &page, "alice").await;
            wait_for(browser, "alice's row", async |browser| rows(browser).await == 1).await;
            let without = browser
                .execute_async(post, vec![json!(url), Value::Null])
                .await
                .expect("script");
            assert_eq!(without, json!(403));
            assert_eq!(
                page.approvals.store().get(&id).await.expect("read").expect("row").status,
                ConfirmationStatus::Pending
            );
            call.abort();
        },
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn enter_in_the_reason_field_decides_nothing() {
    with_browser(
        "enter_in_the_reason_field_decides_nothing",
        async |browser| {
            let page = page().await;
            let call = start(
                &page,
                payment("c4", json!({"amount": 90_000, "payee": "ACME Ltd"})),
            );
            sign_in(browser, &page, "alice").await;
            let row = only_row(browser, "the pending request").await;
            let id = row.attr("data-id").await.expect("attr").expect("data-id");
            // Typing a reason and pressing Enter submits the form without a
            // button: it must approve nothing (Approve was the first submit).
            row.find(Locator::Css("input[name=reason]"))
                .await
                .expect("reason")
                .send_keys("just checking\u{E007}")
                .await
                .expect("type and press Enter");
            tokio::time::sleep(Duration::from_secs(2)).await;
            assert_eq!(
                page.approvals
                    .store()
                    .get(&id)
                    .await
                    .expect("read")
                    .expect("row")
                    .status,
                ConfirmationStatus::Pending,
                "the server received no decision"
            );
            assert!(browser.current_url().await.expect("url").query().is_none());
            assert_eq!(rows(browser).await, 1, "the request is still listed");
            assert!(!call.is_finished(), "the call still waits");
            call.abort();
        },
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_feishu_request_shows_read_only_and_leaves_when_decided_there() {
    use hooks_std::approval_gate::ApprovalDecision;
    use hooks_testkit::feishu::CardClick;
    use support::web::{
        FEISHU_CHAT, feishu_gate, org_scope, page_with, tokens, watching_feishu_for_alice,
    };
    with_browser(
        "a_feishu_request_shows_read_only_and_leaves_when_decided_there",
        async |browser| {
            let database = hooks_std::Database::in_memory().await.expect("db");
            let feishu = feishu_gate(database.clone(), FEISHU_CHAT).await;
            let page = page_with(
                database,
                org_scope(),
                tokens(),
                watching_feishu_for_alice(FEISHU_CHAT),
            )
            .await;
            sign_in(browser, &page, "alice").await;
            let registry = feishu.registry.clone();
            let call = tokio::spawn(async move {
                registry
                    .run_tool_call(
                        payment("c1", json!({"amount": 60_000, "payee": "ACME Ltd"})),
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
            let row = only_row(browser, "the Feishu request on the page").await;
            let text = row.text().await.expect("row text");
            assert!(text.contains("decide it in feishu"), "{text}");
            assert!(row.find(Locator::Css("button.approve")).await.is_err());
            screenshot(browser, "watched").await;

            let (code, _) = feishu
                .fake
                .click(
                    &feishu.callback_url,
                    &CardClick::new(&id, ApprovalDecision::Approve, "ou_bob", FEISHU_CHAT),
                )
                .await
                .expect("the card has the button");
            assert_eq!(code, 200);
            wait_for(browser, "the row to leave the list", async |browser| {
                rows(browser).await == 0
            })
            .await;
            let report = call.await.expect("task");
            assert!(report.tool_ran, "{}", report.observation);
        },
    )
    .await;
}
