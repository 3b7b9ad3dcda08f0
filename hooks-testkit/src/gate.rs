//! The one harness of the approval gate's suites, whatever the channel: a
//! [`Replica`] (the gate, its approvals and its callback server), the
//! suites' gated payment, callback routers on loopback, what a factory
//! built in a registry, a redrawn card's look.

use hooks_runtime::HookRegistryBuilder;
use hooks_runtime::factory::{Built, BuiltItem};
use hooks_std::approval_gate::Approvals;

/// Adds what a factory built (a hook or an observer) to `builder`.
pub fn add(builder: HookRegistryBuilder, built: Built) -> HookRegistryBuilder {
    match built.item {
        BuiltItem::Hook(hook) => builder.hook(hook),
        BuiltItem::Observer(observer) => builder.observer(observer),
    }
}

/// The last card redrawn on `fake` shows an outcome: no buttons left.
pub fn assert_last_card_update_has_no_buttons(fake: &crate::feishu::FakeFeishu) {
    let (_, card) = fake.card_updates().pop().expect("the card was redrawn");
    assert!(!card.to_string().contains("\"button\""), "{card}");
}

/// Serves `approvals`' callback router at `path` on a loopback port, as a
/// platform would reach it: the callback URL and the server's task.
pub async fn serve_callbacks(
    approvals: &Approvals,
    path: &str,
) -> (String, tokio::task::JoinHandle<()>) {
    serve_router(approvals.router(), path).await
}

/// Serves `router` (a channel's callback router, or the approvals page) at
/// `path` on a fresh port, peer addresses recorded; returns its URL and the
/// server task.
pub async fn serve_router(
    router: axum::Router,
    path: &str,
) -> (String, tokio::task::JoinHandle<()>) {
    let app = axum::Router::new().nest(path, router);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let url = format!("http://{}{path}", listener.local_addr().expect("addr"));
    let server = tokio::spawn(async move {
        let app = app.into_make_service_with_connect_info::<std::net::SocketAddr>();
        axum::serve(listener, app).await.expect("serve");
    });
    (url, server)
}

/// One "replica" of a gate suite: the gate in a registry, its approvals
/// machinery and its callback server on loopback. Dropping it stops the
/// server.
pub struct Replica {
    /// The machinery the gate parks calls in.
    pub approvals: Approvals,
    /// A registry holding the gate alone.
    pub registry: hooks_runtime::HookRegistry,
    /// Where its router is served: the platform (the fake) posts button
    /// presses there; for the web channel, the approvals page.
    pub callback_url: String,
    server: tokio::task::JoinHandle<()>,
}

impl Drop for Replica {
    fn drop(&mut self) {
        self.server.abort();
    }
}

impl Replica {
    /// Starts approvals on `channel` and `database` with `directory` and
    /// the store polled every `poll`, builds the gate from its config
    /// `gate`, and serves the callback router at `path`.
    pub async fn start(
        channel: std::sync::Arc<dyn hooks_std::approval_gate::channel::Channel>,
        directory: hooks_std::approval_gate::StaticDirectory,
        database: hooks_std::Database,
        gate: &serde_json::Value,
        poll: std::time::Duration,
        path: &str,
    ) -> Replica {
        let approvals = Approvals::start(
            hooks_std::approval_gate::ConfirmationStore::new(database),
            channel,
            std::sync::Arc::new(directory),
            hooks_std::approval_gate::ApprovalsConfig {
                poll_interval: poll,
                ..hooks_std::approval_gate::ApprovalsConfig::default()
            },
        );
        Replica::serve(approvals, gate, path).await
    }

    /// Builds the gate from `gate` on `approvals` and serves their callback
    /// router at `path`.
    pub async fn serve(approvals: Approvals, gate: &serde_json::Value, path: &str) -> Replica {
        let hook = hooks_std::approval_gate::ApprovalGate::from_config(approvals.clone(), gate)
            .expect("gate config");
        let registry = hooks_runtime::HookRegistry::builder()
            .pre(hook)
            .build()
            .expect("registry");
        let (callback_url, server) = serve_callbacks(&approvals, path).await;
        Replica {
            approvals,
            registry,
            callback_url,
            server,
        }
    }

    /// A replica from parts built elsewhere (a gate's own builder): its
    /// callback `router` is served at `path`.
    pub async fn from_parts(
        approvals: Approvals,
        registry: hooks_runtime::HookRegistry,
        router: axum::Router,
        path: &str,
    ) -> Replica {
        let (callback_url, server) = serve_router(router, path).await;
        Replica {
            approvals,
            registry,
            callback_url,
            server,
        }
    }

    /// Runs `ctx` through the gate in the background; the tool returns
    /// "paid".
    pub fn start_call(
        &self,
        ctx: hooks_runtime::HookContext,
    ) -> tokio::task::JoinHandle<hooks_runtime::ToolCallReport> {
        let registry = self.registry.clone();
        tokio::spawn(async move {
            registry
                .run_tool_call(ctx, async |_: &serde_json::Value| {
                    Ok::<_, String>(serde_json::json!("paid"))
                })
                .await
        })
    }

    /// The stored request `id`.
    pub async fn stored(&self, id: &str) -> hooks_std::approval_gate::ConfirmationRequest {
        self.approvals
            .store()
            .get(id)
            .await
            .expect("read")
            .expect("request")
    }
}

