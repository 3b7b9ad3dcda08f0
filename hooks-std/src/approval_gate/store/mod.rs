//! `ConfirmationStore`: the durable truth about confirmation requests, as a
//! small state machine.
//!
//! A request is created `pending`; it leaves `pending` once, by a decision
//! (approved or rejected, only before its deadline), by expiring, or by
//! being cancelled, and an approval is stamped used once. Each method is one
//! state change or one read: a plain transaction of one to three statements
//! (see [`sql`] for the statements of each backend), whose conditions let
//! only a row in the expected state move, on the database's clock, so
//! concurrent deciders and replicas agree and exactly one of them wins.

mod sql;

use std::time::Duration;

use serde_json::Value;
use sqlx::types::Json;
use sqlx::{FromRow as _, Row as _};

use super::card_claim::CardClaim;
use super::card_delivery::CardDelivery;
use super::crash_points::{self, crash_point};
use super::request::{ApprovalDecision, ApproverScope, ConfirmationMode, ConfirmationRequest};
use crate::storage::{BeginWrite as _, Database, Pool, StorageError, on_pool};
use sql::Sql;

/// How many times the outbox tries to redraw one card (with the default
/// 5 s back-off, over about 80 minutes) before giving up; the last error
/// stays in `card_update_error`.
pub const MAX_CARD_UPDATE_ATTEMPTS: u32 = 20;

/// What the gate asks the store to create (or resume).
#[derive(Debug, Clone, PartialEq)]
pub struct NewConfirmation {
    /// `conversation_id` + `tool_call_id`.
    pub idempotency_key: String,
    /// The gated tool.
    pub tool_name: String,
    /// Its arguments.
    pub args: Value,
    /// Digest of tool name and arguments.
    pub args_digest: String,
    /// The calling agent.
    pub agent_id: String,
    /// The user the agent acts for.
    pub initiator_user_id: String,
    /// The user's org.
    pub org_id: String,
    /// Who may decide.
    pub approver_scope: ApproverScope,
    /// Who may decide whatever the scope.
    pub approver_allowlist: Vec<String>,
    /// The channel kind.
    pub channel_kind: String,
    /// The channel instance.
    pub channel_id: String,
    /// Why confirmation is required.
    pub mode: ConfirmationMode,
    /// How long from now the request may be decided.
    pub timeout: Duration,
    /// How many people must approve, and whether the requester may.
    pub quorum: Quorum,
}

/// How many distinct people must approve a request, and whether the user
/// on whose behalf the call was made may be one of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Quorum {
    /// Approvals needed, from distinct approvers: 1 to [`MAX_APPROVALS`].
    pub approvals: u32,
    /// The requester may reject but not approve (four eyes).
    pub exclude_requester: bool,
}

/// The most approvals a request can require.
pub const MAX_APPROVALS: u32 = 10;

impl Default for Quorum {
    /// One approval; the requester may approve (when the scope lets them).
    fn default() -> Self {
        Quorum {
            approvals: 1,
            exclude_requester: false,
        }
    }
}

/// What became of an attempt to decide a request.
#[derive(Debug, Clone, PartialEq)]
pub enum DecideOutcome {
    /// The decision was recorded; the request as it now stands.
    Decided(ConfirmationRequest),
    /// No request has this id.
    NotFound,
    /// The request was already decided, expired or cancelled: nothing changed.
    AlreadyFinal(ConfirmationRequest),
    /// The request is past its deadline: it is now marked expired, nothing was decided.
    PastDeadline(ConfirmationRequest),
    /// The approval was counted, and the request still needs more (it stays
    /// pending); the request as it now stands.
    Counted(ConfirmationRequest),
    /// This approver had already approved the still-pending request:
    /// nothing changed.
    AlreadyCounted(ConfirmationRequest),
}

