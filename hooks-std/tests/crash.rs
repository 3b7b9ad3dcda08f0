//! Crash tests of the approval gate (feature `failpoints`):
//! `cargo test -p hooks-std --features failpoints --test crash`.
//!
//! Each test stops the agent's gate or the replica's callback handler at one
//! of the gate's failpoints (`hooks_std::approval_gate::crash_points`) — nothing after
//! the point runs, as if the process were killed there — then "restarts":
//! drops every process-local object and starts a fresh `Approvals` on the
//! same SQLite file, with the same fake Feishu, and re-runs the same tool
//! call or re-delivers the same callback event, as the agent's engine and
//! the platform do. Each asserts: at most one card per request, the decision
//! honoured (every vote of a quorum kept), the tool run at most once, and
//! the card finally showing the final state.
//!
//! These run in one process (a restart is a fresh `Approvals` on the same
//! file, not a new process): they prove what the durable state allows, not
//! that the OS flushes it (SQLite's WAL with `synchronous = FULL` does).

mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use hooks_runtime::{HookContext, HookRegistry, ToolCallReport};
use hooks_std::Database;
use hooks_std::approval_gate::channel::feishu::FeishuChannel;
use hooks_std::approval_gate::{
    ApprovalDecision, ApprovalGate, Approvals, ApprovalsConfig, CardDelivery, ConfirmationStatus,
    ConfirmationStore, StaticDirectory, crash_points,
};
use hooks_std::fail;
use hooks_testkit::feishu::{CardClick, FakeFeishu, FakeFeishuConfig};
use serde_json::{Value, json};
use tokio::task::JoinHandle;

const CHAT: &str = "oc_finance";

/// One process's worth of approval machinery: the gate, its `Approvals`
/// and its callback server. Dropping it is the crash.
struct Process {
    approvals: Approvals,
    registry: HookRegistry,
    callback_url: String,
    server: JoinHandle<()>,
}

impl Drop for Process {
    fn drop(&mut self) {
        self.server.abort();
    }
}

fn config() -> ApprovalsConfig {
    ApprovalsConfig {
        poll_interval: Duration::from_millis(50),
        // Sweeps are run by hand, when the test says.
        sweep_interval: Duration::from_secs(3600),
        orphan_ttl: Duration::ZERO,
        card_update_backoff: Duration::from_millis(50),
        ..ApprovalsConfig::default()
    }
}

/// Starts a process on the database at `url` with a gate of `timeout`.
async fn process(fake: &FakeFeishu, url: &str, timeout: &str) -> Process {
    let gate = json!({"approver_scope": "org_members", "timeout": timeout});
    process_with(fake, url, gate).await
}

/// Starts a process on the database at `url` with the gate config `gate`.
async fn process_with(fake: &FakeFeishu, url: &str, gate: Value) -> Process {
    let database = Database::connect(url).await.expect("sqlite file");
    let channel = FeishuChannel::new(fake.feishu_config(CHAT)).expect("feishu channel");
    let directory = StaticDirectory::new()
        .person("feishu", "ou_bob", "bob", "acme")
        .person("feishu", "ou_carol", "carol", "acme");
    let approvals = Approvals::start(
        ConfirmationStore::new(database),
        Arc::new(channel),
        Arc::new(directory),
        config(),
    );
    let hook = ApprovalGate::from_config(approvals.clone(), &gate).expect("gate config");
    let registry = HookRegistry::builder().pre(hook).build().expect("registry");
    let (callback_url, server) = support::serve_callbacks(&approvals, "/feishu/callback").await;
    Process {
        approvals,
        registry,
        callback_url,
        server,
    }
}

/// The world that survives every crash: the fake Feishu, the SQLite file,
/// and how many times the tool ran.
struct World {
    fake: FakeFeishu,
    url: String,
    ran: Arc<AtomicUsize>,
    _dir: tempfile::TempDir,
}

async fn world() -> World {
    let (database, url, dir) = support::sqlite_file().await;
    database.close().await;
    World {
        fake: FakeFeishu::start(FakeFeishuConfig::default())
            .await
            .expect("fake feishu"),
        url,
        ran: Arc::default(),
        _dir: dir,
    }
}

impl World {
    async fn process(&self) -> Process {
        process(&self.fake, &self.url, "30s").await
    }

