//! Crash tests with real processes and `kill -9` (feature `failpoints`):
//! `cargo test -p hooks-std --features failpoints --test crash_processes`.
//!
//! The agent and the replica are separate `hooks-crash-process` processes
//! sharing one SQLite file; the fake Feishu runs in the test process. A
//! process started with `--crash-at POINT` freezes at that failpoint and
//! says so; the test then kills it with SIGKILL (`Child::kill`), restarts
//! what the scenario needs, and checks: at most one card, the decision
//! honoured, the tool run at most once (a line per run in a file), one
//! audit row per call that finished (a killed run writes none), and the
//! card finally showing the final state.

/// The kit's databases and gate checks, under the name the other suites use.
mod support {
    pub(crate) use hooks_testkit::database::*;
    pub(crate) use hooks_testkit::gate::*;
}

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use hooks_std::approval_gate::{
    ApprovalDecision, CardDelivery, ConfirmationStatus, ConfirmationStore, crash_points,
};
use hooks_testkit::feishu::{CardClick, FakeFeishu, FakeFeishuConfig, SignedCallback};
use serde_json::Value;
use tokio::sync::mpsc::{UnboundedReceiver, unbounded_channel};

const CHAT: &str = "oc_finance";

/// A running `hooks-crash-process` and the lines it prints.
struct Process {
    child: Child,
    lines: UnboundedReceiver<String>,
}

