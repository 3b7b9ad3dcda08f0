//! What the approvals page reads from a signed-in operator's browser: the
//! decide form, the JSON decide body and the list's query, sent to the
//! page's own router for a fresh pending request each time (its arguments
//! long enough that the page cuts them). In the fuzzed text `CSRF` stands
//! for the operator's CSRF token, so that the decoders past that check are
//! reached. Beyond not failing: the request is approved only by a body
//! that holds its exact arguments digest, since nobody saw them whole.

#![no_main]

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, LazyLock};
use std::time::Duration;

use axum::body::Body;
use axum::http::{Request, StatusCode};
use hooks_std::Database;
use hooks_std::approval_gate::channel::web::{
    AuthError, AuthFuture, AuthRequest, OperatorAuth, WebApprovals, WebChannel, WebConfig,
};
use hooks_std::approval_gate::{
    Approvals, ApprovalsConfig, ApproverScope, ConfirmationMode, ConfirmationStatus,
    ConfirmationStore, NewConfirmation, StaticDirectory, args_digest,
};
use libfuzzer_sys::fuzz_target;
use serde_json::{Value, json};
use tower::ServiceExt as _;

/// Every request is alice's, signed in.
struct Alice;

impl OperatorAuth for Alice {
    fn identify(&self, _: AuthRequest<'_>) -> Result<Option<String>, AuthError> {
        Ok(Some("alice".to_owned()))
    }

    fn has_login(&self) -> bool {
        false
    }

    fn login<'a>(&'a self, _: &'a str, _: &'a str) -> AuthFuture<'a, Option<String>> {
        Box::pin(async { None })
    }
}

struct Page {
    router: axum::Router,
    store: ConfirmationStore,
    csrf: String,
}

static RUNTIME: LazyLock<tokio::runtime::Runtime> = LazyLock::new(|| {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("a runtime")
});

static PAGE: LazyLock<Page> = LazyLock::new(|| {
    RUNTIME.block_on(async {
        let database = Database::in_memory().await.expect("a database");
        let channel = WebChannel::new("approvals");
        let approvals = Approvals::start(
            ConfirmationStore::new(database.clone()),
            Arc::new(channel.clone()),
            Arc::new(StaticDirectory::new().person("web", "alice", "alice", "acme")),
            ApprovalsConfig::default(),
        );
        let web = WebApprovals::new(approvals, channel, Arc::new(Alice), WebConfig::default())
            .expect("the page");
        let router = web.router();
        let list = router
            .clone()
            .oneshot(
                Request::get("/api/requests")
                    .body(Body::empty())
                    .expect("a request"),
            )
            .await
            .expect("the list");
        let bytes = axum::body::to_bytes(list.into_body(), 1 << 20)
            .await
            .expect("the list's body");
        let list: Value = serde_json::from_slice(&bytes).expect("the list is JSON");
        let csrf = list["csrf_token"]
            .as_str()
            .expect("a CSRF token")
            .to_owned();
        Page {
            router,
            store: ConfirmationStore::new(database),
            csrf,
        }
    })
});

static CALLS: AtomicU64 = AtomicU64::new(0);

async fn pending(store: &ConfirmationStore) -> (String, String) {
    let n = CALLS.fetch_add(1, Ordering::Relaxed);
    let args = json!({"amount": 90_000, "memo": "x".repeat(3000), "pay_to": "acct-7"});
    let digest = args_digest("oa__purchase_pay", &args);
    let (request, _) = store
        .create(&NewConfirmation {
            idempotency_key: format!("fuzz:{n}"),
            tool_name: "oa__purchase_pay".to_owned(),
            args,
            args_digest: digest.clone(),
            agent_id: "billing-agent".to_owned(),
            initiator_user_id: "bob".to_owned(),
            org_id: "acme".to_owned(),
            approver_scope: ApproverScope::OrgMembers,
            approver_allowlist: Vec::new(),
            channel_kind: "web".to_owned(),
            channel_id: "approvals".to_owned(),
            mode: ConfirmationMode::Metadata,
            timeout: Duration::from_secs(600),
            quorum: hooks_std::approval_gate::Quorum::default(),
        })
        .await
        .expect("a pending request");
    (request.id, digest)
}

async fn send(router: &axum::Router, request: Request<Body>) -> StatusCode {
    router
        .clone()
        .oneshot(request)
        .await
        .expect("an answer")
        .status()
}

fuzz_target!(|data: &[u8]| {
    let page = &*PAGE;
    let text = String::from_utf8_lossy(data).replace("CSRF", &page.csrf);
    RUNTIME.block_on(async {
        let (id, digest) = pending(&page.store).await;
        let form = Request::post(format!("/requests/{id}/decide"))
            .header("content-type", "application/x-www-form-urlencoded")
            .body(Body::from(text.clone()))
            .expect("a request");
        let status = send(&page.router, form).await;
        assert!(status != StatusCode::INTERNAL_SERVER_ERROR, "{text:?}");
        let api = Request::post(format!("/api/requests/{id}/decide"))
            .header("content-type", "application/json")
            .header("x-csrf-token", page.csrf.as_str())
            .body(Body::from(text.clone()))
            .expect("a request");
        let status = send(&page.router, api).await;
        assert!(status != StatusCode::INTERNAL_SERVER_ERROR, "{text:?}");
        let list = Request::get(format!("/api/requests?{text}"))
            .body(Body::empty())
            .map(|request| send(&page.router, request));
        if let Ok(list) = list {
            let _ = list.await;
        }

        let decided = page
            .store
            .get(&id)
            .await
            .expect("the store")
            .expect("the request");
        if decided.status == ConfirmationStatus::Approved {
            assert!(
                text.contains(&digest),
                "approved without its arguments digest: {text:?}"
            );
        }
    });
});
