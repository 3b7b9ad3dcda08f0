//! `ConfirmationStore`: the durable truth about confirmation requests.
//!
//! Every state change is one conditional statement, so concurrent deciders
//! (two clicks, a click racing the deadline, two replicas) cannot both win:
//! only a `pending` row moves, and a pending row past its deadline cannot be
//! approved or rejected. Times come from the database's clock, so replicas agree.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use serde_json::Value;

use super::card_claim::CardClaim;
use super::card_delivery::CardDelivery;
use super::crash_points::{self, crash_point};
use super::request::{ApproverScope, ConfirmationMode, ConfirmationRequest, Decision};
use super::statement::{Returned, Statement};
use super::write_queue::{AskedOnce, GateWrites, Job, QueuedWrite, StatementJob};
use crate::storage::{BoxFuture, Conn, Database, GroupCommit, StorageError, on_conn, on_pool};
use sqlx::{Connection, FromRow as _, Row as _};
use tokio::sync::oneshot;

/// Runs `$body` as one write of the store's group commit and returns its
/// result once the shared transaction is committed. `$pool` is the
/// transaction's connection (either backend); the listed variables are
/// turned into owned values and moved in, cloned for each run (a write runs
/// again, alone, if its batch fails).
macro_rules! on_pool_write {
    ($store:expr, [$($owned:ident),*], $what:expr, $pool:ident => $body:expr) => {{
        $(let $owned = $owned.to_owned();)*
        let what = $what;
        $store
            .write(what, move |conn| {
                $(let $owned = $owned.clone();)*
                let job: BoxFuture<'_, Result<_, sqlx::Error>> =
                    Box::pin(async move { on_conn!(conn, $pool => $body) });
                job
            })
            .await
    }};
}