    /// Runs the gated tool call (always the same conversation and tool call
    /// id, as an engine re-running it after a restart) on `process`.
    fn run(&self, process: &Process) -> JoinHandle<ToolCallReport> {
        let (registry, ran) = (process.registry.clone(), self.ran.clone());
        tokio::spawn(async move {
            registry
                .run_tool_call(call(), async move |_: &Value| {
                    ran.fetch_add(1, Ordering::SeqCst);
                    Ok::<_, String>(json!("paid"))
                })
                .await
        })
    }

    fn tool_runs(&self) -> usize {
        self.ran.load(Ordering::SeqCst)
    }

    fn cards(&self) -> usize {
        self.fake.sent_cards().len()
    }

    /// The id of the one request this world's call made.
    async fn request_id(&self, process: &Process) -> String {
        process
            .approvals
            .store()
            .by_key("6:conv-1:c1")
            .await
            .expect("read")
            .expect("the request was created")
            .id
    }

    /// Runs the call on a fresh process that stops at failpoint `point`,
    /// then drops the process: the crash. The request's id, and its card's
    /// state as the crash left it.
    async fn crashed_at(&self, point: &str, timeout: &str) -> (String, CardDelivery) {
        let process = process(&self.fake, &self.url, timeout).await;
        fail::cfg(point, "return").expect("failpoint");
        let report = finished(self.run(&process)).await;
        fail::remove(point);
        assert!(!report.tool_ran, "the run stopped at {point}");
        let id = self.request_id(&process).await;
        let state = delivery(&process, &id).await;
        (id, state)
    }

    /// Starts the call on `process` and waits for its card: the run and
    /// the request's id.
    async fn waiting(&self, process: &Process) -> (JoinHandle<ToolCallReport>, String) {
        let run = self.run(process);
        self.fake
            .wait_for_card(1, Duration::from_secs(5))
            .await
            .expect("card");
        (run, self.request_id(process).await)
    }

    /// Approves `id` through a fresh replica that stops at failpoint `point`
    /// while handling the click: the reply's text, and the replica (drop it
    /// to crash it).
    async fn click_on_crashing_replica(
        &self,
        point: &str,
        id: &str,
        event: &str,
    ) -> (String, Process) {
        let replica = self.process().await;
        fail::cfg(point, "return").expect("failpoint");
        let (_, reply) = self.clicked(&replica, id, event).await;
        fail::remove(point);
        (reply.to_string(), replica)
    }

    /// Sweeps on `process` until the card of `id` is confirmed redrawn
    /// (the outbox), at most 5 s; the redrawn card has no buttons.
    async fn card_redrawn_without_buttons(&self, process: &Process, id: &str) {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
        loop {
            process.approvals.sweep(&config()).await.expect("sweep");
            if matches!(delivery(process, id).await, CardDelivery::Updated { .. }) {
                break;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "the card of {id} was never confirmed redrawn"
            );
            tokio::time::sleep(Duration::from_millis(60)).await;
        }
        support::assert_last_card_update_has_no_buttons(&self.fake);
    }

    async fn clicked(&self, process: &Process, id: &str, event: &str) -> (u16, Value) {
        let mut click = CardClick::new(id, ApprovalDecision::Approve, "ou_bob", CHAT);
        click.event_id = Some(event.to_owned());
        self.fake
            .click(&process.callback_url, &click)
            .await
            .expect("the card has the button")
    }
}

fn call() -> HookContext {
    HookContext::tool_call(
        "oa__purchase_pay",
        json!({"amount": 60_000, "payee": "ACME"}),
    )
    .with_conversation("conv-1")
    .with_tool_call_id("c1")
    .with_agent("finance-bot")
    .with_user("alice")
    .with_org("acme")
    .with_metadata("requires_confirmation", true)
}

async fn finished(run: JoinHandle<ToolCallReport>) -> ToolCallReport {
    tokio::time::timeout(Duration::from_secs(10), run)
        .await
        .expect("the run finishes")
        .expect("task")
}

async fn delivery(process: &Process, id: &str) -> CardDelivery {
    process
        .approvals
        .store()
        .delivery(id)
        .await
        .expect("read")
        .expect("request")
}

async fn status(process: &Process, id: &str) -> ConfirmationStatus {
    let request = process.approvals.store().get(id).await.expect("read");
    request.expect("request").status
}

