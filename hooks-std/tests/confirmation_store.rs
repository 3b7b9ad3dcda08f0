//! ConfirmationStore: idempotent creation, first decision wins (also under
//! concurrency), quorums of distinct approvers (also under concurrency), nothing is decided past the deadline, terminal states never
//! change, sweeping, event dedup. SQLite always, PostgreSQL when configured.

mod support;

use std::time::Duration;

use hooks_std::Database;
use hooks_std::approval_gate::{
    ApprovalDecision, ApproverScope, Cancel, CardClaim, CardDelivery, CardUpdates,
    ConfirmationMode, ConfirmationRequest, ConfirmationStatus, ConfirmationStore, DecideOutcome,
    EventOutcome, MAX_CARD_UPDATE_ATTEMPTS, NewConfirmation, Quorum, Swept, args_digest,
};
use serde_json::json;

fn new_request(key: &str, timeout: Duration) -> NewConfirmation {
    let args = json!({"amount": 60000, "payee": "ACME Ltd"});
    NewConfirmation {
        idempotency_key: key.to_owned(),
        tool_name: "oa__purchase_pay".into(),
        args_digest: args_digest("oa__purchase_pay", &args),
        args,
        agent_id: "finance-bot".into(),
        initiator_user_id: "alice".into(),
        org_id: "acme".into(),
        approver_scope: ApproverScope::OrgMembers,
        approver_allowlist: vec!["cfo".into()],
        channel_kind: "feishu".into(),
        channel_id: "oc_finance".into(),
        mode: ConfirmationMode::Metadata,
        timeout,
        quorum: Quorum::default(),
    }
}

async fn lifecycle(database: Database) {
    let store = ConfirmationStore::new(database);
    let key = support::unique("call");
    let (created, fresh) = store
        .create(&new_request(&key, Duration::from_secs(60)))
        .await
        .expect("create");
    assert!(fresh);
    assert_eq!(created.status, ConfirmationStatus::Pending);
    assert_eq!(created.approver_allowlist, ["cfo"]);
    assert_eq!(created.args["payee"], "ACME Ltd");
    assert!(created.expires_at_ms - created.created_at_ms == 60_000);

    let (resumed, fresh) = store
        .create(&new_request(&key, Duration::from_secs(5)))
        .await
        .expect("resume");
    assert!(!fresh, "the same call resumes its request");
    assert_eq!(resumed, created);

    let claim = try_claim(&store, &created.id, Duration::from_secs(60))
        .await
        .expect("the first run claims the card");
    assert!(stored_card(&store, &created.id, claim, "om_1").await);
    let DecideOutcome::Decided(decided) = store
        .decide(
            &created.id,
            ApprovalDecision::Reject,
            "bob",
            Some("too much"),
        )
        .await
        .expect("decide")
    else {
        panic!("the first decision wins");
    };
    assert_eq!(decided.status, ConfirmationStatus::Rejected);
    assert_eq!(decided.decided_by.as_deref(), Some("bob"));
    assert_eq!(decided.reason.as_deref(), Some("too much"));
    assert_eq!(decided.message_ref.as_deref(), Some("om_1"));
    assert!(decided.decided_at_ms.is_some());

    let second = store
        .decide(&created.id, ApprovalDecision::Approve, "carol", None)
        .await
        .expect("decide");
    assert_eq!(second, DecideOutcome::AlreadyFinal(decided.clone()));
    assert_eq!(store.expire(&created.id).await.expect("expire"), None);
    assert_eq!(
        store
            .cancel(Cancel::Undelivered(&created.id), "x")
            .await
            .expect("cancel"),
        None,
        "terminal states never change"
    );
    assert_eq!(store.get(&created.id).await.expect("get"), Some(decided));
    assert_eq!(
        store
            .decide("no-such-id", ApprovalDecision::Approve, "bob", None)
            .await
            .expect("decide"),
        DecideOutcome::NotFound
    );
}

async fn concurrent_decisions(database: Database) {
    let store = ConfirmationStore::new(database);
    let request = created(&store, "race", Duration::from_secs(60)).await;
    let outcomes = race(
        &store,
        &request.id,
        |store, id, user, decision| async move { store.decide(&id, decision, &user, None).await },
    )
    .await;
    let winners = outcomes.into_iter().filter(won).count();
    assert_eq!(winners, 1, "exactly one of 16 concurrent decisions wins");
}

/// A request created needing `approvals` distinct approvals.
async fn with_quorum(store: &ConfirmationStore, name: &str, approvals: u32) -> ConfirmationRequest {
    let mut new = new_request(&support::unique(name), Duration::from_secs(60));
    new.quorum = Quorum {
        approvals,
        exclude_requester: true,
    };
    let (request, _) = store.create(&new).await.expect("create");
    assert_eq!(
        request.approvals_required,
        i32::try_from(approvals).unwrap()
    );
    assert!(request.exclude_requester);
    request
}

