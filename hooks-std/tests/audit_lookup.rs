//! Reading a conversation's audit rows back: whole, in order, each row once,
//! while other conversations write; look-alike conversation ids stay
//! apart; and a database written by the previous release (migrations 1–8,
//! when the log was filed by triggers into side tables) opens, migrates to
//! the plain `(conversation_id, id)` index and keeps every row.

mod support;

use std::sync::Arc;

use hooks_runtime::{HookContext, HookRegistry, Observation};
use hooks_std::approval_gate::{ConfirmationStatus, ConfirmationStore};
use hooks_std::readonly_guard::DatabaseOrgModes;
use hooks_std::{AuditLog, Database};
use serde_json::{Value, json};

/// Checks that `conversation` reads back exactly its `calls` rows,
/// `call-0` up, in the order written, and counts them.
async fn reads_back_whole(database: &Database, conversation: &str, calls: usize) {
    let rows = database.audit_entries(conversation).await.expect("read");
    let expected: Vec<String> = (0..calls).map(|call| format!("call-{call}")).collect();
    let read: Vec<&str> = rows.iter().map(|row| row.tool_call_id.as_str()).collect();
    assert_eq!(read, expected, "conversation {conversation:?}");
    assert!(rows.windows(2).all(|pair| pair[0].id < pair[1].id));
    // Stored text holds no NUL (PostgreSQL's cannot): it is kept as U+FFFD.
    let stored = conversation.replace('\0', "\u{FFFD}");
    assert!(rows.iter().all(|row| row.conversation_id == stored));
    let counted = database.audit_count(conversation).await.expect("count");
    assert_eq!(counted, calls as i64, "conversation {conversation:?}");
}

/// A registry with the audit log on `database`.
fn audited(database: &Database) -> HookRegistry {
    HookRegistry::builder()
        .observer(Arc::new(AuditLog::new(database.clone())))
        .build()
        .expect("registry")
}

/// Runs call `call` of `conversation` through `registry`; the audit row is
/// committed when it returns.
async fn call(registry: &HookRegistry, conversation: &str, call: usize) {
    let ctx = HookContext::tool_call("crm__lookup", json!({"call": call}))
        .with_conversation(conversation)
        .with_tool_call_id(format!("call-{call}"));
    let report = registry
        .run_tool_call(ctx, async |_: &Value| Ok::<_, String>(json!("found")))
        .await;
    assert!(!matches!(report.observation, Observation::Withheld { .. }));
}

/// 32 conversations calling at once through the audit log, and a reader
/// while they write: each read is one snapshot, so a conversation's count
/// never goes back (a row missed) or past what was written (a row seen
/// twice), and in the end every conversation reads back whole.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_conversations_read_back_whole() {
    let (database, _url, _dir) = support::sqlite_file().await;
    let registry = audited(&database);
    let (conversations, calls) = (32, 140);
    let callers: Vec<_> = (0..conversations)
        .map(|conversation| {
            let registry = registry.clone();
            tokio::spawn(async move {
                for n in 0..calls {
                    call(&registry, &format!("conv-{conversation}"), n).await;
                }
            })
        })
        .collect();
    let reader = {
        let database = database.clone();
        tokio::spawn(async move {
            let (mut seen, mut reads) = (0, 0);
            while seen < calls {
                let rows = database.audit_entries("conv-0").await.expect("read");
                assert!(rows.windows(2).all(|pair| pair[0].id < pair[1].id));
                assert!(rows.len() >= seen && rows.len() <= calls);
                seen = rows.len();
                let counted = database.audit_count("conv-0").await.expect("count");
                assert!(counted as usize >= seen && counted as usize <= calls);
                reads += 1;
            }
            reads
        })
    };
    for caller in callers {
        caller.await.expect("caller");
    }
    assert!(reader.await.expect("reader") > 1, "read during the writes");
    for conversation in 0..conversations {
        reads_back_whole(&database, &format!("conv-{conversation}"), calls).await;
    }
    assert_eq!(database.audit_count("conv-none").await.expect("count"), 0);
}

/// Conversation ids that differ only in case, a trailing space, a look-alike
/// letter, or that read as SQL or patterns, stay apart: each reads back its
/// own rows and no one else's.
#[tokio::test]
async fn look_alike_conversation_ids_stay_apart() {
    let database = Database::in_memory().await.expect("database");
    let registry = audited(&database);
    let ids = [
        "conv",
        "Conv",
        "conv ",
        "\u{441}onv",
        "conv%",
        "conv_",
        "conv' OR '1'='1",
        "conv\0",
        "",
    ];
    for n in 0..5 {
        for id in ids {
            call(&registry, id, n).await;
        }
    }
    for id in ids {
        reads_back_whole(&database, id, 5).await;
    }
    assert_eq!(database.audit_count("conv%%").await.expect("count"), 0);
}

