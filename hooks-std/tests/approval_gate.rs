//! The approval gate end to end: a gated call pauses, a card goes to a fake
//! Feishu Open API server on 127.0.0.1, a "click" comes back encrypted and
//! signed through the real callback router, and the call resumes — or not.
//! Negative tests: forged, stale, wrong token, wrong channel, a look-alike
//! card from the same app, an Approve without the arguments' digest,
//! arguments too long to show (Reject only), out of scope, replayed,
//! malformed; database and card delivery failures block; a pending
//! request survives a dropped runtime; a decision on one replica wakes a gate
//! on another (PostgreSQL).

mod support;

use std::sync::Arc;
use std::time::Duration;

use hooks_runtime::{HookContext, HookRegistry, Observation, ToolCallReport};
use hooks_std::Database;
use hooks_std::approval_gate::channel::feishu::{FeishuChannel, REASON_INPUT_NAME};
use hooks_std::approval_gate::channel::{
    Callback, CallbackError, CallbackReply, Channel, ChannelFuture, RawCallback,
};
use hooks_std::approval_gate::{
    ApprovalDecision, ApprovalGate, Approvals, ApprovalsConfig, ConfirmationMode,
    ConfirmationRequest, ConfirmationStatus, ConfirmationStore, StaticDirectory,
};
use hooks_testkit::feishu::{CardClick, FakeFeishu, FakeFeishuConfig};
use hooks_testkit::gate::{Replica, gated_call, org_scope};
use serde_json::{Value, json};
use tokio::task::JoinHandle;

const CHAT: &str = "oc_finance";

fn directory() -> StaticDirectory {
    StaticDirectory::new()
        .person("feishu", "ou_alice", "alice", "acme")
        .person("feishu", "ou_bob", "bob", "acme")
        .person("feishu", "ou_mallory", "mallory", "evil-corp")
        .person("feishu", "ou_carol", "carol", "acme")
}

async fn replica(
    fake: &FakeFeishu,
    database: Database,
    gate: Value,
    poll_interval: Duration,
) -> Replica {
    let channel = FeishuChannel::new(fake.feishu_config(CHAT)).expect("feishu channel");
    Replica::start(
        Arc::new(channel),
        directory(),
        database,
        &gate,
        poll_interval,
        "/feishu/callback",
    )
    .await
}

/// A replica on a private in-memory database (its poll set to a minute).
async fn in_memory_replica(fake: &FakeFeishu, gate: Value) -> Replica {
    let database = Database::in_memory().await.expect("db");
    replica(fake, database, gate, Duration::from_secs(60)).await
}

/// An org-scope replica on the database at `url` (its poll set to a minute).
async fn url_replica(fake: &FakeFeishu, url: &str) -> Replica {
    let database = Database::connect(url).await.expect("db");
    replica(fake, database, ORG_SCOPE(), Duration::from_secs(60)).await
}

async fn fake() -> FakeFeishu {
    FakeFeishu::start(FakeFeishuConfig::default())
        .await
        .expect("fake feishu")
}

/// Starts a gated call in the background; the tool returns "paid".
fn start(replica: &Replica, ctx: HookContext) -> JoinHandle<ToolCallReport> {
    replica.start_call(ctx)
}

/// Waits until the fake has received `count` cards; returns the last card's request id.
async fn card_sent(fake: &FakeFeishu, count: usize) -> String {
    let card = fake
        .wait_for_card(count, Duration::from_secs(5))
        .await
        .expect("a card arrives at the fake Feishu server");
    card.request_id()
        .expect("the card carries the request id")
        .to_owned()
}

/// The card updates the fake received, once there is one (they are sent in
/// the background, so a verdict never waits on them).
async fn card_updates(fake: &FakeFeishu) -> Vec<(String, Value)> {
    let mut updates = fake.card_updates();
    for _ in 0..200 {
        if !updates.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
        updates = fake.card_updates();
    }
    updates
}

/// Presses a button on `id`'s card as `operator` in `chat`, through the
/// replica's callback router; returns the HTTP status and the reply body.
async fn press(
    fake: &FakeFeishu,
    replica: &Replica,
    id: &str,
    decision: ApprovalDecision,
    operator: &str,
    chat: &str,
) -> (u16, Value) {
    fake.click(
        &replica.callback_url,
        &CardClick::new(id, decision, operator, chat),
    )
    .await
    .expect("the card has that button")
}

fn has_buttons(card: &Value) -> bool {
    card.to_string().contains("\"button\"")
}

async fn status(replica: &Replica, id: &str) -> ConfirmationStatus {
    replica.stored(id).await.status
}

fn toast(body: &Value) -> (&str, &str) {
    (
        body["toast"]["type"].as_str().unwrap_or_default(),
        body["toast"]["content"].as_str().unwrap_or_default(),
    )
}

const ORG_SCOPE: fn() -> Value = org_scope;

/// A gated call waiting on its card, on an in-memory database, org-member
/// scope: the fake, the replica, the call, and the request id.
async fn pending() -> (FakeFeishu, Replica, JoinHandle<ToolCallReport>, String) {
    let fake = fake().await;
    let replica = in_memory_replica(&fake, ORG_SCOPE()).await;
    let call = start(&replica, gated_call("c1", 60_000));
    let id = card_sent(&fake, 1).await;
    (fake, replica, call, id)
}

#[tokio::test]
async fn approved_calls_run_and_the_card_shows_who_approved() {
    let (fake, replica, call, id) = pending().await;
    let card = &fake.sent_cards()[0];
    assert_eq!(card.chat_id, CHAT);
    assert!(card.card.to_string().contains("oa__purchase_pay"));
    assert!(!call.is_finished(), "the call waits for a person");

    let (code, reply) = press(
        &fake,
        &replica,
        &id,
        ApprovalDecision::Approve,
        "ou_bob",
        CHAT,
    )
    .await;
    assert_eq!(code, 200, "{reply}");
    assert_eq!(toast(&reply).0, "success");
    let shown = &reply["card"]["data"];
    assert!(shown.to_string().contains("Approved by bob"), "{shown}");
    assert!(!has_buttons(shown), "a decided card has no buttons");

    let report = tokio::time::timeout(Duration::from_secs(5), call)
        .await
        .expect("the decision wakes the gate at once")
        .expect("task");
    assert!(report.tool_ran);
    assert_eq!(report.observation, Observation::Output(json!("paid")));
    assert_eq!(status(&replica, &id).await, ConfirmationStatus::Approved);
}

#[tokio::test]
async fn rejected_calls_are_blocked_with_who_rejected() {
    let (fake, replica, call, id) = pending().await;
    press(
        &fake,
        &replica,
        &id,
        ApprovalDecision::Reject,
        "ou_bob",
        CHAT,
    )
    .await;
    let report = call.await.expect("task");
    assert!(!report.tool_ran);
    let Observation::Blocked { hook, reason } = &report.observation else {
        panic!("{:?}", report.observation);
    };
    assert_eq!(hook, "approval_gate");
    assert_eq!(reason, "rejected by bob: no reason given");
}

