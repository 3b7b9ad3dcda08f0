//! The approval gate on Slack, end to end: a gated call pauses, an approval
//! message goes to a fake Slack Web API on 127.0.0.1, a signed
//! `block_actions` press comes back through the real callback router, and
//! the call resumes — or not — while the message is updated and refused
//! clickers are told why in an ephemeral message.
//!
//! Negative tests: forged signature, signature over another body, stale and
//! future timestamps, missing headers, another workspace or channel, a
//! look-alike message from the same bot, an Approve without the arguments'
//! digest, arguments too long to show (Reject only), a user
//! outside the scope, a duplicate delivery, malformed and random bodies,
//! `invalid_auth`. Signatures are checked against a fixed vector and against
//! `openssl dgst -sha256 -hmac` (skipped, saying so, if openssl is absent).
//! A pending request survives a restart; on PostgreSQL, a press received by
//! replica B wakes the gate waiting in replica A.

mod support;

use std::io::Write as _;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use axum::Router;
use axum::http::{HeaderMap, HeaderValue};
use hooks_runtime::{HookContext, HookRegistry, Observation, ToolCallReport};
use hooks_std::Database;
use hooks_std::approval_gate::channel::slack::{
    REASON_BLOCK_ID, SIGNATURE_HEADER, SlackChannel, SlackConfig, TIMESTAMP_HEADER, signature,
    verify_signature,
};
use hooks_std::approval_gate::channel::{
    Callback, CallbackError, Channel, DecisionCallback, RawCallback,
};
use hooks_std::approval_gate::{
    ApprovalDecision, ApprovalGate, ApprovalGateConfig, ApproverScope, ConfirmationMode,
    ConfirmationRequest, ConfirmationStatus, NewConfirmation, StaticDirectory,
};
use hooks_testkit::gate::{Replica, gated_call, org_scope, pending_request};
use hooks_testkit::slack::{FakeSlack, FakeSlackConfig, SlackClick};
use serde_json::{Value, json};
use tokio::task::JoinHandle;

const CHANNEL: &str = "C0FINANCE";
const BOB: &str = "U0BOB";
const ALICE: &str = "U0ALICE";
const MALLORY: &str = "U0MALLORY";
const CAROL: &str = "U0CAROL";

fn directory() -> StaticDirectory {
    StaticDirectory::new()
        .person("slack", ALICE, "alice", "acme")
        .person("slack", BOB, "bob", "acme")
        .person("slack", MALLORY, "mallory", "evil-corp")
        .person("slack", CAROL, "carol", "acme")
        // The same id on another channel kind means nothing here.
        .person("feishu", "U0EVE", "eve", "acme")
}

async fn replica(fake: &FakeSlack, database: Database, gate: Value, poll: Duration) -> Replica {
    let channel = SlackChannel::new(fake.slack_config(CHANNEL)).expect("slack channel");
    Replica::start(
        Arc::new(channel),
        directory(),
        database,
        &gate,
        poll,
        "/slack/actions",
    )
    .await
}

const ORG_SCOPE: fn() -> Value = org_scope;

async fn in_memory_replica(fake: &FakeSlack, gate: Value) -> Replica {
    let database = Database::in_memory().await.expect("db");
    replica(fake, database, gate, Duration::from_secs(60)).await
}

async fn url_replica(fake: &FakeSlack, url: &str) -> Replica {
    let database = Database::connect(url).await.expect("db");
    replica(fake, database, ORG_SCOPE(), Duration::from_secs(60)).await
}

async fn fake() -> FakeSlack {
    FakeSlack::start(FakeSlackConfig::default())
        .await
        .expect("fake slack")
}

fn start(replica: &Replica, ctx: HookContext) -> JoinHandle<ToolCallReport> {
    replica.start_call(ctx)
}

/// Waits until `count` messages were posted; returns the last one's request id.
async fn message_posted(fake: &FakeSlack, count: usize) -> String {
    fake.wait_for_message(count, Duration::from_secs(5))
        .await
        .expect("an approval message arrives at the fake Slack")
        .request_id()
        .expect("the message carries the request id")
}

async fn press(fake: &FakeSlack, replica: &Replica, click: &SlackClick) -> (u16, String) {
    fake.click(&replica.callback_url, click)
        .await
        .expect("the message has that button")
}

/// The stored request `id`.
async fn stored(replica: &Replica, id: &str) -> ConfirmationRequest {
    replica.stored(id).await
}

async fn status(replica: &Replica, id: &str) -> ConfirmationStatus {
    stored(replica, id).await.status
}

/// Waits until the gate stored the reference of `id`'s message.
async fn card_recorded(replica: &Replica, id: &str) {
    for _ in 0..500 {
        if stored(replica, id).await.message_ref.is_some() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("the gate never stored the message reference of {id}");
}

/// The text of the `count`-th ephemeral message, sent to `user`.
async fn ephemeral(fake: &FakeSlack, count: usize, user: &str) -> String {
    let message = fake
        .wait_for_ephemeral(count, Duration::from_secs(5))
        .await
        .expect("the clicker is told why nothing changed");
    assert_eq!(message.user, user);
    message.text
}

/// A gated call waiting on its message: the fake, the replica, the call,
/// and the request id.
async fn pending() -> (FakeSlack, Replica, JoinHandle<ToolCallReport>, String) {
    let fake = fake().await;
    let replica = in_memory_replica(&fake, ORG_SCOPE()).await;
    let call = start(&replica, gated_call("c1", 60_000));
    let id = message_posted(&fake, 1).await;
    (fake, replica, call, id)
}

/// Asserts that nothing changed for request `id`: still pending, the call
/// still waiting, no message updated.
async fn nothing_changed(
    fake: &FakeSlack,
    replica: &Replica,
    id: &str,
    call: &JoinHandle<ToolCallReport>,
) {
    assert_eq!(status(replica, id).await, ConfirmationStatus::Pending);
    assert!(!call.is_finished(), "the call still waits");
    assert!(fake.updates().is_empty(), "the message was not touched");
}

fn now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("clock")
        .as_secs() as i64
}

fn headers(timestamp: Option<&str>, signature: Option<&str>) -> HeaderMap {
    let mut headers = HeaderMap::new();
    headers.insert(
        "content-type",
        HeaderValue::from_static("application/x-www-form-urlencoded"),
    );
    if let Some(timestamp) = timestamp {
        headers.insert(TIMESTAMP_HEADER, HeaderValue::from_str(timestamp).unwrap());
    }
    if let Some(signature) = signature {
        headers.insert(SIGNATURE_HEADER, HeaderValue::from_str(signature).unwrap());
    }
    headers
}

async fn post(url: &str, headers: HeaderMap, body: Vec<u8>) -> u16 {
    reqwest::Client::new()
        .post(url)
        .headers(headers)
        .body(body)
        .send()
        .await
        .expect("the router answers")
        .status()
        .as_u16()
}

// ------------------------------------------------------------ decisions

#[tokio::test]
async fn approved_calls_run_and_the_message_shows_who_approved() {
    let (fake, replica, call, id) = pending().await;
    let message = &fake.messages()[0];
    assert_eq!(message.channel, CHANNEL);
    assert!(message.has_buttons());
    assert!(message.blocks.to_string().contains("oa__purchase_pay"));
    assert!(message.text.contains("Approval needed: oa__purchase_pay"));
    assert!(!call.is_finished(), "the call waits for a person");

    let (code, body) = press(
        &fake,
        &replica,
        &SlackClick::new(&id, ApprovalDecision::Approve, BOB),
    )
    .await;
    assert_eq!(
        (code, body.as_str()),
        (200, ""),
        "Slack gets an empty 200 at once"
    );
    let report = tokio::time::timeout(Duration::from_secs(5), call)
        .await
        .expect("the decision wakes the gate at once")
        .expect("task");
    assert!(report.tool_ran);
    assert_eq!(report.observation, Observation::Output(json!("paid")));
    assert_eq!(status(&replica, &id).await, ConfirmationStatus::Approved);

    let update = fake
        .wait_for_update(1, Duration::from_secs(5))
        .await
        .expect("the message is updated");
    assert_eq!(
        (update.channel.as_str(), update.ts.as_str()),
        (CHANNEL, message.ts.as_str())
    );
    assert!(!update.has_buttons(), "a decided message has no buttons");
    let shown = update.blocks.to_string();
    assert!(shown.contains("Approved by bob"), "{shown}");
    assert!(shown.contains(&format!("<@{BOB}>")), "{shown}");
    assert!(
        fake.ephemerals().is_empty(),
        "a recorded decision needs no note"
    );
}

