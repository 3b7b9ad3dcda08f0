//! The approval gate's store under hostile argument text: what the model
//! writes (arguments, call ids) and what approvers type (reasons) is bound,
//! never spliced, even when many calls' writes share one multi-statement
//! script on SQLite. A `?1` that shifted one caller's arguments onto
//! another's statement, or a `'; COMMIT --` that ended a statement early,
//! would let one call's approval stand for another; each case here must be
//! stored exactly as written and change nothing else.

use std::time::Duration;

use hooks::std_hooks::Database;
use hooks::std_hooks::approval_gate::{
    ApprovalDecision, ApproverScope, CardUpdates, ConfirmationMode, ConfirmationStatus,
    ConfirmationStore, DecideOutcome, NewConfirmation, args_digest,
};
use serde_json::{Value, json};

/// Text written to look like SQL, placeholders or script separators.
const HOSTILE: &[&str] = &[
    "?1",
    "?2 ?3 ?14",
    "?",
    "?0",
    "'; COMMIT; UPDATE confirmation_requests SET status = 'approved' --",
    "\"; DROP TABLE confirmation_requests; --",
    "/* ?1 */ ?2",
    "-- ?1\n?2",
    "`?1` [?2]",
    "); INSERT INTO callback_events VALUES ('x', 'y', 0); --",
    "\\?1",
    "\u{0}?1\u{0}",
    "?1'?2\"?3",
    ";;;;",
];

/// Runs `tasks` at once and collects their outputs, in order.
async fn all<T, F>(tasks: impl IntoIterator<Item = F>) -> Vec<T>
where
    T: Send + 'static,
    F: Future<Output = T> + Send + 'static,
{
    let running: Vec<_> = tasks.into_iter().map(tokio::spawn).collect();
    let mut outputs = Vec::with_capacity(running.len());
    for task in running {
        outputs.push(task.await.expect("task"));
    }
    outputs
}