impl Process {
    fn start(args: &[&str]) -> Process {
        let mut child = Command::new(env!("CARGO_BIN_EXE_hooks-crash-process"))
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start hooks-crash-process");
        let stdout = child.stdout.take().expect("stdout");
        let (sender, lines) = unbounded_channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if sender.send(line).is_err() {
                    return;
                }
            }
        });
        Process { child, lines }
    }

    /// The first line starting with `prefix` (within 20 s).
    async fn line(&mut self, prefix: &str) -> String {
        let wait = async {
            while let Some(line) = self.lines.recv().await {
                if line.starts_with(prefix) {
                    return line;
                }
            }
            panic!("the process exited without printing {prefix}");
        };
        tokio::time::timeout(Duration::from_secs(20), wait)
            .await
            .unwrap_or_else(|_| panic!("no {prefix} line within 20 s"))
    }

    /// SIGKILL, and reap.
    fn kill9(&mut self) {
        self.child.kill().expect("kill -9");
        self.child.wait().expect("reap");
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// What outlives every process: the fake, the SQLite file, the tool's log.
struct World {
    fake: FakeFeishu,
    /// Where agents and replicas reach Feishu: the in-process fake, unless
    /// a test runs the fake in a process of its own.
    feishu_url: String,
    url: String,
    ran: String,
    store: ConfirmationStore,
    _dir: tempfile::TempDir,
}

async fn world() -> World {
    let (database, url, dir) = support::sqlite_file().await;
    let ran = dir.path().join("ran.log").display().to_string();
    let fake = FakeFeishu::start(FakeFeishuConfig::default())
        .await
        .expect("fake feishu");
    World {
        feishu_url: fake.base_url().to_owned(),
        fake,
        url,
        ran,
        store: ConfirmationStore::new(database),
        _dir: dir,
    }
}

impl World {
    fn agent(&self, extra: &[&str]) -> Process {
        let mut args = vec![
            "agent",
            "--db",
            &self.url,
            "--feishu",
            &self.feishu_url,
            "--ran",
            &self.ran,
        ];
        args.extend_from_slice(extra);
        Process::start(&args)
    }

    /// A replica and its callback URL.
    async fn replica(&self, extra: &[&str]) -> (Process, String) {
        let mut args = vec!["replica", "--db", &self.url, "--feishu", &self.feishu_url];
        args.extend_from_slice(extra);
        let mut process = Process::start(&args);
        let ready = process.line("READY ").await;
        let url = ready.trim_start_matches("READY ").to_owned();
        (process, url)
    }

    fn tool_runs(&self) -> usize {
        std::fs::read_to_string(&self.ran)
            .map(|log| log.lines().count())
            .unwrap_or(0)
    }

    fn cards(&self) -> usize {
        self.fake.sent_cards().len()
    }

    async fn request_id(&self) -> String {
        self.store
            .by_key("6:conv-1:c1")
            .await
            .expect("read")
            .expect("the request was created")
            .id
    }

    async fn delivery(&self, id: &str) -> CardDelivery {
        self.store
            .delivery(id)
            .await
            .expect("read")
            .expect("request")
    }

    async fn status(&self, id: &str) -> ConfirmationStatus {
        self.store
            .get(id)
            .await
            .expect("read")
            .expect("request")
            .status
    }

    /// Waits (at most 10 s) until `check` holds on the request `id`.
    async fn until(
        &self,
        id: &str,
        what: &str,
        check: impl Fn(&CardDelivery, ConfirmationStatus) -> bool,
    ) {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        loop {
            if check(&self.delivery(id).await, self.status(id).await) {
                return;
            }
            assert!(tokio::time::Instant::now() < deadline, "never: {what}");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    fn approve(&self, id: &str, event: &str) -> CardClick {
        let mut click = CardClick::new(id, ApprovalDecision::Approve, "ou_bob", CHAT);
        click.event_id = Some(event.to_owned());
        click
    }

    /// The audit log's outcomes, in order: one row per call that finished
    /// (a killed process writes none).
    async fn audit(&self) -> Vec<String> {
        let pool = self
            .store
            .database()
            .sqlite()
            .expect("these tests use SQLite");
        sqlx::query_scalar("SELECT outcome FROM connector_call_logs ORDER BY id")
            .fetch_all(pool)
            .await
            .expect("read the audit log")
    }

    /// `agent` ran the call: one card, one tool run, one audit row `ok`.
    async fn ran_once(&self, agent: &mut Process) {
        let outcome = agent.line("OUTCOME").await;
        assert!(outcome.contains("tool_ran=true"), "{outcome}");
        assert_eq!((self.cards(), self.tool_runs()), (1, 1));
        assert_eq!(self.audit().await, ["ok"]);
    }

    /// Starts an agent that freezes at failpoint `point`, kills it there
    /// with SIGKILL, and returns the request's id.
    async fn agent_killed_at(&self, point: &str, extra: &[&str]) -> String {
        let mut args = vec!["--crash-at", point];
        args.extend_from_slice(extra);
        let mut agent = self.agent(&args);
        agent.line("REACHED").await;
        agent.kill9();
        self.request_id().await
    }

    /// Starts an agent and waits for its card: the agent and the request's id.
    async fn waiting_agent(&self) -> (Process, String) {
        let agent = self.agent(&[]);
        self.fake
            .wait_for_card(1, Duration::from_secs(20))
            .await
            .expect("card");
        (agent, self.request_id().await)
    }

    /// Approves `id` through the replica at `callback`: the HTTP status
    /// and the reply.
    async fn approve_at(&self, callback: &str, id: &str) -> (u16, Value) {
        self.fake
            .click(callback, &self.approve(id, "evt-1"))
            .await
            .expect("the card has the button")
    }

    /// Starts a replica that freezes at failpoint `point` while handling
    /// an approval of `id` (event `event`), kills it there with SIGKILL, and
    /// returns the sealed callback (for the platform's retry); asserts the
    /// click got no answer.
    async fn replica_killed_at(&self, point: &str, id: &str, event: &str) -> SignedCallback {
        let (mut replica, callback) = self.replica(&["--crash-at", point]).await;
        let click = self.approve(id, event);
        let sealed = self
            .fake
            .seal(&self.fake.card_action_event(&click).expect("event"));
        let ((code, _), ()) = tokio::join!(self.fake.deliver(&callback, &sealed), async {
            replica.line("REACHED").await;
            replica.kill9();
        });
        assert_ne!(code, 200, "the killed replica never answered");
        sealed
    }

    /// Waits until the card of `id` is confirmed redrawn (a replica's
    /// sweeper, from the outbox); the redrawn card has no buttons.
    async fn card_redrawn_without_buttons(&self, id: &str) {
        self.until(id, "the card redrawn from the outbox", |delivery, _| {
            matches!(delivery, CardDelivery::Updated { .. })
        })
        .await;
        support::assert_last_card_update_has_no_buttons(&self.fake);
    }
}

/// The agent is killed after Feishu accepted the card, before its reference
/// was stored. The restarted agent re-sends after the lease with the same
/// `uuid`: Feishu (the fake, like the real API) posts nothing new; the
/// click on the one card runs the call once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn agent_killed_after_the_send_before_the_reference() {
    let world = world().await;
    let id = world.agent_killed_at(crash_points::AFTER_SEND, &[]).await;
    assert_eq!(world.cards(), 1);
    assert!(matches!(
        world.delivery(&id).await,
        CardDelivery::Claimed { .. }
    ));

    let (_replica, callback) = world.replica(&[]).await;
    support::age_card_claim(&world.url, &id).await;
    let mut agent = world.agent(&[]);
    world
        .until(
            &id,
            "the re-sent card's reference is stored",
            |delivery, _| matches!(delivery, CardDelivery::Delivered { .. }),
        )
        .await;
    assert_eq!(world.cards(), 1, "the re-send was deduplicated");
    let (code, reply) = world.approve_at(&callback, &id).await;
    assert_eq!(code, 200, "{reply}");
    world.ran_once(&mut agent).await;
}

/// The replica is killed between recording the event and the decision (in
/// one uncommitted transaction): the platform's retry of the same event on
/// a restarted replica decides, and the waiting agent runs the call once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replica_killed_between_event_and_decision() {
    let world = world().await;
    let (mut agent, id) = world.waiting_agent().await;
    let sealed = world
        .replica_killed_at(crash_points::BETWEEN_EVENT_AND_DECISION, &id, "evt-retried")
        .await;
    assert_eq!(world.status(&id).await, ConfirmationStatus::Pending);
    assert!(!world.store.event_seen("evt-retried").await.expect("read"));

    let (_replica, callback) = world.replica(&[]).await;
    let (code, reply): (u16, Value) = world.fake.deliver(&callback, &sealed).await;
    assert_eq!(code, 200);
    assert!(reply.to_string().contains("Approved"), "{reply}");
    world.ran_once(&mut agent).await;
}

/// The replica is killed after committing the decision, before replying:
/// the decision stands, the waiting agent runs the call once, the retried
/// event is answered "already handled", and the card is redrawn by the
/// restarted replica's sweeper.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replica_killed_after_the_decision_before_the_reply() {
    let world = world().await;
    let (mut agent, id) = world.waiting_agent().await;
    let sealed = world
        .replica_killed_at(crash_points::AFTER_DECISION, &id, "evt-1")
        .await;
    assert!(agent.line("OUTCOME").await.contains("tool_ran=true"));

    let (_replica, callback) = world.replica(&[]).await;
    let (_, reply) = world.fake.deliver(&callback, &sealed).await;
    assert!(reply.to_string().contains("already handled"), "{reply}");
    world.card_redrawn_without_buttons(&id).await;
    assert_eq!((world.cards(), world.tool_runs()), (1, 1));
    assert_eq!(world.audit().await, ["ok"]);
}

