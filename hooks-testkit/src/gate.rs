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

/// Serves `router` (a channel's callback router) at `path` on a fresh
/// port; returns its URL and the server task.
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
    /// Where the platform (the fake) posts button presses.
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
/// acme in conversation `conv-1`, flagged as needing confirmation.
pub fn gated_call(call_id: &str, amount: u64) -> hooks_runtime::HookContext {
    hooks_runtime::HookContext::tool_call(
        "oa__purchase_pay",
        serde_json::json!({"amount": amount, "payee": "ACME Ltd"}),
    )
    .with_conversation("conv-1")
    .with_tool_call_id(call_id)
    .with_agent("finance-bot")
    .with_user("alice")
    .with_org("acme")
    .with_metadata("requires_confirmation", true)
}