/// The card offers an optional input for a reason in the form its buttons
/// submit; the reason a rejecter types there reaches the blocked call's
/// refusal (what the LLM sees), its trace and the stored request.
#[tokio::test]
async fn a_rejection_reason_reaches_the_refusal_and_the_trace() {
    let (fake, replica, call, id) = pending().await;
    let card = &fake.sent_cards()[0].card;
    let form = card["body"]["elements"]
        .as_array()
        .and_then(|elements| elements.iter().find(|element| element["tag"] == "form"))
        .unwrap_or_else(|| panic!("the card has a form: {card}"));
    let input = form["elements"]
        .as_array()
        .and_then(|elements| elements.iter().find(|element| element["tag"] == "input"))
        .unwrap_or_else(|| panic!("the form has an input: {form}"));
    assert_eq!(input["name"], REASON_INPUT_NAME);
    assert_eq!(input["required"], false, "a reason is optional");
    assert!(input["placeholder"]["content"].is_string(), "{input}");
    let click = CardClick::new(&id, ApprovalDecision::Reject, "ou_bob", CHAT)
        .with_reason("  over budget this quarter  ");
    let (code, reply) = fake
        .click(&replica.callback_url, &click)
        .await
        .expect("the card has that button");
    assert_eq!(code, 200, "{reply}");
    let report = call.await.expect("task");
    assert!(!report.tool_ran);
    let Observation::Blocked { hook, reason } = &report.observation else {
        panic!("{:?}", report.observation);
    };
    assert_eq!(hook, "approval_gate");
    assert_eq!(reason, "rejected by bob: over budget this quarter");
    let trace = report.trace.to_string();
    assert!(trace.contains("over budget this quarter"), "{trace}");
    let stored = replica
        .approvals
        .store()
        .get(&id)
        .await
        .expect("read")
        .expect("request");
    assert_eq!(stored.reason.as_deref(), Some("over budget this quarter"));
}

#[tokio::test]
async fn no_decision_before_the_deadline_expires_the_request() {
    let fake = fake().await;
    let gate = json!({"approver_scope": "org_members", "timeout": "1s"});
    let replica = in_memory_replica(&fake, gate).await;
    let call = start(&replica, gated_call("c1", 60_000));
    let id = card_sent(&fake, 1).await;
    let report = call.await.expect("task");
    assert!(!report.tool_ran);
    assert_eq!(
        report.observation.to_string(),
        "Blocked by hook `approval_gate`: timed out after 1s waiting for confirmation"
    );
    assert_eq!(status(&replica, &id).await, ConfirmationStatus::Expired);
    // The card is redrawn in the background, so the verdict never waits on it.
    let updates = card_updates(&fake).await;
    assert_eq!(updates.len(), 1, "the card is updated on expiry");
    assert!(!has_buttons(&updates[0].1));

    // A click after expiry changes nothing.
    let (_, reply) = press(
        &fake,
        &replica,
        &id,
        ApprovalDecision::Approve,
        "ou_bob",
        CHAT,
    )
    .await;
    assert_eq!(toast(&reply).0, "info", "{reply}");
    assert!(toast(&reply).1.contains("expired"), "{reply}");
    assert_eq!(status(&replica, &id).await, ConfirmationStatus::Expired);
}

#[tokio::test]
async fn a_withdrawn_call_blocks_its_waiting_run_redraws_the_card_and_ignores_clicks() {
    let (fake, replica, call, id) = pending().await;
    // Another call of the conversation is not touched.
    let other = start(&replica, gated_call("c2", 70_000));
    let other_id = card_sent(&fake, 2).await;
    let withdrawn = replica
        .approvals
        .withdraw_call("conv-1", "c1", "the client cancelled the call")
        .await
        .expect("withdrawn");
    assert_eq!(
        withdrawn.iter().map(|r| r.id.as_str()).collect::<Vec<_>>(),
        [id.as_str()]
    );
    let report = tokio::time::timeout(Duration::from_secs(5), call)
        .await
        .expect("the withdrawal wakes the gate at once")
        .expect("task");
    assert!(!report.tool_ran);
    assert!(
        report.observation.to_string().contains("cancelled"),
        "{}",
        report.observation
    );
    assert_eq!(status(&replica, &id).await, ConfirmationStatus::Cancelled);
    assert_eq!(
        status(&replica, &other_id).await,
        ConfirmationStatus::Pending
    );

    let updates = card_updates(&fake).await;
    assert_eq!(updates.len(), 1, "the card is redrawn");
    assert!(updates[0].1.to_string().contains("Cancelled"));
    assert!(!has_buttons(&updates[0].1));

    let (_, reply) = press(
        &fake,
        &replica,
        &id,
        ApprovalDecision::Approve,
        "ou_bob",
        CHAT,
    )
    .await;
    assert_eq!(
        toast(&reply),
        ("info", "This request was cancelled; nothing changed.")
    );
    assert_eq!(status(&replica, &id).await, ConfirmationStatus::Cancelled);
    // Withdrawing again, or a call without a request, changes nothing.
    let again = replica
        .approvals
        .withdraw_call("conv-1", "c1", "again")
        .await
        .expect("read");
    assert!(again.is_empty());
    other.abort();
}

#[tokio::test]
async fn the_first_decision_wins() {
    let (fake, replica, call, id) = pending().await;
    let approve = CardClick::new(&id, ApprovalDecision::Approve, "ou_bob", CHAT);
    let reject = CardClick::new(&id, ApprovalDecision::Reject, "ou_alice", CHAT);
    fake.click(&replica.callback_url, &approve)
        .await
        .expect("click");
    let (_, second) = fake
        .click(&replica.callback_url, &reject)
        .await
        .expect("click");
    assert_eq!(
        toast(&second),
        ("info", "Already approved by bob; nothing changed.")
    );
    assert!(call.await.expect("task").tool_ran);
    assert_eq!(status(&replica, &id).await, ConfirmationStatus::Approved);
}

#[tokio::test]
async fn forged_stale_and_mistokened_callbacks_change_nothing() {
    let (fake, replica, call, id) = pending().await;
    let event = fake
        .card_action_event(&CardClick::new(
            &id,
            ApprovalDecision::Approve,
            "ou_bob",
            CHAT,
        ))
        .expect("event");

    let mut forged = fake.seal(&event);
    forged.signature = "0".repeat(64);
    assert_eq!(fake.deliver(&replica.callback_url, &forged).await.0, 401);

    let mut tampered = fake.seal(&event);
    tampered.body = tampered.body.iter().rev().copied().collect();
    assert!(fake.deliver(&replica.callback_url, &tampered).await.0 >= 400);

    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock")
        .as_secs() as i64;
    let stale = fake.seal_at(&event, now - 3600);
    assert_eq!(fake.deliver(&replica.callback_url, &stale).await.0, 401);

    let mut wrong_token = event.clone();
    wrong_token["header"]["token"] = json!("someone-elses-token");
    assert_eq!(
        fake.deliver(&replica.callback_url, &fake.seal(&wrong_token))
            .await
            .0,
        401
    );

    // Signed with another app's encrypt key.
    let other = FakeFeishu::start(FakeFeishuConfig {
        encrypt_key: "another-key".into(),
        ..FakeFeishuConfig::default()
    })
    .await
    .expect("other fake");
    assert_eq!(
        other
            .deliver(&replica.callback_url, &other.seal(&event))
            .await
            .0,
        401
    );

    assert_eq!(status(&replica, &id).await, ConfirmationStatus::Pending);
    assert!(!call.is_finished());
    press(
        &fake,
        &replica,
        &id,
        ApprovalDecision::Reject,
        "ou_bob",
        CHAT,
    )
    .await;
    assert!(!call.await.expect("task").tool_ran);
}

