//! Approval callbacks: what someone who can reach the callback URL (or who
//! sits in another chat, or is not in scope) sends to approve a payment, and
//! the one click that may.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use axum::Router;
use hooks::std_hooks::gate::channel::feishu::{
    CardClick, FakeFeishu, FakeFeishuConfig, FeishuChannel, SignedCallback, signature,
};
use hooks::std_hooks::gate::{
    Approvals, ApprovalsConfig, ConfirmationStore, Decision, StaticDirectory,
};
use hooks::std_hooks::readonly::{OrgModeSource, StaticOrgModes};
use hooks::std_hooks::{APPROVALS, DATABASE, Database, ORG_MODES};
use hooks::{
    Agent,
    config::{AgentConfig, ConfigFormat},
    factory::Resources,
};
use serde_json::{Value, json};

const CHAT: &str = "oc_finance";

fn now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_secs() as i64)
}

#[tokio::test]
async fn only_a_genuine_click_in_scope_decides() {
    let feishu = FakeFeishu::start(FakeFeishuConfig::default())
        .await
        .expect("fake Feishu");
    let other_app = FakeFeishu::start(FakeFeishuConfig {
        encrypt_key: "another app's key".to_owned(),
        ..FakeFeishuConfig::default()
    })
    .await
    .expect("second fake");
    let database = Database::in_memory().await.expect("database");
    let approvals = Approvals::start(
        ConfirmationStore::new(database.clone()),
        Arc::new(FeishuChannel::new(feishu.feishu_config(CHAT)).expect("channel")),
        Arc::new(
            StaticDirectory::new()
                .person("feishu", "ou_alice", "alice", "acme")
                .person("feishu", "ou_bob", "bob", "acme"),
        ),
        ApprovalsConfig::default(),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let url = format!("http://{}/cb", listener.local_addr().expect("addr"));
    let app = Router::new().nest("/cb", approvals.router());
    tokio::spawn(async move { axum::serve(listener, app).await });
    let modes: Arc<dyn OrgModeSource> = Arc::new(StaticOrgModes::new());
    let resources = Resources::new()
        .with(DATABASE, database)
        .with(APPROVALS, approvals)
        .with(ORG_MODES, modes);
    let config = AgentConfig::parse(
        "agent: payer\nrequire_confirmation_for_all: true\n",
        ConfigFormat::Yaml,
        "bypass.yaml",
        None,
    )
    .expect("config");
    let agent = Agent::build(config, &resources).expect("agent");

    // Alice's agent asks to pay; only Alice (the initiator) may approve.
    let paid = Arc::new(AtomicUsize::new(0));
    let counter = paid.clone();
    let pending = tokio::spawn(async move {
        let ctx = agent
            .context("oa__pay", json!({"amount": 60000, "payee": "acme"}))
            .with_user("alice")
            .with_org("acme")
            .with_conversation("c-1")
            .with_tool_call_id("call-1");
        agent
            .call_tool(ctx, async move |_: &Value| {
                counter.fetch_add(1, Ordering::SeqCst);
                Ok::<_, String>(json!("paid"))
            })
            .await
    });
    let card = feishu
        .wait_for_card(1, Duration::from_secs(5))
        .await
        .expect("a card");
    let id = card.request_id().expect("request id").to_owned();
    let genuine = feishu
        .card_action_event(&CardClick::new(&id, Decision::Approve, "ou_alice", CHAT))
        .expect("event");

    let mut hostile: Vec<(&str, SignedCallback)> = Vec::new();
    hostile.push(("signed with another app's key", other_app.seal(&genuine)));
    let mut tampered = feishu.seal(&genuine);
    let at = tampered.body.len() - 3;
    tampered.body[at] ^= 1;
    hostile.push(("a body byte flipped", tampered));
    let mut guessed = feishu.seal(&genuine);
    guessed.signature = signature(&guessed.timestamp, &guessed.nonce, "guess", &guessed.body);
    hostile.push(("a guessed signature", guessed));
    let mut unsigned = feishu.seal(&genuine);
    unsigned.signature = String::new();
    hostile.push(("no signature", unsigned));
    hostile.push(("an hour old", feishu.seal_at(&genuine, now() - 3600)));
    hostile.push(("from the future", feishu.seal_at(&genuine, now() + 3600)));
    let mut wrong_token = genuine.clone();
    wrong_token["header"]["token"] = json!("not-the-token");
    hostile.push(("a wrong verification token", feishu.seal(&wrong_token)));
    let from_elsewhere = feishu
        .card_action_event(&CardClick::new(
            &id,
            Decision::Approve,
            "ou_alice",
            "oc_other",
        ))
        .expect("event");
    hostile.push(("pressed in another chat", feishu.seal(&from_elsewhere)));
    let by_bob = feishu
        .card_action_event(&CardClick::new(&id, Decision::Approve, "ou_bob", CHAT))
        .expect("event");
    hostile.push(("pressed by someone out of scope", feishu.seal(&by_bob)));
    let by_stranger = feishu
        .card_action_event(&CardClick::new(&id, Decision::Approve, "ou_mallory", CHAT))
        .expect("event");
    hostile.push(("pressed by someone unknown", feishu.seal(&by_stranger)));

    for (why, callback) in &hostile {
        let (status, reply) = feishu.deliver(&url, callback).await;
        assert!(
            status >= 400 || reply.to_string().contains("error"),
            "{why}: answered {status} {reply}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert!(!pending.is_finished(), "{why} decided the request");
    }
    assert_eq!(paid.load(Ordering::SeqCst), 0);

    // The genuine click decides, once; its replay changes nothing.
    let sealed = feishu.seal(&genuine);
    let (status, _) = feishu.deliver(&url, &sealed).await;
    assert_eq!(status, 200);
    let report = tokio::time::timeout(Duration::from_secs(5), pending)
        .await
        .expect("the approval wakes the call")
        .expect("task");
    assert!(report.tool_ran, "{}", report.observation);
    let (status, reply) = feishu.deliver(&url, &sealed).await;
    assert!(
        status >= 400 || reply["toast"]["content"] == json!("This click was already handled."),
        "a replay is not a second approval: {status} {reply}"
    );
    assert_eq!(paid.load(Ordering::SeqCst), 1, "the payment ran once");
}