/// The message offers an optional input for a reason; the reason a
/// rejecter types there reaches the blocked call's refusal, its trace and
/// the stored request.
#[tokio::test]
async fn a_rejection_reason_reaches_the_refusal_and_the_trace() {
    let (fake, replica, call, id) = pending().await;
    let blocks = fake.messages()[0].blocks.clone();
    let input = blocks
        .as_array()
        .and_then(|blocks| blocks.iter().find(|block| block["type"] == "input"))
        .unwrap_or_else(|| panic!("the message has an input block: {blocks}"));
    assert_eq!(input["block_id"], REASON_BLOCK_ID);
    assert_eq!(input["optional"], true, "a reason is optional");
    assert_eq!(input["element"]["type"], "plain_text_input");
    assert_eq!(input["element"]["action_id"], REASON_BLOCK_ID);
    press(
        &fake,
        &replica,
        &SlackClick::new(&id, ApprovalDecision::Reject, ALICE).with_reason("wrong vendor"),
    )
    .await;
    let report = call.await.expect("task");
    assert!(!report.tool_ran);
    let Observation::Blocked { hook, reason } = &report.observation else {
        panic!("{:?}", report.observation);
    };
    assert_eq!(hook, "approval_gate");
    assert_eq!(reason, "rejected by alice: wrong vendor");
    assert!(report.trace.to_string().contains("wrong vendor"));
    let stored = stored(&replica, &id).await;
    assert_eq!(stored.reason.as_deref(), Some("wrong vendor"));
}

#[tokio::test]
async fn rejected_calls_are_blocked_with_who_rejected() {
    let (fake, replica, call, id) = pending().await;
    press(
        &fake,
        &replica,
        &SlackClick::new(&id, ApprovalDecision::Reject, ALICE),
    )
    .await;
    let report = call.await.expect("task");
    assert!(!report.tool_ran);
    let Observation::Blocked { hook, reason } = &report.observation else {
        panic!("{:?}", report.observation);
    };
    assert_eq!(hook, "approval_gate");
    assert_eq!(reason, "rejected by alice: no reason given");
    let update = fake
        .wait_for_update(1, Duration::from_secs(5))
        .await
        .expect("updated");
    assert!(update.text.contains("Rejected by alice"), "{}", update.text);
    assert!(!update.has_buttons());
}

#[tokio::test]
async fn a_timeout_updates_the_message_to_expired_and_a_later_click_changes_nothing() {
    let fake = fake().await;
    let gate = json!({"approver_scope": "org_members", "timeout": "1s"});
    let replica = in_memory_replica(&fake, gate).await;
    let call = start(&replica, gated_call("c1", 60_000));
    let id = message_posted(&fake, 1).await;
    let report = call.await.expect("task");
    assert_eq!(
        report.observation.to_string(),
        "Blocked by hook `approval_gate`: timed out after 1s waiting for confirmation"
    );
    assert_eq!(status(&replica, &id).await, ConfirmationStatus::Expired);
    let update = fake
        .wait_for_update(1, Duration::from_secs(5))
        .await
        .expect("the message is updated on expiry");
    assert!(update.text.starts_with("Expired"), "{}", update.text);
    assert!(!update.has_buttons());

    // A press on the (stale) buttons after expiry changes nothing.
    let (code, _) = press(
        &fake,
        &replica,
        &SlackClick::new(&id, ApprovalDecision::Approve, BOB),
    )
    .await;
    assert_eq!(code, 200);
    let note = ephemeral(&fake, 1, BOB).await;
    assert!(note.contains("expired"), "{note}");
    assert_eq!(status(&replica, &id).await, ConfirmationStatus::Expired);
}

#[tokio::test]
async fn a_click_past_the_deadline_before_the_gate_notices_approves_nothing() {
    let fake = fake().await;
    let database = Database::in_memory().await.expect("db");
    // The gate waits on a short deadline; its sweeper and poll are slow.
    let gate = json!({"approver_scope": "org_members", "timeout": "400ms"});
    let replica = replica(&fake, database, gate, Duration::from_secs(60)).await;
    let store = replica.approvals.store().clone();
    // Create the request through the store, as a gate in a process that
    // died would have, so nobody expires it before the click.
    let request = store
        .create(&hooks_std::approval_gate::NewConfirmation {
            idempotency_key: "conv-x:c9".into(),
            tool_name: "oa__purchase_pay".into(),
            args: json!({"amount": 1}),
            args_digest: "d".into(),
            agent_id: "finance-bot".into(),
            initiator_user_id: "alice".into(),
            org_id: "acme".into(),
            approver_scope: ApproverScope::OrgMembers,
            approver_allowlist: vec![],
            channel_kind: "slack".into(),
            channel_id: format!("T0FAKE/{CHANNEL}"),
            mode: ConfirmationMode::Metadata,
            timeout: Duration::from_millis(200),
            quorum: hooks_std::approval_gate::Quorum::default(),
        })
        .await
        .expect("create")
        .0;
    let channel = SlackChannel::new(fake.slack_config(CHANNEL)).expect("channel");
    let reference = channel.send_card(&request).await.expect("posted");
    let claim = store
        .claim_card(&request.id, Duration::from_secs(60), None)
        .await
        .expect("claim")
        .expect("claimed");
    assert!(
        store
            .record_card(&request.id, claim, &reference)
            .await
            .expect("stored")
            .is_some()
    );
    tokio::time::sleep(Duration::from_millis(400)).await;
    press(
        &fake,
        &replica,
        &SlackClick::new(&request.id, ApprovalDecision::Approve, BOB),
    )
    .await;
    let note = ephemeral(&fake, 1, BOB).await;
    assert!(note.contains("expired before your decision"), "{note}");
    assert_eq!(
        status(&replica, &request.id).await,
        ConfirmationStatus::Expired
    );
    let update = fake
        .wait_for_update(1, Duration::from_secs(5))
        .await
        .expect("the expired message is redrawn");
    assert!(update.text.starts_with("Expired"), "{}", update.text);
}

#[tokio::test]
async fn a_double_click_decides_once() {
    let (fake, replica, call, id) = pending().await;
    press(
        &fake,
        &replica,
        &SlackClick::new(&id, ApprovalDecision::Approve, BOB),
    )
    .await;
    let (code, _) = press(
        &fake,
        &replica,
        &SlackClick::new(&id, ApprovalDecision::Reject, ALICE),
    )
    .await;
    assert_eq!(code, 200);
    let note = ephemeral(&fake, 1, ALICE).await;
    assert_eq!(note, "Already approved by bob; nothing changed.");
    assert!(call.await.expect("task").tool_ran);
    assert_eq!(status(&replica, &id).await, ConfirmationStatus::Approved);
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(fake.updates().len(), 1, "only the deciding press redraws");
    assert_eq!(fake.messages().len(), 1);
}

