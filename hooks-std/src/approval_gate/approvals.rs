//! `Approvals`: the approval state machine shared by the gate (which waits)
//! and the callback router (which decides), plus the background tasks that
//! wake waiting gates and sweep expired requests.

use std::sync::Arc;
use std::time::Duration;

use hooks_runtime::config::ConfigDuration;
use serde::Deserialize;
use tokio::task::JoinHandle;

use super::approvers::{Approver, ApproverDirectory, may_decide};
use super::card_outbox::{push_card_update, send_due_card_updates};
use super::crash_points::{self, crash_point};
use super::reply_window::ReplyWindow;
use super::request::{ApprovalDecision, ConfirmationRequest, ConfirmationStatus};
use super::store::{Cancel, ConfirmationStore, DecideOutcome, EventOutcome};
use super::wakeup::{Subscription, Waiters, listen_for_decisions, poll_decisions};
use crate::approval_gate::channel::{Channel, DecisionCallback, ToastKind, decision_reason};
use crate::storage::StorageError;

/// Timing of the background work behind [`Approvals`].
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ApprovalsConfig {
    /// The fallback poll for decisions whose notification was lost (default
    /// `"1500ms"`): one query per interval while any gate waits, none otherwise.
    #[serde(deserialize_with = "ConfigDuration::text")]
    pub poll_interval: Duration,
    /// How often pending requests past their deadline are expired and
    /// orphans are cancelled (default `"30s"`).
    #[serde(deserialize_with = "ConfigDuration::text")]
    pub sweep_interval: Duration,
    /// A pending request whose card was never delivered is cancelled after
    /// this long (default `"10m"`).
    #[serde(deserialize_with = "ConfigDuration::text")]
    pub orphan_ttl: Duration,
    /// Handled callback event ids are kept this long for dedup (default `"24h"`).
    #[serde(deserialize_with = "ConfigDuration::text")]
    pub event_retention: Duration,
    /// The first back-off of a card update the platform did not confirm
    /// (default `"5s"`), doubled per attempt up to 64 times; it also holds an
    /// update in flight, so no other replica sends it meanwhile.
    #[serde(deserialize_with = "ConfigDuration::text")]
    pub card_update_backoff: Duration,
}

impl Default for ApprovalsConfig {
    fn default() -> Self {
        ApprovalsConfig {
            poll_interval: Duration::from_millis(1500),
            sweep_interval: Duration::from_secs(30),
            orphan_ttl: Duration::from_secs(600),
            event_retention: Duration::from_secs(24 * 3600),
            card_update_backoff: Duration::from_secs(5),
        }
    }
}

/// What a decision callback came to, for the person who clicked.
#[derive(Debug, Clone, PartialEq)]
pub struct CallbackOutcome {
    /// The toast's tone.
    pub kind: ToastKind,
    /// The toast's text.
    pub message: String,
    /// The request as it now stands (shown again in the reply card), if the
    /// clicker may see it.
    pub request: Option<ConfirmationRequest>,
}

impl CallbackOutcome {
    /// No request has the id: nothing to show.
    fn unknown() -> Self {
        Self::new(
            ToastKind::Error,
            "Unknown approval request; nothing changed.",
            None,
        )
    }

    /// The decision could not be committed in time: nothing changed.
    fn unrecorded() -> Self {
        Self::new(
            ToastKind::Error,
            "Your decision could not be recorded (the database is busy or unavailable). \
             Nothing changed; please try again.",
            None,
        )
    }

    /// The request's card reference is not stored yet.
    fn card_not_recorded() -> Self {
        Self::new(
            ToastKind::Info,
            "This request's card is still being recorded; nothing changed. Please try again \
             in a moment.",
            None,
        )
    }

    /// The request was already decided, expired or cancelled.
    fn settled(request: ConfirmationRequest) -> Self {
        Self::new(ToastKind::Info, final_message(&request), Some(request))
    }