/// The agent is killed after consuming the approval, before the tool ran:
/// approved calls run at most once. The restarted agent is blocked, and the
/// request stays approved and consumed (how an operator sees it).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn agent_killed_during_the_tool() {
    let world = world().await;
    let mut agent = world.agent(&["--crash-at", crash_points::AFTER_CONSUME]);
    world
        .fake
        .wait_for_card(1, Duration::from_secs(20))
        .await
        .expect("card");
    let id = world.request_id().await;
    let (_replica, callback) = world.replica(&[]).await;
    world.approve_at(&callback, &id).await;
    agent.line("REACHED").await;
    agent.kill9();

    let mut again = world.agent(&[]);
    let outcome = again.line("OUTCOME").await;
    assert!(
        outcome.contains("tool_ran=false") && outcome.contains("already used"),
        "{outcome}"
    );
    let request = world.store.get(&id).await.expect("read").expect("request");
    assert_eq!(request.status, ConfirmationStatus::Approved);
    assert!(request.consumed_at_ms.is_some());
    assert_eq!((world.cards(), world.tool_runs()), (1, 0));
    assert_eq!(
        world.audit().await,
        ["blocked"],
        "the killed run wrote none"
    );
}

/// The agent is killed while waiting and nothing runs past the deadline: the
/// first replica to start expires the request and its card is redrawn
/// without buttons from the outbox.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn expiry_while_everything_is_down() {
    let world = world().await;
    let id = world
        .agent_killed_at(crash_points::WAITING, &["--timeout", "1s"])
        .await;
    tokio::time::sleep(Duration::from_millis(1200)).await;

    let (_replica, _) = world.replica(&[]).await;
    world.card_redrawn_without_buttons(&id).await;
    assert_eq!(world.status(&id).await, ConfirmationStatus::Expired);
    assert_eq!((world.cards(), world.tool_runs()), (1, 0));
    assert!(world.audit().await.is_empty(), "the killed run wrote none");
}

/// The agent is killed before the claim: no card can exist; a re-run sends
/// the one card and runs once approved.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn agent_killed_before_the_claim() {
    let world = world().await;
    let id = world.agent_killed_at(crash_points::AFTER_CREATE, &[]).await;
    assert_eq!(world.delivery(&id).await, CardDelivery::Unclaimed);

    let (mut again, _) = world.waiting_agent().await;
    let (_replica, callback) = world.replica(&[]).await;
    world.approve_at(&callback, &id).await;
    world.ran_once(&mut again).await;
}

