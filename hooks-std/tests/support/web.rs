//! The web approvals page on 127.0.0.1, shared by its HTTP and browser tests.

use std::sync::{Arc, OnceLock};

use hooks_runtime::{HookContext, HookRegistry, ToolCallReport};
use hooks_std::Database;
use hooks_std::approval_gate::channel::web::{
    OperatorAuth, TokenAuth, WatchedChannel, WebApprovals, WebChannel, WebConfig,
};
use hooks_std::approval_gate::{
    ApprovalGate, Approvals, ApprovalsConfig, ApproverDirectory, ConfirmationStore, StaticDirectory,
};
use serde_json::{Value, json};
use tokio::task::JoinHandle;

/// Operators (web identities) are the users themselves here: alice and bob
/// of acme, mallory of another org.
pub(crate) fn directory() -> StaticDirectory {
    StaticDirectory::new()
        .person("web", "alice", "alice", "acme")
        .person("web", "bob", "bob", "acme")
        .person("web", "mallory", "mallory", "evil-corp")
}

/// Token auth for alice, bob, mallory and carol (carol is not in the
/// directory); each token is `{operator}-token`. Hashed once: Argon2 is
/// slow on purpose.
pub(crate) fn tokens() -> Arc<TokenAuth> {
    static AUTH: OnceLock<Arc<TokenAuth>> = OnceLock::new();
    AUTH.get_or_init(|| {
        let hash = |token: &str| TokenAuth::hash_token(token).expect("hash");
        Arc::new(
            TokenAuth::new([
                ("alice", hash("alice-token")),
                ("bob", hash("bob-token")),
                ("mallory", hash("mallory-token")),
                ("carol", hash("carol-token")),
            ])
            .expect("token auth"),
        )
    })
    .clone()
}

/// The gate, its approvals and the page (its URL, `.../approvals`, is the
/// replica's `callback_url`: presses land there), served on loopback with
/// peer addresses recorded.
pub(crate) use hooks_testkit::gate::Replica as Page;
pub(crate) use hooks_testkit::gate::{gated_call_with as call_with, org_scope};

pub(crate) async fn page_with(
    database: Database,
    gate: Value,
    auth: Arc<dyn OperatorAuth>,
    config: WebConfig,
) -> Page {
    page_on_channel("approvals", database, gate, auth, config).await
}

/// [`page_with`] on web channel `channel_id` (a shared PostgreSQL database
/// holds other runs' requests: a fresh channel id lists only this run's).
pub(crate) async fn page_on_channel(
    channel_id: &str,
    database: Database,
    gate: Value,
    auth: Arc<dyn OperatorAuth>,
    config: WebConfig,
) -> Page {
    page_with_directory(
        channel_id,
        database,
        gate,
        auth,
        config,
        Arc::new(directory()),
    )
    .await
}

/// [`page_on_channel`] with the approver directory `people`.
pub(crate) async fn page_with_directory(
    channel_id: &str,
    database: Database,
    gate: Value,
    auth: Arc<dyn OperatorAuth>,
    config: WebConfig,
    people: Arc<dyn ApproverDirectory>,
) -> Page {
    let channel = WebChannel::new(channel_id);
    let approvals = Approvals::start(
        ConfirmationStore::new(database),
        Arc::new(channel.clone()),
        people,
        ApprovalsConfig::default(),
    );
    let hook = ApprovalGate::from_config(approvals.clone(), &gate).expect("gate config");
    let registry = HookRegistry::builder().pre(hook).build().expect("registry");
    let web = WebApprovals::new(approvals.clone(), channel, auth, config).expect("web page");
    serve(approvals, registry, &web).await
}

/// Serves `web`'s router at `/approvals` on loopback, peer addresses
/// recorded, beside the gate `registry` on `approvals`.
pub(crate) async fn serve(
    approvals: Approvals,
    registry: HookRegistry,
    web: &WebApprovals,
) -> Page {
    Page::from_parts(approvals, registry, web.router(), "/approvals").await
}

/// A page's settings when it shows alice (only) the requests of Feishu chat
/// `chat`, read-only.
pub(crate) fn watching_feishu_for_alice(chat: &str) -> WebConfig {
    WebConfig {
        watched_channels: vec![WatchedChannel {
            kind: "feishu".into(),
            channel_id: chat.into(),
            viewers: vec!["alice".into()],
        }],
        ..WebConfig::default()
    }
}

/// A page on a fresh in-memory database with token auth.
pub(crate) async fn page() -> Page {
    page_configured(WebConfig::default()).await
}

/// A page on a fresh in-memory database with token auth and `config`.
pub(crate) async fn page_configured(config: WebConfig) -> Page {
    let database = Database::in_memory().await.expect("db");
    page_with(database, org_scope(), tokens(), config).await
}

/// Runs `ctx` through the page's gate in the background.
pub(crate) fn start(page: &Page, ctx: HookContext) -> JoinHandle<ToolCallReport> {
    page.start_call(ctx)
}

/// A gate that asks in a (fake) Feishu chat, on `database`, with its
/// callback router served on loopback: the fake and the gate's replica
/// (which it derefs to).
pub(crate) struct FeishuGate {
    pub(crate) fake: hooks_testkit::feishu::FakeFeishu,
    pub(crate) replica: Page,
}

impl std::ops::Deref for FeishuGate {
    type Target = Page;

    fn deref(&self) -> &Page {
        &self.replica
    }
}

/// A Feishu chat of [`feishu_gate`].
pub(crate) const FEISHU_CHAT: &str = "oc_finance";

/// A gate asking in Feishu chat `chat` of a fake Feishu (bob, `ou_bob`,
/// decides there) on `database`, its callback router served on loopback.
pub(crate) async fn feishu_gate(database: Database, chat: &str) -> FeishuGate {
    use hooks_std::approval_gate::channel::feishu::FeishuChannel;
    use hooks_testkit::feishu::{FakeFeishu, FakeFeishuConfig};
    let fake = FakeFeishu::start(FakeFeishuConfig::default())
        .await
        .expect("fake feishu");
    let channel = FeishuChannel::new(fake.feishu_config(chat)).expect("feishu channel");
    let replica = Page::start(
        Arc::new(channel),
        StaticDirectory::new().person("feishu", "ou_bob", "bob", "acme"),
        database,
        &org_scope(),
        ApprovalsConfig::default().poll_interval,
        "/feishu/callback",
    )
    .await;
    FeishuGate { fake, replica }
}