/// Decides request `$id` on connection `$conn` (inside a transaction) if it
/// is pending and before its deadline; otherwise reads it, and a pending
/// request past its deadline is expired instead.
macro_rules! decide_in {
    ($conn:expr, $statements:ident, $id:ident, $decision:ident, $decided_by:ident, $reason:ident) => {
        async {
            let decided: Option<ConfirmationRequest> = sqlx::query_as(&$statements.decide)
                .bind($decision.status().as_str())
                .bind(&$decided_by)
                .bind(&$reason)
                .bind(&$id)
                .fetch_optional($conn)
                .await?;
            if let Some(decided) = decided {
                return Ok::<_, sqlx::Error>(DecideOutcome::Decided(decided));
            }
            let found: Option<ConfirmationRequest> = sqlx::query_as(&$statements.current)
                .bind(&$id)
                .fetch_optional($conn)
                .await?;
            Ok(match found {
                None => DecideOutcome::NotFound,
                Some(request) if request.status.is_terminal() => {
                    DecideOutcome::AlreadyFinal(request)
                }
                // Pending, yet not decidable: past its deadline.
                Some(request) => {
                    let expired: Option<ConfirmationRequest> = sqlx::query_as(&$statements.expire)
                        .bind(&$id)
                        .fetch_optional($conn)
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

/// The outbox's condition for a card update that is due: the request is
/// final, has a card that is not confirmed redrawn, no attempt holds it, and
/// fewer than [`MAX_CARD_UPDATE_ATTEMPTS`] were made (a card the platform
/// will never update — deleted, too old — is given up on, its last error
/// left in `card_update_error`).
const UPDATE_DUE: &str = "status <> 'pending' AND message_ref IS NOT NULL \
    AND card_updated_at_ms IS NULL AND card_update_attempts < {max_attempts} \
    AND (card_update_due_at_ms IS NULL OR card_update_due_at_ms <= {now_ms})";

/// How many times the outbox tries to redraw one card (with the default
/// 5 s back-off, over about 80 minutes) before giving up.
pub const MAX_CARD_UPDATE_ATTEMPTS: u32 = 20;

/// Taking a due card update: count the attempt, hold it for the back-off
/// (`$2` ms doubled per earlier attempt, at most 64 times).
const TAKE_UPDATE: &str = "card_update_attempts = card_update_attempts + 1, \
    card_update_due_at_ms = {now_ms} + $2 * (1 << (CASE WHEN card_update_attempts > 6 \
    THEN 6 ELSE card_update_attempts END))";

/// Deciding a request: only a pending one, only before its deadline.
const DECIDE: &str = "UPDATE confirmation_requests SET status = $1, decided_at_ms = {now_ms}, \
    decided_by = $2, reason = $3 \
    WHERE id = $4 AND status = 'pending' AND expires_at_ms > {now_ms} RETURNING {columns}";

/// Storing the reference of a card sent under a claim: only under the
/// request's current claim, and only if no card is recorded yet.
const SET_MESSAGE_REF: &str = "UPDATE confirmation_requests SET message_ref = $1 \
    WHERE id = $2 AND card_claimed_at_ms = $3 AND message_ref IS NULL";

/// [`DECIDE`], taking the card's outbox entry in the same statement when the
/// request has a card, as [`TAKE_UPDATE`] would right after (a pending
/// request's entry was never taken: the outbox holds only final requests,
/// so the first attempt is held for the back-off `$5` ms).
const DECIDE_TAKING_CARD_UPDATE: &str = "UPDATE confirmation_requests SET status = $1, \
    decided_at_ms = {now_ms}, decided_by = $2, reason = $3, \
    card_update_attempts = card_update_attempts + CASE WHEN message_ref IS NULL THEN 0 ELSE 1 END, \
    card_update_due_at_ms = CASE WHEN message_ref IS NULL THEN card_update_due_at_ms \
    ELSE {now_ms} + $5 END \
    WHERE id = $4 AND status = 'pending' AND expires_at_ms > {now_ms} RETURNING {columns}";

const COLUMNS: &str = "id, idempotency_key, tool_name, args, args_digest, agent_id, \
    initiator_user_id, org_id, approver_scope, approver_allowlist, channel_kind, channel_id, \
    mode, status, created_at_ms, expires_at_ms, decided_at_ms, decided_by, reason, message_ref, \
    consumed_at_ms";

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
}

/// What became of a decision that arrived as a callback event
/// ([`ConfirmationStore::decide_for_event`]).
#[derive(Debug, Clone, PartialEq)]
pub enum EventDecision {
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

/// Confirmation requests in the hooks' database (`confirmation_requests`).
#[derive(Debug, Clone)]
pub struct ConfirmationStore {
    database: Database,
    queries: Arc<AtomicU64>,
    writes: Arc<GroupCommit<GateWrites>>,
}

impl ConfirmationStore {
    /// A store on `database` (already migrated by [`Database::connect`]).
    pub fn new(database: Database) -> Self {
        ConfirmationStore {
            database: database.clone(),
            queries: Arc::default(),
            writes: Arc::new(GroupCommit::new(
                database.clone(),
                GateWrites,
                MAX_WRITES_PER_BATCH,
            )),
        }
    }

    /// How many statements this store (and its clones) has sent to the
    /// database: for measuring the gate's load while requests wait.
    pub fn queries_issued(&self) -> u64 {
        self.queries.load(Ordering::Relaxed)
    }

    /// The database behind the store.
    pub fn database(&self) -> &Database {
        &self.database
    }

    /// Runs `write` in the group commit; its result once committed.
    async fn write<T, F>(&self, what: impl Into<String>, write: F) -> Result<T, StorageError>
    where
        T: Send + 'static,
        F: for<'t> Fn(Conn<'t>) -> BoxFuture<'t, Result<T, sqlx::Error>> + Send + 'static,
    {
        self.queue(what.into(), |what, done| {
            Box::new(Job::new(write, what, done))
        })
        .await
    }

    /// Runs `statement` in the group commit; once committed, its caller's
    /// result as `decode` reads it from what the statement returned.
    async fn write_statement<T: Send + 'static>(
        &self,
        what: impl Into<String>,
        statement: Statement,
        decode: fn(Returned) -> Result<T, sqlx::Error>,
    ) -> Result<T, StorageError> {
        self.queue(what.into(), |what, done| {
            Box::new(StatementJob::new(statement, decode, what, done))
        })
        .await
    }

    /// Runs `statement` in the group commit; once committed, how many rows
    /// it changed.
    async fn write_count(
        &self,
        what: impl Into<String>,
        statement: Statement,
    ) -> Result<u64, StorageError> {
        self.queue(what.into(), |what, done| {
            Box::new(StatementJob::counting(statement, what, done))
        })
        .await
    }

    /// A write of the card-update outbox: on PostgreSQL `statement` runs
    /// alone, in its own short transaction; on SQLite it is a group-commit
    /// write like any other. On PostgreSQL a group-commit batch holds its
    /// rows' locks until it commits, so an outbox write batched in one
    /// replica and the same request's approval stamp batched in another made
    /// the batches wait on each other, in chains and deadlocks (each deadlock
    /// costing the server's `deadlock_timeout`, 1 s by default). A statement
    /// alone on one request holds at most its one row and waits for nothing
    /// while holding it: no cycle can form; the sweeper's statement over many
    /// requests skips those another transaction holds (`FOR UPDATE SKIP
    /// LOCKED`; the next sweep takes them). SQLite has one writer at a time
    /// and no row locks.
    async fn write_statement_alone<T: Send + 'static>(
        &self,
        what: impl Into<String>,
        statement: Statement,
        decode: fn(Returned) -> Result<T, sqlx::Error>,
    ) -> Result<T, StorageError> {
        let Database::Postgres(pool) = &self.database else {
            return self.write_statement(what, statement, decode).await;
        };
        let what = what.into();
        let returned = async {
            let mut connection = pool.acquire().await?;
            statement.run(Conn::Postgres(&mut connection)).await
        }
        .await;
        returned.and_then(decode).map_err(StorageError::query(what))
    }

    /// Queues the write `job` makes (described as `what`, answering on the
    /// sender it is given) and waits for its result.
    async fn queue<T>(
        &self,
        what: String,
        job: impl FnOnce(String, oneshot::Sender<Result<T, StorageError>>) -> Box<dyn QueuedWrite>,
    ) -> Result<T, StorageError> {
        let (done, result) = oneshot::channel();
        self.writes.submit(job(what.clone(), done)).await;
        result.await.unwrap_or_else(|_| {
            Err(StorageError::Unavailable {
                what,
                why: "the group-commit writer stopped before committing".into(),
            })
        })
    }

    /// The statements of a decision (see `decide_in!`).
    fn decide_statements(&self) -> DecideStatements {
        DecideStatements {
            decide: self.sql(DECIDE),
            current: self.sql("SELECT {columns} FROM confirmation_requests WHERE id = $1"),
            expire: self.sql(
                "UPDATE confirmation_requests SET status = 'expired', decided_at_ms = {now_ms}, \
                 decided_by = 'system' WHERE id = $1 AND status = 'pending' RETURNING {columns}",
            ),
        }
    }

    /// `template` for this backend: `{now_ms}` becomes the database clock in
    /// milliseconds, and SQLite gets `?n` placeholders.
    fn sql(&self, template: &str) -> String {
        self.queries.fetch_add(1, Ordering::Relaxed);
        self.database.dialect(
            &template
                .replace("{columns}", COLUMNS)
                .replace("{max_attempts}", &MAX_CARD_UPDATE_ATTEMPTS.to_string()),
        )
    }

    /// Creates the request for `new.idempotency_key`, or returns the one that
    /// already exists for it (whatever its state). The flag says whether it
    /// was created now.
    pub async fn create_or_resume(
        &self,
        new: &NewConfirmation,
    ) -> Result<(ConfirmationRequest, bool), StorageError> {
        let id = uuid::Uuid::new_v4().to_string();
        let timeout_ms = i64::try_from(new.timeout.as_millis()).unwrap_or(i64::MAX / 2);
        let insert = self.sql(
            "INSERT INTO confirmation_requests (id, idempotency_key, tool_name, args, args_digest, \
             agent_id, initiator_user_id, org_id, approver_scope, approver_allowlist, channel_kind, \
             channel_id, mode, status, created_at_ms, expires_at_ms) \
             VALUES ($1, $2, $3, $4{json}, $5, $6, $7, $8, $9, $10, $11, $12, $13, 'pending', {now_ms}, {now_ms} + $14) \
             ON CONFLICT (idempotency_key) DO NOTHING RETURNING {columns}",
        );
        let what = || {
            format!(
                "creating the confirmation request for call \"{}\"",
                new.idempotency_key
            )
        };
        let insert = Statement::new(insert)
            .text(id)
            .text(&new.idempotency_key)
            .text(&new.tool_name)
            .text(new.args.to_string())
            .text(&new.args_digest)
            .text(&new.agent_id)
            .text(&new.initiator_user_id)
            .text(&new.org_id)
            .text(new.approver_scope.as_str())
            .json(Value::from(new.approver_allowlist.clone()))
            .text(&new.channel_kind)
            .text(&new.channel_id)
            .text(new.mode.as_str())
            .int(timeout_ms);
        let inserted: Option<ConfirmationRequest> = self
            .write_statement(what(), insert, Returned::first)
            .await?;
        if let Some(created) = inserted {
            return Ok((created, true));
        }
        let request =
            self.by_key(&new.idempotency_key)
                .await?
                .ok_or_else(|| StorageError::Query {
                    what: what(),
                    source: sqlx::Error::RowNotFound,
                })?;
        Ok((request, false))
    }

    /// The request with this id.
    pub async fn get(&self, id: &str) -> Result<Option<ConfirmationRequest>, StorageError> {
        self.one(
            "SELECT {columns} FROM confirmation_requests WHERE id = $1",
            id,
            || format!("reading confirmation request {id}"),
        )
        .await
    }

    /// The request with this id and the database clock (milliseconds since
    /// the Unix epoch) as one read: what a gate needs when it starts to wait.
    pub async fn get_with_clock(
        &self,
        id: &str,
    ) -> Result<Option<(ConfirmationRequest, i64)>, StorageError> {
        let sql = self
            .sql("SELECT {columns}, {now_ms} AS clock_ms FROM confirmation_requests WHERE id = $1");
        on_pool!(&self.database, pool => {
            let row = sqlx::query(&sql).bind(id).fetch_optional(pool).await;
            row.and_then(|row| {
                row.map(|row| Ok((ConfirmationRequest::from_row(&row)?, row.try_get("clock_ms")?)))
                    .transpose()
            })
        })
        .map_err(StorageError::query(format!(
            "reading confirmation request {id} and the database clock"
        )))
    }

    /// The request for this idempotency key.
    pub async fn by_key(&self, key: &str) -> Result<Option<ConfirmationRequest>, StorageError> {
        self.one(
            "SELECT {columns} FROM confirmation_requests WHERE idempotency_key = $1",
            key,
            || format!("reading the confirmation request of call \"{key}\""),
        )
        .await
    }

    /// The pending requests of channel `channel_kind`/`channel_id` still
    /// before their deadline (database clock), oldest first, at most
    /// `limit`, starting after the request `after` names (its
    /// `created_at_ms` and id; `None`: from the oldest): what an approvals
    /// page lists, one page at a time.
    pub async fn pending_for_channel(
        &self,
        channel_kind: &str,
        channel_id: &str,
        after: Option<(i64, &str)>,
        limit: u32,
    ) -> Result<Vec<ConfirmationRequest>, StorageError> {
        let sql = self.sql(
            "SELECT {columns} FROM confirmation_requests WHERE status = 'pending' \
             AND expires_at_ms > {now_ms} AND channel_kind = $1 AND channel_id = $2 \
             AND (created_at_ms, id) > ($4, $5) \
             ORDER BY created_at_ms, id LIMIT $3",
        );
        let (after_ms, after_id) = after.unwrap_or((i64::MIN, ""));
        on_pool!(&self.database, pool => sqlx::query_as(&sql)
            .bind(channel_kind)
            .bind(channel_id)
            .bind(i64::from(limit))
            .bind(after_ms)
            .bind(after_id)
            .fetch_all(pool)
            .await)
        .map_err(StorageError::query(format!(
            "listing pending requests of the {channel_kind} channel \"{channel_id}\""
        )))
    }

    /// The requests of channel `channel_kind`/`channel_id` that left
    /// `pending`, most recently decided first, at most `limit`.
    pub async fn recent_final_for_channel(
        &self,
        channel_kind: &str,
        channel_id: &str,
        limit: u32,
    ) -> Result<Vec<ConfirmationRequest>, StorageError> {
        let sql = self.sql(
            "SELECT {columns} FROM confirmation_requests WHERE status <> 'pending' \
             AND channel_kind = $1 AND channel_id = $2 \
             ORDER BY decided_at_ms DESC, id LIMIT $3",
        );
        self.read_channel(
            &sql,
            channel_kind,
            channel_id,
            limit,
            "listing recent decisions",
        )
        .await
    }

    async fn read_channel(
        &self,
        sql: &str,
        channel_kind: &str,
        channel_id: &str,
        limit: u32,
        what: &str,
    ) -> Result<Vec<ConfirmationRequest>, StorageError> {
        on_pool!(&self.database, pool => sqlx::query_as(sql)
            .bind(channel_kind)
            .bind(channel_id)
            .bind(i64::from(limit))
            .fetch_all(pool)
            .await)
        .map_err(StorageError::query(format!(
            "{what} of the {channel_kind} channel \"{channel_id}\""
        )))
    }

    async fn one(
        &self,
        template: &str,
        param: &str,
        what: impl FnOnce() -> String,
    ) -> Result<Option<ConfirmationRequest>, StorageError> {
        let sql = self.sql(template);
        on_pool!(&self.database, pool => sqlx::query_as(&sql)
            .bind(param)
            .fetch_optional(pool)
            .await)
        .map_err(StorageError::query(what()))
    }

    /// Records the channel's reference to the card of request `id`, sent
    /// under `claim`. `false` (nothing stored) if `claim` is no longer the
    /// request's current claim — another run took it over after its lease and
    /// may be sending its own card — or a card is already recorded: the
    /// request then keeps pointing at the current holder's card, never at a
    /// card whose claim was lost. The check and the write are one statement.
    pub async fn set_message_ref(
        &self,
        id: &str,
        claim: CardClaim,
        message_ref: &str,
    ) -> Result<bool, StorageError> {
        let statement = Statement::new(self.sql(SET_MESSAGE_REF))
            .text(message_ref)
            .text(id)
            .int(claim.claimed_at_ms());
        let updated = self
            .write_count(
                format!("storing the card reference of confirmation request {id}"),
                statement,
            )
            .await?;
        Ok(updated == 1)
    }

    /// [`set_message_ref`](Self::set_message_ref), returning the request as
    /// it stands once the reference is stored, and the database clock, read
    /// by the same statement (`None`: nothing stored). A gate that has just
    /// delivered its card starts to wait from this, with no read of its own.
    pub async fn set_message_ref_and_read(
        &self,
        id: &str,
        claim: CardClaim,
        message_ref: &str,
    ) -> Result<Option<(ConfirmationRequest, i64)>, StorageError> {
        let sql = self.sql(&format!(
            "{SET_MESSAGE_REF} RETURNING {{columns}}, {{now_ms}} AS clock_ms"
        ));
        let statement = Statement::new(sql)
            .text(message_ref)
            .text(id)
            .int(claim.claimed_at_ms());
        self.write_statement(
            format!("storing the card reference of confirmation request {id}"),
            statement,
            request_with_clock,
        )
        .await
    }

    /// Claims the right to send the card of request `id`: a claim for
    /// exactly one of any number of concurrent runs of the same tool call (on
    /// any replica), while the request is pending, before its deadline and
    /// without a card; `None` for the others. A claim older than `lease` may
    /// be taken over, so a run that died while sending does not leave the
    /// request without a card. A run that outlives its lease loses the claim:
    /// [`set_message_ref`](Self::set_message_ref) then refuses its card, so
    /// the claimer should finish sending and storing well within the lease.
    ///
    /// Taking a claim over re-sends a card that may already be in the chat:
    /// only do it on a channel whose platform deduplicates sends (see
    /// [`claim_card_within`](Self::claim_card_within)).
    pub async fn claim_card(
        &self,
        id: &str,
        lease: Duration,
    ) -> Result<Option<CardClaim>, StorageError> {
        self.claim_card_within(id, lease, None).await
    }

    /// Like [`claim_card`](Self::claim_card), but a stale claim is taken over
    /// only while the request is younger than `resend_window` (when given):
    /// the platform deduplicates a re-sent card only within its window (Feishu:
    /// one hour per message `uuid`), and the first send came after the
    /// request was created. With a `lease` of [`Duration::MAX`] a claim is
    /// never taken over (a platform without deduplication: at most one card).
    pub async fn claim_card_within(
        &self,
        id: &str,
        lease: Duration,
        resend_window: Option<Duration>,
    ) -> Result<Option<CardClaim>, StorageError> {
        let sql = self.sql(
            "UPDATE confirmation_requests SET card_claimed_at_ms = {now_ms} \
             WHERE id = $1 AND status = 'pending' AND message_ref IS NULL \
             AND expires_at_ms > {now_ms} \
             AND (card_claimed_at_ms IS NULL \
                  OR (card_claimed_at_ms <= {now_ms} - $2 AND created_at_ms > {now_ms} - $3)) \
             RETURNING card_claimed_at_ms",
        );
        let lease_ms = clamp_ms(lease);
        let window_ms = resend_window.map_or(i64::MAX / 2, clamp_ms);
        let statement = Statement::new(sql).text(id).int(lease_ms).int(window_ms);
        let claimed = self
            .write_statement(
                format!("claiming the card of confirmation request {id}"),
                statement,
                Returned::first_int,
            )
            .await?;
        Ok(claimed.map(CardClaim::new))
    }

    /// Where the card of request `id` is (`None`: no such request).
    pub async fn delivery(&self, id: &str) -> Result<Option<CardDelivery>, StorageError> {
        let sql = self.sql(
            "SELECT card_claimed_at_ms, message_ref, card_updated_at_ms \
             FROM confirmation_requests WHERE id = $1",
        );
        let row: Option<(Option<i64>, Option<String>, Option<i64>)> =
            on_pool!(&self.database, pool => sqlx::query_as(&sql)
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

    /// Takes the outbox's card update of request `id` if it is due (the
    /// request is final, has a card, the card is not confirmed redrawn, and
    /// no attempt is in flight or backing off): counts the attempt and pushes
    /// the next one `backoff × 2^attempts` (at most ×64) ahead, which is also
    /// how long this attempt holds it. `None` if not due or taken by another.
    pub async fn take_card_update(
        &self,
        id: &str,
        backoff: Duration,
    ) -> Result<Option<ConfirmationRequest>, StorageError> {
        let sql = self.sql(&format!(
            "UPDATE confirmation_requests SET {TAKE_UPDATE} WHERE id = $1 AND {UPDATE_DUE} \
             RETURNING {{columns}}"
        ));
        self.write_statement_alone(
            format!("taking the card update of confirmation request {id}"),
            Statement::new(sql).text(id).int(clamp_ms(backoff)),
            Returned::first,
        )
        .await
    }

    /// Takes up to `limit` due card updates of channel `channel_kind` /
    /// `channel_id`, oldest decision first, as
    /// [`take_card_update`](Self::take_card_update) does for one.
    pub async fn take_due_card_updates(
        &self,
        channel_kind: &str,
        channel_id: &str,
        limit: u32,
        backoff: Duration,
    ) -> Result<Vec<ConfirmationRequest>, StorageError> {
        let sql = self.sql(&format!(
            "UPDATE confirmation_requests SET {TAKE_UPDATE} WHERE id IN \
             (SELECT id FROM confirmation_requests WHERE {UPDATE_DUE} \
              AND channel_kind = $1 AND channel_id = $3 ORDER BY decided_at_ms LIMIT $4{{skip_locked}}) \
             AND {UPDATE_DUE} RETURNING {{columns}}"
        ));
        let statement = Statement::new(sql)
            .text(channel_kind)
            .int(clamp_ms(backoff))
            .text(channel_id)
            .int(i64::from(limit));
        self.write_statement_alone("taking due approval card updates", statement, Returned::all)
            .await
    }

    /// Records that the platform confirmed the redrawn card of request `id`:
    /// its outbox entry is done.
    pub async fn card_update_confirmed(&self, id: &str) -> Result<(), StorageError> {
        let sql = self.sql(
            "UPDATE confirmation_requests SET card_updated_at_ms = {now_ms}, \
             card_update_error = NULL WHERE id = $1",
        );
        self.write_statement_alone(
            format!("recording the card update of confirmation request {id}"),
            Statement::new(sql).text(id),
            Returned::affected,
        )
        .await?;
        Ok(())
    }

    /// Records why an attempt to redraw the card of request `id` failed; it
    /// is retried once its back-off has passed.
    pub async fn card_update_failed(&self, id: &str, error: &str) -> Result<(), StorageError> {
        let sql = self.sql("UPDATE confirmation_requests SET card_update_error = $1 WHERE id = $2");
        self.write_statement_alone(
            format!("recording a failed card update of confirmation request {id}"),
            Statement::new(sql).text(error).text(id),
            Returned::affected,
        )
        .await?;
        Ok(())
    }

    /// Applies `decision` by `decided_by` to request `id` if, and only if, it
    /// is still pending and before its deadline. The first decision wins.
    pub async fn decide(
        &self,
        id: &str,
        decision: Decision,
        decided_by: &str,
        reason: Option<&str>,
    ) -> Result<DecideOutcome, StorageError> {
        let (outcome, _) = self
            .decide_taking(id, decision, decided_by, reason, None)
            .await?;
        Ok(outcome)
    }

    /// [`decide`](Self::decide), and when the decision is recorded on a
    /// request with a card, takes the card's outbox entry in the same
    /// statement, as [`take_card_update`](Self::take_card_update) would with
    /// `backoff` right after. The flag says whether it did: the caller then
    /// redraws the card and records the outcome
    /// ([`card_update_confirmed`](Self::card_update_confirmed) or
    /// [`card_update_failed`](Self::card_update_failed)); if it cannot, the
    /// outbox's sweeper retries once the back-off has passed. When the flag
    /// is false and the request is now final, its card update is due in the
    /// outbox as after any decision.
    pub async fn decide_and_take_card_update(
        &self,
        id: &str,
        decision: Decision,
        decided_by: &str,
        reason: Option<&str>,
        backoff: Duration,
    ) -> Result<(DecideOutcome, bool), StorageError> {
        self.decide_taking(id, decision, decided_by, reason, Some(backoff))
            .await
    }

    /// [`decide`](Self::decide), taking the card update with `take`'s
    /// back-off when given (see
    /// [`decide_and_take_card_update`](Self::decide_and_take_card_update)).
    async fn decide_taking(
        &self,
        id: &str,
        decision: Decision,
        decided_by: &str,
        reason: Option<&str>,
        take: Option<Duration>,
    ) -> Result<(DecideOutcome, bool), StorageError> {
        // The usual case, a pending request before its deadline, is the one
        // statement; only if it changes nothing are the request's state read
        // and, past its deadline, the request expired (`decide_in!`, which
        // tries the same statement first: a request that was not decidable
        // does not become so).
        let template = if take.is_some() {
            DECIDE_TAKING_CARD_UPDATE
        } else {
            DECIDE
        };
        let mut decide = Statement::new(self.sql(template))
            .text(decision.status().as_str())
            .text(decided_by)
            .optional_text(reason)
            .text(id);
        if let Some(backoff) = take {
            decide = decide.int(clamp_ms(backoff));
        }
        let what = || format!("recording a decision on confirmation request {id}");
        // Read before it commits, so a request this version cannot read is
        // never decided: the decision is rolled back with the error.
        let decided = self
            .queue(what(), |what, done| {
                let job =
                    StatementJob::new(decide, Returned::first::<ConfirmationRequest>, what, done);
                Box::new(job.read_before_commit())
            })
            .await?;
        if let Some(decided) = decided {
            let taken = take.is_some() && decided.message_ref.is_some();
            return Ok((DecideOutcome::Decided(decided), taken));
        }
        let statements = Arc::new(self.decide_statements());
        let reason = reason.map(str::to_owned);
        let outcome = on_pool_write!(self, [statements, id, decided_by, reason], what(),
            pool => decide_in!(&mut *pool, statements, id, decision, decided_by, reason))?;
        Ok((outcome, false))
    }

    /// Applies a decision delivered as callback event `event_id` in one
    /// transaction: the event id is recorded (a replay changes nothing), then
    /// `decision` is applied as by [`decide`](Self::decide) (first decision
    /// wins; past the deadline the request expires instead). Just before
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
        decision: Decision,
        decided_by: &str,
        reason: Option<&str>,
        may_commit: impl FnOnce() -> bool + Send + 'static,
    ) -> Result<EventDecision, StorageError> {
        let record_event = self.sql(
            "INSERT INTO callback_events (event_id, channel_kind, received_at_ms) \
             VALUES ($1, $2, {now_ms}) ON CONFLICT (event_id) DO NOTHING",
        );
        let statements = Arc::new(self.decide_statements());
        let reason = reason.map(str::to_owned);
        let may_commit = AskedOnce::new(may_commit);
        // The event insert comes first: on SQLite the batch holds the write
        // lock from BEGIN IMMEDIATE, and on PostgreSQL the event's row lock
        // serialises replays. A savepoint keeps a withdrawal to this write
        // alone, whatever else shares the transaction.
        on_pool_write!(self, [record_event, statements, event_id, channel_kind, id, decided_by, reason, may_commit],
            format!("recording callback event {event_id} and its decision on confirmation request {id}"),
            pool => async {
                let mut savepoint = pool.begin().await?;
                let fresh = sqlx::query(&record_event)
                    .bind(&event_id)
                    .bind(&channel_kind)
                    .execute(&mut *savepoint)
                    .await?
                    .rows_affected()
                    == 1;
                if !fresh {
                    savepoint.rollback().await?;
                    return Ok(EventDecision::Replayed);
                }
                // A crash here rolls the event back with the decision: the
                // platform's retry of the event is handled as new.
                crash_point!(crash_points::BETWEEN_EVENT_AND_DECISION, |_| Err(
                    sqlx::Error::Protocol("failpoint: stopped between event and decision".into())
                ));
                let outcome = decide_in!(&mut *savepoint, statements, id, decision, decided_by, reason)?;
                if !may_commit.ask() {
                    savepoint.rollback().await?;
                    return Ok(EventDecision::Withdrawn);
                }
                savepoint.commit().await?;
                Ok::<_, sqlx::Error>(EventDecision::Recorded(Box::new(outcome)))
            }
            .await)
    }

    /// Whether callback event `event_id` was handled already (read only).
    pub async fn event_seen(&self, event_id: &str) -> Result<bool, StorageError> {
        let sql = self.sql("SELECT COUNT(*) FROM callback_events WHERE event_id = $1");
        let count: i64 = on_pool!(&self.database, pool => sqlx::query_scalar(&sql)
            .bind(event_id)
            .fetch_one(pool)
            .await)
        .map_err(StorageError::query(format!(
            "looking up callback event {event_id}"
        )))?;
        Ok(count > 0)
    }

    /// Marks request `id` expired if it is still pending (the waiting gate's
    /// deadline passed). Returns the expired request, or `None` if it had
    /// already left `pending`.
    pub async fn expire(&self, id: &str) -> Result<Option<ConfirmationRequest>, StorageError> {
        let sql = self.sql(
            "UPDATE confirmation_requests SET status = 'expired', decided_at_ms = {now_ms}, \
             decided_by = 'system' WHERE id = $1 AND status = 'pending' RETURNING {columns}",
        );
        self.write_statement(
            format!("expiring confirmation request {id}"),
            Statement::new(sql).text(id),
            Returned::first,
        )
        .await
    }

    /// Cancels request `id` if it is still pending and its card was never
    /// delivered (so nobody could ever decide it). Returns it if cancelled.
    pub async fn cancel(
        &self,
        id: &str,
        reason: &str,
    ) -> Result<Option<ConfirmationRequest>, StorageError> {
        let sql = self.sql(
            "UPDATE confirmation_requests SET status = 'cancelled', decided_at_ms = {now_ms}, \
             decided_by = 'system', reason = $1 WHERE id = $2 AND status = 'pending' \
             AND message_ref IS NULL RETURNING {columns}",
        );
        self.write_statement(
            format!("cancelling confirmation request {id}"),
            Statement::new(sql).text(reason).text(id),
            Returned::first,
        )
        .await
    }

    /// Cancels the request created under `idempotency_key` if it is still
    /// pending, whether or not its card was delivered (its call will not
    /// run: the caller gave up on it). Returns it if cancelled.
    pub async fn withdraw(
        &self,
        idempotency_key: &str,
        reason: &str,
    ) -> Result<Option<ConfirmationRequest>, StorageError> {
        let sql = self.sql(
            "UPDATE confirmation_requests SET status = 'cancelled', decided_at_ms = {now_ms}, \
             decided_by = 'system', reason = $1 WHERE idempotency_key = $2 \
             AND status = 'pending' RETURNING {columns}",
        );
        self.write_statement(
            format!("withdrawing the confirmation request of {idempotency_key}"),
            Statement::new(sql).text(reason).text(idempotency_key),
            Returned::first,
        )
        .await
    }

    /// Expires every pending request of channel `channel_kind`/`channel_id`
    /// past its deadline (the sweeper's job; covers gates that died while
    /// waiting). Returns the expired requests.
    pub async fn expire_overdue(
        &self,
        channel_kind: &str,
        channel_id: &str,
    ) -> Result<Vec<ConfirmationRequest>, StorageError> {
        let sql = self.sql(
            "UPDATE confirmation_requests SET status = 'expired', decided_at_ms = {now_ms}, \
             decided_by = 'system' WHERE status = 'pending' AND expires_at_ms <= {now_ms} \
             AND channel_kind = $1 AND channel_id = $2 RETURNING {columns}",
        );
        self.many(
            &sql,
            (channel_kind, channel_id, None),
            "expiring overdue confirmation requests",
        )
        .await
    }

    /// Cancels pending requests older than `ttl` whose card was never
    /// claimed (their gate died between creating the row and claiming the
    /// card, so no card can exist). A claimed request is never an orphan: its
    /// card may be live in the chat though its reference was not stored; it
    /// stays decidable until its deadline. Returns the cancelled requests.
    pub async fn cancel_orphans(
        &self,
        channel_kind: &str,
        channel_id: &str,
        ttl: Duration,
    ) -> Result<Vec<ConfirmationRequest>, StorageError> {
        let sql = self.sql(
            "UPDATE confirmation_requests SET status = 'cancelled', decided_at_ms = {now_ms}, \
             decided_by = 'system', reason = 'the approval card was never delivered' \
             WHERE status = 'pending' AND message_ref IS NULL AND card_claimed_at_ms IS NULL \
             AND channel_kind = $1 \
             AND channel_id = $2 AND created_at_ms <= {now_ms} - $3 RETURNING {columns}",
        );
        let ttl_ms = i64::try_from(ttl.as_millis()).unwrap_or(i64::MAX / 2);
        self.many(
            &sql,
            (channel_kind, channel_id, Some(ttl_ms)),
            "cancelling orphaned confirmation requests",
        )
        .await
    }

    /// Stamps approved request `id` as used by its call. `false` if it was
    /// not approved or already used: an approval lets its call run once.
    pub async fn consume(&self, id: &str) -> Result<bool, StorageError> {
        let sql = self.sql(
            "UPDATE confirmation_requests SET consumed_at_ms = {now_ms} \
             WHERE id = $1 AND status = 'approved' AND consumed_at_ms IS NULL",
        );
        let updated = self
            .write_count(
                format!("using the approval of confirmation request {id}"),
                Statement::new(sql).text(id),
            )
            .await?;
        Ok(updated == 1)
    }

    /// Stamps the approval of request `id` as used, if it is approved and
    /// unused, and returns the request as stamped; `None` otherwise (still
    /// pending, rejected, expired, cancelled, or already used). One
    /// statement for the common wake-up, an approval, where reading the
    /// request and then stamping it took two.
    pub async fn consume_approved(
        &self,
        id: &str,
    ) -> Result<Option<ConfirmationRequest>, StorageError> {
        let sql = self.sql(
            "UPDATE confirmation_requests SET consumed_at_ms = {now_ms} \
             WHERE id = $1 AND status = 'approved' AND consumed_at_ms IS NULL \
             RETURNING {columns}",
        );
        self.write_statement(
            format!("using the approval of confirmation request {id}"),
            Statement::new(sql).text(id),
            Returned::first,
        )
        .await
    }

    /// Requests that left `pending` at or after `since_ms` (database clock),
    /// with when: one query, however many gates are waiting.
    pub async fn decided_since(&self, since_ms: i64) -> Result<Vec<(String, i64)>, StorageError> {
        let sql = self
            .sql("SELECT id, decided_at_ms FROM confirmation_requests WHERE decided_at_ms >= $1");
        on_pool!(&self.database, pool => sqlx::query_as(&sql)
            .bind(since_ms)
            .fetch_all(pool)
            .await)
        .map_err(StorageError::query(
            "polling for decided confirmation requests",
        ))
    }

    /// The database's clock, in milliseconds since the Unix epoch.
    pub async fn clock_ms(&self) -> Result<i64, StorageError> {
        let sql = self.sql("SELECT {now_ms}");
        on_pool!(&self.database, pool => sqlx::query_scalar(&sql).fetch_one(pool).await)
            .map_err(StorageError::query("reading the database clock"))
    }

    /// Records that callback delivery `event_id` was handled; `false` if it
    /// had been already (a replay or a platform retry).
    pub async fn record_event(
        &self,
        event_id: &str,
        channel_kind: &str,
    ) -> Result<bool, StorageError> {
        let sql = self.sql(
            "INSERT INTO callback_events (event_id, channel_kind, received_at_ms) \
             VALUES ($1, $2, {now_ms}) ON CONFLICT (event_id) DO NOTHING",
        );
        let inserted = self
            .write_count(
                format!("recording callback event {event_id}"),
                Statement::new(sql).text(event_id).text(channel_kind),
            )
            .await?;
        Ok(inserted == 1)
    }

    /// Forgets handled callback events older than `age` (platforms retry for
    /// hours, not weeks). Returns how many were removed.
    pub async fn forget_events(&self, age: Duration) -> Result<u64, StorageError> {
        let sql = self.sql("DELETE FROM callback_events WHERE received_at_ms <= {now_ms} - $1");
        let age_ms = i64::try_from(age.as_millis()).unwrap_or(i64::MAX / 2);
        self.write_count(
            "forgetting old callback events",
            Statement::new(sql).int(age_ms),
        )
        .await
    }

    async fn many(
        &self,
        sql: &str,
        (kind, channel, param): (&str, &str, Option<i64>),
        what: &str,
    ) -> Result<Vec<ConfirmationRequest>, StorageError> {
        let mut statement = Statement::new(sql.to_owned()).text(kind).text(channel);
        if let Some(param) = param {
            statement = statement.int(param);
        }
        self.write_statement(what, statement, Returned::all).await
    }
}

/// The statements of a decision, in the store's dialect.
struct DecideStatements {
    decide: String,
    current: String,
    expire: String,
}

/// Most gate writes sharing one transaction.
const MAX_WRITES_PER_BATCH: usize = 256;

/// A request read together with the database clock (`clock_ms`).
#[derive(sqlx::FromRow)]
struct RequestWithClock {
    #[sqlx(flatten)]
    request: ConfirmationRequest,
    clock_ms: i64,
}

/// The request and clock a statement returned, if it returned a row.
fn request_with_clock(
    returned: Returned,
) -> Result<Option<(ConfirmationRequest, i64)>, sqlx::Error> {
    let row = returned.first::<RequestWithClock>()?;
    Ok(row.map(|row| (row.request, row.clock_ms)))
}

/// `duration` in milliseconds for a statement (very long ones capped far out).
fn clamp_ms(duration: Duration) -> i64 {
    i64::try_from(duration.as_millis()).unwrap_or(i64::MAX / 2)
}