/// Two approvals from distinct people approve; the same person twice counts
/// once; any rejection rejects, even after an approval; every vote is in
/// the row.
async fn quorums(database: Database) {
    let store = ConfirmationStore::new(database);
    let request = with_quorum(&store, "quorum", 2).await;
    let approve = |by: &'static str| {
        let (store, id) = (store.clone(), request.id.clone());
        async move {
            store
                .decide(&id, ApprovalDecision::Approve, by, None)
                .await
                .expect("decide")
        }
    };
    let DecideOutcome::Counted(counted) = approve("bob").await else {
        panic!("the first approval is counted");
    };
    assert_eq!(counted.status, ConfirmationStatus::Pending);
    assert_eq!(counted.approved_by, ["bob"]);
    assert_eq!(counted.decided_by, None);
    let DecideOutcome::AlreadyCounted(again) = approve("bob").await else {
        panic!("the same approver counts once");
    };
    assert_eq!(again.approved_by, ["bob"]);
    let DecideOutcome::Decided(approved) = approve("carol").await else {
        panic!("the second approver approves");
    };
    assert_eq!(approved.status, ConfirmationStatus::Approved);
    assert_eq!(approved.approved_by, ["bob", "carol"]);
    assert_eq!(approved.decided_by.as_deref(), Some("carol"));
    assert!(matches!(
        approve("dave").await,
        DecideOutcome::AlreadyFinal(_)
    ));

    let request = with_quorum(&store, "quorum-rejected", 2).await;
    let counted = store
        .decide(&request.id, ApprovalDecision::Approve, "bob", None)
        .await
        .expect("decide");
    assert!(matches!(counted, DecideOutcome::Counted(_)));
    let DecideOutcome::Decided(rejected) = store
        .decide(&request.id, ApprovalDecision::Reject, "carol", Some("no"))
        .await
        .expect("decide")
    else {
        panic!("one rejection rejects");
    };
    assert_eq!(rejected.status, ConfirmationStatus::Rejected);
    assert_eq!(
        rejected.approved_by,
        ["bob"],
        "the approval stays on record"
    );
}

/// Twelve distinct approvers at once on a request needing three: exactly
/// three approvals are counted, the third approves, and the others find it
/// final.
async fn concurrent_quorum(database: Database) {
    let store = ConfirmationStore::new(database);
    let request = with_quorum(&store, "quorum-race", 3).await;
    let tasks: Vec<_> = (0..12)
        .map(|i| {
            let (store, id) = (store.clone(), request.id.clone());
            tokio::spawn(async move {
                store
                    .decide(&id, ApprovalDecision::Approve, &format!("user-{i}"), None)
                    .await
                    .expect("decide")
            })
        })
        .collect();
    let (mut counted, mut decided, mut late) = (0, 0, 0);
    for task in tasks {
        match task.await.expect("task") {
            DecideOutcome::Counted(_) => counted += 1,
            DecideOutcome::Decided(_) => decided += 1,
            DecideOutcome::AlreadyFinal(_) => late += 1,
            other => panic!("unexpected {other:?}"),
        }
    }
    assert_eq!((counted, decided, late), (2, 1, 9));
    let row = store.get(&request.id).await.expect("read").expect("row");
    assert_eq!(row.status, ConfirmationStatus::Approved);
    assert_eq!(row.approved_by.len(), 3, "{:?}", row.approved_by);
}