#[tokio::test]
async fn a_duplicate_delivery_changes_nothing() {
    let (fake, replica, call, id) = pending().await;
    // Mallory's press is refused; the very same signed request, delivered
    // again, is not processed a second time.
    let payload = fake
        .block_actions_payload(&SlackClick::new(&id, ApprovalDecision::Approve, MALLORY))
        .expect("payload");
    let signed = fake.sign(&payload);
    assert_eq!(fake.deliver(&replica.callback_url, &signed).await.0, 200);
    assert!(
        ephemeral(&fake, 1, MALLORY)
            .await
            .contains("You may not decide")
    );
    assert_eq!(fake.deliver(&replica.callback_url, &signed).await.0, 200);
    assert_eq!(
        ephemeral(&fake, 2, MALLORY).await,
        "This click was already handled."
    );
    // Even the same trigger re-sent for someone in scope.
    let mut again = SlackClick::new(&id, ApprovalDecision::Approve, BOB);
    again.trigger_id = payload["trigger_id"].as_str().map(str::to_owned);
    let mut replayed = fake.block_actions_payload(&again).expect("payload");
    replayed["actions"][0]["action_ts"] = payload["actions"][0]["action_ts"].clone();
    fake.deliver(&replica.callback_url, &fake.sign(&replayed))
        .await;
    assert_eq!(
        ephemeral(&fake, 3, BOB).await,
        "This click was already handled."
    );
    nothing_changed(&fake, &replica, &id, &call).await;
    call.abort();
}

// ------------------------------------------------------------ refusals

#[tokio::test]
async fn unverifiable_requests_get_a_401_and_change_nothing() {
    let (fake, replica, call, id) = pending().await;
    let payload = fake
        .block_actions_payload(&SlackClick::new(&id, ApprovalDecision::Approve, BOB))
        .expect("payload");
    let good = fake.sign(&payload);
    let ts = good.timestamp.clone();

    // Forged: a signature made with another secret, or plain garbage.
    let forged = signature("not-the-signing-secret", &ts, &good.body);
    assert_eq!(
        post(
            &replica.callback_url,
            headers(Some(&ts), Some(&forged)),
            good.body.clone()
        )
        .await,
        401
    );
    let garbage = format!("v0={}", "0".repeat(64));
    assert_eq!(
        post(
            &replica.callback_url,
            headers(Some(&ts), Some(&garbage)),
            good.body.clone()
        )
        .await,
        401
    );
    // The right signature, over a different body (another decision).
    let mut other = payload.clone();
    other["actions"][0]["value"] = json!(format!(
        "{{\"request_id\":\"{id}\",\"decision\":\"reject\"}}"
    ));
    let other_body = fake.sign(&other).body;
    assert_eq!(
        post(&replica.callback_url, good.headers(), other_body).await,
        401
    );
    // Signed correctly, but at a stale or future time.
    for offset in [-301, 301, -86_400, 86_400] {
        let signed = fake.sign_at(&payload, now() + offset);
        assert_eq!(
            fake.deliver(&replica.callback_url, &signed).await.0,
            401,
            "offset {offset}"
        );
    }
    // The signature's timestamp cannot be swapped for a fresh one.
    let old = fake.sign_at(&payload, now() - 600);
    assert_eq!(
        post(
            &replica.callback_url,
            headers(Some(&ts), Some(&old.signature)),
            old.body.clone()
        )
        .await,
        401
    );
    // Missing headers.
    assert_eq!(
        post(
            &replica.callback_url,
            headers(None, Some(&good.signature)),
            good.body.clone()
        )
        .await,
        401
    );
    assert_eq!(
        post(
            &replica.callback_url,
            headers(Some(&ts), None),
            good.body.clone()
        )
        .await,
        401
    );
    assert_eq!(
        post(
            &replica.callback_url,
            headers(None, None),
            good.body.clone()
        )
        .await,
        401
    );

    nothing_changed(&fake, &replica, &id, &call).await;
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(
        fake.ephemerals().is_empty(),
        "unverified senders are told nothing"
    );
    // The genuine request still works afterwards.
    assert_eq!(fake.deliver(&replica.callback_url, &good).await.0, 200);
    assert!(call.await.expect("task").tool_ran);
}

#[tokio::test]
async fn another_workspace_or_channel_is_refused_with_a_note() {
    let (fake, replica, call, id) = pending().await;
    let wrong_team = SlackClick::new(&id, ApprovalDecision::Approve, BOB).in_team("T0OTHER");
    assert_eq!(press(&fake, &replica, &wrong_team).await.0, 200);
    let note = ephemeral(&fake, 1, BOB).await;
    assert!(note.contains("belongs to another channel"), "{note}");
    let wrong_channel =
        SlackClick::new(&id, ApprovalDecision::Approve, BOB).in_channel("C0ELSEWHERE");
    assert_eq!(press(&fake, &replica, &wrong_channel).await.0, 200);
    let note = fake
        .wait_for_ephemeral(2, Duration::from_secs(5))
        .await
        .expect("note");
    assert_eq!(
        note.channel, "C0ELSEWHERE",
        "the note goes where the press happened"
    );
    assert!(
        note.text.contains("belongs to another channel"),
        "{}",
        note.text
    );
    nothing_changed(&fake, &replica, &id, &call).await;
    call.abort();
}

/// A message the same bot posts in the approval channel (say, through an
/// agent's own Slack tool) with the gate's very buttons decides nothing:
/// only a press on the card the gate recorded counts.
#[tokio::test]
async fn a_look_alike_message_from_the_same_bot_decides_nothing() {
    let (fake, replica, call, id) = pending().await;
    let card = fake.messages()[0].ts.clone();
    let bot = SlackChannel::new(fake.slack_config(CHANNEL)).expect("the same bot");
    bot.send_card(&stored(&replica, &id).await)
        .await
        .expect("the look-alike is posted");
    let look_alike = fake.messages()[1].ts.clone();
    assert_ne!(look_alike, card);
    for (count, decision) in [
        (1, ApprovalDecision::Approve),
        (2, ApprovalDecision::Reject),
    ] {
        let click = SlackClick::new(&id, decision, BOB).on_message(&look_alike);
        assert_eq!(press(&fake, &replica, &click).await.0, 200);
        let note = ephemeral(&fake, count, BOB).await;
        assert!(
            note.contains("not on the card the approval gate sent"),
            "{note}"
        );
    }
    nothing_changed(&fake, &replica, &id, &call).await;

    let click = SlackClick::new(&id, ApprovalDecision::Approve, BOB).on_message(&card);
    assert_eq!(press(&fake, &replica, &click).await.0, 200);
    assert!(
        call.await.expect("task").tool_ran,
        "the gate's own card decides"
    );
}

/// An Approve press must carry the digest of the arguments its message
/// showed: one without it (a message sent before the rule, or one that
/// could not show every argument) is refused.
#[tokio::test]
async fn an_approve_without_the_arguments_digest_is_refused() {
    let (fake, replica, call, id) = pending().await;
    let mut payload = fake
        .block_actions_payload(&SlackClick::new(&id, ApprovalDecision::Approve, BOB))
        .expect("the card has Approve");
    let value: Value = serde_json::from_str(payload["actions"][0]["value"].as_str().unwrap())
        .expect("the button's value");
    assert_eq!(value["digest"], stored(&replica, &id).await.args_digest);
    for (count, digest) in [(1, Value::Null), (2, json!("0".repeat(64)))] {
        let mut value = value.clone();
        value["digest"] = digest;
        payload["actions"][0]["value"] = json!(value.to_string());
        payload["trigger_id"] = json!(format!("{}.forged{count}", now()));
        let (code, _) = fake
            .deliver(&replica.callback_url, &fake.sign(&payload))
            .await;
        assert_eq!(code, 200);
        let note = ephemeral(&fake, count, BOB).await;
        assert!(
            note.contains("not on a card that showed every argument"),
            "{note}"
        );
    }
    nothing_changed(&fake, &replica, &id, &call).await;
    call.abort();
}