    fn new(
        kind: ToastKind,
        message: impl Into<String>,
        request: Option<ConfirmationRequest>,
    ) -> Self {
        CallbackOutcome {
            kind,
            message: message.into(),
            request,
        }
    }
}

/// Why a press on another message than the request's card changed nothing.
const NOT_FROM_CARD: &str = "This button is not on the card the approval gate sent for this \
    request; nothing changed. Decide on the gate's own card.";

/// Whether a click came from the card the gate sent ([`Approvals::card_check`]).
enum CardCheck {
    /// From that card (or the channel does not bind clicks to cards).
    Sent,
    /// The card's reference is not stored yet: nothing can be compared.
    NotYetRecorded,
    /// From another message, or an Approve the card could not offer: why,
    /// for the presser.
    Refused(&'static str),
}

/// How long a click's decision may take to be recorded, retries included:
/// the platform waits 3 s for the answer (Feishu and Slack), and the answer must leave
/// room for the HTTP exchange and for a commit already under way.
const RECORD_WINDOW: Duration = Duration::from_millis(2000);

/// How long the answer waits for a commit that started inside the window.
const COMMIT_GRACE: Duration = Duration::from_millis(600);

/// What one sweep did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SweepReport {
    /// Pending requests past their deadline, now expired.
    pub expired: usize,
    /// Pending requests whose card was never delivered, now cancelled.
    pub cancelled: usize,
    /// Old callback event ids forgotten.
    pub forgotten_events: u64,
    /// Cards of final requests redrawn from the outbox (platform confirmed).
    pub cards_updated: usize,
}

struct Inner {
    store: ConfirmationStore,
    card_update_backoff: Duration,
    channel: Arc<dyn Channel>,
    directory: Arc<dyn ApproverDirectory>,
    waiters: Arc<Waiters>,
    tasks: Vec<JoinHandle<()>>,
}

impl Drop for Inner {
    fn drop(&mut self) {
        for task in &self.tasks {
            task.abort();
        }
    }
}

/// The approval state machine of one channel: shared by
/// [`ApprovalGate`](super::ApprovalGate) hooks and the channel's callback
/// router. Cheap to clone. Its background tasks (decision listener, fallback
/// poll, sweeper) stop when the last clone is dropped.
#[derive(Clone)]
pub struct Approvals {
    inner: Arc<Inner>,
}

impl Approvals {
    /// Starts the approval machinery on `store`, talking through `channel`,
    /// resolving clickers with `directory`. Call inside a Tokio runtime.
    pub fn start(
        store: ConfirmationStore,
        channel: Arc<dyn Channel>,
        directory: Arc<dyn ApproverDirectory>,
        config: ApprovalsConfig,
    ) -> Self {
        let waiters = Arc::new(Waiters::default());
        let card_update_backoff = config.card_update_backoff;
        let mut tasks = vec![
            tokio::spawn(poll_decisions(
                store.clone(),
                Arc::downgrade(&waiters),
                config.poll_interval.max(Duration::from_millis(10)),
            )),
            tokio::spawn(listen_for_decisions(
                store.database().clone(),
                Arc::downgrade(&waiters),
            )),
        ];
        tasks.push(tokio::spawn(sweep_forever(
            store.clone(),
            channel.clone(),
            Arc::downgrade(&waiters),
            config,
        )));
        Approvals {
            inner: Arc::new(Inner {
                store,
                card_update_backoff,
                channel,
                directory,
                waiters,
                tasks,
            }),
        }
    }

    /// The store.
    pub fn store(&self) -> &ConfirmationStore {
        &self.inner.store
    }

    /// The channel.
    pub fn channel(&self) -> &Arc<dyn Channel> {
        &self.inner.channel
    }

    /// The approver directory, for channels that list requests by scope.
    #[cfg(feature = "web")]
    pub(crate) fn directory(&self) -> &Arc<dyn ApproverDirectory> {
        &self.inner.directory
    }

