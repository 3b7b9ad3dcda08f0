//! Helpers of the approval gate's tests: callback routers on loopback, what
//! a factory built in a registry, a redrawn card's look.

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