/// Arguments too long for one Slack message: the message shows what fits,
/// says so, and offers Reject only; Reject works.
#[tokio::test]
async fn arguments_too_long_for_a_message_can_only_be_rejected_from_it() {
    let fake = fake().await;
    let replica = in_memory_replica(&fake, ORG_SCOPE()).await;
    let memo = "pay ".repeat(5000);
    let args = json!({"amount": 5, "memo": memo, "payee": "the part that matters"});
    let call = start(
        &replica,
        hooks_testkit::gate::gated_call_with("c1", "finance-bot", "alice", args),
    );
    let id = message_posted(&fake, 1).await;
    let message = &fake.messages()[0];
    let shown = message.blocks.to_string();
    assert!(shown.contains("too long to show here in full"), "{shown}");
    assert!(!shown.contains("the part that matters"));
    let approve = fake.block_actions_payload(&SlackClick::new(&id, ApprovalDecision::Approve, BOB));
    assert!(approve.is_err(), "no Approve button: {approve:?}");
    let reject = SlackClick::new(&id, ApprovalDecision::Reject, BOB);
    assert_eq!(press(&fake, &replica, &reject).await.0, 200);
    let report = call.await.expect("task");
    assert!(!report.tool_ran);
    assert_eq!(status(&replica, &id).await, ConfirmationStatus::Rejected);
}

/// Arguments longer than one section but within a message are all shown,
/// and Approve works.
#[tokio::test]
async fn long_arguments_are_shown_whole_and_can_be_approved() {
    let fake = fake().await;
    let replica = in_memory_replica(&fake, ORG_SCOPE()).await;
    let memo = "pay ".repeat(1500);
    let args = json!({"amount": 5, "memo": memo, "payee": "the part that matters"});
    let call = start(
        &replica,
        hooks_testkit::gate::gated_call_with("c1", "finance-bot", "alice", args),
    );
    let id = message_posted(&fake, 1).await;
    let shown = fake.messages()[0].blocks.to_string();
    assert!(shown.contains("the part that matters"), "{shown}");
    assert!(!shown.contains("too long"), "{shown}");
    let approve = SlackClick::new(&id, ApprovalDecision::Approve, BOB);
    assert_eq!(press(&fake, &replica, &approve).await.0, 200);
    assert!(call.await.expect("task").tool_ran);
}

/// A press that arrives before the card's reference is stored decides
/// nothing and is not counted as handled: the same press, delivered again
/// once the reference is stored, decides.
#[tokio::test]
async fn a_press_before_the_card_is_recorded_waits_for_it() {
    let fake = fake().await;
    let replica = in_memory_replica(&fake, ORG_SCOPE()).await;
    let store = replica.approvals.store();
    let (request, _) = store
        .create(&NewConfirmation {
            idempotency_key: "conv-1:early".to_owned(),
            tool_name: "oa__purchase_pay".to_owned(),
            args: json!({"amount": 5}),
            args_digest: "digest-5".to_owned(),
            agent_id: "finance-bot".to_owned(),
            initiator_user_id: "alice".to_owned(),
            org_id: "acme".to_owned(),
            approver_scope: ApproverScope::OrgMembers,
            approver_allowlist: Vec::new(),
            channel_kind: "slack".to_owned(),
            channel_id: format!("T0FAKE/{CHANNEL}"),
            mode: ConfirmationMode::Metadata,
            timeout: Duration::from_secs(60),
            quorum: hooks_std::approval_gate::Quorum::default(),
        })
        .await
        .expect("created");
    let press = DecisionCallback {
        event_id: "slack:T0FAKE:early".to_owned(),
        request_id: request.id.clone(),
        decision: ApprovalDecision::Approve,
        operator: BOB.to_owned(),
        channel_id: format!("T0FAKE/{CHANNEL}"),
        message_ref: Some(format!("{CHANNEL}:1700000000.000100")),
        shown_digest: Some("digest-5".to_owned()),
        reason: None,
    };
    let outcome = replica.approvals.handle_callback(&press).await;
    assert!(
        outcome.message.contains("still being recorded"),
        "{}",
        outcome.message
    );
    assert_eq!(
        status(&replica, &request.id).await,
        ConfirmationStatus::Pending
    );
    assert!(!store.event_seen(&press.event_id).await.expect("read"));

    let claim = store
        .claim_card(&request.id, Duration::from_secs(60), None)
        .await
        .expect("claim")
        .expect("claimed");
    store
        .record_card(&request.id, claim, &format!("{CHANNEL}:1700000000.000100"))
        .await
        .expect("recorded")
        .expect("the claim holds");
    let outcome = replica.approvals.handle_callback(&press).await;
    assert_eq!(outcome.message, "Approved.");
    assert_eq!(
        status(&replica, &request.id).await,
        ConfirmationStatus::Approved
    );
}

/// A gate that needs two approvals from people other than the requester:
/// the requester's approval is refused, the first approval is counted and
/// shown on the message (which keeps its buttons), the same person cannot
/// count twice, and the second approver's press runs the call once.
#[tokio::test]
async fn two_approvers_other_than_the_requester_are_needed() {
    let fake = fake().await;
    let gate = json!({"approver_scope": "org_members", "timeout": "30s",
                      "approvals": 2, "exclude_requester": true});
    let replica = in_memory_replica(&fake, gate).await;
    let call = start(&replica, gated_call("c1", 60_000));
    let id = message_posted(&fake, 1).await;
    let shown = fake.messages()[0].blocks.to_string();
    assert!(shown.contains("0 of 2 approvals"), "{shown}");

    let approve = |user: &str| SlackClick::new(&id, ApprovalDecision::Approve, user);
    press(&fake, &replica, &approve(ALICE)).await;
    let note = ephemeral(&fake, 1, ALICE).await;
    assert!(note.contains("You asked for this call"), "{note}");

    press(&fake, &replica, &approve(BOB)).await;
    let update = fake
        .wait_for_update(1, Duration::from_secs(5))
        .await
        .expect("the message shows the progress");
    assert!(update.has_buttons(), "still pending: the buttons stay");
    let shown = update.blocks.to_string();
    assert!(shown.contains("1 of 2 approvals (by bob)"), "{shown}");
    assert_eq!(status(&replica, &id).await, ConfirmationStatus::Pending);
    assert!(!call.is_finished());

    press(&fake, &replica, &approve(BOB)).await;
    let note = ephemeral(&fake, 2, BOB).await;
    assert!(note.contains("already approved"), "{note}");
    assert!(!call.is_finished());

    press(&fake, &replica, &approve(CAROL)).await;
    let report = tokio::time::timeout(Duration::from_secs(5), call)
        .await
        .expect("the second approval wakes the gate")
        .expect("task");
    assert!(report.tool_ran);
    // The trace (and so the audit row) names both approvers.
    let noted: Vec<&String> = report
        .trace
        .runs()
        .iter()
        .flat_map(|run| &run.side_effects)
        .collect();
    assert!(
        noted
            .iter()
            .any(|note| note.starts_with("approved by bob, carol (")
                && note.ends_with(
                    "; 2 of 2 approvals (by bob, carol); the requester (alice) may not approve)"
                )),
        "{noted:?}"
    );
    let stored = stored(&replica, &id).await;
    assert_eq!(stored.status, ConfirmationStatus::Approved);
    assert_eq!(stored.approved_by, ["bob", "carol"]);
    let update = fake
        .wait_for_update(2, Duration::from_secs(5))
        .await
        .expect("the message shows the outcome");
    assert!(!update.has_buttons());
    let shown = update.blocks.to_string();
    assert!(shown.contains("Approved by carol"), "{shown}");
    assert!(
        shown.contains("2 of 2 approvals (by bob, carol)"),
        "{shown}"
    );
}