/// The gate's config that lets any member of the caller's org approve,
/// with a 30 s deadline.
pub fn org_scope() -> serde_json::Value {
    serde_json::json!({"approver_scope": "org_members", "timeout": "30s"})
}

/// The gate suites' payment: `oa__purchase_pay` of `amount` by alice of
/// acme through finance-bot in conversation `conv-1`, flagged as needing
/// confirmation.
pub fn gated_call(call_id: &str, amount: u64) -> hooks_runtime::HookContext {
    let args = serde_json::json!({"amount": amount, "payee": "ACME Ltd"});
    gated_call_with(call_id, "finance-bot", "alice", args)
}

/// A payment (`oa__purchase_pay` with `args`) by `agent` for `user` of acme
/// in conversation `conv-1`, flagged as needing confirmation.
pub fn gated_call_with(
    call_id: &str,
    agent: &str,
    user: &str,
    args: serde_json::Value,
) -> hooks_runtime::HookContext {
    hooks_runtime::HookContext::tool_call("oa__purchase_pay", args)
        .with_conversation("conv-1")
        .with_tool_call_id(call_id)
        .with_agent(agent)
        .with_user(user)
        .with_org("acme")
        .with_metadata("requires_confirmation", true)
}

/// A pending request as a channel is asked to show it: `id` (key
/// `conv-1:{id}`) for `tool_name` with `args`, made by `initiator` of acme
/// through billing-agent, any org member may decide, posted to
/// `channel_kind`/`channel_id`, created at 2023-11-14 22:13:20 UTC and due
/// ten minutes later. Change any field on the result.
pub fn pending_request(
    id: &str,
    tool_name: &str,
    args: serde_json::Value,
    initiator: &str,
    (channel_kind, channel_id): (&str, &str),
) -> hooks_std::approval_gate::ConfirmationRequest {
    use hooks_std::approval_gate::{
        ApproverScope, ConfirmationMode, ConfirmationRequest, ConfirmationStatus,
    };
    ConfirmationRequest {
        id: id.to_owned(),
        idempotency_key: format!("conv-1:{id}"),
        tool_name: tool_name.to_owned(),
        args,
        args_digest: "digest".to_owned(),
        agent_id: "billing-agent".to_owned(),
        initiator_user_id: initiator.to_owned(),
        org_id: "acme".to_owned(),
        approver_scope: ApproverScope::OrgMembers,
        approver_allowlist: Vec::new(),
        channel_kind: channel_kind.to_owned(),
        channel_id: channel_id.to_owned(),
        mode: ConfirmationMode::Metadata,
        status: ConfirmationStatus::Pending,
        created_at_ms: 1_700_000_000_000,
        expires_at_ms: 1_700_000_600_000,
        decided_at_ms: None,
        decided_by: None,
        reason: None,
        message_ref: None,
        consumed_at_ms: None,
        approvals_required: 1,
        exclude_requester: false,
        approved_by: Vec::new(),
    }
}

/// The approver of an [`ApprovalStack`]: wang.fang of acme, by Feishu open id.
pub const STACK_APPROVER: &str = "ou_7d8a6e6df7621556ce0d21922b676706";

/// What an agent's tests give it for approvals: an in-memory SQLite
/// database, the approval gate's machinery posting to `chat` on a fake
/// Feishu whose presses reach a callback endpoint on loopback (its URL
/// verified), [`STACK_APPROVER`] in the directory, and static org modes.
pub struct ApprovalStack {
    /// The database, the approvals and the org modes, under the standard
    /// hooks' resource keys.
    pub resources: hooks_runtime::factory::Resources,
    /// The database behind them.
    pub database: hooks_std::Database,
    /// The fake Feishu the cards go to.
    pub feishu: crate::feishu::FakeFeishu,
    /// Where the fake's button presses are posted.
    pub callback_url: String,
}

impl ApprovalStack {
    /// Starts the stack with cards going to `chat`.
    pub async fn start(chat: &str) -> Self {
        use hooks_std::approval_gate::channel::feishu::FeishuChannel;
        use hooks_std::approval_gate::{ApprovalsConfig, ConfirmationStore, StaticDirectory};
        use hooks_std::{APPROVALS, DATABASE, ORG_MODES, OrgModeSource, StaticOrgModes};
        use std::sync::Arc;

        let database = hooks_std::Database::connect("sqlite::memory:")
            .await
            .expect("database");
        let feishu = crate::feishu::FakeFeishu::start(crate::feishu::FakeFeishuConfig::default())
            .await
            .expect("fake feishu");
        let directory =
            StaticDirectory::new().person("feishu", STACK_APPROVER, "wang.fang", "acme");
        let approvals = Approvals::start(
            ConfirmationStore::new(database.clone()),
            Arc::new(FeishuChannel::new(feishu.feishu_config(chat)).expect("channel")),
            Arc::new(directory),
            ApprovalsConfig::default(),
        );
        let (callback_url, _server) = serve_callbacks(&approvals, "/feishu/callback").await;
        feishu.url_verification(&callback_url, "challenge").await;
        let modes: Arc<dyn OrgModeSource> = Arc::new(StaticOrgModes::new());
        let resources = hooks_runtime::factory::Resources::new()
            .with(DATABASE, database.clone())
            .with(APPROVALS, approvals)
            .with(ORG_MODES, modes);
        ApprovalStack {
            resources,
            database,
            feishu,
            callback_url,
        }
    }
}