/// What became of a decision that arrived as a callback event
/// ([`ConfirmationStore::decide_for_event`]).
#[derive(Debug, Clone, PartialEq)]
pub enum EventOutcome {
    /// The event id was handled before (a replay or a platform retry):
    /// nothing changed.
    Replayed,
    /// The event id and the decision were committed together; how the
    /// request fared.
    Recorded(Box<DecideOutcome>),
    /// The caller withdrew before the commit (its reply was already due):
    /// rolled back, nothing changed, the event id stays unused.
    Withdrawn,
}

/// What one sweep of a channel changed ([`ConfirmationStore::sweep`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Swept {
    /// Pending requests past their deadline, now expired.
    pub expired: Vec<ConfirmationRequest>,
    /// Pending requests whose card was never claimed, now cancelled.
    pub cancelled: Vec<ConfirmationRequest>,
    /// Handled callback events forgotten.
    pub forgotten_events: u64,
}

/// Which requests of a channel [`ConfirmationStore::list`] reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Listing<'a> {
    /// Pending requests still before their deadline, oldest first, at most
    /// `limit`, starting after the request `after` names (its
    /// `created_at_ms` and id; `None`: from the oldest).
    Pending {
        /// Where the previous page ended.
        after: Option<(i64, &'a str)>,
        /// The most to return.
        limit: u32,
    },
    /// Requests that left `pending`, most recently decided first, at most
    /// `limit`.
    RecentlyFinal {
        /// The most to return.
        limit: u32,
    },
}