#[tokio::test]
async fn users_outside_the_scope_are_refused_with_a_note() {
    let (fake, replica, call, id) = pending().await;
    press(
        &fake,
        &replica,
        &SlackClick::new(&id, ApprovalDecision::Approve, MALLORY),
    )
    .await;
    let note = ephemeral(&fake, 1, MALLORY).await;
    assert_eq!(
        note,
        "You may not decide this request: it needs members of org acme. Nothing changed."
    );
    // Unknown to the directory (or known only on another channel kind).
    press(
        &fake,
        &replica,
        &SlackClick::new(&id, ApprovalDecision::Approve, "U0EVE"),
    )
    .await;
    let note = ephemeral(&fake, 2, "U0EVE").await;
    assert_eq!(note, "You are not a known approver; nothing changed.");
    nothing_changed(&fake, &replica, &id, &call).await;
    call.abort();
}

#[tokio::test]
async fn the_initiator_scope_admits_only_the_initiator() {
    let fake = fake().await;
    let replica = in_memory_replica(&fake, json!({"timeout": "30s"})).await;
    let call = start(&replica, gated_call("c1", 60_000));
    let id = message_posted(&fake, 1).await;
    press(
        &fake,
        &replica,
        &SlackClick::new(&id, ApprovalDecision::Approve, BOB),
    )
    .await;
    assert!(
        ephemeral(&fake, 1, BOB)
            .await
            .contains("the requester (alice)")
    );
    assert_eq!(status(&replica, &id).await, ConfirmationStatus::Pending);
    press(
        &fake,
        &replica,
        &SlackClick::new(&id, ApprovalDecision::Approve, ALICE),
    )
    .await;
    assert!(call.await.expect("task").tool_ran);
}

/// The note a refused presser gets names who may approve, and those names
/// come from the request (the requester's id, the agent, the org): they are
/// shown as the message shows them, hidden characters escaped and the text
/// kept to a size Slack takes, so a note cannot be reordered by a bidi
/// control or refused for its length.
#[tokio::test]
async fn refusal_notes_escape_hidden_characters_and_stay_short() {
    let fake = fake().await;
    let replica = in_memory_replica(&fake, json!({"timeout": "30s"})).await;
    let requester = format!("alice\u{202E}nimda{}", "\u{200B}x".repeat(30_000));
    let ctx = HookContext::tool_call("oa__purchase_pay", json!({"amount": 60_000}))
        .with_conversation("conv-1")
        .with_tool_call_id("c1")
        .with_agent("finance-bot")
        .with_user(requester.as_str())
        .with_org("acme")
        .with_metadata("requires_confirmation", true);
    let call = start(&replica, ctx);
    let id = message_posted(&fake, 1).await;
    press(
        &fake,
        &replica,
        &SlackClick::new(&id, ApprovalDecision::Approve, BOB),
    )
    .await;
    let note = ephemeral(&fake, 1, BOB).await;
    assert!(note.starts_with("You may not decide"), "{note}");
    assert!(!note.contains('\u{202E}'), "bidi control shown raw: {note}");
    assert!(!note.contains('\u{200B}'), "zero-width space shown raw");
    assert!(note.contains("\\u202E"), "{note}");
    assert!(
        note.chars().count() <= 4000,
        "{} characters",
        note.chars().count()
    );
    assert_eq!(status(&replica, &id).await, ConfirmationStatus::Pending);
    call.abort();
}

#[tokio::test]
async fn malformed_and_random_bodies_get_a_4xx_and_change_nothing() {
    let (fake, replica, call, id) = pending().await;
    let valid = fake
        .block_actions_payload(&SlackClick::new(&id, ApprovalDecision::Approve, BOB))
        .expect("payload");
    let with = |pointer: &str, value: Value| {
        let mut payload = valid.clone();
        *payload.pointer_mut(pointer).expect("field") = value;
        serde_urlencoded::to_string([("payload", payload.to_string())])
            .unwrap()
            .into_bytes()
    };
    let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
    let mut bodies: Vec<Vec<u8>> = vec![
        b"".to_vec(),
        b"payload=".to_vec(),
        b"payload=not%20json".to_vec(),
        b"payload=%7B%7D".to_vec(),
        b"payload=%5B%5D".to_vec(),
        b"payload=null".to_vec(),
        b"payload=%7B%7D&payload=%7B%7D".to_vec(),
        b"foo=bar".to_vec(),
        b"%%%".to_vec(),
        valid.to_string().into_bytes(),
        with("/type", json!("view_submission")),
        with("/type", json!(5)),
        with("/actions", json!([])),
        with("/actions/0/value", json!("not json")),
        with(
            "/actions/0/value",
            json!("{\"request_id\":\"x\",\"decision\":\"maybe\"}"),
        ),
        with("/actions/0/action_id", json!("approve:someone-else")),
        with("/user", json!(null)),
        with("/team/id", json!("")),
        with("/trigger_id", json!(7)),
        vec![0xff; 1000],
    ];
    for length in [1, 7, 64, 300, 4096] {
        bodies.push(
            (0..length)
                .map(|_| {
                    seed ^= seed << 13;
                    seed ^= seed >> 7;
                    seed ^= seed << 17;
                    seed as u8
                })
                .collect(),
        );
    }
    for body in &bodies {
        // Signed (so the body itself is judged) and unsigned.
        let signed = fake.sign_body_at(body.clone(), now());
        let code = fake.deliver(&replica.callback_url, &signed).await.0;
        assert!(
            (400..500).contains(&code),
            "{code} for a signed {}-byte body",
            body.len()
        );
        let code = post(&replica.callback_url, headers(None, None), body.clone()).await;
        assert_eq!(code, 401, "unsigned {}-byte body", body.len());
    }
    // Larger than the cap: refused unread.
    let huge = fake.sign_body_at(vec![b'a'; 70_000], now());
    let code = fake.deliver(&replica.callback_url, &huge).await.0;
    assert!((400..500).contains(&code), "{code} for an oversized body");
    nothing_changed(&fake, &replica, &id, &call).await;
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(fake.ephemerals().is_empty());
    call.abort();
}

// ------------------------------------------------------------ the Web API

fn request(id: &str) -> ConfirmationRequest {
    let args = json!({"query": "DELETE FROM invoices", "note": "pay <!channel> now \u{202E}evil"});
    let channel = format!("T0FAKE/{CHANNEL}");
    pending_request(id, "sql_exec", args, "alice", ("slack", &channel))
}

#[tokio::test]
async fn messages_escape_markup_and_hidden_characters() {
    let fake = fake().await;
    let channel = SlackChannel::new(fake.slack_config(CHANNEL)).expect("channel");
    channel.send_card(&request("r1")).await.expect("posted");
    let shown = fake.messages()[0].blocks.to_string();
    assert!(!shown.contains("<!channel>"), "{shown}");
    assert!(shown.contains("&lt;!channel&gt;"), "{shown}");
    assert!(!shown.contains('\u{202E}'), "{shown}");
    assert!(shown.contains("\\\\u202E"), "{shown}");
    assert!(shown.contains("contains hidden characters"), "{shown}");
}