/// Killed after creating the request, before claiming the card: no card
/// exists; a re-run sends exactly one card and runs once approved.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn agent_killed_before_the_claim() {
    let scenario = fail::FailScenario::setup();
    let world = world().await;
    let (id, state) = world.crashed_at(crash_points::AFTER_CREATE, "30s").await;
    assert_eq!(state, CardDelivery::Unclaimed);

    let second = world.process().await;
    let (run, _) = world.waiting(&second).await;
    world.clicked(&second, &id, "evt-1").await;
    assert!(finished(run).await.tool_ran);
    assert_eq!((world.cards(), world.tool_runs()), (1, 1));
    scenario.teardown();
}

/// Killed before the claim and never re-run: the request is an orphan (no
/// card can exist) and the sweeper cancels it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unclaimed_request_is_swept_as_an_orphan() {
    let scenario = fail::FailScenario::setup();
    let world = world().await;
    let (id, _) = world.crashed_at(crash_points::AFTER_CREATE, "30s").await;

    let second = world.process().await;
    let report = second.approvals.sweep(&config()).await.expect("sweep");
    assert_eq!(report.cancelled, 1);
    assert_eq!(status(&second, &id).await, ConfirmationStatus::Cancelled);
    assert_eq!((world.cards(), world.tool_runs()), (0, 0));
    scenario.teardown();
}

/// Killed after claiming the card, before calling the platform: the claim
/// is not an orphan (a card may exist) and a restarted run within the lease
/// waits instead of sending; after the lease a re-run sends the card with
/// the request id as Feishu's `uuid`: one card, and the decision runs the
/// call once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn agent_killed_after_the_claim_before_the_send() {
    let scenario = fail::FailScenario::setup();
    let world = world().await;
    let (id, state) = world.crashed_at(crash_points::AFTER_CLAIM, "30s").await;
    assert!(matches!(state, CardDelivery::Claimed { .. }));

    let second = world.process().await;
    let report = second.approvals.sweep(&config()).await.expect("sweep");
    assert_eq!(report.cancelled, 0, "a claimed request is not an orphan");
    // Within the lease: the re-run waits for a decision and sends nothing.
    let waiting = world.run(&second);
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(world.cards(), 0);
    waiting.abort();
    drop(second);

    support::age_card_claim(&world.url, &id).await;
    let third = world.process().await;
    let (run, _) = world.waiting(&third).await;
    assert_eq!(
        world.fake.sent_cards()[0].uuid.as_deref(),
        Some(id.as_str())
    );
    world.clicked(&third, &id, "evt-1").await;
    assert!(finished(run).await.tool_ran);
    assert_eq!((world.cards(), world.tool_runs()), (1, 1));
    scenario.teardown();
}

/// Killed after Feishu accepted the card, before its reference was stored:
/// the card is live; the sweeper does not cancel the request; after the
/// lease a re-send with the same `uuid` is deduplicated by the platform and
/// stores the first message's reference; a click on it runs the call once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn agent_killed_after_the_send_before_the_reference() {
    let scenario = fail::FailScenario::setup();
    let world = world().await;
    let (id, state) = world.crashed_at(crash_points::AFTER_SEND, "30s").await;
    assert!(matches!(state, CardDelivery::Claimed { .. }));
    assert_eq!(world.cards(), 1);

    let second = world.process().await;
    let report = second.approvals.sweep(&config()).await.expect("sweep");
    assert_eq!(
        report.cancelled, 0,
        "a live card is never swept as an orphan"
    );
    support::age_card_claim(&world.url, &id).await;
    let run = world.run(&second);
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    while !matches!(delivery(&second, &id).await, CardDelivery::Delivered { .. }) {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the reference is stored"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let first_card = world.fake.sent_cards()[0].message_id.clone();
    assert_eq!(
        delivery(&second, &id).await,
        CardDelivery::Delivered {
            message_ref: first_card
        }
    );
    world.clicked(&second, &id, "evt-1").await;
    assert!(finished(run).await.tool_ran);
    assert_eq!((world.cards(), world.tool_runs()), (1, 1));
    scenario.teardown();
}

/// Killed while waiting, the approver decides while the agent is down: the
/// re-run sends no card and runs the call once, at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn agent_killed_while_waiting_then_approved() {
    let scenario = fail::FailScenario::setup();
    let world = world().await;
    let (id, _) = world.crashed_at(crash_points::WAITING, "30s").await;

    let replica = world.process().await;
    let (code, reply) = world.clicked(&replica, &id, "evt-1").await;
    assert_eq!(code, 200, "{reply}");
    assert_eq!(status(&replica, &id).await, ConfirmationStatus::Approved);
    let agent = world.process().await;
    assert!(finished(world.run(&agent)).await.tool_ran);
    assert_eq!((world.cards(), world.tool_runs()), (1, 1));
    world.card_redrawn_without_buttons(&replica, &id).await;
    scenario.teardown();
}