    pub(crate) fn subscribe(&self, id: &str) -> Subscription {
        self.inner.waiters.subscribe(id)
    }

    /// Applies a verified button press: event-id dedup, channel binding,
    /// the card it came from (on a channel that binds presses to it, see
    /// [`Channel::binds_clicks_to_card`]), approver scope, then the
    /// first-decision-wins update. Nothing changes unless every check
    /// passes.
    ///
    /// The answer is due within the platform's reply window (Feishu waits
    /// 3 s), and it is true: a decision the database cannot take (busy,
    /// locked, unreachable) is retried for up to 2 s; if it is not
    /// committed by then, the approver is told it failed and it is rolled
    /// back, never committed later. Only if its commit had already started
    /// (and takes more than 0.6 s further) does the answer say the outcome
    /// will show on the card, which is then redrawn once the commit lands.
    /// Call inside a Tokio runtime.
    pub async fn handle_callback(&self, callback: &DecisionCallback) -> CallbackOutcome {
        let window = ReplyWindow::new(RECORD_WINDOW);
        let (this, click, recorder_window) = (self.clone(), callback.clone(), window.clone());
        // A task of its own, so a commit under way when the answer is due
        // still completes (and wakes its gate).
        let mut recording =
            tokio::spawn(async move { this.record_callback(&click, &recorder_window).await });
        let joined = match tokio::time::timeout_at(window.deadline(), &mut recording).await {
            Ok(joined) => joined,
            Err(_) if window.close() => {
                tracing::error!(
                    request = %callback.request_id,
                    "an approval decision could not be recorded within the reply window"
                );
                return CallbackOutcome::unrecorded();
            }
            Err(_) => match tokio::time::timeout(COMMIT_GRACE, &mut recording).await {
                Ok(joined) => joined,
                Err(_) => {
                    self.redraw_when_committed(recording);
                    return CallbackOutcome::new(
                        ToastKind::Info,
                        "Your decision was being saved when the reply was due. The card will \
                         show the outcome; if it still shows the buttons, nothing was recorded: \
                         please try again.",
                        None,
                    );
                }
            },
        };
        joined.unwrap_or_else(|panicked| {
            tracing::error!(%panicked, "approval callback handling failed");
            CallbackOutcome::unrecorded()
        })
    }

    /// Handles a click, retrying storage failures while `window` allows.
    async fn record_callback(
        &self,
        callback: &DecisionCallback,
        window: &ReplyWindow,
    ) -> CallbackOutcome {
        let mut pause = Duration::from_millis(25);
        loop {
            match self.try_handle_callback(callback, window).await {
                Ok(outcome) => return outcome,
                // A failed commit is not retried: the replier is waiting on it.
                Err(error) if window.commit_started() || !window.open_after(pause) => {
                    tracing::error!(%error, request = %callback.request_id, "approval callback failed");
                    return CallbackOutcome::unrecorded();
                }
                Err(error) => {
                    tracing::warn!(%error, request = %callback.request_id, "approval callback: retrying");
                    tokio::time::sleep(pause).await;
                    pause = (pause * 2).min(Duration::from_millis(400));
                }
            }
        }
    }