#[tokio::test]
async fn wrong_channel_and_out_of_scope_operators_change_nothing() {
    let (fake, replica, call, id) = pending().await;

    let (_, other_chat) = press(
        &fake,
        &replica,
        &id,
        ApprovalDecision::Approve,
        "ou_bob",
        "oc_elsewhere",
    )
    .await;
    assert_eq!(toast(&other_chat).0, "error");
    assert!(
        toast(&other_chat).1.contains("another channel"),
        "{other_chat}"
    );
    assert!(
        other_chat.get("card").is_none(),
        "another channel does not see the request"
    );

    let (_, outsider) = press(
        &fake,
        &replica,
        &id,
        ApprovalDecision::Approve,
        "ou_mallory",
        CHAT,
    )
    .await;
    assert_eq!(toast(&outsider).0, "error");
    assert!(
        toast(&outsider).1.contains("You may not decide"),
        "{outsider}"
    );

    let (_, stranger) = press(
        &fake,
        &replica,
        &id,
        ApprovalDecision::Approve,
        "ou_unknown",
        CHAT,
    )
    .await;
    assert!(
        toast(&stranger).1.contains("not a known approver"),
        "{stranger}"
    );

    assert_eq!(status(&replica, &id).await, ConfirmationStatus::Pending);
    assert!(!call.is_finished());
    replica
        .approvals
        .sweep(&ApprovalsConfig::default())
        .await
        .expect("sweep");
    assert_eq!(
        status(&replica, &id).await,
        ConfirmationStatus::Pending,
        "not overdue"
    );
    call.abort();
}

/// Posts `card` to `chat` as the gate's own bot would, through the Open
/// API with the app's credentials (as an agent's own Feishu tool could);
/// returns the new message's id.
async fn post_as_the_bot(fake: &FakeFeishu, chat: &str, card: &Value) -> String {
    let http = reqwest::Client::new();
    let base = fake.base_url();
    let token: Value = http
        .post(format!(
            "{base}/open-apis/auth/v3/tenant_access_token/internal"
        ))
        .json(&json!({"app_id": fake.config().app_id, "app_secret": fake.config().app_secret}))
        .send()
        .await
        .expect("token")
        .json()
        .await
        .expect("token JSON");
    let token = token["tenant_access_token"].as_str().expect("a token");
    let sent: Value = http
        .post(format!(
            "{base}/open-apis/im/v1/messages?receive_id_type=chat_id"
        ))
        .bearer_auth(token)
        .json(&json!({"receive_id": chat, "msg_type": "interactive", "content": card.to_string()}))
        .send()
        .await
        .expect("send")
        .json()
        .await
        .expect("send JSON");
    sent["data"]["message_id"]
        .as_str()
        .expect("a message id")
        .to_owned()
}

/// A card the same app posts in the approval chat with the gate's very
/// buttons decides nothing: only a press on the card the gate recorded
/// counts.
#[tokio::test]
async fn a_look_alike_card_from_the_same_app_decides_nothing() {
    let (fake, replica, call, id) = pending().await;
    let card = fake.sent_cards()[0].clone();
    let look_alike = post_as_the_bot(&fake, CHAT, &card.card).await;
    assert_ne!(look_alike, card.message_id);
    for decision in [ApprovalDecision::Approve, ApprovalDecision::Reject] {
        let (code, reply) = press(&fake, &replica, &id, decision, "ou_bob", CHAT).await;
        assert_eq!(code, 200);
        assert_eq!(toast(&reply).0, "error", "{reply}");
        assert!(
            toast(&reply)
                .1
                .contains("not on the card the approval gate sent"),
            "{reply}"
        );
        assert!(reply.get("card").is_none(), "the look-alike learns nothing");
    }
    assert_eq!(status(&replica, &id).await, ConfirmationStatus::Pending);
    assert!(!call.is_finished());

    let mut on_the_card = CardClick::new(&id, ApprovalDecision::Approve, "ou_bob", CHAT);
    on_the_card.message_id = Some(card.message_id.clone());
    let (_, reply) = fake
        .click(&replica.callback_url, &on_the_card)
        .await
        .expect("the card has Approve");
    assert_eq!(toast(&reply).0, "success", "{reply}");
    assert!(call.await.expect("task").tool_ran);
}

/// An Approve whose value lacks the arguments' digest (a card sent before
/// the rule, or forged) is refused, even from the gate's own card.
#[tokio::test]
async fn an_approve_without_the_arguments_digest_is_refused() {
    let (fake, replica, call, id) = pending().await;
    let click = CardClick::new(&id, ApprovalDecision::Approve, "ou_bob", CHAT);
    let mut event = fake
        .card_action_event(&click)
        .expect("the card has Approve");
    assert_eq!(
        event["event"]["action"]["value"]["digest"],
        replica.stored(&id).await.args_digest
    );
    for (at, digest) in [Value::Null, json!("0".repeat(64))].into_iter().enumerate() {
        event["event"]["action"]["value"]["digest"] = digest;
        event["header"]["event_id"] = json!(format!("forged-{at}"));
        let (code, reply) = fake
            .deliver(&replica.callback_url, &fake.seal(&event))
            .await;
        assert_eq!(code, 200);
        assert!(
            toast(&reply)
                .1
                .contains("not on a card that showed every argument"),
            "{reply}"
        );
    }
    assert_eq!(status(&replica, &id).await, ConfirmationStatus::Pending);
    assert!(!call.is_finished());
    call.abort();
}

/// Arguments too long for one card: the card shows what fits, says so, and
/// offers Reject only; Reject works.
#[tokio::test]
async fn arguments_too_long_for_a_card_can_only_be_rejected_from_it() {
    let fake = fake().await;
    let replica = in_memory_replica(&fake, ORG_SCOPE()).await;
    let memo = "pay ".repeat(10_000);
    let args = json!({"amount": 5, "memo": memo, "payee": "the part that matters"});
    let call = start(
        &replica,
        hooks_testkit::gate::gated_call_with("c1", "finance-bot", "alice", args),
    );
    let id = card_sent(&fake, 1).await;
    let shown = fake.sent_cards()[0].card.to_string();
    assert!(shown.contains("too long to show here in full"), "{shown}");
    assert!(!shown.contains("the part that matters"));
    let approve = CardClick::new(&id, ApprovalDecision::Approve, "ou_bob", CHAT);
    assert!(
        fake.card_action_event(&approve).is_err(),
        "no Approve button"
    );
    let (_, reply) = press(
        &fake,
        &replica,
        &id,
        ApprovalDecision::Reject,
        "ou_bob",
        CHAT,
    )
    .await;
    assert_eq!(toast(&reply).0, "success", "{reply}");
    assert!(!call.await.expect("task").tool_ran);
    assert_eq!(status(&replica, &id).await, ConfirmationStatus::Rejected);
}