/// The agent is killed after claiming, before calling Feishu: a replica's
/// sweeper does not cancel the claimed request; after the lease the re-run
/// sends the one card (the request id as its `uuid`) and runs once approved.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn agent_killed_after_the_claim_before_the_send() {
    let world = world().await;
    let id = world.agent_killed_at(crash_points::AFTER_CLAIM, &[]).await;
    assert_eq!(world.cards(), 0);
    let (_replica, callback) = world.replica(&[]).await;
    // The replica sweeps every 200 ms; a claimed request is no orphan.
    tokio::time::sleep(Duration::from_millis(600)).await;
    assert_eq!(world.status(&id).await, ConfirmationStatus::Pending);

    support::age_card_claim(&world.url, &id).await;
    let (mut again, _) = world.waiting_agent().await;
    assert_eq!(
        world.fake.sent_cards()[0].uuid.as_deref(),
        Some(id.as_str())
    );
    world
        .until(&id, "the card's reference is stored", |delivery, _| {
            matches!(delivery, CardDelivery::Delivered { .. })
        })
        .await;
    world.approve_at(&callback, &id).await;
    world.ran_once(&mut again).await;
}

/// The agent is killed while waiting and the approver decides while it is
/// down: the re-run sends nothing and runs the call once, at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn agent_killed_while_waiting_then_approved() {
    let world = world().await;
    let id = world.agent_killed_at(crash_points::WAITING, &[]).await;
    let (_replica, callback) = world.replica(&[]).await;
    let (code, reply) = world.approve_at(&callback, &id).await;
    assert_eq!(code, 200, "{reply}");

    let mut again = world.agent(&[]);
    assert!(again.line("OUTCOME").await.contains("tool_ran=true"));
    assert_eq!((world.cards(), world.tool_runs()), (1, 1));
    world.card_redrawn_without_buttons(&id).await;
    assert_eq!(world.audit().await, ["ok"]);
}

/// Two agent processes run the same call at once: one card, one tool run,
/// the other run blocked.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_agents_at_once() {
    let world = world().await;
    let mut b = world.agent(&[]);
    let (mut a, id) = world.waiting_agent().await;
    let (_replica, callback) = world.replica(&[]).await;
    world.approve_at(&callback, &id).await;
    let (outcome_a, outcome_b) = (a.line("OUTCOME").await, b.line("OUTCOME").await);
    assert!(
        outcome_a.contains("tool_ran=true") != outcome_b.contains("tool_ran=true"),
        "{outcome_a} / {outcome_b}"
    );
    assert_eq!((world.cards(), world.tool_runs()), (1, 1));
    let mut audit = world.audit().await;
    audit.sort();
    assert_eq!(audit, ["blocked", "ok"], "one row per attempted call");
}

/// The fake Feishu in a process of its own, driven over HTTP: the agent is
/// killed after the send, before the reference; the re-send after the lease
/// reaches the fake process with the same `uuid` and posts nothing new; a
/// press through the fake's control endpoint runs the call once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn feishu_in_its_own_process() {
    let mut world = world().await;
    let mut feishu = Process::start(&["fake"]);
    world.feishu_url = feishu
        .line("READY ")
        .await
        .trim_start_matches("READY ")
        .to_owned();
    let http = reqwest::Client::builder().no_proxy().build().expect("http");
    let sent = || async {
        let cards: Vec<Value> = http
            .get(format!("{}/fake/sent", world.feishu_url))
            .send()
            .await
            .expect("GET /fake/sent")
            .json()
            .await
            .expect("JSON");
        cards
    };
    let id = world.agent_killed_at(crash_points::AFTER_SEND, &[]).await;
    assert_eq!(sent().await.len(), 1);

    let (_replica, callback) = world.replica(&[]).await;
    support::age_card_claim(&world.url, &id).await;
    let mut agent = world.agent(&[]);
    world
        .until(
            &id,
            "the re-sent card's reference is stored",
            |delivery, _| matches!(delivery, CardDelivery::Delivered { .. }),
        )
        .await;
    let cards = sent().await;
    assert_eq!(cards.len(), 1, "the re-send was deduplicated: {cards:?}");
    assert_eq!(cards[0]["uuid"], id.as_str());
    let pressed: Value = http
        .post(format!("{}/fake/click", world.feishu_url))
        .json(&serde_json::json!({
            "callback_url": callback,
            "request_id": id,
            "decision": "approve",
            "operator": "ou_bob",
            "chat_id": CHAT,
        }))
        .send()
        .await
        .expect("POST /fake/click")
        .json()
        .await
        .expect("JSON");
    assert_eq!(pressed["status"], 200, "{pressed}");
    assert!(agent.line("OUTCOME").await.contains("tool_ran=true"));
    assert_eq!(world.tool_runs(), 1);
    assert!(
        world.fake.sent_cards().is_empty(),
        "the in-process fake was not used"
    );
    feishu.kill9();
}