/// Which request [`ConfirmationStore::cancel`] cancels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cancel<'a> {
    /// Request `id`, only if its card was never delivered (so nobody could
    /// ever decide it: its send failed).
    Undelivered(&'a str),
    /// The request created under this idempotency key, whether or not its
    /// card was delivered: its call will not run (the caller gave up).
    Withdrawn(&'a str),
}

/// Which card updates [`ConfirmationStore::take_card_updates`] takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CardUpdates<'a> {
    /// The update of request `id`, if due (right after its decision).
    Of(&'a str),
    /// Up to `limit` due updates of a channel, oldest decision first (the
    /// sweeper's pass).
    Due {
        /// The channel kind.
        channel_kind: &'a str,
        /// The channel instance.
        channel_id: &'a str,
        /// The most to take.
        limit: u32,
    },
}

/// Confirmation requests in the hooks' database (`confirmation_requests`).
#[derive(Debug, Clone)]
pub struct ConfirmationStore {
    database: Database,
}

/// Decides request `$id` inside transaction `$tx` (statements `$sql`): the
/// decision if the request is pending and before its deadline; otherwise
/// the request is read, and a pending one past its deadline is expired.
/// Evaluates to `Result<DecideOutcome, sqlx::Error>`; the caller commits.
macro_rules! decide_in {
    ($tx:expr, $sql:expr, $id:expr, $decision:expr, $decided_by:expr, $reason:expr) => {
        async {
            // An approval is counted (and approves with the last one
            // needed); a rejection decides at once.
            let decided: Option<ConfirmationRequest> = match $decision {
                ApprovalDecision::Approve => {
                    sqlx::query_as($sql.approve)
                        .bind($decided_by)
                        .bind($reason)
                        .bind($id)
                        .fetch_optional(&mut *$tx)
                        .await?
                }
                ApprovalDecision::Reject => {
                    sqlx::query_as($sql.decide)
                        .bind($decision.status().as_str())
                        .bind($decided_by)
                        .bind($reason)
                        .bind($id)
                        .fetch_optional(&mut *$tx)
                        .await?
                }
            };
            if let Some(decided) = decided {
                return Ok::<_, sqlx::Error>(if decided.status.is_terminal() {
                    DecideOutcome::Decided(decided)
                } else {
                    DecideOutcome::Counted(decided)
                });
            }
            let found: Option<ConfirmationRequest> = sqlx::query_as($sql.get)
                .bind($id)
                .fetch_optional(&mut *$tx)
                .await?;
            Ok(match found {
                None => DecideOutcome::NotFound,
                Some(request) if request.status.is_terminal() => {
                    DecideOutcome::AlreadyFinal(request)
                }
                Some(request)
                    if $decision == ApprovalDecision::Approve
                        && request.approved_by.iter().any(|by| by == $decided_by) =>
                {
                    DecideOutcome::AlreadyCounted(request)
                }
                // Pending, yet not decidable: past its deadline.
                Some(request) => {
                    let expired: Option<ConfirmationRequest> = sqlx::query_as($sql.expire)
                        .bind($id)
                        .fetch_optional(&mut *$tx)
                        .await?;
                    match expired {
                        Some(expired) => DecideOutcome::PastDeadline(expired),
                        None => DecideOutcome::AlreadyFinal(request),
                    }
                }
            })
        }
        .await
    };
}

impl ConfirmationStore {
    /// A store on `database` (already migrated by [`Database::connect`]).
    pub fn new(database: Database) -> Self {
        ConfirmationStore { database }
    }

    /// The database behind the store.
    pub fn database(&self) -> &Database {
        &self.database
    }

    fn sql(&self) -> &'static Sql {
        match self.database.writer() {
            #[cfg(feature = "sqlite")]
            Pool::Sqlite(_) => &sql::SQLITE,
            #[cfg(feature = "postgres")]
            Pool::Postgres(_) => &sql::POSTGRES,
        }
    }

    // ----- reads -----

    /// The request with this id.
    pub async fn get(&self, id: &str) -> Result<Option<ConfirmationRequest>, StorageError> {
        self.read_one(self.sql().get, id)
            .await
            .map_err(StorageError::query(format!(
                "reading confirmation request {id}"
            )))
    }

    /// The request for this idempotency key.
    pub async fn by_key(&self, key: &str) -> Result<Option<ConfirmationRequest>, StorageError> {
        self.read_one(self.sql().by_key, key)
            .await
            .map_err(StorageError::query(format!(
                "reading the confirmation request of call \"{key}\""
            )))
    }

    async fn read_one(
        &self,
        sql: &'static str,
        param: &str,
    ) -> Result<Option<ConfirmationRequest>, sqlx::Error> {
        on_pool!(self.database.reader(), pool => sqlx::query_as(sql)
            .bind(param)
            .fetch_optional(pool)
            .await)
    }

    /// Where the card of request `id` is (`None`: no such request).
    pub async fn delivery(&self, id: &str) -> Result<Option<CardDelivery>, StorageError> {
        let sql = self.sql().delivery;
        let row: Option<(Option<i64>, Option<String>, Option<i64>)> =
            on_pool!(self.database.reader(), pool => sqlx::query_as(sql)
                .bind(id)
                .fetch_optional(pool)
                .await)
            .map_err(StorageError::query(format!(
                "reading the card delivery of confirmation request {id}"
            )))?;
        Ok(row.map(|(claimed, message_ref, updated)| {
            CardDelivery::from_columns(claimed, message_ref, updated)
        }))
    }

    /// Requests of channel `channel_kind`/`channel_id`, as `listing` says:
    /// the pending ones still before their deadline (database clock),
    /// oldest first, a page at a time; or those that left `pending`, most
    /// recently decided first. What an approvals page shows.
    pub async fn list(
        &self,
        channel_kind: &str,
        channel_id: &str,
        listing: Listing<'_>,
    ) -> Result<Vec<ConfirmationRequest>, StorageError> {
        let sql = self.sql();
        let listed = match listing {
            Listing::Pending { after, limit } => {
                let (after_ms, after_id) = after.unwrap_or((i64::MIN, ""));
                on_pool!(self.database.reader(), pool => sqlx::query_as(sql.pending_for_channel)
                    .bind(channel_kind)
                    .bind(channel_id)
                    .bind(i64::from(limit))
                    .bind(after_ms)
                    .bind(after_id)
                    .fetch_all(pool)
                    .await)
            }
            Listing::RecentlyFinal { limit } => {
                on_pool!(self.database.reader(), pool => sqlx::query_as(sql.recent_final_for_channel)
                    .bind(channel_kind)
                    .bind(channel_id)
                    .bind(i64::from(limit))
                    .fetch_all(pool)
                    .await)
            }
        };
        listed.map_err(StorageError::query(format!(
            "listing requests of the {channel_kind} channel \"{channel_id}\""
        )))
    }

    /// Requests that left `pending` at or after `since_ms` (database clock),
    /// with when: one query, however many gates are waiting.
    pub(crate) async fn decided_since(
        &self,
        since_ms: i64,
    ) -> Result<Vec<(String, i64)>, StorageError> {
        let sql = self.sql().decided_since;
        on_pool!(self.database.reader(), pool => sqlx::query_as(sql)
            .bind(since_ms)
            .fetch_all(pool)
            .await)
        .map_err(StorageError::query(
            "polling for decided confirmation requests",
        ))
    }

    /// The database's clock, in milliseconds since the Unix epoch.
    pub(crate) async fn clock_ms(&self) -> Result<i64, StorageError> {
        let sql = self.sql().clock;
        on_pool!(self.database.reader(), pool => sqlx::query_scalar(sql).fetch_one(pool).await)
            .map_err(StorageError::query("reading the database clock"))
    }

    /// Whether callback event `event_id` was handled already.
    pub async fn event_seen(&self, event_id: &str) -> Result<bool, StorageError> {
        let sql = self.sql().event_seen;
        let count: i64 = on_pool!(self.database.reader(), pool => sqlx::query_scalar(sql)
            .bind(event_id)
            .fetch_one(pool)
            .await)
        .map_err(StorageError::query(format!(
            "looking up callback event {event_id}"
        )))?;
        Ok(count > 0)
    }

    // ----- state changes -----

    /// Creates the request for `new.idempotency_key`, or returns the one that
    /// already exists for it (whatever its state). The flag says whether it
    /// was created now.
    pub async fn create(
        &self,
        new: &NewConfirmation,
    ) -> Result<(ConfirmationRequest, bool), StorageError> {
        let what = || {
            format!(
                "creating the confirmation request for call \"{}\"",
                new.idempotency_key
            )
        };
        let id = uuid::Uuid::new_v4().to_string();
        let (sql, args) = (self.sql(), new.args.to_string());
        let allowlist = Json(&new.approver_allowlist);
        let created = on_pool!(self.database.writer(), pool => async {
            let mut tx = pool.begin_write().await?;
            let inserted: Option<ConfirmationRequest> = sqlx::query_as(sql.create)
                .bind(&id)
                .bind(&new.idempotency_key)
                .bind(&new.tool_name)
                .bind(&args)
                .bind(&new.args_digest)
                .bind(&new.agent_id)
                .bind(&new.initiator_user_id)
                .bind(&new.org_id)
                .bind(new.approver_scope.as_str())
                .bind(allowlist)
                .bind(&new.channel_kind)
                .bind(&new.channel_id)
                .bind(new.mode.as_str())
                .bind(clamp_ms(new.timeout))
                .bind(i32::try_from(new.quorum.approvals.clamp(1, MAX_APPROVALS)).unwrap_or(1))
                .bind(new.quorum.exclude_requester)
                .fetch_optional(&mut *tx)
                .await?;
            let created = match inserted {
                Some(created) => (created, true),
                None => {
                    let existing: ConfirmationRequest = sqlx::query_as(sql.by_key)
                        .bind(&new.idempotency_key)
                        .fetch_one(&mut *tx)
                        .await?;
                    (existing, false)
                }
            };
            tx.commit().await?;
            Ok(created)
        }
        .await);
        created.map_err(StorageError::query(what()))
    }

    /// Claims the right to send the card of request `id`: a claim for
    /// exactly one of any number of concurrent runs of the same tool call (on
    /// any replica), while the request is pending, before its deadline and
    /// without a card; `None` for the others. A claim older than `lease` may
    /// be taken over, so a run that died while sending does not leave the
    /// request without a card — but only while the request is younger than
    /// `resend_window` (when given): a platform deduplicates a re-sent card
    /// only within its window (Feishu: one hour per message `uuid`), and
    /// the first send came after the request was created. With a `lease`
    /// of [`Duration::MAX`] a claim is never taken over (a platform without
    /// deduplication: at most one card).
    ///
    /// A run that outlives its lease loses the claim:
    /// [`record_card`](Self::record_card) then refuses its card, so the
    /// claimer should finish sending and storing well within the lease.
    pub async fn claim_card(
        &self,
        id: &str,
        lease: Duration,
        resend_window: Option<Duration>,
    ) -> Result<Option<CardClaim>, StorageError> {
        let sql = self.sql().claim_card;
        let window_ms = resend_window.map_or(i64::MAX / 2, clamp_ms);
        let claimed: Option<i64> = on_pool!(self.database.writer(), pool => sqlx::query_scalar(sql)
            .bind(id)
            .bind(clamp_ms(lease))
            .bind(window_ms)
            .fetch_optional(pool)
            .await)
        .map_err(StorageError::query(format!(
            "claiming the card of confirmation request {id}"
        )))?;
        Ok(claimed.map(CardClaim::new))
    }

    /// Records the channel's reference to the card of request `id`, sent
    /// under `claim`, and returns the request as it now stands with the
    /// database clock. `None` (nothing stored) if `claim` is no longer the
    /// request's current claim — another run took it over after its lease
    /// and may be sending its own card — or a card is already recorded: the
    /// request then keeps pointing at the current holder's card, never at a
    /// card whose claim was lost.
    pub async fn record_card(
        &self,
        id: &str,
        claim: CardClaim,
        message_ref: &str,
    ) -> Result<Option<(ConfirmationRequest, i64)>, StorageError> {
        let sql = self.sql().record_card;
        let recorded = on_pool!(self.database.writer(), pool => async {
            // In a transaction, so a row this version cannot read is not
            // changed either.
            let mut tx = pool.begin_write().await?;
            let row = sqlx::query(sql)
                .bind(message_ref)
                .bind(id)
                .bind(claim.claimed_at_ms())
                .fetch_optional(&mut *tx)
                .await?;
            let recorded = match row {
                Some(row) => Some((ConfirmationRequest::from_row(&row)?, row.try_get("clock_ms")?)),
                None => None,
            };
            tx.commit().await?;
            Ok::<_, sqlx::Error>(recorded)
        }
        .await);
        recorded.map_err(StorageError::query(format!(
            "storing the card reference of confirmation request {id}"
        )))
    }

    /// Applies `decision` by `decided_by` to request `id` if, and only if, it
    /// is still pending and before its deadline: the first decision wins. A
    /// pending request past its deadline is expired instead.
    pub async fn decide(
        &self,
        id: &str,
        decision: ApprovalDecision,
        decided_by: &str,
        reason: Option<&str>,
    ) -> Result<DecideOutcome, StorageError> {
        let sql = self.sql();
        let outcome = on_pool!(self.database.writer(), pool => async {
            let mut tx = pool.begin_write().await?;
            // A row this version cannot read fails the decode before the
            // commit: the decision is rolled back with the error.
            let outcome = decide_in!(tx, sql, id, decision, decided_by, reason)?;
            tx.commit().await?;
            Ok::<_, sqlx::Error>(outcome)
        }
        .await);
        outcome.map_err(StorageError::query(format!(
            "recording a decision on confirmation request {id}"
        )))
    }

    /// Applies a decision delivered as callback event `event_id` in one
    /// transaction: the event id is recorded (a replay changes nothing), then
    /// `decision` is applied as by [`decide`](Self::decide). Just before
    /// committing, `may_commit` is asked; if it says no — the approver has
    /// already been told the decision failed — everything is rolled back, so
    /// a decision is never recorded behind the approver's back.
    /// `reason` is what the approver typed with the decision (a rejection's
    /// reason is what the blocked call's refusal quotes).
    #[allow(clippy::too_many_arguments)]
    pub async fn decide_for_event(
        &self,
        event_id: &str,
        channel_kind: &str,
        id: &str,
        decision: ApprovalDecision,
        decided_by: &str,
        reason: Option<&str>,
        may_commit: impl FnOnce() -> bool + Send,
    ) -> Result<EventOutcome, StorageError> {
        let sql = self.sql();
        let decided = on_pool!(self.database.writer(), pool => async {
            // The event first: on SQLite the transaction holds the write
            // lock from its start, and on PostgreSQL the event's row
            // serialises replays.
            let mut tx = pool.begin_write().await?;
            let fresh = sqlx::query(sql.record_event)
                .bind(event_id)
                .bind(channel_kind)
                .execute(&mut *tx)
                .await?
                .rows_affected()
                == 1;
            if !fresh {
                tx.rollback().await?;
                return Ok(EventOutcome::Replayed);
            }
            // A crash here rolls the event back with the decision: the
            // platform's retry of the event is handled as new.
            crash_point!(crash_points::BETWEEN_EVENT_AND_DECISION, |_| {
                Err(sqlx::Error::Protocol(
                    "failpoint: stopped between event and decision".into(),
                ))
            });
            let outcome = decide_in!(tx, sql, id, decision, decided_by, reason)?;
            if !may_commit() {
                tx.rollback().await?;
                return Ok(EventOutcome::Withdrawn);
            }
            tx.commit().await?;
            Ok::<_, sqlx::Error>(EventOutcome::Recorded(Box::new(outcome)))
        }
        .await);
        decided.map_err(StorageError::query(format!(
            "recording callback event {event_id} and its decision on confirmation request {id}"
        )))
    }

    /// Records that callback event `event_id` was handled without a
    /// decision (a refused click); `false` if it had been already (a replay
    /// or a platform retry).
    pub async fn record_event(
        &self,
        event_id: &str,
        channel_kind: &str,
    ) -> Result<bool, StorageError> {
        let sql = self.sql().record_event;
        let inserted = on_pool!(self.database.writer(), pool => sqlx::query(sql)
            .bind(event_id)
            .bind(channel_kind)
            .execute(pool)
            .await
            .map(|done| done.rows_affected()))
        .map_err(StorageError::query(format!(
            "recording callback event {event_id}"
        )))?;
        Ok(inserted == 1)
    }

    /// Stamps the approval of request `id` as used, if it is approved and
    /// unused, and returns the request as stamped; `None` otherwise (still
    /// pending, rejected, expired, cancelled, or already used): an approval
    /// lets its call run once.
    pub async fn stamp_used(&self, id: &str) -> Result<Option<ConfirmationRequest>, StorageError> {
        self.change_one(self.sql().stamp_used, None, id)
            .await
            .map_err(StorageError::query(format!(
                "using the approval of confirmation request {id}"
            )))
    }

    /// Marks request `id` expired if it is still pending (its deadline
    /// passed). Returns the expired request, or `None` if it had already
    /// left `pending`.
    pub async fn expire(&self, id: &str) -> Result<Option<ConfirmationRequest>, StorageError> {
        self.change_one(self.sql().expire, None, id)
            .await
            .map_err(StorageError::query(format!(
                "expiring confirmation request {id}"
            )))
    }

    /// Cancels the request `cancel` names if it is still pending (see
    /// [`Cancel`] for which), recording `reason`. Returns it if cancelled.
    pub async fn cancel(
        &self,
        cancel: Cancel<'_>,
        reason: &str,
    ) -> Result<Option<ConfirmationRequest>, StorageError> {
        let (sql, key, what) = match cancel {
            Cancel::Undelivered(id) => (self.sql().cancel, id, "confirmation request"),
            Cancel::Withdrawn(key) => {
                (self.sql().withdraw, key, "the confirmation request of call")
            }
        };
        self.change_one(sql, Some(reason), key)
            .await
            .map_err(StorageError::query(format!("cancelling {what} \"{key}\"")))
    }

    /// Runs `sql`, a change of at most one request, binding `first` (when
    /// given) and `key`, in a transaction committed only once the returned
    /// row is read.
    async fn change_one(
        &self,
        sql: &'static str,
        first: Option<&str>,
        key: &str,
    ) -> Result<Option<ConfirmationRequest>, sqlx::Error> {
        on_pool!(self.database.writer(), pool => async {
            let mut tx = pool.begin_write().await?;
            let mut query = sqlx::query_as(sql);
            if let Some(first) = first {
                query = query.bind(first);
            }
            let changed = query.bind(key).fetch_optional(&mut *tx).await?;
            tx.commit().await?;
            Ok(changed)
        }
        .await)
    }

    /// The sweeper's pass over channel `channel_kind`/`channel_id`, in one
    /// transaction: expires pending requests past their deadline (covering
    /// gates that died while waiting), cancels pending requests older than
    /// `orphan_ttl` whose card was never claimed (their gate died before
    /// claiming it, so no card can exist; a claimed request may have a live
    /// card whose reference was not stored, and stays decidable until its
    /// deadline), and forgets callback events older than `event_age`
    /// (platforms retry for hours, not weeks).
    pub async fn sweep(
        &self,
        channel_kind: &str,
        channel_id: &str,
        orphan_ttl: Duration,
        event_age: Duration,
    ) -> Result<Swept, StorageError> {
        let sql = self.sql();
        let swept = on_pool!(self.database.writer(), pool => async {
            let mut tx = pool.begin_write().await?;
            let expired = sqlx::query_as(sql.expire_overdue)
                .bind(channel_kind)
                .bind(channel_id)
                .fetch_all(&mut *tx)
                .await?;
            let cancelled = sqlx::query_as(sql.cancel_orphans)
                .bind(channel_kind)
                .bind(channel_id)
                .bind(clamp_ms(orphan_ttl))
                .fetch_all(&mut *tx)
                .await?;
            let forgotten_events = sqlx::query(sql.forget_events)
                .bind(clamp_ms(event_age))
                .execute(&mut *tx)
                .await?
                .rows_affected();
            tx.commit().await?;
            Ok::<_, sqlx::Error>(Swept { expired, cancelled, forgotten_events })
        }
        .await);
        swept.map_err(StorageError::query(format!(
            "sweeping the requests of the {channel_kind} channel \"{channel_id}\""
        )))
    }

    /// Takes the outbox's due card updates that `which` names. An update
    /// is due when its request is final, has a card, the card is not
    /// confirmed redrawn, no attempt is in flight or backing off, and fewer
    /// than [`MAX_CARD_UPDATE_ATTEMPTS`] were made. Taking one counts the
    /// attempt and pushes the next one `backoff × 2^attempts` (at most ×64)
    /// ahead, which is also how long this attempt holds it. An update that
    /// is not due, or that another run took, is not returned. On PostgreSQL
    /// a channel's rows another transaction holds are skipped (the next
    /// sweep takes them), so the sweeper never waits on a gate.
    pub async fn take_card_updates(
        &self,
        which: CardUpdates<'_>,
        backoff: Duration,
    ) -> Result<Vec<ConfirmationRequest>, StorageError> {
        let sql = self.sql();
        let attempts = i64::from(MAX_CARD_UPDATE_ATTEMPTS);
        let taken = match which {
            CardUpdates::Of(id) => on_pool!(self.database.writer(), pool => async {
                let mut tx = pool.begin_write().await?;
                let taken = sqlx::query_as(sql.take_card_update)
                    .bind(id)
                    .bind(clamp_ms(backoff))
                    .bind(attempts)
                    .fetch_all(&mut *tx)
                    .await?;
                tx.commit().await?;
                Ok::<_, sqlx::Error>(taken)
            }
            .await),
            CardUpdates::Due {
                channel_kind,
                channel_id,
                limit,
            } => on_pool!(self.database.writer(), pool => async {
                let mut tx = pool.begin_write().await?;
                let taken = sqlx::query_as(sql.take_due_card_updates)
                    .bind(channel_kind)
                    .bind(clamp_ms(backoff))
                    .bind(channel_id)
                    .bind(i64::from(limit))
                    .bind(attempts)
                    .fetch_all(&mut *tx)
                    .await?;
                tx.commit().await?;
                Ok::<_, sqlx::Error>(taken)
            }
            .await),
        };
        taken.map_err(StorageError::query("taking due approval card updates"))
    }

    /// Records how an attempt to redraw the card of request `id` went:
    /// `Ok` — the platform confirmed it, its outbox entry is done; `Err` —
    /// why it failed, and it is retried once its back-off has passed.
    pub async fn record_card_update(
        &self,
        id: &str,
        outcome: Result<(), &str>,
    ) -> Result<(), StorageError> {
        let sql = self.sql();
        let recorded = match outcome {
            Ok(()) => on_pool!(self.database.writer(), pool => sqlx::query(sql.card_updated)
                .bind(id)
                .execute(pool)
                .await
                .map(drop)),
            Err(error) => {
                on_pool!(self.database.writer(), pool => sqlx::query(sql.card_update_failed)
                .bind(error)
                .bind(id)
                .execute(pool)
                .await
                .map(drop))
            }
        };
        recorded.map_err(StorageError::query(format!(
            "recording the card update of confirmation request {id}"
        )))
    }
}