/// Two approvals from people other than the requester: the requester's is
/// refused, the first is counted and the card redrawn with the progress
/// (buttons kept), a second press by the same person counts nothing, and
/// the second approver's press runs the call once.
#[tokio::test]
async fn two_approvers_other_than_the_requester_are_needed() {
    let fake = fake().await;
    let gate = json!({"approver_scope": "org_members", "timeout": "30s",
                      "approvals": 2, "exclude_requester": true});
    let replica = in_memory_replica(&fake, gate).await;
    let call = start(&replica, gated_call("c1", 60_000));
    let id = card_sent(&fake, 1).await;
    let approve =
        async |who: &str| press(&fake, &replica, &id, ApprovalDecision::Approve, who, CHAT).await;
    let (_, reply) = approve("ou_alice").await;
    assert_eq!(toast(&reply).0, "error", "{reply}");
    assert!(
        toast(&reply).1.contains("You asked for this call"),
        "{reply}"
    );

    let (_, reply) = approve("ou_bob").await;
    assert_eq!(toast(&reply).0, "success", "{reply}");
    assert!(toast(&reply).1.contains("needs 1 more approval"), "{reply}");
    assert!(
        has_buttons(&reply["card"]["data"]),
        "still pending: {reply}"
    );
    assert!(
        reply["card"]
            .to_string()
            .contains("1 of 2 approvals (by bob)"),
        "{reply}"
    );
    assert!(!call.is_finished());
    let (_, reply) = approve("ou_bob").await;
    assert!(toast(&reply).1.contains("already approved"), "{reply}");
    assert_eq!(status(&replica, &id).await, ConfirmationStatus::Pending);

    let (_, reply) = approve("ou_carol").await;
    assert_eq!(toast(&reply).0, "success", "{reply}");
    assert!(!has_buttons(&reply["card"]["data"]), "{reply}");
    assert!(
        reply["card"]
            .to_string()
            .contains("2 of 2 approvals (by bob, carol)"),
        "{reply}"
    );
    let report = tokio::time::timeout(Duration::from_secs(5), call)
        .await
        .expect("the second approval wakes the gate")
        .expect("task");
    assert!(report.tool_ran);
    assert_eq!(replica.stored(&id).await.approved_by, ["bob", "carol"]);
}

/// `approvals` out of range is a config error that says what is allowed.
#[tokio::test]
async fn an_impossible_quorum_is_refused() {
    let fake = fake().await;
    let channel = FeishuChannel::new(fake.feishu_config(CHAT)).expect("channel");
    let approvals = Approvals::start(
        ConfirmationStore::new(Database::in_memory().await.expect("db")),
        Arc::new(channel),
        Arc::new(directory()),
        ApprovalsConfig::default(),
    );
    for approvals_needed in [0, 11] {
        let error =
            ApprovalGate::from_config(approvals.clone(), &json!({"approvals": approvals_needed}))
                .err()
                .expect("refused");
        assert!(
            error.to_string().contains("must be from 1 to 10"),
            "{error}"
        );
    }
    // Scopes of named people too small for the quorum.
    for config in [
        json!({"approvals": 2}),
        json!({"exclude_requester": true}),
        json!({"approvals": 2, "approver_scope": "allowlist", "approvers": ["bob"]}),
        json!({"approvals": 3, "approvers": ["bob"], "exclude_requester": true}),
    ] {
        let error = ApprovalGate::from_config(approvals.clone(), &config)
            .err()
            .unwrap_or_else(|| panic!("{config} is refused"));
        assert!(
            error.to_string().contains("could ever be approved"),
            "{error}"
        );
    }
    for config in [
        json!({"approvals": 2, "approvers": ["bob"]}),
        json!({"approvals": 2, "approver_scope": "org_members", "exclude_requester": true}),
    ] {
        if let Err(error) = ApprovalGate::from_config(approvals.clone(), &config) {
            panic!("{config}: {error}");
        }
    }
}

#[tokio::test]
async fn the_initiator_scope_admits_only_the_initiator_and_the_allowlist() {
    let fake = fake().await;
    let gate = json!({"timeout": "30s", "approvers": ["mallory"]});
    let replica = in_memory_replica(&fake, gate).await;
    let call = start(&replica, gated_call("c1", 60_000));
    let id = card_sent(&fake, 1).await;
    let (_, bob) = press(
        &fake,
        &replica,
        &id,
        ApprovalDecision::Approve,
        "ou_bob",
        CHAT,
    )
    .await;
    assert_eq!(
        toast(&bob).0,
        "error",
        "bob is in the org but not the initiator"
    );
    let (_, mallory) = press(
        &fake,
        &replica,
        &id,
        ApprovalDecision::Approve,
        "ou_mallory",
        CHAT,
    )
    .await;
    assert_eq!(toast(&mallory).0, "success", "the allowlist admits mallory");
    assert!(call.await.expect("task").tool_ran);
}

#[tokio::test]
async fn a_replayed_delivery_is_refused() {
    let (fake, replica, call, id) = pending().await;
    let mut click = CardClick::new(&id, ApprovalDecision::Reject, "ou_mallory", CHAT);
    click.event_id = Some("evt-replayed".into());
    let sealed = fake.seal(&fake.card_action_event(&click).expect("event"));
    let (_, first) = fake.deliver(&replica.callback_url, &sealed).await;
    assert!(toast(&first).1.contains("You may not decide"), "{first}");
    // The same event id again, even re-signed and from someone in scope.
    let mut again = CardClick::new(&id, ApprovalDecision::Reject, "ou_bob", CHAT);
    again.event_id = Some("evt-replayed".into());
    let (_, second) = fake
        .click(&replica.callback_url, &again)
        .await
        .expect("click");
    assert_eq!(toast(&second), ("info", "This click was already handled."));
    assert_eq!(status(&replica, &id).await, ConfirmationStatus::Pending);
    call.abort();
}