/// One card per tool call: of 16 concurrent claims exactly one wins; a claim
/// is taken over only after its lease; a request with a card, or no longer
/// pending, cannot be claimed.
async fn card_claims(database: Database) {
    let store = ConfirmationStore::new(database);
    let request = created(&store, "claim", Duration::from_secs(60)).await;
    let claimers: Vec<_> = (0..16)
        .map(|_| {
            let (store, id) = (store.clone(), request.id.clone());
            tokio::spawn(async move { store.claim_card(&id, Duration::from_secs(60), None).await })
        })
        .collect();
    let mut winners = 0;
    for claimer in claimers {
        if claimer.await.expect("task").expect("claim").is_some() {
            winners += 1;
        }
    }
    assert_eq!(
        winners, 1,
        "exactly one of 16 concurrent runs sends the card"
    );
    assert!(
        try_claim(&store, &request.id, Duration::from_secs(60))
            .await
            .is_none(),
        "a live claim holds"
    );
    tokio::time::sleep(Duration::from_millis(150)).await;
    let taken_over = try_claim(&store, &request.id, Duration::from_millis(100))
        .await
        .expect("a claim older than its lease is taken over (its holder died mid-send)");
    assert!(stored_card(&store, &request.id, taken_over, "om_1").await);
    tokio::time::sleep(Duration::from_millis(150)).await;
    assert!(
        try_claim(&store, &request.id, Duration::from_millis(100))
            .await
            .is_none(),
        "a request whose card was sent is never claimed again"
    );

    let rejected = created(&store, "claim-final", Duration::from_secs(60)).await;
    store
        .decide(&rejected.id, ApprovalDecision::Reject, "bob", None)
        .await
        .expect("decide");
    assert!(
        try_claim(&store, &rejected.id, Duration::ZERO)
            .await
            .is_none(),
        "a decided request gets no card"
    );
    let late = created(&store, "claim-late", Duration::from_millis(50)).await;
    tokio::time::sleep(Duration::from_millis(150)).await;
    assert!(
        try_claim(&store, &late.id, Duration::ZERO).await.is_none(),
        "a request past its deadline gets no card"
    );
}

/// A fresh pending request (key `prefix`…) whose first card claim outlived
/// its 100 ms lease and was taken over: the request, the lost claim and the
/// one that holds.
async fn claim_taken_over(
    store: &ConfirmationStore,
    prefix: &str,
) -> (ConfirmationRequest, CardClaim, CardClaim) {
    let request = created(store, prefix, Duration::from_secs(60)).await;
    let lease = Duration::from_millis(100);
    let lost = try_claim(store, &request.id, lease)
        .await
        .expect("the first run claims the card");
    tokio::time::sleep(Duration::from_millis(150)).await;
    let held = try_claim(store, &request.id, lease)
        .await
        .expect("a re-run takes the expired claim over");
    assert_ne!(lost, held);
    (request, lost, held)
}

/// A run whose card claim was taken over (it outlived its lease) cannot
/// record its card's reference: only the current holder's card is stored,
/// so a slow store can never make the request point at a second card.
async fn a_taken_over_claim_stores_no_card(database: Database) {
    let store = ConfirmationStore::new(database);
    let (request, first, second) = claim_taken_over(&store, "takeover").await;
    assert!(
        !stored_card(&store, &request.id, first, "om_first").await,
        "the first run lost its claim: its card must not be recorded"
    );
    let stored = store.get(&request.id).await.expect("get").expect("request");
    assert_eq!(stored.message_ref, None);
    assert!(
        stored_card(&store, &request.id, second, "om_second").await,
        "the current holder records its card"
    );
    assert!(
        !stored_card(&store, &request.id, second, "om_again").await,
        "a recorded card is never replaced"
    );
    let stored = store.get(&request.id).await.expect("get").expect("request");
    assert_eq!(stored.message_ref.as_deref(), Some("om_second"));
}

/// Storing the card's reference can hand back the request as it then
/// stands, with the database clock, so a gate starts to wait without a read
/// of its own: under a lost claim nothing is stored or returned, and a
/// decision made before the card was recorded (from the approvals page) is
/// what comes back.
async fn storing_the_card_reads_the_request_and_clock(database: Database) {
    let store = ConfirmationStore::new(database);
    let (request, lost, held) = claim_taken_over(&store, "stored-read").await;
    assert_eq!(
        store
            .record_card(&request.id, lost, "om_lost")
            .await
            .expect("store"),
        None,
        "a lost claim stores nothing and reads nothing"
    );
    let DecideOutcome::Decided(decided) = store
        .decide(&request.id, ApprovalDecision::Approve, "cfo", None)
        .await
        .expect("decide")
    else {
        panic!("a pending request can be decided before its card is recorded");
    };
    let before = decided
        .decided_at_ms
        .expect("decided on the database clock");
    let (stored, clock_ms) = store
        .record_card(&request.id, held, "om_held")
        .await
        .expect("store")
        .expect("the holder's card is stored");
    let later = created(&store, "stored-read-later", Duration::from_secs(60)).await;
    let after = later.created_at_ms;
    assert_eq!(stored.message_ref.as_deref(), Some("om_held"));
    assert_eq!(stored.status, ConfirmationStatus::Approved);
    assert_eq!(stored.decided_at_ms, decided.decided_at_ms);
    assert_eq!(
        stored,
        store.get(&request.id).await.expect("get").expect("request"),
        "what comes back is the stored row"
    );
    assert!(
        (before..=after).contains(&clock_ms),
        "the clock is the database's at the write: {before} <= {clock_ms} <= {after}"
    );
    assert_eq!(
        store
            .record_card(&request.id, held, "om_again")
            .await
            .expect("store"),
        None,
        "a recorded card is never replaced"
    );
}