/// Killed after the approval was consumed, before (or while) the tool ran:
/// approved calls run at most once. The re-run is blocked, and the request
/// shows approved and consumed, which is how an operator sees an outcome
/// that is unknown.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn agent_killed_during_the_tool_runs_it_at_most_once() {
    let scenario = fail::FailScenario::setup();
    let world = world().await;
    let first = world.process().await;
    fail::cfg(crash_points::AFTER_CONSUME, "return").expect("failpoint");
    let (run, id) = world.waiting(&first).await;
    world.clicked(&first, &id, "evt-1").await;
    assert!(!finished(run).await.tool_ran);
    drop(first);
    fail::remove(crash_points::AFTER_CONSUME);

    let second = world.process().await;
    let report = finished(world.run(&second)).await;
    assert!(!report.tool_ran);
    assert!(
        report.observation.to_string().contains("already used"),
        "{}",
        report.observation
    );
    let request = second.approvals.store().get(&id).await.expect("read");
    let request = request.expect("request");
    assert_eq!(request.status, ConfirmationStatus::Approved);
    assert!(request.consumed_at_ms.is_some());
    assert_eq!((world.cards(), world.tool_runs()), (1, 0));
    scenario.teardown();
}

/// The replica dies between recording the event and recording the decision:
/// both roll back together, so the platform's retry of the same event is
/// handled as new and decides.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replica_killed_between_event_and_decision_the_retry_decides() {
    let scenario = fail::FailScenario::setup();
    let world = world().await;
    let agent = world.process().await;
    let (run, id) = world.waiting(&agent).await;

    let (reply, replica) = world
        .click_on_crashing_replica(crash_points::BETWEEN_EVENT_AND_DECISION, &id, "evt-retried")
        .await;
    assert!(reply.contains("could not be recorded"), "{reply}");
    assert_eq!(status(&replica, &id).await, ConfirmationStatus::Pending);
    let store = replica.approvals.store();
    assert!(!store.event_seen("evt-retried").await.expect("read"));
    drop(replica);

    let restarted = world.process().await;
    let (_, reply) = world.clicked(&restarted, &id, "evt-retried").await;
    assert!(reply.to_string().contains("Approved"), "{reply}");
    assert!(finished(run).await.tool_ran);
    assert_eq!((world.cards(), world.tool_runs()), (1, 1));
    scenario.teardown();
}

/// A quorum of two across crashes: the replica that counts the first
/// approval dies after committing it, before replying, and the agent's
/// process dies too. After the restart the vote is still there, the
/// platform's retry of the same press counts nothing, the same approver's
/// new press counts nothing either, and the second approver's press, on
/// another fresh replica, runs the re-run call once. One card throughout.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_quorum_keeps_its_first_vote_across_crashes() {
    let scenario = fail::FailScenario::setup();
    let world = world().await;
    let gate = json!({"approver_scope": "org_members", "timeout": "30s", "approvals": 2});
    let agent = process_with(&world.fake, &world.url, gate.clone()).await;
    let (run, id) = world.waiting(&agent).await;

    let replica = process_with(&world.fake, &world.url, gate.clone()).await;
    fail::cfg(crash_points::AFTER_DECISION, "return").expect("failpoint");
    let (_, reply) = world.clicked(&replica, &id, "evt-first").await;
    fail::remove(crash_points::AFTER_DECISION);
    assert!(
        !reply.to_string().contains("needs 1 more"),
        "the reply was lost: {reply}"
    );
    drop(replica);
    run.abort();
    drop(agent);

    let agent = process_with(&world.fake, &world.url, gate.clone()).await;
    let stored = agent
        .approvals
        .store()
        .get(&id)
        .await
        .expect("read")
        .expect("row");
    assert_eq!(stored.status, ConfirmationStatus::Pending);
    assert_eq!(stored.approved_by, ["bob"], "the first vote survived");
    let rerun = world.run(&agent);
    let replica = process_with(&world.fake, &world.url, gate.clone()).await;
    let (_, reply) = world.clicked(&replica, &id, "evt-first").await;
    assert!(reply.to_string().contains("already handled"), "{reply}");
    let (_, reply) = world.clicked(&replica, &id, "evt-bob-again").await;
    assert!(reply.to_string().contains("already approved"), "{reply}");
    assert!(!rerun.is_finished());

    let mut carol = CardClick::new(&id, ApprovalDecision::Approve, "ou_carol", CHAT);
    carol.event_id = Some("evt-carol".to_owned());
    let (_, reply) = world
        .fake
        .click(&replica.callback_url, &carol)
        .await
        .expect("the card has Approve");
    assert!(reply.to_string().contains("Approved"), "{reply}");
    assert!(finished(rerun).await.tool_ran);
    let stored = agent
        .approvals
        .store()
        .get(&id)
        .await
        .expect("read")
        .expect("row");
    assert_eq!(stored.approved_by, ["bob", "carol"]);
    assert_eq!((world.cards(), world.tool_runs()), (1, 1));
    scenario.teardown();
}