    async fn try_handle_callback(
        &self,
        callback: &DecisionCallback,
        window: &ReplyWindow,
    ) -> Result<CallbackOutcome, StorageError> {
        let store = &self.inner.store;
        let kind = self.inner.channel.kind();
        if store.event_seen(&callback.event_id).await? {
            return self.already_handled(callback).await;
        }
        let Some(mut request) = store.get(&callback.request_id).await? else {
            return self.refuse(callback, CallbackOutcome::unknown()).await;
        };
        // A press right after the card appeared may beat the gate storing
        // the card's reference (it does so as soon as the platform answers
        // the send): wait for it a little, within the reply window.
        let mut pause = Duration::from_millis(20);
        while matches!(
            self.card_check(&request, callback),
            CardCheck::NotYetRecorded
        ) && window.open_after(pause + RECORD_WINDOW / 2)
        {
            tokio::time::sleep(pause).await;
            pause = (pause * 2).min(Duration::from_millis(200));
            match store.get(&callback.request_id).await? {
                Some(now) => request = now,
                None => return self.refuse(callback, CallbackOutcome::unknown()).await,
            }
        }
        if !self.belongs_here(&request, callback) {
            let outcome = CallbackOutcome::new(
                ToastKind::Error,
                "This approval request belongs to another channel; nothing changed.",
                None,
            );
            return self.refuse(callback, outcome).await;
        }
        match self.card_check(&request, callback) {
            CardCheck::Sent => {}
            // Not recorded as handled: the same click, redelivered once the
            // reference is stored, is decided then.
            CardCheck::NotYetRecorded => return Ok(CallbackOutcome::card_not_recorded()),
            CardCheck::Refused(why) => {
                let outcome = CallbackOutcome::new(ToastKind::Error, why, None);
                return self.refuse(callback, outcome).await;
            }
        }
        if request.status.is_terminal() {
            return self
                .refuse(callback, CallbackOutcome::settled(request))
                .await;
        }
        let approver = match self.inner.directory.resolve(kind, &callback.operator).await {
            Ok(Some(approver)) => approver,
            Ok(None) => {
                let outcome = CallbackOutcome::new(
                    ToastKind::Error,
                    "You are not a known approver; nothing changed.",
                    Some(request),
                );
                return self.refuse(callback, outcome).await;
            }
            Err(error) => {
                tracing::error!(%error, "approver directory failed");
                return Ok(CallbackOutcome::new(
                    ToastKind::Error,
                    "Your identity could not be checked; nothing changed. Please try again.",
                    Some(request),
                ));
            }
        };
        if let Some(refusal) = self
            .check_scope(&request, &approver, callback.decision)
            .await
        {
            return self.refuse(callback, refusal).await;
        }
        let commit_window = window.clone();
        let recorded = store
            .decide_for_event(
                &callback.event_id,
                kind,
                &request.id,
                callback.decision,
                &approver.user_id,
                callback.reason.as_deref(),
                move || commit_window.begin_commit(),
            )
            .await?;
        crash_point!(crash_points::AFTER_DECISION, |_| Err(StorageError::Query {
            what: format!("failpoint {}", crash_points::AFTER_DECISION),
            source: sqlx::Error::Protocol("the replica stopped before replying".into()),
        }));
        Ok(match recorded {
            EventOutcome::Recorded(outcome) => self.decided(*outcome, callback.decision),
            EventOutcome::Replayed => return self.already_handled(callback).await,
            EventOutcome::Withdrawn => CallbackOutcome::unrecorded(),
        })
    }

    /// A click refused before anything was decided: its event id is still
    /// recorded, so a replay of it (even re-signed by someone in scope)
    /// changes nothing either.
    async fn refuse(
        &self,
        callback: &DecisionCallback,
        refusal: CallbackOutcome,
    ) -> Result<CallbackOutcome, StorageError> {
        let kind = self.inner.channel.kind();
        if self
            .inner
            .store
            .record_event(&callback.event_id, kind)
            .await?
        {
            Ok(refusal)
        } else {
            self.already_handled(callback).await
        }
    }

    async fn already_handled(
        &self,
        callback: &DecisionCallback,
    ) -> Result<CallbackOutcome, StorageError> {
        let current = self.inner.store.get(&callback.request_id).await?;
        let current = current.filter(|request| {
            self.belongs_here(request, callback)
                && matches!(self.card_check(request, callback), CardCheck::Sent)
        });
        Ok(CallbackOutcome::new(
            ToastKind::Info,
            "This click was already handled.",
            current,
        ))
    }