fn request(key: &str, args: Value) -> NewConfirmation {
    NewConfirmation {
        idempotency_key: key.to_owned(),
        tool_name: "oa__purchase_pay".into(),
        args_digest: args_digest("oa__purchase_pay", &args),
        args,
        agent_id: "finance-bot".into(),
        initiator_user_id: "mallory".into(),
        org_id: "acme".into(),
        approver_scope: ApproverScope::OrgMembers,
        approver_allowlist: vec!["?1".into(), "'; --".into()],
        channel_kind: "web".into(),
        channel_id: "?2".into(),
        mode: ConfirmationMode::Metadata,
        timeout: Duration::from_secs(600),
        quorum: hooks::std_hooks::approval_gate::Quorum::default(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_text_in_concurrent_gate_writes_is_stored_as_written_and_moves_nothing_else() {
    // A file in WAL mode with FULL sync: the gate's writer batches
    // concurrent writes into scripts (an in-memory database would too).
    let dir = tempfile::tempdir().expect("temporary directory");
    let url = format!("sqlite://{}", dir.path().join("gate.db").display());
    let store = ConfirmationStore::new(Database::connect(&url).await.expect("database"));

    // Every hostile text as a key, as an argument and as a card reference,
    // all at once, so they share batches and scripts.
    let creations = HOSTILE.iter().enumerate().map(|(i, text)| {
        let store = store.clone();
        let key = format!("{text}#{i}");
        let args = json!({"payee": text, "memo": format!("{text}{text}"), "n": i});
        async move {
            let new = request(&key, args.clone());
            let (created, fresh) = store.create(&new).await.expect("created");
            (created, fresh, key, args)
        }
    });
    let created = all(creations).await;
    for (request, fresh, key, args) in &created {
        assert!(fresh, "{key:?} is a request of its own");
        assert_eq!(&request.idempotency_key, key);
        assert_eq!(
            &request.args, args,
            "{key:?}: its own arguments, as written"
        );
        assert_eq!(request.approver_allowlist, ["?1", "'; --"]);
        assert_eq!(request.channel_id, "?2");
        assert_eq!(request.status, ConfirmationStatus::Pending);
    }

    // Half the cards are stored by the statement that also reads the row
    // back (what a gate waits from): each hears its own row.
    let cards = created
        .iter()
        .zip(HOSTILE)
        .enumerate()
        .map(|(i, ((request, ..), text))| {
            let store = store.clone();
            let (id, reference) = (request.id.clone(), format!("{text}-card"));
            async move {
                let claim = store
                    .claim_card(&id, Duration::MAX, None)
                    .await
                    .expect("claimed")
                    .expect("the first claim is this call's");
                if i % 2 == 0 {
                    assert!(
                        store
                            .record_card(&id, claim, &reference)
                            .await
                            .expect("stored")
                            .is_some()
                    );
                } else {
                    let (stored, _clock) = store
                        .record_card(&id, claim, &reference)
                        .await
                        .expect("stored")
                        .expect("this call's claim holds");
                    assert_eq!(stored.id, id);
                    assert_eq!(stored.message_ref.as_deref(), Some(reference.as_str()));
                }
                (id, reference)
            }
        });
    for (id, reference) in all(cards).await {
        let stored = store.get(&id).await.expect("read").expect("request");
        assert_eq!(stored.message_ref.as_deref(), Some(reference.as_str()));
    }

    // One request approved, with a hostile reason; the others rejected or
    // left pending, all decided at once.
    let (approved, ..) = &created[0];
    let decisions = created.iter().enumerate().map(|(i, (request, ..))| {
        let store = store.clone();
        let id = request.id.clone();
        async move {
            match i {
                0 => store
                    .decide(&id, ApprovalDecision::Approve, "?1", Some(HOSTILE[4]))
                    .await
                    .expect("decided"),
                _ if i % 4 == 1 => store
                    .decide(&id, ApprovalDecision::Reject, "'; --", Some("?1 ?2"))
                    .await
                    .expect("decided"),
                // A decision followed by the take of its card's redraw.
                _ if i % 2 == 1 => {
                    let outcome = store
                        .decide(&id, ApprovalDecision::Reject, "'; --", Some("?1 ?2"))
                        .await
                        .expect("decided");
                    let taken = store
                        .take_card_updates(CardUpdates::Of(&id), Duration::from_secs(5))
                        .await
                        .expect("taken");
                    assert_eq!(taken.len(), 1, "the request has a card: its redraw is due");
                    outcome
                }
                _ => DecideOutcome::NotFound,
            }
        }
    });
    all(decisions).await;

    // Every call tries to use an approval at once: only the approved one's
    // stamp lands, once.
    let stamps = created.iter().map(|(request, ..)| {
        let (store, id) = (store.clone(), request.id.clone());
        async move { (id.clone(), store.stamp_used(&id).await.expect("stamp")) }
    });
    for (id, stamped) in all(stamps).await {
        assert_eq!(stamped.is_some(), id == approved.id, "request {id}");
    }
    assert!(
        store
            .stamp_used(&approved.id)
            .await
            .expect("again")
            .is_none()
    );
    let approved = store
        .get(&approved.id)
        .await
        .expect("read")
        .expect("request");
    assert_eq!(approved.decided_by.as_deref(), Some("?1"));
    assert_eq!(approved.reason.as_deref(), Some(HOSTILE[4]));
    for (i, (request, ..)) in created.iter().enumerate().skip(1) {
        let now = store
            .get(&request.id)
            .await
            .expect("read")
            .expect("request");
        let expected = if i % 2 == 1 {
            ConfirmationStatus::Rejected
        } else {
            ConfirmationStatus::Pending
        };
        assert_eq!(now.status, expected, "{:?}", HOSTILE[i]);
        assert!(now.consumed_at_ms.is_none());
    }
}