/// A click's decision and its event id commit together, or not at all.
async fn decisions_for_events(database: Database) {
    let store = ConfirmationStore::new(database);
    let request = created(&store, "event-decision", Duration::from_secs(60)).await;
    let event = support::unique("evt");
    // The approver was already told it failed: everything rolls back.
    let withdrawn = store
        .decide_for_event(
            &event,
            "feishu",
            &request.id,
            ApprovalDecision::Approve,
            "bob",
            None,
            || false,
        )
        .await
        .expect("decide");
    assert_eq!(withdrawn, EventOutcome::Withdrawn);
    let unchanged = store.get(&request.id).await.expect("get").expect("request");
    assert_eq!(unchanged, request, "a withdrawn decision changes nothing");
    assert!(
        !store.event_seen(&event).await.expect("seen"),
        "nor is its event id used up"
    );
    // The same event again, in time.
    let EventOutcome::Recorded(outcome) = click(
        &store,
        &event,
        &request.id,
        ApprovalDecision::Approve,
        "bob",
    )
    .await
    else {
        panic!("recorded");
    };
    let DecideOutcome::Decided(decided) = *outcome else {
        panic!("the first decision wins: {outcome:?}");
    };
    assert_eq!(decided.status, ConfirmationStatus::Approved);
    assert_eq!(decided.decided_by.as_deref(), Some("bob"));
    assert!(store.event_seen(&event).await.expect("seen"));
    assert_eq!(
        click(
            &store,
            &event,
            &request.id,
            ApprovalDecision::Reject,
            "carol"
        )
        .await,
        EventOutcome::Replayed,
        "a replayed event changes nothing"
    );

    // Sixteen clicks at once, each its own event: one decision wins.
    let raced = created(&store, "event-race", Duration::from_secs(60)).await;
    let outcomes = race(&store, &raced.id, |store, id, user, decision| async move {
        let event = support::unique("evt");
        let decided = store.decide_for_event(&event, "feishu", &id, decision, &user, None, || true);
        decided.await
    })
    .await;
    let winners = outcomes
        .into_iter()
        .filter(|outcome| match outcome {
            EventOutcome::Recorded(outcome) => won(outcome),
            other => panic!("unexpected {other:?}"),
        })
        .count();
    assert_eq!(winners, 1, "exactly one of 16 concurrent clicks decides");

    // Past the deadline the request expires instead, in the same transaction.
    let late = created(&store, "event-late", Duration::from_millis(50)).await;
    tokio::time::sleep(Duration::from_millis(150)).await;
    let EventOutcome::Recorded(outcome) = click(
        &store,
        &support::unique("evt"),
        &late.id,
        ApprovalDecision::Approve,
        "bob",
    )
    .await
    else {
        panic!("recorded");
    };
    assert!(
        matches!(*outcome, DecideOutcome::PastDeadline(ref expired) if expired.status == ConfirmationStatus::Expired),
        "{outcome:?}"
    );
}

async fn deadlines(database: Database) {
    let store = ConfirmationStore::new(database);
    let late = created(&store, "late", Duration::from_millis(100)).await;
    let orphan = created(&store, "orphan", Duration::from_secs(600)).await;
    tokio::time::sleep(Duration::from_millis(250)).await;
    let DecideOutcome::PastDeadline(expired) = store
        .decide(&late.id, ApprovalDecision::Approve, "bob", None)
        .await
        .expect("decide")
    else {
        panic!("a pending request past its deadline cannot be approved");
    };
    assert_eq!(expired.status, ConfirmationStatus::Expired);
    assert_eq!(expired.decided_by.as_deref(), Some("system"));

    let cancelled = sweep(&store, Duration::from_millis(100)).await.cancelled;
    assert!(cancelled.iter().any(|request| request.id == orphan.id));
    assert!(
        cancelled
            .iter()
            .all(|request| request.message_ref.is_none()),
        "only requests whose card was never delivered are orphans"
    );

    let overdue = created(&store, "overdue", Duration::from_millis(500)).await;
    let claim = try_claim(&store, &overdue.id, Duration::from_secs(60))
        .await
        .expect("the card is claimed before the deadline");
    assert!(stored_card(&store, &overdue.id, claim, "om_2").await);
    tokio::time::sleep(Duration::from_millis(600)).await;
    let swept = sweep(&store, Duration::from_secs(600)).await.expired;
    assert!(swept.iter().any(|request| request.id == overdue.id));
}