#[tokio::test]
async fn malformed_and_random_bodies_get_a_4xx_and_change_nothing() {
    let (_fake, replica, call, id) = pending().await;
    let http = reqwest::Client::new();
    let mut seed = 0x2545_f491_4f6c_dd1d_u64;
    let mut bodies: Vec<Vec<u8>> = vec![
        b"".to_vec(),
        b"{}".to_vec(),
        b"null".to_vec(),
        b"{\"encrypt\": 5}".to_vec(),
        b"{\"encrypt\": \"!!!not base64\"}".to_vec(),
        b"{\"encrypt\": \"AAAA\"}".to_vec(),
        br#"{"challenge": "x", "token": "fake-verification-token", "type": "url_verification"}"#
            .to_vec(),
        br#"{"open_id": "ou_bob", "open_message_id": "om_1", "action": {"value": {}}}"#.to_vec(),
        vec![0xff; 100_000],
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
    for body in bodies {
        let response = http
            .post(&replica.callback_url)
            .header("content-type", "application/json")
            .body(body.clone())
            .send()
            .await
            .expect("the router answers");
        let code = response.status().as_u16();
        assert!(
            (400..500).contains(&code),
            "{code} for a {}-byte body",
            body.len()
        );
    }
    assert_eq!(status(&replica, &id).await, ConfirmationStatus::Pending);
    assert!(!call.is_finished());
    call.abort();
}

#[tokio::test]
async fn url_verification_answers_the_challenge() {
    let fake = fake().await;
    let replica = in_memory_replica(&fake, ORG_SCOPE()).await;
    let (code, body) = fake.url_verification(&replica.callback_url, "ch-123").await;
    assert_eq!((code, body), (200, json!({"challenge": "ch-123"})));
}

#[tokio::test]
async fn an_unavailable_database_blocks() {
    let fake = fake().await;
    let database = Database::in_memory().await.unwrap();
    let replica = replica(
        &fake,
        database.clone(),
        ORG_SCOPE(),
        Duration::from_secs(60),
    )
    .await;
    database.close().await;
    let report = start(&replica, gated_call("c1", 60_000))
        .await
        .expect("task");
    assert!(!report.tool_ran);
    let reason = report.observation.to_string();
    assert!(
        reason.starts_with("Blocked by hook `approval_gate`"),
        "{reason}"
    );
    assert!(reason.contains("could not record the request"), "{reason}");
    assert!(fake.sent_cards().is_empty());
}

#[tokio::test]
async fn an_undelivered_card_blocks_and_cancels_the_request() {
    let fake = fake().await;
    let replica = in_memory_replica(&fake, ORG_SCOPE()).await;
    fake.fail_next_sends(1);
    let report = start(&replica, gated_call("c1", 60_000))
        .await
        .expect("task");
    assert!(!report.tool_ran);
    let reason = report.observation.to_string();
    assert!(reason.contains("approval card not delivered"), "{reason}");
    let key_request = replica
        .approvals
        .store()
        .by_key("6:conv-1:c1")
        .await
        .expect("read")
        .expect("request");
    assert_eq!(key_request.status, ConfirmationStatus::Cancelled);
}

/// A pending request outlives a dropped runtime; a decision made while the
/// gate was gone is honoured when the call is re-run, without a second card.
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

    // Process 1: the call starts waiting, then the process dies.
    let first = runtime();
    let id = first.block_on(async {
        let replica = url_replica(&fake, &url).await;
        let call = start(&replica, gated_call("c1", 60_000));
        let id = card_sent(&fake, 1).await;
        card_stored(&replica, &id).await;
        std::mem::forget(call);
        std::mem::forget(replica);
        id
    });
    first.shutdown_background();

    // Meanwhile another process takes the decision through its callback router.
    let second = runtime();
    second.block_on(async {
        let replica = url_replica(&fake, &url).await;
        assert_eq!(
            status(&replica, &id).await,
            ConfirmationStatus::Pending,
            "the row outlived its runtime"
        );
        let (_, reply) = press(
            &fake,
            &replica,
            &id,
            ApprovalDecision::Approve,
            "ou_bob",
            CHAT,
        )
        .await;
        assert_eq!(toast(&reply).0, "success", "{reply}");
    });
    drop(second);

    // Process 3: the agent re-runs the same tool call and resumes the request.
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
        assert_eq!(fake.sent_cards().len(), 1, "no second card");
    });
}

/// SQLite replicas share a file but no notifications: the fallback poll wakes
/// the gate on replica A after replica B records the decision.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_decision_on_another_sqlite_replica_wakes_the_gate_through_the_poll() {
    let fake = fake().await;
    let (database, url, _dir) = support::sqlite_file().await;
    let a = replica(&fake, database, ORG_SCOPE(), Duration::from_millis(200)).await;
    let b = url_replica(&fake, &url).await;
    let call = start(&a, gated_call("c1", 60_000));
    let id = card_sent(&fake, 1).await;
    press(&fake, &b, &id, ApprovalDecision::Approve, "ou_bob", CHAT).await;
    let report = tokio::time::timeout(Duration::from_secs(3), call)
        .await
        .expect("the poll wakes the gate")
        .expect("task");
    assert!(report.tool_ran);
}

/// PostgreSQL replicas: the decision taken by B reaches A through
/// LISTEN/NOTIFY. A's poll is set to a minute, so only the notification can
/// wake it within the deadline.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_decision_on_replica_b_wakes_the_gate_on_replica_a_postgres() {
    let Some(url) = support::postgres_url("a_decision_on_replica_b_wakes_the_gate_on_replica_a")
    else {
        return;
    };
    let fake = fake().await;
    let a = url_replica(&fake, &url).await;
    let b = url_replica(&fake, &url).await;
    // Give A's listener a moment to subscribe.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let conversation = support::unique("conv");
    let ctx = gated_call("c1", 60_000).with_conversation(&conversation);
    let call = start(&a, ctx);
    let id = card_sent(&fake, 1).await;
    let started = std::time::Instant::now();
    let (_, reply) = press(&fake, &b, &id, ApprovalDecision::Approve, "ou_bob", CHAT).await;
    assert_eq!(toast(&reply).0, "success", "{reply}");
    let report = tokio::time::timeout(Duration::from_secs(5), call)
        .await
        .expect("NOTIFY wakes the gate on the other replica")
        .expect("task");
    assert!(report.tool_ran);
    assert!(started.elapsed() < Duration::from_secs(5));
}

#[tokio::test]
async fn the_gate_builds_by_name_from_config() {
    let fake = fake().await;
    let replica = in_memory_replica(&fake, ORG_SCOPE()).await;
    let resources = hooks_runtime::factory::Resources::new()
        .with(hooks_std::APPROVALS, replica.approvals.clone());
    let config =
        json!({"when": "args.amount > 50000", "timeout": "200ms", "approver_scope": "org_members"});
    let built = hooks_std::build_std_hook("approval_gate", &config, &resources).expect("gate");
    assert!(
        built.ask_handler.is_some(),
        "the gate takes \"ask\" decisions"
    );
    let registry = support::add(HookRegistry::builder(), built)
        .build()
        .expect("registry");
    let small = HookContext::tool_call("oa__purchase_pay", json!({"amount": 10}));
    let report = registry
        .run_tool_call(small, async |_: &Value| Ok::<_, String>(json!("paid")))
        .await;
    assert!(report.tool_ran, "under the threshold, no approval needed");
    let big = HookContext::tool_call("oa__purchase_pay", json!({"amount": 50000.5}));
    let report = registry
        .run_tool_call(big, async |_: &Value| Ok::<_, String>(json!("paid")))
        .await;
    assert!(
        report
            .observation
            .to_string()
            .contains("timed out after 200ms"),
        "{}",
        report.observation
    );

    for bad in [
        json!({"timeout": "soon"}),
        json!({"when": "args.amount >"}),
        json!({"approver_scope": "everyone"}),
        json!({"aprovers": []}),
    ] {
        let error = hooks_std::build_std_hook("approval_gate", &bad, &resources)
            .err()
            .expect("an error");
        assert!(error.to_string().contains("approval_gate"), "{error}");
    }
}

/// An approval covers one run of exactly the call it was asked for.
#[tokio::test]
async fn a_rerun_after_approval_is_blocked() {
    let (fake, replica, call, id) = pending().await;
    press(
        &fake,
        &replica,
        &id,
        ApprovalDecision::Approve,
        "ou_bob",
        CHAT,
    )
    .await;
    assert!(call.await.expect("task").tool_ran);
    for (amount, expected) in [
        // The same tool call replayed (a crash-retry, a reused tool call id).
        (60_000, "already used"),
        // The same tool call id, now for a bigger amount.
        (9_000_000, "arguments differ"),
    ] {
        let rerun = start(&replica, gated_call("c1", amount))
            .await
            .expect("task");
        assert!(!rerun.tool_ran);
        let observation = rerun.observation.to_string();
        assert!(observation.contains(expected), "{observation}");
    }
    assert_eq!(fake.sent_cards().len(), 1, "no second card");
}

