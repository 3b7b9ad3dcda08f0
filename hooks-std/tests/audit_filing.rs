//! Reading a conversation's audit rows back at volume. On SQLite the rows
//! are filed by conversation in bulk, every 4,096 rows, and the newest are
//! read from the unfiled tail: whatever the split, a conversation reads back
//! whole, in order, each row once — after filings, across an upgrade of a
//! database written before filing existed, and after rows are deleted.

mod support;

use std::sync::Arc;

use hooks_runtime::{HookContext, HookRegistry, Observation};
use hooks_std::{AuditLogHook, Database};
use serde_json::{Value, json};
use sqlx::SqlitePool;
use sqlx::migrate::Migrator;

/// Rows per filing (the migration's trigger).
const FILING: i64 = 4096;

fn pool(database: &Database) -> &SqlitePool {
    match database {
        Database::Sqlite(pool) => pool,
        Database::Postgres(_) => unreachable!("these tests look inside SQLite's filing"),
    }
}

/// `(through_id, filed entries, rows in the tail)`.
async fn filing_state(database: &Database) -> (i64, i64, i64) {
    sqlx::query_as(
        "SELECT (SELECT through_id FROM connector_call_logs_filed), \
                (SELECT COUNT(*) FROM connector_call_logs_by_conversation), \
                (SELECT COUNT(*) FROM connector_call_logs \
                 WHERE id > (SELECT through_id FROM connector_call_logs_filed))",
    )
    .fetch_one(pool(database))
    .await
    .expect("filing state")
}

/// Appends `rows` audit rows spread over `conversations` conversations
/// (`conv-0`, `conv-1`, …; call ids `call-<n>` counting up within each) in
/// one INSERT statement.
async fn append_rows(database: &Database, rows: i64, conversations: i64, first: i64) {
    sqlx::query(
        "WITH RECURSIVE n(i) AS (SELECT ?1 UNION ALL SELECT i + 1 FROM n WHERE i < ?1 + ?2 - 1) \
         INSERT INTO connector_call_logs (conversation_id, tool_call_id, agent_id, user_id, \
             org_id, surface, tool_name, outcome, args, observation_size, duration_ms) \
         SELECT 'conv-' || (i % ?3), 'call-' || (i / ?3), 'agent', 'alice', 'org', 'api', \
             'crm__lookup', 'ok', '{}', 0, 0 FROM n",
    )
    .bind(first)
    .bind(rows)
    .bind(conversations)
    .execute(pool(database))
    .await
    .expect("append rows");
}

/// Checks that each of `conversations` conversations reads back exactly its
/// `calls` rows, `call-0` up, in the order written, and counts them.
async fn reads_back_whole(database: &Database, conversation: &str, calls: usize) {
    let rows = database.audit_entries(conversation).await.expect("read");
    let expected: Vec<String> = (0..calls).map(|call| format!("call-{call}")).collect();
    let read: Vec<&str> = rows.iter().map(|row| row.tool_call_id.as_str()).collect();
    assert_eq!(read, expected, "conversation {conversation}");
    assert!(rows.windows(2).all(|pair| pair[0].id < pair[1].id));
    assert!(rows.iter().all(|row| row.conversation_id == conversation));
    let counted = database.audit_count(conversation).await.expect("count");
    assert_eq!(counted, calls as i64, "conversation {conversation}");
}

