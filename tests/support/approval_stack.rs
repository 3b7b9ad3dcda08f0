//! The approval resources the front-end tests (`hooks serve`, `hooks
//! mcp-proxy`) give their agents: an in-memory database, the approval gate
//! answering through a fake Feishu whose callbacks reach a local endpoint,
//! and the org modes.
#![allow(dead_code, unreachable_pub)]

use std::sync::Arc;

use hooks::factory::Resources;
use hooks::std_hooks::approval_gate::channel::feishu::FeishuChannel;
use hooks::std_hooks::approval_gate::{
    Approvals, ApprovalsConfig, ConfirmationStore, StaticDirectory,
};
use hooks::std_hooks::{APPROVALS, DATABASE, Database, ORG_MODES, OrgModeSource, StaticOrgModes};
use hooks_testkit::feishu::{FakeFeishu, FakeFeishuConfig};

/// The chat the approval cards go to.
pub const CHAT: &str = "oc_ops_approvals";
/// The approver's Feishu open id (wang.fang of acme).
pub const APPROVER: &str = "ou_7d8a6e6df7621556ce0d21922b676706";

/// The resources, the database behind them, the fake Feishu and the URL its
/// button presses are posted to.
pub async fn resources() -> (Resources, Database, FakeFeishu, String) {
    let database = Database::connect("sqlite::memory:")
        .await
        .expect("database");
    let feishu = FakeFeishu::start(FakeFeishuConfig::default())
        .await
        .expect("fake feishu");
    let approvals = Approvals::start(
        ConfirmationStore::new(database.clone()),
        Arc::new(FeishuChannel::new(feishu.feishu_config(CHAT)).expect("channel")),
        Arc::new(StaticDirectory::new().person("feishu", APPROVER, "wang.fang", "acme")),
        ApprovalsConfig::default(),
    );
    let callbacks = axum::Router::new().nest("/feishu/callback", approvals.router());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let callback_url = format!(
        "http://{}/feishu/callback",
        listener.local_addr().expect("addr")
    );
    tokio::spawn(async move { axum::serve(listener, callbacks).await });
    feishu.url_verification(&callback_url, "challenge").await;
    let modes: Arc<dyn OrgModeSource> = Arc::new(StaticOrgModes::new());
    let resources = Resources::new()
        .with(DATABASE, database.clone())
        .with(APPROVALS, approvals)
        .with(ORG_MODES, modes);
    (resources, database, feishu, callback_url)
}