/// A copy of the database the previous release wrote (kept as a fixture:
/// 4,100 audit rows over `conv-0` and `conv-1`, 4,096 of them filed into
/// the side tables migration 0007 made; three confirmation requests; one
/// handled callback event; org `acme` read-only), opened by this release.
#[tokio::test]
async fn a_database_from_the_previous_release_keeps_every_row() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let path = dir.path().join("hooks.db");
    std::fs::copy(
        concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/upgrade_0008.db"
        ),
        &path,
    )
    .expect("copy the fixture");
    let url = format!("sqlite://{}", path.display());
    let database = Database::connect(&url).await.expect("opens and migrates");
    let pool = database.sqlite().expect("SQLite");

    // The filing is gone; the index is back.
    let tables: Vec<String> = sqlx::query_scalar(
        "SELECT name FROM sqlite_master WHERE name LIKE 'connector_call_logs%' ORDER BY name",
    )
    .fetch_all(pool)
    .await
    .expect("schema");
    assert_eq!(
        tables,
        [
            "connector_call_logs",
            "connector_call_logs_by_conversation",
            "connector_call_logs_by_org"
        ],
        "the side tables and triggers are dropped, the index made"
    );
    let plan: Vec<(i64, i64, i64, String)> = sqlx::query_as(
        "EXPLAIN QUERY PLAN SELECT id FROM connector_call_logs \
         WHERE conversation_id = ?1 ORDER BY id",
    )
    .bind("conv-0")
    .fetch_all(pool)
    .await
    .expect("plan");
    assert!(
        plan.iter()
            .all(|(.., step)| step.contains("connector_call_logs_by_conversation")),
        "{plan:?}"
    );

    // Every row, filed or not, reads back in order, and new rows append.
    reads_back_whole(&database, "conv-0", 2050).await;
    reads_back_whole(&database, "conv-1", 2050).await;
    let total: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM connector_call_logs")
        .fetch_one(pool)
        .await
        .expect("count");
    assert_eq!(total, 4100);
    let registry = audited(&database);
    for n in 2050..2060 {
        call(&registry, "conv-1", n).await;
    }
    reads_back_whole(&database, "conv-1", 2060).await;
    reads_back_whole(&database, "conv-0", 2050).await;

    // The gate's requests and events, and the org's mode, are as they were.
    let store = ConfirmationStore::new(database.clone());
    let pending = store
        .by_key("conv-0:pending")
        .await
        .expect("read")
        .expect("the pending request");
    assert_eq!(pending.status, ConfirmationStatus::Pending);
    assert_eq!(pending.message_ref.as_deref(), Some("om_pending"));
    let approved = store
        .by_key("conv-0:approved")
        .await
        .expect("read")
        .expect("the approved request");
    assert_eq!(approved.status, ConfirmationStatus::Approved);
    assert_eq!(approved.decided_by.as_deref(), Some("cfo"));
    assert!(
        store
            .stamp_used(&approved.id)
            .await
            .expect("stamp")
            .is_none(),
        "its approval was used before the upgrade, and stays used"
    );
    let rejected = store
        .by_key("conv-1:rejected")
        .await
        .expect("read")
        .expect("the rejected request");
    assert_eq!(rejected.status, ConfirmationStatus::Rejected);
    assert_eq!(rejected.reason.as_deref(), Some("too much"));
    assert!(store.event_seen("evt-1").await.expect("event"));
    assert!(
        !store.record_event("evt-1", "feishu").await.expect("event"),
        "a replay of an event handled before the upgrade is still a replay"
    );
    let modes = DatabaseOrgModes::new(database.clone());
    assert!(modes.fetch("acme").await.expect("mode"));

    // The upgraded request is still decidable, once.
    let hooks_std::approval_gate::DecideOutcome::Decided(decided) = store
        .decide(
            &pending.id,
            hooks_std::approval_gate::ApprovalDecision::Approve,
            "cfo",
            None,
        )
        .await
        .expect("decide")
    else {
        panic!("the pending request is decided");
    };
    assert_eq!(decided.status, ConfirmationStatus::Approved);
}