/// The model writes the tool name (and a caller the ids shown next to it):
/// values long enough, or full of characters that escaping lengthens, must
/// still give a message Slack accepts, or the request could never be
/// approved and its outcome never shown.
#[tokio::test]
async fn oversized_values_still_give_a_message_slack_accepts() {
    let fake = fake().await;
    let channel = SlackChannel::new(fake.slack_config(CHANNEL)).expect("channel");
    let mut hostile = request("r-long");
    hostile.tool_name = format!("pay_{}", "&".repeat(4000));
    hostile.agent_id = "<".repeat(3000);
    hostile.initiator_user_id = ">".repeat(3000);
    hostile.org_id = "o".repeat(3000);
    hostile.approver_scope = ApproverScope::Initiator;
    hostile.approver_allowlist = vec!["&".repeat(2000), "<".repeat(2000)];
    let reference = channel
        .send_card(&hostile)
        .await
        .expect("the approval message is accepted");
    let posted = &fake.messages()[0];
    let shown = posted.blocks.to_string();
    assert!(
        shown.contains("pay_&amp;"),
        "the tool is still named: {shown}"
    );
    assert!(!shown.contains("<!"), "{shown}");
    assert_eq!(
        posted.blocks.as_array().unwrap().last().unwrap()["type"],
        "actions"
    );

    hostile.message_ref = Some(reference);
    hostile.status = ConfirmationStatus::Rejected;
    hostile.decided_by = Some("&".repeat(3000));
    hostile.decided_at_ms = Some(1_700_000_100_000);
    hostile.reason = Some("<".repeat(5000));
    channel
        .update_card(&hostile)
        .await
        .expect("the outcome message is accepted");
    assert_eq!(fake.updates().len(), 1);
}

#[tokio::test]
async fn a_rate_limited_call_waits_for_retry_after_and_succeeds() {
    let fake = fake().await;
    let channel = SlackChannel::new(fake.slack_config(CHANNEL)).expect("channel");
    fake.rate_limit_next(1);
    let started = Instant::now();
    let reference = channel
        .send_card(&request("r1"))
        .await
        .expect("posted after the wait");
    assert!(
        started.elapsed() >= Duration::from_millis(900),
        "Retry-After: 1 was honoured"
    );
    assert_eq!(fake.api_calls(), 2);
    assert_eq!(fake.messages().len(), 1);
    assert_eq!(reference, format!("{CHANNEL}:{}", fake.messages()[0].ts));

    // Rate limited for longer than the retries allow: a clear failure.
    fake.set_retry_after(Some(0));
    fake.rate_limit_next(10);
    let error = channel.send_card(&request("r2")).await.unwrap_err();
    assert!(error.message.contains("still rate limited"), "{error}");
}

/// A rate limit announced to last longer than the channel waits is not
/// waited out and retried early (a retry before Slack's reset is refused
/// again, and the gate's delivery deadline would pass meanwhile): the call
/// fails at once, saying when Slack allows the next request.
#[tokio::test]
async fn a_rate_limit_longer_than_the_longest_wait_fails_at_once() {
    let fake = fake().await;
    let channel = SlackChannel::new(fake.slack_config(CHANNEL)).expect("channel");
    fake.set_retry_after(Some(3600));
    fake.rate_limit_next(1);
    let started = Instant::now();
    let error = tokio::time::timeout(Duration::from_secs(5), channel.send_card(&request("r1")))
        .await
        .expect("does not wait out an hour-long rate limit")
        .unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(2), "failed at once");
    assert!(error.message.contains("rate limited"), "{error}");
    assert!(error.message.contains("3600"), "{error}");
    assert_eq!(fake.api_calls(), 1, "not retried before the reset");
    assert!(fake.messages().is_empty());
}