async fn events(database: Database) {
    let store = ConfirmationStore::new(database);
    let event = support::unique("evt");
    assert!(store.record_event(&event, "feishu").await.expect("record"));
    assert!(
        !store.record_event(&event, "feishu").await.expect("record"),
        "a replay"
    );
    sweep(&store, Duration::from_secs(600)).await;
    assert!(
        !store.record_event(&event, "feishu").await.expect("record"),
        "still recent"
    );
}

/// Overwrites one column of request `id` with `value`, bypassing the
/// column's CHECK constraint on SQLite (as another program or a newer
/// version could leave it).
async fn corrupt(database: &Database, id: &str, column: &str, value: &str) {
    let sql = format!("UPDATE confirmation_requests SET {column} = $1 WHERE id = $2");
    let updated = match (database.sqlite(), database.postgres()) {
        (Some(pool), _) => {
            let mut connection = pool.acquire().await.expect("connection");
            sqlx::query("PRAGMA ignore_check_constraints = ON")
                .execute(&mut *connection)
                .await
                .expect("pragma");
            let done = sqlx::query(&sql)
                .bind(value)
                .bind(id)
                .execute(&mut *connection)
                .await
                .expect("update");
            sqlx::query("PRAGMA ignore_check_constraints = OFF")
                .execute(&mut *connection)
                .await
                .expect("pragma");
            done.rows_affected()
        }
        (None, Some(pool)) => sqlx::query(&sql)
            .bind(value)
            .bind(id)
            .execute(pool)
            .await
            .expect("update")
            .rows_affected(),
        (None, None) => unreachable!("a database is SQLite or PostgreSQL"),
    };
    assert_eq!(updated, 1);
}

/// A row whose status, scope or mode this crate does not know is a clear error
/// everywhere it is read, never a guess: read as `pending` it could be
/// approved, read under another scope the wrong person could decide it.
async fn unknown_values_are_errors(database: Database, columns: &[(&str, &str)]) {
    let store = ConfirmationStore::new(database.clone());
    for (column, value) in columns {
        let key = support::unique("corrupt");
        // A channel of its own: the other tests sweep `oc_finance`, and a
        // row they cannot read would fail their sweeps in a shared database.
        let request = NewConfirmation {
            channel_id: support::unique("oc_corrupt"),
            ..new_request(&key, Duration::from_secs(60))
        };
        let (created, _) = store.create(&request).await.expect("create");
        corrupt(&database, &created.id, column, value).await;
        let expected = format!("confirmation_requests.{column} holds an unknown value \"{value}\"");
        for error in [
            store.get(&created.id).await.expect_err("get"),
            store.by_key(&key).await.expect_err("by key"),
            store
                .decide(&created.id, ApprovalDecision::Approve, "bob", None)
                .await
                .expect_err("decide"),
            store.create(&request).await.expect_err("resume"),
        ] {
            let message = error.to_string();
            assert!(message.contains(&expected), "{column}: {message}");
            assert!(message.contains("expected one of"), "{message}");
        }
        // The refused decision changed nothing: an approval must not stand
        // on a request its caller could not read.
        let unchanged = if *column == "status" {
            value
        } else {
            "pending"
        };
        assert_eq!(
            raw_status(&database, &created.id).await,
            unchanged,
            "{column}"
        );
    }
}

/// The stored status of request `id`, read as text (whatever other columns hold).
async fn raw_status(database: &Database, id: &str) -> String {
    let sql = "SELECT status FROM confirmation_requests WHERE id = $1";
    match (database.sqlite(), database.postgres()) {
        (Some(pool), _) => sqlx::query_scalar(sql).bind(id).fetch_one(pool).await,
        (None, Some(pool)) => sqlx::query_scalar(sql).bind(id).fetch_one(pool).await,
        (None, None) => unreachable!("a database is SQLite or PostgreSQL"),
    }
    .expect("status")
}

#[tokio::test]
async fn unknown_status_scope_or_mode_in_the_database_is_an_error_on_sqlite() {
    let (database, _url, _dir) = support::sqlite_file().await;
    unknown_values_are_errors(
        database,
        &[
            ("status", "approved_by_root"),
            ("approver_scope", "everyone"),
            ("mode", "by_magic"),
        ],
    )
    .await;
}

#[tokio::test]
async fn unknown_scope_or_mode_in_the_database_is_an_error_on_postgres() {
    let Some(database) = support::postgres("unknown_scope_on_postgres").await else {
        return;
    };
    // PostgreSQL enforces the status CHECK constraint (no way around it
    // short of dropping it); the scope and mode columns have none.
    unknown_values_are_errors(
        database,
        &[("approver_scope", "everyone"), ("mode", "by_magic")],
    )
    .await;
}