/// Through the audit log itself, 32 conversations calling at once: the
/// writer's batches cross two filings, and every conversation reads back
/// its filed rows and its tail together.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_conversations_read_back_whole_across_filings() {
    let (database, _url, _dir) = support::sqlite_file().await;
    let registry = HookRegistry::builder()
        .observer(Arc::new(AuditLogHook::new(database.clone())))
        .build()
        .expect("registry");
    let conversations = 32;
    let calls = (2 * FILING as usize) / conversations + 7;
    let callers: Vec<_> = (0..conversations)
        .map(|conversation| {
            let registry = registry.clone();
            tokio::spawn(async move {
                for call in 0..calls {
                    let ctx = HookContext::tool_call("crm__lookup", json!({"call": call}))
                        .with_conversation(format!("conv-{conversation}"))
                        .with_tool_call_id(format!("call-{call}"));
                    let report = registry
                        .run_tool_call(ctx, async |_: &Value| Ok::<_, String>(json!("found")))
                        .await;
                    assert!(!matches!(report.observation, Observation::Withheld { .. }));
                }
            })
        })
        .collect();
    // A reader while the filings happen: each read is one snapshot, so a
    // conversation's count never goes back (a row missed) or past what was
    // written (a row seen twice), and its rows never repeat.
    let reader = {
        let database = database.clone();
        tokio::spawn(async move {
            let mut seen = 0;
            let mut reads = 0;
            while seen < calls {
                let rows = database.audit_entries("conv-0").await.expect("read");
                assert!(rows.windows(2).all(|pair| pair[0].id < pair[1].id));
                assert!(
                    rows.len() >= seen && rows.len() <= calls,
                    "{seen} then {}",
                    rows.len()
                );
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
    assert!(
        reader.await.expect("reader") > 1,
        "the reader read during the writes"
    );
    let written = (conversations * calls) as i64;
    assert_eq!(
        filing_state(&database).await,
        (2 * FILING, 2 * FILING, written - 2 * FILING),
        "two filings, the rest in the tail"
    );
    for conversation in 0..conversations {
        reads_back_whole(&database, &format!("conv-{conversation}"), calls).await;
    }
    assert_eq!(database.audit_count("conv-none").await.expect("count"), 0);
    assert!(
        database
            .audit_entries("conv-none")
            .await
            .expect("read")
            .is_empty()
    );
}

/// A single statement crossing the threshold files exactly the rows up to
/// the 4,096th: the rest of the statement's rows stay in the tail.
#[tokio::test]
async fn a_statement_crossing_the_threshold_files_up_to_it() {
    let database = Database::in_memory().await.expect("database");
    append_rows(&database, FILING + 10, 3, 0).await;
    assert_eq!(filing_state(&database).await, (FILING, FILING, 10));
    let per_conversation = |conversation: i64| ((FILING + 10 - conversation + 2) / 3) as usize;
    for conversation in 0..3 {
        reads_back_whole(
            &database,
            &format!("conv-{conversation}"),
            per_conversation(conversation),
        )
        .await;
    }
    // Just under the next threshold nothing more is filed; reaching it files.
    append_rows(&database, FILING - 11, 3, FILING + 10).await;
    assert_eq!(filing_state(&database).await, (FILING, FILING, FILING - 1));
    append_rows(&database, 1, 3, 2 * FILING - 1).await;
    assert_eq!(filing_state(&database).await, (2 * FILING, 2 * FILING, 0));
    for conversation in 0..3 {
        let calls = ((2 * FILING - conversation + 2) / 3) as usize;
        reads_back_whole(&database, &format!("conv-{conversation}"), calls).await;
    }
}

/// Deleting rows (a retention job) takes their filed entries with them, and
/// the conversation reads back what is left, filed and tail alike.
#[tokio::test]
async fn deleted_rows_leave_no_entries() {
    let database = Database::in_memory().await.expect("database");
    append_rows(&database, FILING + 100, 2, 0).await;
    sqlx::query("DELETE FROM connector_call_logs WHERE id <= 1000 OR id > ?1")
        .bind(FILING + 50)
        .execute(pool(&database))
        .await
        .expect("delete");
    assert_eq!(filing_state(&database).await, (FILING, FILING - 1000, 50));
    for conversation in 0..2 {
        let rows = database
            .audit_entries(&format!("conv-{conversation}"))
            .await
            .expect("read");
        assert_eq!(rows.len(), (FILING as usize + 50 - 1000) / 2);
        assert!(
            rows.iter()
                .all(|row| row.id > 1000 && row.id <= FILING + 50)
        );
        assert!(rows.windows(2).all(|pair| pair[0].id < pair[1].id));
    }
    assert_eq!(
        database.audit_count("conv-0").await.expect("count"),
        (FILING - 1000 + 50) / 2
    );
}

/// A database written before filing existed (migrations up to 6, with the
/// old index) is filed by the upgrade: its rows read back whole, and rows
/// written after the upgrade join them.
#[tokio::test]
async fn an_upgraded_database_files_its_existing_rows() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let url = format!("sqlite://{}?mode=rwc", dir.path().join("old.db").display());
    let mut before_filing: Migrator = sqlx::migrate!("./migrations/sqlite");
    before_filing.migrations = before_filing
        .migrations
        .iter()
        .filter(|migration| migration.version < 7)
        .cloned()
        .collect::<Vec<_>>()
        .into();
    let old = SqlitePool::connect(&url).await.expect("old database");
    before_filing.run(&old).await.expect("migrations 1-6");
    sqlx::query(
        "WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 4999) \
         INSERT INTO connector_call_logs (conversation_id, tool_call_id, agent_id, user_id, \
             org_id, surface, tool_name, outcome, args, observation_size, duration_ms) \
         SELECT 'conv-' || (i % 2), 'call-' || (i / 2), 'agent', 'alice', 'org', 'api', \
             'crm__lookup', 'ok', '{}', 0, 0 FROM n",
    )
    .execute(&old)
    .await
    .expect("rows written before the upgrade");
    old.close().await;

    let database = Database::connect(&format!("sqlite://{}", dir.path().join("old.db").display()))
        .await
        .expect("upgraded database");
    assert_eq!(filing_state(&database).await, (5000, 5000, 0));
    reads_back_whole(&database, "conv-0", 2500).await;
    let registry = HookRegistry::builder()
        .observer(Arc::new(AuditLogHook::new(database.clone())))
        .build()
        .expect("registry");
    for call in 2500..2503 {
        let ctx = HookContext::tool_call("crm__lookup", json!({}))
            .with_conversation("conv-0")
            .with_tool_call_id(format!("call-{call}"));
        registry
            .run_tool_call(ctx, async |_: &Value| Ok::<_, String>(json!("found")))
            .await;
    }
    assert_eq!(filing_state(&database).await, (5000, 5000, 3));
    reads_back_whole(&database, "conv-0", 2503).await;
    reads_back_whole(&database, "conv-1", 2500).await;
}

/// Conversation ids that differ only in case, a trailing space, a look-alike
/// letter, or that read as SQL or patterns, stay apart on both sides of a
/// filing: each reads back its own rows and no one else's.
#[tokio::test]
async fn look_alike_conversation_ids_stay_apart() {
    let database = Database::in_memory().await.expect("database");
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
    let rows = FILING as usize + 40;
    let mut insert = String::from(
        "INSERT INTO connector_call_logs (conversation_id, tool_call_id, agent_id, user_id, \
         org_id, surface, tool_name, outcome, args, observation_size, duration_ms) VALUES ",
    );
    for row in 0..rows {
        if row > 0 {
            insert.push_str(", ");
        }
        insert.push_str("(?, ?, 'agent', 'alice', 'org', 'api', 't', 'ok', '{}', 0, 0)");
    }
    let mut query = sqlx::query(&insert);
    for row in 0..rows {
        query = query
            .bind(ids[row % ids.len()])
            .bind(format!("call-{}", row / ids.len()));
    }
    query.execute(pool(&database)).await.expect("insert");
    assert_eq!(filing_state(&database).await, (FILING, FILING, 40));
    for (index, id) in ids.iter().enumerate() {
        reads_back_whole(&database, id, (rows - index).div_ceil(ids.len())).await;
    }
    assert_eq!(database.audit_count("conv%%").await.expect("count"), 0);
}

/// What would hide a row from lookups is refused and changes nothing: a row
/// inserted under a filed id (alone, or replacing a filed row of another
/// conversation), a changed id, deleting the filing mark. What keeps rows
/// findable goes through: a conversation id rewritten by an operator moves
/// the entry, and an entry put there by hand does not stop later filings.
#[tokio::test]
async fn what_would_hide_a_row_is_refused() {
    let database = Database::in_memory().await.expect("database");
    append_rows(&database, FILING + 4, 2, 0).await;
    let pool = pool(&database);
    let columns = "conversation_id, tool_call_id, agent_id, user_id, org_id, surface, \
                   tool_name, outcome, args, observation_size, duration_ms";
    // Each with what its refusal says.
    let refused = [
        (
            format!(
                "DELETE FROM connector_call_logs WHERE id = 7; \
                 INSERT INTO connector_call_logs (id, {columns}) \
                 VALUES (7, 'conv-9', 'c', 'a', 'u', 'o', 'api', 't', 'ok', '{{}}', 0, 0)"
            ),
            "append-only",
        ),
        (
            format!(
                "INSERT OR REPLACE INTO connector_call_logs (id, {columns}) \
                 VALUES (5, 'conv-9', 'c', 'a', 'u', 'o', 'api', 't', 'ok', '{{}}', 0, 0)"
            ),
            "append-only",
        ),
        (
            "UPDATE connector_call_logs SET id = id + 100000 WHERE id = 3".to_owned(),
            "ids never change",
        ),
        (
            "DELETE FROM connector_call_logs_filed".to_owned(),
            "filing mark",
        ),
    ];
    for (sql, says) in &refused {
        let mut tx = pool.begin().await.expect("begin");
        let error = sqlx::raw_sql(sql)
            .execute(&mut *tx)
            .await
            .expect_err("refused");
        assert!(error.to_string().contains(says), "{sql}: {error}");
        tx.rollback().await.expect("rollback");
    }
    assert_eq!(filing_state(&database).await, (FILING, FILING, 4));
    assert!(
        database
            .audit_entries("conv-9")
            .await
            .expect("read")
            .is_empty()
    );
    reads_back_whole(&database, "conv-0", (FILING as usize + 4) / 2).await;
    reads_back_whole(&database, "conv-1", (FILING as usize + 4) / 2).await;

    // An operator moves a filed row and a tail row to another conversation.
    sqlx::query("UPDATE connector_call_logs SET conversation_id = 'moved' WHERE id IN (1, ?1)")
        .bind(FILING + 1)
        .execute(pool)
        .await
        .expect("update");
    let moved = database.audit_entries("moved").await.expect("read");
    assert_eq!(
        moved.iter().map(|row| row.id).collect::<Vec<_>>(),
        [1, FILING + 1]
    );
    assert_eq!(database.audit_count("conv-0").await.expect("count"), 2048);

    // An entry for a row not filed yet, put by hand, does not stop the
    // next filing (nor any write after it).
    sqlx::query(
        "INSERT INTO connector_call_logs_by_conversation (conversation_id, id, tool_call_id) \
         VALUES ('conv-1', ?1, 'call-2049')",
    )
    .bind(FILING + 2)
    .execute(pool)
    .await
    .expect("entry by hand");
    reads_back_whole(&database, "conv-1", (FILING as usize + 4) / 2).await;
    append_rows(&database, FILING, 2, FILING + 4).await;
    assert_eq!(filing_state(&database).await.0, 2 * FILING);
    reads_back_whole(&database, "conv-1", (2 * FILING as usize + 4) / 2).await;
}

/// A group-commit batch that crosses the threshold and fails (one of its
/// rows is refused) is rolled back filing and all; its rows, retried alone,
/// are filed once the threshold is crossed again, each exactly once.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_failed_batch_across_the_threshold_files_nothing_twice() {
    let (database, _url, _dir) = support::sqlite_file().await;
    append_rows(&database, FILING - 30, 1, 0).await;
    support::refuse_audit_rows_of(&database, "t_poison").await;
    let registry = HookRegistry::builder()
        .observer(Arc::new(AuditLogHook::new(database.clone())))
        .build()
        .expect("registry");
    let poisoned = |caller: usize, call: usize| caller.is_multiple_of(8) && call == 1;
    let callers: Vec<_> = (0..64)
        .map(|caller| {
            let registry = registry.clone();
            tokio::spawn(async move {
                for call in 0..3 {
                    let tool = if poisoned(caller, call) {
                        "t_poison"
                    } else {
                        "t_ok"
                    };
                    let ctx = HookContext::tool_call(tool, json!({}))
                        .with_conversation(format!("p-{caller}"))
                        .with_tool_call_id(format!("call-{call}"));
                    let report = registry
                        .run_tool_call(ctx, async |_: &Value| Ok::<_, String>(json!("done")))
                        .await;
                    let withheld = matches!(report.observation, Observation::Withheld { .. });
                    assert_eq!(withheld, poisoned(caller, call), "p-{caller} call-{call}");
                }
            })
        })
        .collect();
    for caller in callers {
        caller.await.expect("caller");
    }
    let written = FILING - 30 + 64 * 3 - 8;
    assert_eq!(
        filing_state(&database).await,
        (FILING, FILING, written - FILING)
    );
    for caller in 0..64 {
        let conversation = format!("p-{caller}");
        let rows = database.audit_entries(&conversation).await.expect("read");
        let calls: Vec<&str> = rows.iter().map(|row| row.tool_call_id.as_str()).collect();
        let expected: Vec<String> = (0..3)
            .filter(|&call| !poisoned(caller, call))
            .map(|call| format!("call-{call}"))
            .collect();
        assert_eq!(calls, expected, "{conversation}");
    }
    reads_back_whole(&database, "conv-0", (FILING - 30) as usize).await;
}