    /// Decides request `id` as `approver` (scope-checked, first decision
    /// wins), e.g. from a local approvals page. Channel callbacks go through
    /// [`handle_callback`](Self::handle_callback) instead.
    pub async fn decide(
        &self,
        id: &str,
        approver: &Approver,
        decision: ApprovalDecision,
        reason: Option<&str>,
    ) -> Result<CallbackOutcome, StorageError> {
        let Some(request) = self.inner.store.get(id).await? else {
            return Ok(CallbackOutcome::unknown());
        };
        if request.status.is_terminal() {
            return Ok(CallbackOutcome::settled(request));
        }
        if let Some(refusal) = self.check_scope(&request, approver, decision).await {
            return Ok(refusal);
        }
        // Held to the same rule as a reason typed in a channel.
        let reason = reason.and_then(decision_reason);
        // No callback reply redraws this card: the outbox does.
        let outcome = self
            .inner
            .store
            .decide(&request.id, decision, &approver.user_id, reason.as_deref())
            .await?;
        match &outcome {
            DecideOutcome::Decided(decided) | DecideOutcome::PastDeadline(decided) => {
                self.push_card_update(&decided.id);
            }
            DecideOutcome::AlreadyFinal(_)
            | DecideOutcome::NotFound
            | DecideOutcome::Counted(_)
            | DecideOutcome::AlreadyCounted(_) => {}
        }
        Ok(self.decided(outcome, decision))
    }

    /// `None` if `approver` may make `decision` on `request`, else the
    /// refusal: out of scope, or the requester approving a request that
    /// excludes them.
    async fn check_scope(
        &self,
        request: &ConfirmationRequest,
        approver: &Approver,
        decision: ApprovalDecision,
    ) -> Option<CallbackOutcome> {
        if decision == ApprovalDecision::Approve
            && request.exclude_requester
            && approver.user_id == request.initiator_user_id
        {
            return Some(CallbackOutcome::new(
                ToastKind::Error,
                "You asked for this call, so you may not approve it: it needs the approval of \
                 someone else. You may reject it. Nothing changed.",
                Some(request.clone()),
            ));
        }
        match may_decide(self.inner.directory.as_ref(), request, approver).await {
            Ok(true) => None,
            Ok(false) => Some(CallbackOutcome::new(
                ToastKind::Error,
                format!(
                    "You may not decide this request: it needs {}. Nothing changed.",
                    request.approvers_text()
                ),
                Some(request.clone()),
            )),
            Err(error) => {
                tracing::error!(%error, "approver directory failed");
                Some(CallbackOutcome::new(
                    ToastKind::Error,
                    "Your permission could not be checked; nothing changed. Please try again.",
                    Some(request.clone()),
                ))
            }
        }
    }

    /// The answer to a committed decision attempt; wakes the request's gates.
    fn decided(&self, outcome: DecideOutcome, decision: ApprovalDecision) -> CallbackOutcome {
        match outcome {
            DecideOutcome::Decided(decided) => {
                self.inner.waiters.wake(&decided.id);
                let verb = match decision {
                    ApprovalDecision::Approve => "Approved",
                    ApprovalDecision::Reject => "Rejected",
                };
                CallbackOutcome::new(ToastKind::Success, format!("{verb}."), Some(decided))
            }
            DecideOutcome::PastDeadline(expired) => {
                self.inner.waiters.wake(&expired.id);
                CallbackOutcome::new(
                    ToastKind::Info,
                    "This request expired before your decision; nothing was approved.",
                    Some(expired),
                )
            }
            DecideOutcome::AlreadyFinal(current) => CallbackOutcome::settled(current),
            DecideOutcome::NotFound => CallbackOutcome::unknown(),
            DecideOutcome::Counted(counted) => {
                let missing = counted.approvals_missing();
                let message = format!(
                    "Your approval is counted: {}. It needs {missing} more approval{} from \
                     someone else before the call runs.",
                    counted.quorum_text().unwrap_or_default(),
                    if missing == 1 { "" } else { "s" }
                );
                CallbackOutcome::new(ToastKind::Success, message, Some(counted))
            }
            DecideOutcome::AlreadyCounted(current) => CallbackOutcome::new(
                ToastKind::Info,
                format!(
                    "You have already approved this request ({}); it needs someone else's \
                     approval. Nothing changed.",
                    current.quorum_text().unwrap_or_default()
                ),
                Some(current),
            ),
        }
    }