/// A Web API that misbehaves — never answers, answers HTML, an `ok: false`
/// without a usable error name, `ok: true` without a `ts`, a server error —
/// fails the delivery promptly and clearly: nothing hangs the gate and
/// nothing counts as posted.
#[tokio::test]
async fn a_misbehaving_web_api_fails_promptly() {
    use axum::response::IntoResponse;
    let answers: Vec<(&str, u16, &str)> = vec![
        ("silent", 200, ""),
        ("html", 200, "<html>gateway</html>"),
        ("numeric error", 200, r#"{"ok": false, "error": 123}"#),
        ("no ok", 200, r#"{"error": "invalid_auth"}"#),
        ("ok without ts", 200, r#"{"ok": true}"#),
        ("server error", 500, r#"{"ok": true, "ts": "1.2"}"#),
        ("array", 200, r#"[{"ok": true, "ts": "1.2"}]"#),
    ];
    for (what, status, body) in answers {
        let silent = what == "silent";
        let app = Router::new().route(
            "/{method}",
            axum::routing::post(move || async move {
                if silent {
                    tokio::time::sleep(Duration::from_secs(60)).await;
                }
                (
                    axum::http::StatusCode::from_u16(status).expect("status"),
                    body,
                )
                    .into_response()
            }),
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let base = format!("http://{}", listener.local_addr().expect("addr"));
        let server = tokio::spawn(async move { axum::serve(listener, app).await });
        let mut config = SlackConfig::new("xoxb-1", "secret", CHANNEL, "T0FAKE");
        config.base_url = base;
        config.limits.request_timeout = Duration::from_millis(300);
        let channel = SlackChannel::new(config).expect("channel");
        let started = Instant::now();
        let error = tokio::time::timeout(Duration::from_secs(5), channel.send_card(&request("r1")))
            .await
            .unwrap_or_else(|_| panic!("{what}: the call hung"))
            .expect_err(what);
        assert!(started.elapsed() < Duration::from_secs(2), "{what}: slow");
        assert!(error.message.contains("failed"), "{what}: {error}");
        if silent {
            assert!(error.message.contains("did not answer"), "{error}");
        }
        server.abort();
    }
}

#[tokio::test]
async fn web_api_errors_are_named_with_what_to_do() {
    let fake = fake().await;
    let channel = SlackChannel::new(fake.slack_config(CHANNEL)).expect("channel");
    for (name, hint) in [
        ("channel_not_found", "invite the bot"),
        ("not_in_channel", "/invite"),
        ("invalid_auth", "Bot User OAuth Token"),
        ("missing_scope", "chat:write"),
    ] {
        fake.fail_next(1, name);
        let error = channel.send_card(&request("r1")).await.unwrap_err();
        assert!(error.message.contains(name), "{error}");
        assert!(error.message.contains(hint), "{error}");
    }
    // A wrong token is refused by the API itself.
    let mut config = fake.slack_config(CHANNEL);
    config.bot_token = "xoxb-wrong".into();
    let error = SlackChannel::new(config)
        .expect("channel")
        .send_card(&request("r1"))
        .await
        .unwrap_err();
    assert!(error.message.contains("invalid_auth"), "{error}");
    assert!(fake.messages().is_empty());
}

#[tokio::test]
async fn invalid_auth_blocks_the_call_and_cancels_the_request() {
    let fake = fake().await;
    let replica = in_memory_replica(&fake, ORG_SCOPE()).await;
    fake.fail_next(1, "invalid_auth");
    let report = tokio::time::timeout(
        Duration::from_secs(5),
        start(&replica, gated_call("c1", 60_000)),
    )
    .await
    .expect("blocks at once")
    .expect("task");
    assert!(!report.tool_ran);
    let text = report.observation.to_string();
    assert!(text.contains("invalid_auth"), "{text}");
    let request = replica
        .approvals
        .store()
        .by_key("6:conv-1:c1")
        .await
        .expect("read")
        .expect("request");
    assert_eq!(request.status, ConfirmationStatus::Cancelled);
    assert!(fake.messages().is_empty());
}

// ------------------------------------------------------------ signatures

/// Slack's own published example (signing secret, timestamp, slash-command
/// body and the signature Slack computed for them).
#[test]
fn the_published_signature_vector_verifies() {
    let secret = "8f742231b10e8888abcd99yyyzzz85a5";
    let body = "token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow\
        &channel_id=G8PSS9T3V&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner\
        &command=%2Fwebhook-collect&text=&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands\
        %2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN\
        &trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c";
    let expected = "v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503";
    assert_eq!(signature(secret, "1531420618", body.as_bytes()), expected);
    assert!(verify_signature(
        secret,
        "1531420618",
        body.as_bytes(),
        expected
    ));
    assert!(!verify_signature(
        secret,
        "1531420619",
        body.as_bytes(),
        expected
    ));
}

/// Fixed vectors computed once with `openssl dgst -sha256 -hmac` and checked in.
#[test]
fn fixed_signature_vectors() {
    for (secret, timestamp, body, expected) in [
        (
            "fake-signing-secret",
            "1700000000",
            "payload=%7B%22type%22%3A%22block_actions%22%7D",
            "v0=c8588b8f27aa3fff5380f60353676931392733dd9779d9dfd2f8f41d040a62ea",
        ),
        (
            "another secret",
            "1700000001",
            "payload=%7B%7D",
            "v0=07173e9907a1e2c12d72f13d0d19cc7314ef67dd4e7b913d924fe4741d759c0e",
        ),
    ] {
        assert_eq!(signature(secret, timestamp, body.as_bytes()), expected);
        assert!(verify_signature(
            secret,
            timestamp,
            body.as_bytes(),
            expected
        ));
        assert!(!verify_signature(
            secret,
            timestamp,
            body.as_bytes(),
            &expected.to_uppercase()
        ));
    }
}

/// `v0=` + the HMAC-SHA256 openssl computes, or `None` if openssl cannot run.
fn openssl_signature(secret: &str, timestamp: &str, body: &[u8]) -> Option<String> {
    let mut child = Command::new("openssl")
        .args(["dgst", "-sha256", "-hmac", secret])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let mut stdin = child.stdin.take()?;
    stdin
        .write_all(format!("v0:{timestamp}:").as_bytes())
        .ok()?;
    stdin.write_all(body).ok()?;
    drop(stdin);
    let output = child.wait_with_output().ok()?;
    if !output.status.success() {
        return None;
    }
    let text = String::from_utf8(output.stdout).ok()?;
    let hex = text.trim().rsplit(' ').next()?.to_owned();
    Some(format!("v0={hex}"))
}

#[tokio::test]
async fn signatures_match_openssl() {
    let fake = fake().await;
    let payload =
        json!({"type": "block_actions", "user": {"id": "U1"}, "note": "ünïcödé & <spaces>"});
    let signed = fake.sign_at(&payload, 1_700_000_000);
    let mut cases: Vec<(String, String, Vec<u8>)> = vec![
        (
            "fake-signing-secret".into(),
            signed.timestamp.clone(),
            signed.body.clone(),
        ),
        ("s".into(), "0".into(), Vec::new()),
        (
            "a-much-longer-signing-secret-than-the-sha256-block-of-64-bytes-0123456789".into(),
            "1531420618".into(),
            b"payload=%7B%7D".to_vec(),
        ),
    ];
    cases.push(("k".into(), "1".into(), (0u8..=255).collect()));
    for (secret, timestamp, body) in &cases {
        let Some(expected) = openssl_signature(secret, timestamp, body) else {
            eprintln!(
                "SKIPPED (signatures_match_openssl): `openssl` is not installed or failed to run"
            );
            return;
        };
        assert_eq!(
            signature(secret, timestamp, body),
            expected,
            "secret {secret}"
        );
    }
    assert_eq!(
        signed.signature,
        openssl_signature("fake-signing-secret", &signed.timestamp, &signed.body).unwrap()
    );
}

/// A timestamp window as long as the time click ids are remembered would
/// let a captured request be replayed once its id is forgotten: the window
/// is refused above an hour.
#[test]
fn a_timestamp_window_longer_than_an_hour_is_refused() {
    let mut config = SlackConfig::new("xoxb-1", "secret", CHANNEL, "T0FAKE");
    config.limits.timestamp_window = Duration::from_secs(3600);
    SlackChannel::new(config.clone()).expect("an hour is allowed");
    for window in [Duration::from_secs(3601), Duration::from_secs(2 * 86_400)] {
        config.limits.timestamp_window = window;
        let error = SlackChannel::new(config.clone()).expect_err("refused");
        assert!(error.message.contains("timestamp_window"), "{error}");
    }
}

#[tokio::test]
async fn verify_callback_checks_the_window_at_a_given_time() {
    let fake = fake().await;
    let channel = SlackChannel::new(fake.slack_config(CHANNEL)).expect("channel");
    channel.send_card(&request("r1")).await.expect("posted");
    let payload = fake
        .block_actions_payload(&SlackClick::new("r1", ApprovalDecision::Approve, BOB))
        .expect("payload");
    let signed = fake.sign_at(&payload, 1_700_000_000);
    let raw = RawCallback {
        headers: &signed.headers(),
        body: &signed.body,
    };
    let Callback::Decision(click) = channel
        .verify_callback_at(raw, 1_700_000_100)
        .expect("verified")
    else {
        panic!("a decision");
    };
    assert_eq!(click.channel_id, format!("T0FAKE/{CHANNEL}"));
    assert_eq!(click.operator, BOB);
    assert_eq!(
        channel.verify_callback_at(raw, 1_700_000_301),
        Err(CallbackError::StaleTimestamp)
    );
    assert_eq!(
        channel.verify_callback(raw),
        Err(CallbackError::StaleTimestamp)
    );
}

// ------------------------------------------------------------ durability

/// A pending request outlives a dropped runtime; a press made while the gate
/// was gone is honoured when the call is re-run, without a second message.
#[test]
fn a_pending_request_survives_a_restart() {
    let runtime = || {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("runtime")
    };
    let services = runtime();
    let fake = services.block_on(fake());
    let dir = tempfile::tempdir().expect("dir");
    let url = format!("sqlite://{}", dir.path().join("gate.db").display());

    let first = runtime();
    let id = first.block_on(async {
        let replica = url_replica(&fake, &url).await;
        let call = start(&replica, gated_call("c1", 60_000));
        let id = message_posted(&fake, 1).await;
        // The process dies once its card is delivered and recorded (a card
        // whose reference was never stored decides nothing: see
        // `a_press_before_the_card_is_recorded_waits_for_it`).
        card_recorded(&replica, &id).await;
        std::mem::forget(call);
        std::mem::forget(replica);
        id
    });
    first.shutdown_background();

    let second = runtime();
    second.block_on(async {
        let replica = url_replica(&fake, &url).await;
        assert_eq!(status(&replica, &id).await, ConfirmationStatus::Pending);
        let (code, _) = press(
            &fake,
            &replica,
            &SlackClick::new(&id, ApprovalDecision::Approve, BOB),
        )
        .await;
        assert_eq!(code, 200);
        assert_eq!(status(&replica, &id).await, ConfirmationStatus::Approved);
        fake.wait_for_update(1, Duration::from_secs(5))
            .await
            .expect("the message shows the approval");
    });
    drop(second);

    let third = runtime();
    third.block_on(async {
        let replica = url_replica(&fake, &url).await;
        let report = tokio::time::timeout(
            Duration::from_secs(5),
            start(&replica, gated_call("c1", 60_000)),
        )
        .await
        .expect("resumes at once")
        .expect("task");
        assert!(report.tool_ran, "{}", report.observation);
        assert_eq!(fake.messages().len(), 1, "no second message");
    });
}

/// PostgreSQL replicas: the press received by B reaches the gate waiting in
/// A through LISTEN/NOTIFY (A's poll is set to a minute).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_click_on_replica_b_wakes_the_gate_on_replica_a_postgres() {
    let Some(url) = support::postgres_url("a_click_on_replica_b_wakes_the_gate_on_replica_a")
    else {
        return;
    };
    let fake = fake().await;
    let a = url_replica(&fake, &url).await;
    let b = url_replica(&fake, &url).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let conversation = support::unique("conv");
    let call = start(
        &a,
        gated_call("c1", 60_000).with_conversation(&conversation),
    );
    let id = message_posted(&fake, 1).await;
    let started = Instant::now();
    let (code, _) = press(
        &fake,
        &b,
        &SlackClick::new(&id, ApprovalDecision::Approve, BOB),
    )
    .await;
    assert_eq!(code, 200);
    let report = tokio::time::timeout(Duration::from_secs(5), call)
        .await
        .expect("NOTIFY wakes the gate on the other replica")
        .expect("task");
    assert!(report.tool_ran);
    assert!(started.elapsed() < Duration::from_secs(5));
}

// ------------------------------------------------------------ config by name

fn slack_gate_config(fake: &FakeSlack, channel_id: &str) -> Value {
    json!({
        "approver_scope": "org_members",
        "timeout": "30s",
        "channel": "slack",
        "slack": {
            "bot_token_env": "HOOKS_TEST_SLACK_BOT_TOKEN",
            "signing_secret_env": "HOOKS_TEST_SLACK_SIGNING_SECRET",
            "channel_id": channel_id,
            "team_id": "T0FAKE",
            "base_url": fake.base_url(),
        },
    })
}

/// The gate's config builds its channel from its `slack` section, with the
/// gate and the interactivity router, in one expression.
#[tokio::test]
async fn the_gate_config_selects_slack_by_name() {
    let fake = fake().await;
    let gate = slack_gate_config(&fake, CHANNEL);
    let config: ApprovalGateConfig = serde_json::from_value(gate.clone()).expect("config");
    let settings = config
        .channel_settings()
        .expect("valid")
        .expect("a channel");
    assert_eq!(settings.kind(), "slack");
    let (hook, router) =
        ApprovalGate::builder_from_config(Database::in_memory().await.expect("db"), &gate)
            .expect("a channel is selected")
            .directory(directory())
            .environment(fake_env(&fake))
            .build()
            .expect("built");
    let approvals = hook.approvals().expect("approvals").clone();
    assert_eq!(
        approvals.channel().channel_id(),
        format!("T0FAKE/{CHANNEL}")
    );
    let registry = HookRegistry::builder().pre(hook).build().expect("registry");
    let replica = Replica::from_parts(approvals, registry, router, "/slack/actions").await;
    let call = start(&replica, gated_call("c1", 60_000));
    let id = message_posted(&fake, 1).await;
    press(
        &fake,
        &replica,
        &SlackClick::new(&id, ApprovalDecision::Approve, BOB),
    )
    .await;
    assert!(call.await.expect("task").tool_ran);
}

/// The fake's secrets under the variable names the gate config gives, in
/// place of the process environment.
fn fake_env(fake: &FakeSlack) -> impl Fn(&str) -> Option<String> + Send + 'static {
    let (token, secret) = (
        fake.config().bot_token.clone(),
        fake.config().signing_secret.clone(),
    );
    move |name| match name {
        "HOOKS_TEST_SLACK_BOT_TOKEN" => Some(token.clone()),
        "HOOKS_TEST_SLACK_SIGNING_SECRET" => Some(secret.clone()),
        _ => None,
    }
}

/// One source for the channel: the builder builds the one the config
/// names (no second channel to disagree with), a missing secret is named,
/// and a config without a channel cannot build one.
#[tokio::test]
async fn a_gate_config_builds_the_channel_it_names_or_says_what_is_missing() {
    let fake = fake().await;
    let replica = in_memory_replica(&fake, ORG_SCOPE()).await;
    let gate = slack_gate_config(&fake, "C0OTHER");
    let (hook, _) =
        ApprovalGate::builder_from_config(Database::in_memory().await.expect("db"), &gate)
            .expect("a channel is selected")
            .environment(fake_env(&fake))
            .build()
            .expect("built");
    let channel = hook.approvals().expect("approvals").channel().clone();
    assert_eq!(channel.channel_id(), "T0FAKE/C0OTHER");

    // A missing secret is named.
    let Err(error) =
        ApprovalGate::builder_from_config(Database::in_memory().await.expect("db"), &gate)
            .expect("a channel is selected")
            .environment(|_| None)
            .build()
    else {
        panic!("no secrets, no channel");
    };
    assert!(
        error.to_string().contains("HOOKS_TEST_SLACK_BOT_TOKEN"),
        "{error}"
    );
    let Err(error) =
        ApprovalGate::builder_from_config(Database::in_memory().await.expect("db"), &ORG_SCOPE())
    else {
        panic!("a config without a channel cannot build one");
    };
    assert!(error.to_string().contains("selects no channel"), "{error}");

    // Inline secrets and unknown keys are errors; so is a missing section.
    let mut inline = gate.clone();
    inline["slack"]["bot_token"] = json!("xoxb-inline");
    let error = ApprovalGate::from_config(replica.approvals.clone(), &inline)
        .err()
        .expect("refused");
    assert!(error.to_string().contains("unknown field"), "{error}");
    let missing = json!({"channel": "slack"});
    let error = ApprovalGate::from_config(replica.approvals.clone(), &missing)
        .err()
        .expect("refused");
    assert!(
        error.to_string().contains("needs a `slack` section"),
        "{error}"
    );
    let unnamed = json!({"slack": gate["slack"].clone()});
    let error = ApprovalGate::from_config(replica.approvals.clone(), &unnamed)
        .err()
        .expect("refused");
    assert!(error.to_string().contains("channel: slack"), "{error}");
    let error = ApprovalGate::from_config(replica.approvals.clone(), &json!({"channel": "teams"}))
        .err()
        .expect("refused");
    assert!(error.to_string().contains("unknown variant"), "{error}");
}

/// `hooks check` and dry runs build the gate on offline resources: a config
/// naming Slack builds there (and blocks anything gated), without secrets.
#[tokio::test]
async fn a_slack_gate_config_builds_on_offline_resources() {
    let fake = fake().await;
    let resources = hooks_std::offline_resources(Vec::<String>::new())
        .await
        .expect("resources");
    let gate = slack_gate_config(&fake, CHANNEL);
    hooks_std::build_std_hook("approval_gate", &gate, &resources).expect("built offline");
}

/// The fake takes Web API calls in both of Slack's body forms, and refuses
/// calls without the bot token as Slack does.
#[tokio::test]
async fn the_fake_speaks_json_and_form_bodies() {
    let fake = fake().await;
    let http = reqwest::Client::new();
    let url = format!("{}/chat.postMessage", fake.base_url());
    let token = fake.config().bot_token.clone();
    let blocks = json!([{"type": "section", "text": {"type": "mrkdwn", "text": "hi"}}]);
    let form = serde_urlencoded::to_string([
        ("token", token.as_str()),
        ("channel", CHANNEL),
        ("text", "from a form"),
        ("blocks", &blocks.to_string()),
    ])
    .unwrap();
    let answer: Value = http
        .post(&url)
        .header("content-type", "application/x-www-form-urlencoded")
        .body(form)
        .send()
        .await
        .expect("sent")
        .json()
        .await
        .expect("json");
    assert_eq!(answer["ok"], true, "{answer}");
    assert_eq!(answer["channel"], CHANNEL);
    let posted = &fake.messages()[0];
    assert_eq!(
        (posted.text.as_str(), &posted.blocks),
        ("from a form", &blocks)
    );
    assert_eq!(answer["ts"], posted.ts.as_str());

    for (auth, error) in [
        (None, "not_authed"),
        (Some("Bearer xoxb-wrong"), "invalid_auth"),
    ] {
        let mut request = http
            .post(&url)
            .json(&json!({"channel": CHANNEL, "text": "x"}));
        if let Some(auth) = auth {
            request = request.header("authorization", auth);
        }
        let answer: Value = request
            .send()
            .await
            .expect("sent")
            .json()
            .await
            .expect("json");
        assert_eq!(answer, json!({"ok": false, "error": error}));
    }
    let answer: Value = http
        .post(format!("{}/chat.update", fake.base_url()))
        .bearer_auth(&token)
        .json(&json!({"channel": CHANNEL, "ts": "1.000001", "text": "x"}))
        .send()
        .await
        .expect("sent")
        .json()
        .await
        .expect("json");
    assert_eq!(answer["error"], "message_not_found");
    assert_eq!(fake.messages().len(), 1);
}