/// The whole store suite on `database`, one behaviour after another.
async fn suite(database: Database) {
    lifecycle(database.clone()).await;
    concurrent_decisions(database.clone()).await;
    quorums(database.clone()).await;
    concurrent_quorum(database.clone()).await;
    card_claims(database.clone()).await;
    a_taken_over_claim_stores_no_card(database.clone()).await;
    storing_the_card_reads_the_request_and_clock(database.clone()).await;
    decisions_for_events(database.clone()).await;
    deadlines(database.clone()).await;
    delivery_states_and_the_card_outbox(database.clone()).await;
    a_decision_puts_its_card_update_in_the_outbox(database.clone()).await;
    the_outbox_gives_up_on_a_card(database.clone()).await;
    resend_window(database.clone()).await;
    events(database).await;
}

#[tokio::test]
async fn store_on_sqlite() {
    let (database, _url, _dir) = support::sqlite_file().await;
    suite(database).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn store_on_postgres() {
    let Some(database) = support::postgres("store_on_postgres").await else {
        return;
    };
    suite(database).await;
}

/// Takes the card update of request `id` alone, if it is due.
async fn take_update(
    store: &ConfirmationStore,
    id: &str,
    backoff: Duration,
) -> Option<ConfirmationRequest> {
    let mut taken = store
        .take_card_updates(CardUpdates::Of(id), backoff)
        .await
        .expect("take");
    assert!(taken.len() <= 1, "one request, at most one update");
    taken.pop()
}

/// Sixteen users deciding request `id` at once with `decide(store, id,
/// user, decision)`, half approving, half rejecting: their outcomes.
async fn race<T, Decide, Decided>(store: &ConfirmationStore, id: &str, decide: Decide) -> Vec<T>
where
    Decide: Fn(ConfirmationStore, String, String, ApprovalDecision) -> Decided,
    Decided: Future<Output = Result<T, hooks_std::StorageError>> + Send + 'static,
    T: Send + 'static,
{
    let tasks: Vec<_> = (0..16)
        .map(|i| {
            let decision = if i % 2 == 0 {
                ApprovalDecision::Approve
            } else {
                ApprovalDecision::Reject
            };
            let user = format!("user-{i}");
            tokio::spawn(decide(store.clone(), id.to_owned(), user, decision))
        })
        .collect();
    let mut outcomes = Vec::new();
    for task in tasks {
        outcomes.push(task.await.expect("task").expect("decide"));
    }
    outcomes
}

/// Whether a racer's `outcome` is the decision that won (the others find
/// it already final).
fn won(outcome: &DecideOutcome) -> bool {
    match outcome {
        DecideOutcome::Decided(_) => true,
        DecideOutcome::AlreadyFinal(_) => false,
        other => panic!("unexpected {other:?}"),
    }
}

/// One sweep of the suite's chat: requests whose card is unclaimed for
/// `orphaned_after` are cancelled, callback events older than an hour
/// forgotten.
async fn sweep(store: &ConfirmationStore, orphaned_after: Duration) -> Swept {
    store
        .sweep(
            "feishu",
            "oc_finance",
            orphaned_after,
            Duration::from_secs(3600),
        )
        .await
        .expect("sweep")
}

/// A press of `user` on request `id`'s card, callback event `event`, with
/// no reason and nothing withdrawn.
async fn click(
    store: &ConfirmationStore,
    event: &str,
    id: &str,
    decision: ApprovalDecision,
    user: &str,
) -> EventOutcome {
    store
        .decide_for_event(event, "feishu", id, decision, user, None, || true)
        .await
        .expect("decide")
}

/// A store on `database` and a fresh pending request in it (60 s).
async fn pending_request(
    database: Database,
    prefix: &str,
) -> (ConfirmationStore, ConfirmationRequest) {
    let store = ConfirmationStore::new(database);
    let request = created(&store, prefix, Duration::from_secs(60)).await;
    (store, request)
}

/// A fresh pending request in `store`, its key made unique from `prefix`,
/// due after `timeout`.
async fn created(
    store: &ConfirmationStore,
    prefix: &str,
    timeout: Duration,
) -> ConfirmationRequest {
    let (request, fresh) = store
        .create(&new_request(&support::unique(prefix), timeout))
        .await
        .expect("create");
    assert!(fresh, "a new key makes a new request");
    request
}

/// Claims the card of request `id` for `lease`, if it is free.
async fn try_claim(store: &ConfirmationStore, id: &str, lease: Duration) -> Option<CardClaim> {
    store.claim_card(id, lease, None).await.expect("claim")
}

/// Stores `message_ref` as the card of request `id` under `claim`; whether
/// the claim still held.
async fn stored_card(
    store: &ConfirmationStore,
    id: &str,
    claim: CardClaim,
    message_ref: &str,
) -> bool {
    store
        .record_card(id, claim, message_ref)
        .await
        .expect("store the card reference")
        .is_some()
}

/// Claims the card of request `id` and stores `message_ref` as its reference.
async fn deliver(store: &ConfirmationStore, id: &str, message_ref: &str) {
    let claim = try_claim(store, id, Duration::from_secs(60))
        .await
        .expect("claimed");
    assert!(stored_card(store, id, claim, message_ref).await);
}

/// A decision puts its card's update in the outbox: due at once when the
/// decision is recorded on a request with a card, held for the back-off
/// once taken (a sweeper retries it after); nothing is due for a request
/// without a card, and an expired request's update waits like any other.
async fn a_decision_puts_its_card_update_in_the_outbox(database: Database) {
    let backoff = Duration::from_millis(300);
    let (store, with_card) = pending_request(database.clone(), "decide-take").await;
    deliver(&store, &with_card.id, "om_take").await;
    let outcome = store
        .decide(&with_card.id, ApprovalDecision::Approve, "cfo", None)
        .await
        .expect("decide");
    let DecideOutcome::Decided(decided) = outcome else {
        panic!("a pending request is decided: {outcome:?}");
    };
    assert_eq!(decided.status, ConfirmationStatus::Approved);
    assert!(
        take_update(&store, &with_card.id, backoff).await.is_some(),
        "the decision's card update is due"
    );
    assert_eq!(
        take_update(&store, &with_card.id, backoff).await,
        None,
        "a take holds the update for its back-off"
    );
    tokio::time::sleep(backoff + Duration::from_millis(100)).await;
    assert!(
        take_update(&store, &with_card.id, backoff).await.is_some(),
        "an update whose taker never confirmed is retried after the back-off"
    );
    store
        .record_card_update(&with_card.id, Ok(()))
        .await
        .expect("confirm");

    let (store, without_card) = pending_request(database.clone(), "decide-no-card").await;
    let outcome = store
        .decide(&without_card.id, ApprovalDecision::Reject, "cfo", None)
        .await
        .expect("decide");
    assert!(matches!(outcome, DecideOutcome::Decided(_)));
    assert_eq!(
        take_update(&store, &without_card.id, backoff).await,
        None,
        "no card, nothing to redraw"
    );

    let store = ConfirmationStore::new(database);
    let late = created(&store, "decide-take-late", Duration::from_millis(500)).await;
    deliver(&store, &late.id, "om_late").await;
    tokio::time::sleep(Duration::from_millis(600)).await;
    let outcome = store
        .decide(&late.id, ApprovalDecision::Approve, "cfo", None)
        .await
        .expect("decide");
    assert!(matches!(outcome, DecideOutcome::PastDeadline(_)));
    assert!(
        take_update(&store, &late.id, backoff).await.is_some(),
        "an expired request's card update waits in the outbox"
    );
}

/// A card's delivery is claimed before the platform is called, a claimed
/// request is never an orphan, and a final request with a card stays in the
/// outbox — taken by one attempt at a time, retried after its back-off —
/// until the platform's confirmation is recorded.
async fn delivery_states_and_the_card_outbox(database: Database) {
    let (store, request) = pending_request(database, "outbox").await;
    let delivery = |store: ConfirmationStore, id: String| async move {
        store.delivery(&id).await.expect("read").expect("request")
    };
    assert_eq!(
        delivery(store.clone(), request.id.clone()).await,
        CardDelivery::Unclaimed
    );
    let claim = try_claim(&store, &request.id, Duration::from_secs(60))
        .await
        .expect("claimed");
    assert_eq!(
        delivery(store.clone(), request.id.clone()).await,
        CardDelivery::Claimed {
            claimed_at_ms: claim.claimed_at_ms()
        }
    );
    let orphans = sweep(&store, Duration::ZERO).await.cancelled;
    assert!(
        orphans.iter().all(|orphan| orphan.id != request.id),
        "a claimed card may be live in the chat: not an orphan"
    );
    assert!(stored_card(&store, &request.id, claim, "om_outbox").await);
    let backoff = Duration::from_millis(200);
    assert_eq!(
        take_update(&store, &request.id, backoff).await,
        None,
        "a pending request's card needs no update"
    );
    store
        .decide(&request.id, ApprovalDecision::Reject, "bob", Some("no"))
        .await
        .expect("decide");
    let taken = take_update(&store, &request.id, backoff)
        .await
        .expect("the decision put the card update in the outbox");
    assert_eq!(taken.status, ConfirmationStatus::Rejected);
    assert_eq!(
        take_update(&store, &request.id, backoff).await,
        None,
        "an update in flight is held for its back-off"
    );
    store
        .record_card_update(&request.id, Err("platform unavailable"))
        .await
        .expect("record failure");
    tokio::time::sleep(Duration::from_millis(250)).await;
    assert!(
        take_update(&store, &request.id, backoff).await.is_some(),
        "retried once the back-off passed"
    );
    store
        .record_card_update(&request.id, Ok(()))
        .await
        .expect("confirm");
    let CardDelivery::Updated { message_ref, .. } =
        delivery(store.clone(), request.id.clone()).await
    else {
        panic!("confirmed");
    };
    assert_eq!(message_ref, "om_outbox");
    tokio::time::sleep(Duration::from_millis(450)).await;
    assert_eq!(
        take_update(&store, &request.id, backoff).await,
        None,
        "a confirmed update leaves the outbox"
    );
}

/// A card the platform never confirms (deleted, too old to edit) is tried
/// [`MAX_CARD_UPDATE_ATTEMPTS`] times, then left with its last error.
async fn the_outbox_gives_up_on_a_card(database: Database) {
    let (store, request) = pending_request(database, "gives-up").await;
    deliver(&store, &request.id, "om_deleted").await;
    store.expire(&request.id).await.expect("expire");
    for attempt in 1..=MAX_CARD_UPDATE_ATTEMPTS {
        let taken = take_update(&store, &request.id, Duration::ZERO).await;
        assert!(taken.is_some(), "attempt {attempt} is made");
        store
            .record_card_update(&request.id, Err("message deleted"))
            .await
            .expect("record failure");
    }
    assert_eq!(
        take_update(&store, &request.id, Duration::ZERO).await,
        None,
        "given up after {MAX_CARD_UPDATE_ATTEMPTS} attempts"
    );
}

/// A stale claim is taken over (and the card re-sent) only while the
/// request is younger than the platform's deduplication window allows.
async fn resend_window(database: Database) {
    let (store, request) = pending_request(database, "resend").await;
    try_claim(&store, &request.id, Duration::ZERO)
        .await
        .expect("claimed");
    tokio::time::sleep(Duration::from_millis(20)).await;
    assert_eq!(
        store
            .claim_card(&request.id, Duration::ZERO, Some(Duration::from_millis(5)))
            .await
            .expect("claim"),
        None,
        "past the window a re-send could post a second card"
    );
    assert!(
        try_claim(&store, &request.id, Duration::MAX)
            .await
            .is_none(),
        "an endless lease is never taken over"
    );
    assert!(
        store
            .claim_card(&request.id, Duration::ZERO, Some(Duration::from_secs(3600)))
            .await
            .expect("claim")
            .is_some(),
        "inside the window the stale claim is taken over"
    );
}

/// The crash between a callback's event id and its decision: when the
/// decision statement fails, the event id is not kept either, so the
/// platform's retry of the event decides.
#[tokio::test]
async fn a_failed_decision_leaves_its_event_unused_so_the_retry_decides() {
    let (database, _url, _dir) = support::sqlite_file().await;
    let store = ConfirmationStore::new(database.clone());
    let (request, _) = store
        .create(&new_request("retried", Duration::from_secs(60)))
        .await
        .expect("create");
    let pool = database.sqlite().expect("a SQLite file");
    sqlx::query(
        "CREATE TRIGGER fail_decisions BEFORE UPDATE OF status ON confirmation_requests \
         BEGIN SELECT RAISE(ABORT, 'the decision statement failed'); END",
    )
    .execute(pool)
    .await
    .expect("trigger");
    let approve = || {
        store.decide_for_event(
            "evt-1",
            "feishu",
            &request.id,
            ApprovalDecision::Approve,
            "bob",
            None,
            || true,
        )
    };
    let failed = approve().await;
    assert!(failed.is_err(), "{failed:?}");
    assert!(!store.event_seen("evt-1").await.expect("read"));
    sqlx::query("DROP TRIGGER fail_decisions")
        .execute(pool)
        .await
        .expect("drop trigger");
    let retried = approve().await.expect("retry");
    let EventOutcome::Recorded(outcome) = retried else {
        panic!("the retry is handled as new: {retried:?}");
    };
    assert!(matches!(*outcome, DecideOutcome::Decided(_)), "{outcome:?}");
}

#[tokio::test]
async fn an_unreachable_database_is_an_error_not_a_decision() {
    let database = Database::in_memory().await.expect("db");
    let store = ConfirmationStore::new(database.clone());
    database.close().await;
    assert!(
        store
            .create(&new_request("k", Duration::from_secs(1)))
            .await
            .is_err()
    );
    assert!(
        store
            .decide("id", ApprovalDecision::Approve, "bob", None)
            .await
            .is_err()
    );
}