/// `duration` in milliseconds for a statement (very long ones capped far out).
fn clamp_ms(duration: Duration) -> i64 {
    i64::try_from(duration.as_millis()).unwrap_or(i64::MAX / 2)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn new_request(key: &str, timeout: Duration) -> NewConfirmation {
        NewConfirmation {
            idempotency_key: key.to_owned(),
            tool_name: "transfer".to_owned(),
            args: serde_json::json!({"amount": 1}),
            args_digest: "digest".to_owned(),
            agent_id: "agent".to_owned(),
            initiator_user_id: "alice".to_owned(),
            org_id: "org".to_owned(),
            approver_scope: ApproverScope::OrgMembers,
            approver_allowlist: Vec::new(),
            channel_kind: "feishu".to_owned(),
            channel_id: "oc_finance".to_owned(),
            mode: ConfirmationMode::When,
            timeout,
            quorum: Quorum::default(),
        }
    }

    /// The wake-up poll sees every way a request leaves `pending`: a
    /// decision, an expiry by the sweeper, a withdrawal — and not a request
    /// still pending.
    #[tokio::test]
    async fn the_poll_sees_each_way_out_of_pending() {
        let store = ConfirmationStore::new(Database::in_memory().await.expect("database"));
        let start = store.clock_ms().await.expect("clock");
        let create = |key: &'static str, timeout| {
            let store = store.clone();
            async move {
                store
                    .create(&new_request(key, timeout))
                    .await
                    .expect("create")
                    .0
            }
        };
        let decided = create("decided", Duration::from_secs(60)).await;
        let overdue = create("overdue", Duration::from_millis(200)).await;
        let withdrawn = create("withdrawn", Duration::from_secs(60)).await;
        let pending = create("pending", Duration::from_secs(60)).await;
        let claim = store
            .claim_card(&overdue.id, Duration::from_secs(60), None)
            .await
            .expect("claim")
            .expect("claimed");
        store
            .record_card(&overdue.id, claim, "om_1")
            .await
            .expect("record")
            .expect("recorded");
        store
            .decide(&decided.id, ApprovalDecision::Approve, "bob", None)
            .await
            .expect("decide");
        store
            .cancel(Cancel::Withdrawn("withdrawn"), "stopped")
            .await
            .expect("withdraw")
            .expect("withdrawn");
        tokio::time::sleep(Duration::from_millis(300)).await;
        let swept = store
            .sweep(
                "feishu",
                "oc_finance",
                Duration::from_secs(600),
                Duration::from_secs(3600),
            )
            .await
            .expect("sweep");
        assert_eq!(swept.expired.len(), 1, "{swept:?}");
        let polled = store.decided_since(start).await.expect("poll");
        let ids: Vec<&str> = polled.iter().map(|(id, _)| id.as_str()).collect();
        for left in [&decided.id, &overdue.id, &withdrawn.id] {
            assert!(ids.contains(&left.as_str()), "{left} in {ids:?}");
        }
        assert!(!ids.contains(&pending.id.as_str()), "{ids:?}");
        assert!(polled.iter().all(|(_, at)| *at >= start));
    }
}