    /// The reply went out before a commit's outcome was known: once it is,
    /// redraw the card, so the approver sees whether their decision stands.
    fn redraw_when_committed(&self, recording: JoinHandle<CallbackOutcome>) {
        let this = self.clone();
        tokio::spawn(async move {
            if let Ok(outcome) = recording.await
                && let Some(request) = outcome
                    .request
                    .filter(|request| request.status.is_terminal())
            {
                this.push_card_update(&request.id);
            }
        });
    }

    /// Redraws the card of final request `id` from the outbox now, in the
    /// background (a sweeper retries it if this fails or the process dies).
    pub(crate) fn push_card_update(&self, id: &str) {
        push_card_update(
            &self.inner.store,
            &self.inner.channel,
            id,
            self.inner.card_update_backoff,
        );
    }

    /// Whether `callback` came from the card the gate sent for `request`,
    /// on a channel that binds clicks to it
    /// ([`Channel::binds_clicks_to_card`]): the same message, and for an
    /// Approve the digest of the arguments that card showed in full.
    fn card_check(&self, request: &ConfirmationRequest, callback: &DecisionCallback) -> CardCheck {
        if !self.inner.channel.binds_clicks_to_card() {
            return CardCheck::Sent;
        }
        let Some(sent) = request.message_ref.as_deref() else {
            return if request.status.is_terminal() {
                // Its card was never recorded and never will be.
                CardCheck::Refused(NOT_FROM_CARD)
            } else {
                CardCheck::NotYetRecorded
            };
        };
        if callback.message_ref.as_deref() != Some(sent) {
            return CardCheck::Refused(NOT_FROM_CARD);
        }
        if callback.decision == ApprovalDecision::Approve
            && request.status == ConfirmationStatus::Pending
            && callback.shown_digest.as_deref() != Some(request.args_digest.as_str())
        {
            return CardCheck::Refused(
                "This Approve button was not on a card that showed every argument of the \
                 request; nothing changed. Reject it, or decide where all of its arguments \
                 are shown.",
            );
        }
        CardCheck::Sent
    }

    fn belongs_here(&self, request: &ConfirmationRequest, callback: &DecisionCallback) -> bool {
        let channel = &self.inner.channel;
        request.channel_kind == channel.kind()
            && request.channel_id == channel.channel_id()
            && callback.channel_id == request.channel_id
    }

    /// Expires overdue requests, cancels orphans, sends due card updates from
    /// the outbox and forgets old event ids now (the background sweeper does
    /// this every `sweep_interval`).
    pub async fn sweep(&self, config: &ApprovalsConfig) -> Result<SweepReport, StorageError> {
        sweep_once(
            &self.inner.store,
            &self.inner.channel,
            &self.inner.waiters,
            config,
        )
        .await
    }

    /// Cancels request `id` (if still pending and its card was never
    /// delivered) and wakes every run waiting on it.
    pub(crate) async fn cancel(
        &self,
        id: &str,
        reason: &str,
    ) -> Result<Option<ConfirmationRequest>, StorageError> {
        let cancelled = self
            .inner
            .store
            .cancel(Cancel::Undelivered(id), reason)
            .await?;
        if cancelled.is_some() {
            self.inner.waiters.wake(id);
        }
        Ok(cancelled)
    }

    /// The pending request of one tool call, if any (the gate keys it by
    /// the call's conversation id and tool call id): for a front end that
    /// tells the person waiting where the decision is made. Call inside a
    /// Tokio runtime.
    pub async fn pending_for_call(
        &self,
        conversation_id: &str,
        tool_call_id: &str,
    ) -> Result<Option<ConfirmationRequest>, StorageError> {
        for key in super::hook::call_keys(conversation_id, tool_call_id)
            .into_iter()
            .flatten()
        {
            if let Some(request) = self.inner.store.by_key(&key).await?
                && request.status == ConfirmationStatus::Pending
            {
                return Ok(Some(request));
            }
        }
        Ok(None)
    }