/// The replica dies after committing the decision, before replying: the
/// decision stands, the platform's retry is answered "already handled",
/// and the card is redrawn from the outbox by whichever sweeper runs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replica_killed_after_the_decision_before_the_reply() {
    let scenario = fail::FailScenario::setup();
    let world = world().await;
    let agent = world.process().await;
    let (run, id) = world.waiting(&agent).await;

    let (_, replica) = world
        .click_on_crashing_replica(crash_points::AFTER_DECISION, &id, "evt-1")
        .await;
    drop(replica);
    assert!(finished(run).await.tool_ran);

    let restarted = world.process().await;
    let (_, reply) = world.clicked(&restarted, &id, "evt-1").await;
    assert!(reply.to_string().contains("already handled"), "{reply}");
    world.card_redrawn_without_buttons(&restarted, &id).await;
    assert_eq!((world.cards(), world.tool_runs()), (1, 1));
    scenario.teardown();
}

/// Two agent processes run the same call at once: one card, one run.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_agents_at_once_send_one_card() {
    let scenario = fail::FailScenario::setup();
    let world = world().await;
    let (a, b) = (world.process().await, world.process().await);
    let run_b = world.run(&b);
    let (run_a, id) = world.waiting(&a).await;
    world.clicked(&a, &id, "evt-1").await;
    let (report_a, report_b) = (finished(run_a).await, finished(run_b).await);
    assert!(
        report_a.tool_ran != report_b.tool_ran,
        "exactly one run runs the tool"
    );
    assert_eq!((world.cards(), world.tool_runs()), (1, 1));
    scenario.teardown();
}

/// Everything is down past the deadline: the first sweeper after the
/// restart expires the request and redraws its card without buttons, and
/// a re-run is blocked.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn expiry_while_everything_is_down() {
    let scenario = fail::FailScenario::setup();
    let world = world().await;
    let (id, _) = world.crashed_at(crash_points::WAITING, "1s").await;
    tokio::time::sleep(Duration::from_millis(1200)).await;

    let restarted = world.process().await;
    let report = restarted.approvals.sweep(&config()).await.expect("sweep");
    assert_eq!(report.expired, 1);
    assert_eq!(status(&restarted, &id).await, ConfirmationStatus::Expired);
    world.card_redrawn_without_buttons(&restarted, &id).await;
    assert!(!finished(world.run(&restarted)).await.tool_ran);
    assert_eq!((world.cards(), world.tool_runs()), (1, 0));
    scenario.teardown();
}

/// The process that was to redraw the card dies first: the update stays in
/// the outbox and another process's sweeper sends it after the back-off.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_card_update_lost_with_its_process_is_retried_by_a_sweeper() {
    let scenario = fail::FailScenario::setup();
    let world = world().await;
    let first = process(&world.fake, &world.url, "1s").await;
    fail::cfg(crash_points::BEFORE_CARD_UPDATE, "return").expect("failpoint");
    // The gate expires its own request at the deadline and tries to redraw
    // the card at once; the failpoint stops that attempt.
    assert!(!finished(world.run(&first)).await.tool_ran);
    let id = world.request_id(&first).await;
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(matches!(
        delivery(&first, &id).await,
        CardDelivery::Delivered { .. }
    ));
    assert!(world.fake.card_updates().is_empty());
    drop(first);
    fail::remove(crash_points::BEFORE_CARD_UPDATE);

    let other = world.process().await;
    world.card_redrawn_without_buttons(&other, &id).await;
    assert_eq!(world.fake.card_updates().len(), 1);
    scenario.teardown();
}