#[tokio::test]
async fn any_truthy_requires_confirmation_flag_gates_the_call() {
    let fake = fake().await;
    let database = Database::in_memory().await.expect("db");
    let replica = replica(
        &fake,
        database,
        json!({"timeout": "100ms"}),
        Duration::from_secs(60),
    )
    .await;
    for (i, flag) in [json!(true), json!("true"), json!(1), json!("yes")]
        .into_iter()
        .enumerate()
    {
        let ctx = HookContext::tool_call("t", json!({}))
            .with_metadata("requires_confirmation", flag.clone());
        let report = start(&replica, ctx.with_tool_call_id(format!("t{i}")))
            .await
            .expect("task");
        assert!(!report.tool_ran, "{flag} must gate the call");
    }
    for flag in [json!(false), json!("false"), json!(0), json!(null)] {
        let ctx = HookContext::tool_call("t", json!({}))
            .with_metadata("requires_confirmation", flag.clone());
        assert!(
            start(&replica, ctx).await.expect("task").tool_ran,
            "{flag} must not gate"
        );
    }
}

#[tokio::test]
async fn the_sweeper_only_touches_its_own_channel() {
    let fake = fake().await;
    let database = Database::in_memory().await.expect("db");
    let gate = json!({"approver_scope": "org_members", "timeout": "50ms"});
    let ours = replica(&fake, database.clone(), gate, Duration::from_secs(60)).await;
    // Another channel (another chat) on the same database, with a request of its own.
    let theirs_channel = FeishuChannel::new(fake.feishu_config("oc_other")).expect("channel");
    let theirs = Approvals::start(
        ConfirmationStore::new(database.clone()),
        Arc::new(theirs_channel),
        Arc::new(directory()),
        ApprovalsConfig::default(),
    );
    let store = theirs.store().clone();
    let (foreign, _) = store
        .create(&hooks_std::approval_gate::NewConfirmation {
            idempotency_key: "foreign".into(),
            tool_name: "t".into(),
            args: json!({}),
            args_digest: "d".into(),
            agent_id: String::new(),
            initiator_user_id: String::new(),
            org_id: String::new(),
            approver_scope: Default::default(),
            approver_allowlist: vec![],
            channel_kind: "feishu".into(),
            channel_id: "oc_other".into(),
            mode: ConfirmationMode::Metadata,
            timeout: Duration::from_millis(10),
            quorum: hooks_std::approval_gate::Quorum::default(),
        })
        .await
        .expect("create");
    tokio::time::sleep(Duration::from_millis(50)).await;
    let report = ours
        .approvals
        .sweep(&ApprovalsConfig::default())
        .await
        .expect("sweep");
    assert_eq!(report.expired, 0);
    assert_eq!(
        status(&ours, &foreign.id).await,
        ConfirmationStatus::Pending
    );
    let report = theirs
        .sweep(&ApprovalsConfig::default())
        .await
        .expect("sweep");
    assert_eq!(report.expired, 1);
}

#[tokio::test]
async fn arguments_with_nul_characters_are_gated_on_postgres_too() {
    let Some(url) = support::postgres_url("arguments_with_nul_characters") else {
        return;
    };
    let fake = fake().await;
    let replica = replica(
        &fake,
        Database::connect(&url).await.unwrap(),
        json!({"timeout": "100ms"}),
        Duration::from_secs(60),
    )
    .await;
    let ctx = gated_call("c1", 1)
        .with_conversation(support::unique("nul"))
        .with_metadata("requires_confirmation", true);
    let mut ctx = ctx;
    ctx.tool_args = json!({"q": "a\u{0}b"});
    let report = start(&replica, ctx).await.expect("task");
    assert!(
        report.observation.to_string().contains("timed out"),
        "stored and waited, not a storage error: {}",
        report.observation
    );
}

// --- Concurrency and storage failure (issue 11) ---

/// Starts `runs` concurrent runs of the same tool call (same conversation and
/// tool call id), spread over `replicas`; each counts its tool's executions in
/// `ran`.
fn race(
    replicas: &[&Replica],
    runs: usize,
    ctx: &HookContext,
    ran: &Arc<std::sync::atomic::AtomicUsize>,
) -> Vec<JoinHandle<ToolCallReport>> {
    (0..runs)
        .map(|i| {
            let registry = replicas[i % replicas.len()].registry.clone();
            let (ctx, ran) = (ctx.clone(), ran.clone());
            tokio::spawn(async move {
                registry
                    .run_tool_call(ctx, async |_: &Value| {
                        ran.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                        Ok::<_, String>(json!("paid"))
                    })
                    .await
            })
        })
        .collect()
}