    /// Withdraws the pending requests of one tool call (the gate keys them
    /// by the call's conversation id and tool call id): each is cancelled
    /// with `reason`, the runs still waiting on it wake (and block), and
    /// its card is redrawn as cancelled, so nobody approves a call that
    /// will never run and a later click on it changes nothing. For a front
    /// end whose client cancelled a call while it waited for approval.
    /// Returns the requests withdrawn (none when the call had none pending).
    /// Call inside a Tokio runtime.
    pub async fn withdraw_call(
        &self,
        conversation_id: &str,
        tool_call_id: &str,
        reason: &str,
    ) -> Result<Vec<ConfirmationRequest>, StorageError> {
        let mut withdrawn = Vec::new();
        for key in super::hook::call_keys(conversation_id, tool_call_id)
            .into_iter()
            .flatten()
        {
            if let Some(request) = self
                .inner
                .store
                .cancel(Cancel::Withdrawn(&key), reason)
                .await?
            {
                self.inner.waiters.wake(&request.id);
                self.push_card_update(&request.id);
                withdrawn.push(request);
            }
        }
        Ok(withdrawn)
    }

    /// Marks request `id` expired (if still pending), wakes its waiters and
    /// updates its card. Returns the expired request.
    pub(crate) async fn expire(
        &self,
        id: &str,
    ) -> Result<Option<ConfirmationRequest>, StorageError> {
        let expired = self.inner.store.expire(id).await?;
        if expired.is_some() {
            self.inner.waiters.wake(id);
            self.push_card_update(id);
        }
        Ok(expired)
    }
}

/// The toast text for a request that can no longer be decided.
fn final_message(request: &ConfirmationRequest) -> String {
    let who = request.decided_by.as_deref().unwrap_or("someone");
    match request.status {
        ConfirmationStatus::Approved => format!("Already approved by {who}; nothing changed."),
        ConfirmationStatus::Rejected => format!("Already rejected by {who}; nothing changed."),
        ConfirmationStatus::Expired => {
            "This request expired without a decision; nothing changed.".to_owned()
        }
        ConfirmationStatus::Cancelled => "This request was cancelled; nothing changed.".to_owned(),
        ConfirmationStatus::Pending => "This request is still pending.".to_owned(),
    }
}

async fn sweep_once(
    store: &ConfirmationStore,
    channel: &Arc<dyn Channel>,
    waiters: &Waiters,
    config: &ApprovalsConfig,
) -> Result<SweepReport, StorageError> {
    let (kind, id) = (channel.kind(), channel.channel_id());
    let swept = store
        .sweep(kind, id, config.orphan_ttl, config.event_retention)
        .await?;
    for request in swept.expired.iter().chain(&swept.cancelled) {
        waiters.wake(&request.id);
    }
    // After expiring: the cards of requests expired just now go out at once.
    let cards_updated = send_due_card_updates(store, channel, config.card_update_backoff).await?;
    Ok(SweepReport {
        expired: swept.expired.len(),
        cancelled: swept.cancelled.len(),
        forgotten_events: swept.forgotten_events,
        cards_updated,
    })
}

async fn sweep_forever(
    store: ConfirmationStore,
    channel: Arc<dyn Channel>,
    waiters: std::sync::Weak<Waiters>,
    config: ApprovalsConfig,
) {
    let interval = config.sweep_interval.max(Duration::from_millis(10));
    loop {
        tokio::time::sleep(interval).await;
        let Some(waiters) = waiters.upgrade() else {
            return;
        };
        if let Err(error) = sweep_once(&store, &channel, &waiters, &config).await {
            tracing::warn!(%error, "approval sweeper failed; retrying next interval");
        }
    }
}