/// Eight concurrent runs of one conversation + tool call id on two replicas:
/// one card; a run with other arguments is blocked; one approval pays once,
/// and every other run is blocked saying the approval was already used.
async fn one_card_per_tool_call(a: &Replica, b: &Replica, fake: &FakeFeishu, conversation: &str) {
    let ctx = gated_call("c1", 60_000).with_conversation(conversation);
    let ran = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let runs = race(&[a, b], 8, &ctx, &ran);
    let id = card_sent(fake, 1).await;
    // Give every run time to reach the request (and to send a card, if it would).
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(fake.sent_cards().len(), 1, "one card per tool call");

    let other_args = start(
        a,
        gated_call("c1", 9_000_000).with_conversation(conversation),
    )
    .await
    .expect("task");
    assert!(!other_args.tool_ran);
    let observation = other_args.observation.to_string();
    assert!(observation.contains("arguments differ"), "{observation}");
    assert!(observation.contains(&id), "{observation}");

    assert!(
        runs.iter().all(|run| !run.is_finished()),
        "all wait for a person"
    );
    let (_, reply) = press(fake, b, &id, ApprovalDecision::Approve, "ou_bob", CHAT).await;
    assert_eq!(toast(&reply).0, "success", "{reply}");
    let mut paid = 0;
    for run in runs {
        let report = tokio::time::timeout(Duration::from_secs(5), run)
            .await
            .expect("every run resolves")
            .expect("task");
        if report.tool_ran {
            paid += 1;
        } else {
            let observation = report.observation.to_string();
            assert!(observation.contains("already used"), "{observation}");
        }
    }
    assert_eq!(paid, 1, "one approval runs its call once");
    assert_eq!(ran.load(std::sync::atomic::Ordering::SeqCst), 1);
    assert_eq!(fake.sent_cards().len(), 1, "still one card");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_runs_of_one_tool_call_send_one_card_sqlite() {
    let fake = fake().await;
    let (database, url, _dir) = support::sqlite_file().await;
    let a = replica(&fake, database, ORG_SCOPE(), Duration::from_millis(100)).await;
    let b = replica(
        &fake,
        Database::connect(&url).await.expect("db"),
        ORG_SCOPE(),
        Duration::from_millis(100),
    )
    .await;
    one_card_per_tool_call(&a, &b, &fake, "conv-1").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_runs_of_one_tool_call_send_one_card_postgres() {
    let Some(url) = support::postgres_url("concurrent_runs_of_one_tool_call_send_one_card") else {
        return;
    };
    let fake = fake().await;
    let a = url_replica(&fake, &url).await;
    let b = url_replica(&fake, &url).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    one_card_per_tool_call(&a, &b, &fake, &support::unique("conv")).await;
}

/// Waits until the gate has stored the card's reference (its last write
/// before it waits), so a lock taken next only meets the click.
async fn card_stored(replica: &Replica, id: &str) {
    for _ in 0..500 {
        let request = replica.approvals.store().get(id).await.expect("read");
        if request.is_some_and(|request| request.message_ref.is_some()) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("the gate never stored the card reference of {id}");
}

/// A connection outside the gate's pool that holds SQLite's write lock until
/// the returned sender fires (or is dropped).
async fn hold_write_lock(url: &str) -> tokio::sync::oneshot::Sender<()> {
    use sqlx::Connection;
    let mut holder = sqlx::SqliteConnection::connect(url)
        .await
        .expect("second connection");
    sqlx::query("BEGIN EXCLUSIVE")
        .execute(&mut holder)
        .await
        .expect("write lock");
    let (release, released) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(async move {
        let _ = released.await;
        sqlx::query("COMMIT")
            .execute(&mut holder)
            .await
            .expect("release the lock");
    });
    release
}

/// A replica on a SQLite file whose writers give up on a lock after `busy`.
async fn sqlite_replica_with_busy_timeout(
    fake: &FakeFeishu,
    busy: Duration,
) -> (Replica, String, tempfile::TempDir) {
    let dir = tempfile::tempdir().expect("dir");
    let url = format!("sqlite://{}", dir.path().join("gate.db").display());
    let options = hooks_std::DatabaseOptions {
        busy_timeout: busy,
        ..hooks_std::DatabaseOptions::default()
    };
    let database = Database::connect_with(&url, &options).await.expect("db");
    let replica = replica(fake, database, ORG_SCOPE(), Duration::from_secs(60)).await;
    (replica, url, dir)
}

/// The database is locked by another writer when the click arrives and frees
/// up a second later: the decision is retried until it is recorded (within
/// the platform's reply window), the approver is told so, and the gate resumes.
/// The pool gives up on a lock after 100 ms, so only retrying records it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_click_during_a_short_sqlite_lock_is_retried_until_recorded() {
    let fake = fake().await;
    let (replica, url, _dir) =
        sqlite_replica_with_busy_timeout(&fake, Duration::from_millis(100)).await;
    let call = start(&replica, gated_call("c1", 60_000));
    let id = card_sent(&fake, 1).await;
    card_stored(&replica, &id).await;
    let release = hold_write_lock(&url).await;
    let releaser = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_secs(1)).await;
        let _ = release.send(());
    });
    let started = std::time::Instant::now();
    let (code, reply) = press(
        &fake,
        &replica,
        &id,
        ApprovalDecision::Approve,
        "ou_bob",
        CHAT,
    )
    .await;
    assert_eq!(code, 200, "{reply}");
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "answered within the window"
    );
    assert_eq!(toast(&reply), ("success", "Approved."), "{reply}");
    releaser.await.expect("released");
    let report = tokio::time::timeout(Duration::from_secs(5), call)
        .await
        .expect("the decision wakes the gate")
        .expect("task");
    assert!(report.tool_ran, "{}", report.observation);
    assert_eq!(status(&replica, &id).await, ConfirmationStatus::Approved);
}

/// The database stays locked past the platform's reply window: the approver
/// is told the decision failed (so they click again), and it is not recorded
/// later behind their back — not even when the lock goes away just after.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_click_that_cannot_be_recorded_in_time_is_answered_failed_and_changes_nothing() {
    let fake = fake().await;
    // The pool's own busy timeout (5 s) outlasts the reply window.
    let (replica, url, _dir) =
        sqlite_replica_with_busy_timeout(&fake, Duration::from_secs(5)).await;
    let call = start(&replica, gated_call("c1", 60_000));
    let id = card_sent(&fake, 1).await;
    card_stored(&replica, &id).await;
    let release = hold_write_lock(&url).await;
    let click = CardClick::new(&id, ApprovalDecision::Approve, "ou_bob", CHAT);
    let sealed = fake.seal(&fake.card_action_event(&click).expect("event"));
    let started = std::time::Instant::now();
    let (code, reply) = fake.deliver(&replica.callback_url, &sealed).await;
    assert_eq!(code, 200, "{reply}");
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "answered within the window"
    );
    let (kind, message) = toast(&reply);
    assert_eq!(kind, "error", "{reply}");
    assert!(message.contains("could not be recorded"), "{reply}");
    assert!(message.contains("try again"), "{reply}");
    // Hold the lock a little past the platform's 3 s, then let go.
    tokio::time::sleep(Duration::from_millis(3500).saturating_sub(started.elapsed())).await;
    let _ = release.send(());
    tokio::time::sleep(Duration::from_millis(700)).await;
    assert_eq!(
        status(&replica, &id).await,
        ConfirmationStatus::Pending,
        "an answer of 'failed' means nothing changed"
    );
    assert!(!call.is_finished(), "the gate still waits");
    // The platform's retry of the same delivery is not taken for a replay:
    // its event id was not recorded either.
    let (_, retried) = fake.deliver(&replica.callback_url, &sealed).await;
    assert_eq!(toast(&retried), ("success", "Approved."), "{retried}");
    let report = tokio::time::timeout(Duration::from_secs(5), call)
        .await
        .expect("the decision wakes the gate")
        .expect("task");
    assert!(report.tool_ran, "{}", report.observation);
}

/// A model that writes the amount as a string does not slip under the
/// threshold: `{"amount": "60000"}` is gated by `args.amount > 50000`.
#[tokio::test]
async fn an_amount_written_as_a_string_is_gated() {
    let fake = fake().await;
    let gate =
        json!({"when": "args.amount > 50000", "approver_scope": "org_members", "timeout": "30s"});
    let replica = in_memory_replica(&fake, gate).await;
    let ctx = HookContext::tool_call(
        "oa__purchase_pay",
        json!({"amount": "60000", "payee": "ACME Ltd"}),
    )
    .with_conversation("conv-1")
    .with_tool_call_id("c1")
    .with_user("alice")
    .with_org("acme");
    let ran = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let call = race(&[&replica], 1, &ctx, &ran).remove(0);
    let id = card_sent(&fake, 1).await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(!call.is_finished(), "the payment waits for a person");
    assert_eq!(ran.load(std::sync::atomic::Ordering::SeqCst), 0);
    press(
        &fake,
        &replica,
        &id,
        ApprovalDecision::Approve,
        "ou_bob",
        CHAT,
    )
    .await;
    let report = call.await.expect("task");
    assert!(report.tool_ran, "{}", report.observation);
    assert_eq!(ran.load(std::sync::atomic::Ordering::SeqCst), 1);
}

/// A connection outside the gate's pool that holds PostgreSQL's row lock on
/// request `id` until the returned sender fires.
async fn hold_row_lock(url: &str, id: &str) -> tokio::sync::oneshot::Sender<()> {
    use sqlx::Connection;
    let mut holder = sqlx::PgConnection::connect(url)
        .await
        .expect("second connection");
    sqlx::query("BEGIN")
        .execute(&mut holder)
        .await
        .expect("begin");
    sqlx::query("SELECT id FROM confirmation_requests WHERE id = $1 FOR UPDATE")
        .bind(id)
        .execute(&mut holder)
        .await
        .expect("row lock");
    let (release, released) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(async move {
        let _ = released.await;
        sqlx::query("COMMIT")
            .execute(&mut holder)
            .await
            .expect("release the lock");
    });
    release
}

/// PostgreSQL: a click whose row is locked by another transaction for a
/// second is recorded once the lock goes; one locked past the reply window
/// is answered "could not be recorded" and rolled back, and the platform's
/// retry of the same delivery then records it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_click_while_the_request_row_is_locked_postgres() {
    let Some(url) = support::postgres_url("a_click_while_the_request_row_is_locked") else {
        return;
    };
    let fake = fake().await;
    let replica = url_replica(&fake, &url).await;
    let conversation = support::unique("conv");

    let call = start(
        &replica,
        gated_call("c1", 60_000).with_conversation(&conversation),
    );
    let id = card_sent(&fake, 1).await;
    card_stored(&replica, &id).await;
    let release = hold_row_lock(&url, &id).await;
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_secs(1)).await;
        let _ = release.send(());
    });
    let (_, reply) = press(
        &fake,
        &replica,
        &id,
        ApprovalDecision::Approve,
        "ou_bob",
        CHAT,
    )
    .await;
    assert_eq!(toast(&reply), ("success", "Approved."), "{reply}");
    let report = tokio::time::timeout(Duration::from_secs(5), call)
        .await
        .expect("woken")
        .expect("task");
    assert!(report.tool_ran, "{}", report.observation);

    let call = start(
        &replica,
        gated_call("c2", 60_000).with_conversation(&conversation),
    );
    let id = card_sent(&fake, 2).await;
    card_stored(&replica, &id).await;
    let release = hold_row_lock(&url, &id).await;
    let click = CardClick::new(&id, ApprovalDecision::Approve, "ou_bob", CHAT);
    let sealed = fake.seal(&fake.card_action_event(&click).expect("event"));
    let started = std::time::Instant::now();
    let (_, reply) = fake.deliver(&replica.callback_url, &sealed).await;
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "answered within the window"
    );
    assert_eq!(toast(&reply).0, "error", "{reply}");
    assert!(toast(&reply).1.contains("could not be recorded"), "{reply}");
    tokio::time::sleep(Duration::from_millis(3500).saturating_sub(started.elapsed())).await;
    let _ = release.send(());
    tokio::time::sleep(Duration::from_millis(700)).await;
    assert_eq!(status(&replica, &id).await, ConfirmationStatus::Pending);
    assert!(!call.is_finished());
    let (_, retried) = fake.deliver(&replica.callback_url, &sealed).await;
    assert_eq!(toast(&retried), ("success", "Approved."), "{retried}");
    assert!(call.await.expect("task").tool_ran);
}

/// The card of a tool call raced by four runs cannot be delivered: one send
/// is attempted, the request is cancelled, and every run is blocked at once
/// (not when the 30 s deadline passes).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_undelivered_card_blocks_every_concurrent_run_at_once() {
    let fake = fake().await;
    let replica = in_memory_replica(&fake, ORG_SCOPE()).await;
    fake.fail_next_sends(4);
    let ran = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let runs = race(&[&replica], 4, &gated_call("c1", 60_000), &ran);
    for run in runs {
        let report = tokio::time::timeout(Duration::from_secs(5), run)
            .await
            .expect("blocked at once")
            .expect("task");
        assert!(!report.tool_ran);
        let observation = report.observation.to_string();
        assert!(
            observation.contains("approval card not delivered")
                || observation.contains("was cancelled"),
            "{observation}"
        );
    }
    assert_eq!(ran.load(std::sync::atomic::Ordering::SeqCst), 0);
    assert_eq!(
        fake.message_requests(),
        1,
        "one send attempted for one tool call"
    );
}

/// A channel whose cards take `delay` to send (a slow platform), delivering
/// through the fake Feishu after it.
struct SlowChannel {
    inner: FeishuChannel,
    delay: Duration,
}

impl Channel for SlowChannel {
    fn kind(&self) -> &'static str {
        self.inner.kind()
    }

    fn channel_id(&self) -> &str {
        self.inner.channel_id()
    }

    fn send_card<'a>(&'a self, request: &'a ConfirmationRequest) -> ChannelFuture<'a, String> {
        Box::pin(async move {
            tokio::time::sleep(self.delay).await;
            self.inner.send_card(request).await
        })
    }

    fn update_card<'a>(&'a self, request: &'a ConfirmationRequest) -> ChannelFuture<'a, ()> {
        self.inner.update_card(request)
    }

    fn verify_callback(&self, raw: RawCallback<'_>) -> Result<Callback, CallbackError> {
        self.inner.verify_callback(raw)
    }

    fn callback_reply(&self, reply: CallbackReply<'_>) -> Value {
        self.inner.callback_reply(reply)
    }
}

/// Card delivery that takes as long as the whole timeout does not extend
/// the wait: the call is blocked at the deadline stored with the request
/// (not the deadline plus the delivery time), with the gate's own reason,
/// and the request is expired rather than left pending for the sweeper.
#[tokio::test]
async fn slow_card_delivery_does_not_extend_the_deadline() {
    let fake = fake().await;
    let channel = SlowChannel {
        inner: FeishuChannel::new(fake.feishu_config(CHAT)).expect("feishu channel"),
        // Delivery takes as long as the whole wait: a wait that started
        // after it would end 3 s late, which a loaded machine cannot hide.
        delay: Duration::from_secs(3),
    };
    let approvals = Approvals::start(
        ConfirmationStore::new(Database::in_memory().await.expect("db")),
        Arc::new(channel),
        Arc::new(directory()),
        ApprovalsConfig {
            poll_interval: Duration::from_secs(60),
            ..ApprovalsConfig::default()
        },
    );
    let gate = json!({"approver_scope": "org_members", "timeout": "3s"});
    let hook = ApprovalGate::from_config(approvals.clone(), &gate).expect("gate config");
    let registry = HookRegistry::builder().pre(hook).build().expect("registry");

    let began = std::time::Instant::now();
    let report = registry
        .run_tool_call(gated_call("c1", 60_000), async |_: &Value| {
            Ok::<_, String>(json!("paid"))
        })
        .await;
    let took = began.elapsed();
    assert!(!report.tool_ran);
    assert_eq!(
        report.observation.to_string(),
        "Blocked by hook `approval_gate`: timed out after 3s waiting for confirmation"
    );
    assert!(
        took < Duration::from_secs(5),
        "the wait ends at the stored deadline (3 s), not 3 s after a 3 s delivery: took {took:?}"
    );
    let request = approvals
        .store()
        .by_key("6:conv-1:c1")
        .await
        .expect("read")
        .expect("request");
    assert_eq!(request.status, ConfirmationStatus::Expired);
    assert!(
        request.decided_at_ms.expect("expired at") <= request.expires_at_ms + 1000,
        "expired at its deadline: {request:?}"
    );
    assert_eq!(fake.sent_cards().len(), 1, "the card was delivered once");
}
