//! Group commit: concurrent writers share one transaction, so one commit (one
//! `fsync` on SQLite with `synchronous = FULL`) serves many callers.
//!
//! Callers queue items for one writer task. The task takes whatever has
//! queued while the previous batch committed (up to a maximum), writes the
//! batch in one transaction and commits it; only then is each caller told
//! its outcome, so nothing is acknowledged before it is durable. If the
//! shared transaction fails, it is rolled back and every item is written
//! again alone, in a transaction of its own, so one bad item cannot fail its
//! neighbours.
//!
//! Under load the task keeps one connection for consecutive batches: on
//! SQLite a connection that did not make the last write must reload the pages
//! another connection changed, and that reload cost more than the insert.
//! It hands the connection back as soon as the queue is empty, so an idle
//! store holds no connection and the pool can close.
//!
//! What a batch is and how it is written is the [`Batch`]'s business: the
//! audit log writes its rows with multi-row `INSERT`s, the approval gate runs
//! its writes in scripts of one statement repeated (on SQLite) or one after
//! another (on PostgreSQL).

use std::panic::AssertUnwindSafe;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use futures_util::FutureExt as _;

use sqlx::pool::PoolConnection;
use sqlx::sqlite::{SqliteConnectOptions, SqliteSynchronous};
use sqlx::{Connection, PgConnection, Postgres, Sqlite, SqliteConnection, SqlitePool};
use std::future::Future;
use std::pin::Pin;
use tokio::sync::{Mutex, mpsc};

use super::wal_sync::WalSync;
use super::write_turn::WriteTurn;
use super::{Database, StorageError};

/// A boxed future borrowing the transaction for `'t`.
pub(crate) type BoxFuture<'t, T> = Pin<Box<dyn Future<Output = T> + Send + 't>>;

/// A connection inside a group-commit transaction, whatever the backend.
pub(crate) enum Conn<'c> {
    /// SQLite (the transaction was begun with `BEGIN IMMEDIATE`).
    Sqlite(&'c mut SqliteConnection),
    /// PostgreSQL.
    Postgres(&'c mut PgConnection),
}

impl Conn<'_> {
    /// The same connection, for one more statement or one more item.
    pub(crate) fn reborrow(&mut self) -> Conn<'_> {
        match self {
            Conn::Sqlite(connection) => Conn::Sqlite(connection),
            Conn::Postgres(connection) => Conn::Postgres(connection),
        }
    }
}

/// Runs `$body` with `$connection` bound to the transaction's connection,
/// whatever the backend (like `on_pool!` for pools).
macro_rules! on_conn {
    ($conn:expr, $connection:ident => $body:expr) => {
        match $conn {
            $crate::storage::Conn::Sqlite($connection) => $body,
            $crate::storage::Conn::Postgres($connection) => $body,
        }
    };
}
pub(crate) use on_conn;

/// What a group committer writes, and how its callers hear back.
pub(crate) trait Batch: Send + Sync + 'static {
    /// One caller's write, with the way to tell the caller how it went.
    type Item: Send + 'static;

    /// Writes `items` inside the open transaction. Called again for a single
    /// item if the shared transaction fails, so it must be repeatable.
    fn write<'t>(
        &'t self,
        conn: Conn<'t>,
        items: &'t mut [Self::Item],
    ) -> BoxFuture<'t, Result<(), sqlx::Error>>;

    /// On SQLite, the whole transaction for `items` — `BEGIN IMMEDIATE`,
    /// the writes, `COMMIT` — as one script, run in one round trip to the
    /// driver's worker thread instead of three or more (each trip costs a
    /// thread wake-up, about a fifth of a millisecond on a small virtual
    /// machine). Batches whose writes are fixed statements (the audit log's
    /// rows) offer one; `None`, the default, begins, [`write`](Self::write)s
    /// and commits step by step. If the script fails, the committer rolls
    /// back whatever it left open.
    fn sqlite_transaction<'t>(
        &'t self,
        connection: &'t mut SqliteConnection,
        items: &'t mut [Self::Item],
    ) -> Option<BoxFuture<'t, Result<(), sqlx::Error>>> {
        let _ = (connection, items);
        None
    }

    /// Whether `items` may run on PostgreSQL without a transaction of
    /// their own: a single statement is its own transaction there, and
    /// `BEGIN` and `COMMIT` around it would be two more round trips for the
    /// same effect. `false`, the default, always wraps the batch.
    fn postgres_without_transaction(&self, items: &[Self::Item]) -> bool {
        let _ = items;
        false
    }

    /// Whether other connections may read this batch's writes before they
    /// are durable. `false`, the default, keeps SQLite's own `fsync` inside
    /// each `COMMIT`. `true` lets a SQLite file in WAL mode with `synchronous
    /// = FULL` commit on a connection of its own without syncing, and sync
    /// the WAL on another task while the next batch commits (see
    /// [`wal_sync`](super::wal_sync)): callers still hear back only once
    /// their writes are on disk, but a reader may see them a moment before,
    /// and a power loss in that moment takes them away. Only for writes
    /// whose readers do nothing outside the database on a read alone (audit
    /// rows; the approval gate, whose every effect waits for a write of its
    /// own).
    fn visible_before_durable(&self) -> bool {
        false
    }

    /// Tells the item's caller how it went: `Ok` once its transaction is
    /// committed (and durable), otherwise why not.
    fn settle(&self, item: Self::Item, outcome: Result<(), &StorageError>);

    /// What writing `items` items is, for error messages ("writing 12 audit rows").
    fn describe(&self, items: usize) -> String;
}

/// A queue of writes and the task that commits them in groups.
pub(crate) struct GroupCommit<B: Batch> {
    database: Database,
    batch: Arc<B>,
    max_batch: usize,
    queue: OnceLock<mpsc::Sender<B::Item>>,
}

impl<B: Batch> std::fmt::Debug for GroupCommit<B> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GroupCommit")
            .field("backend", &self.database.backend())
            .field("max_batch", &self.max_batch)
            .field("started", &self.queue.get().is_some())
            .finish()
    }
}

impl<B: Batch> GroupCommit<B> {
    /// A committer for `database` writing at most `max_batch` items per
    /// transaction. Its task starts with the first write.
    pub(crate) fn new(database: Database, batch: B, max_batch: usize) -> Self {
        GroupCommit {
            database,
            batch: Arc::new(batch),
            max_batch: max_batch.max(1),
            queue: OnceLock::new(),
        }
    }

    /// Queues `item`. Its outcome reaches the caller through
    /// [`Batch::settle`]; if the writer task is gone (its runtime shut down)
    /// the item is settled with an error at once.
    pub(crate) async fn submit(&self, item: B::Item) {
        let queue = self.queue.get_or_init(|| {
            let (sender, receiver) = mpsc::channel(self.max_batch * 16);
            let receiver = Arc::new(Mutex::new(receiver));
            for _ in 0..writers(&self.database) {
                tokio::spawn(commit_batches(
                    self.database.clone(),
                    self.batch.clone(),
                    receiver.clone(),
                    self.max_batch,
                ));
            }
            sender
        });
        if let Err(refused) = queue.send(item).await {
            let error = StorageError::Unavailable {
                what: self.batch.describe(1),
                why: "the group-commit writer task has stopped (its runtime shut down)".into(),
            };
            self.batch.settle(refused.0, Err(&error));
        }
    }
}

/// A connection the writer keeps while work keeps coming.
enum Held {
    Sqlite(PoolConnection<Sqlite>),
    Postgres(PoolConnection<Postgres>),
    /// The pipelined writer's own connection (`synchronous = NORMAL`),
    /// outside the pool.
    Unsynced(SqliteConnection),
}

/// How a writer makes its batches durable.
enum Durability<B: Batch> {
    /// Inside each `COMMIT` (the backend's own setting).
    AtCommit,
    /// After it: committed batches go to the syncer task, which tells their
    /// callers once the WAL is on disk.
    Pipelined {
        /// How the writer opens its own unsynced connection.
        connect: Box<SqliteConnectOptions>,
        synced: mpsc::Sender<Vec<B::Item>>,
        /// Set by the syncer when a sync failed: from then on the writer
        /// and the syncer refuse every batch (fail stop).
        failed: Arc<AtomicBool>,
    },
}

/// The writer task: one transaction per batch, each item alone after a
/// failed batch.
async fn commit_batches<B: Batch>(
    database: Database,
    batch: Arc<B>,
    queue: Arc<Mutex<mpsc::Receiver<B::Item>>>,
    max_batch: usize,
) {
    let durability = durability(&database, &batch).await;
    commit_batches_with(database, batch, queue, max_batch, durability).await;
}

/// [`commit_batches`], making batches durable as `durability` says.
async fn commit_batches_with<B: Batch>(
    database: Database,
    batch: Arc<B>,
    queue: Arc<Mutex<mpsc::Receiver<B::Item>>>,
    max_batch: usize,
    mut durability: Durability<B>,
) {
    let mut items = Vec::with_capacity(max_batch);
    let mut held: Option<Held> = None;
    let turn = write_turn(&database);
    // An in-memory SQLite database has exactly one connection: keeping it
    // would starve every reader.
    let keep = match &database {
        Database::Sqlite(pool) => pool.options().get_max_connections() > 1,
        Database::Postgres(_) => true,
    };
    loop {
        // A pipelined writer commits its next batch only once the syncer has
        // taken the last one: until then, its rows could not be synced any
        // sooner, and waiting lets more rows share the commit.
        let mut permit = match &durability {
            Durability::Pipelined { synced, .. } => match synced.clone().reserve_owned().await {
                Ok(permit) => Some(permit),
                Err(_) => {
                    // The syncer stopped (its runtime is shutting down).
                    held = None;
                    durability = Durability::AtCommit;
                    None
                }
            },
            Durability::AtCommit => None,
        };
        let pipelined = permit.is_some();
        let more_queued = {
            // Never wait for work (or for another writer waiting for work)
            // while holding a pooled connection: readers need it. The
            // pipelined writer's own connection is no reader's, and opening
            // it again costs more than a batch: it is kept until the queue
            // has been empty for a second.
            let mut queue = match queue.try_lock() {
                Ok(queue) if !queue.is_empty() => queue,
                Ok(queue) => {
                    if !pipelined {
                        held = None;
                    }
                    queue
                }
                Err(_) => {
                    held = None;
                    queue.lock().await
                }
            };
            let received = if held.is_some()
                && pipelined
                && queue.is_empty()
                && let Database::Sqlite(pool) = &database
            {
                // Idle: keep the connection a while, but close it as soon
                // as the database is closed (it is no pool's to close).
                let waited = tokio::select! {
                    received = queue.recv_many(&mut items, max_batch) => Some(received),
                    () = tokio::time::sleep(UNSYNCED_IDLE) => None,
                    () = pool.close_event() => None,
                };
                match waited {
                    Some(received) => received,
                    None => {
                        held = None;
                        queue.recv_many(&mut items, max_batch).await
                    }
                }
            } else {
                queue.recv_many(&mut items, max_batch).await
            };
            if received == 0 {
                return;
            }
            !queue.is_empty()
        };
        if let Durability::Pipelined { failed, .. } = &durability
            && failed.load(Ordering::Acquire)
        {
            // A failed sync leaves a hole in the WAL that later commits
            // would sit behind (recovery stops at the first bad frame), and
            // the kernel may have dropped the error: nothing written after
            // it could be called durable. Fail stop, as PostgreSQL does.
            drop(permit.take());
            held = None;
            let error = sync_failed_before(&*batch, items.len());
            for item in items.drain(..) {
                batch.settle(item, Err(&error));
            }
            continue;
        }
        let pipelined = permit.is_some();
        if database_closed(&database) {
            // The pipelined writer's own connection would outlive the
            // pool: a closed database takes no more writes.
            held = None;
        }
        let connect = match &durability {
            Durability::Pipelined { connect, .. } => Some(&**connect),
            Durability::AtCommit => None,
        };
        let mut committed = Vec::with_capacity(items.len());
        let place = Place {
            database: &database,
            unsynced: connect,
            turn: turn.as_ref(),
        };
        match commit_contained(&place, &mut held, &*batch, &mut items).await {
            Ok(()) => committed.append(&mut items),
            Err(error) if items.len() == 1 => {
                held = None;
                for item in items.drain(..) {
                    batch.settle(item, Err(&error));
                }
            }
            Err(_) => {
                held = None;
                for item in items.drain(..) {
                    let mut alone = [item];
                    let outcome = commit_contained(&place, &mut held, &*batch, &mut alone).await;
                    let [item] = alone;
                    match outcome {
                        Ok(()) => committed.push(item),
                        Err(error) => {
                            held = None;
                            batch.settle(item, Err(&error));
                        }
                    }
                }
            }
        }
        match permit {
            Some(permit) => {
                if !committed.is_empty() {
                    permit.send(committed);
                }
            }
            None => {
                for item in committed {
                    batch.settle(item, Ok(()));
                }
            }
        }
        if !keep || database_closed(&database) || (!more_queued && !pipelined) {
            held = None;
        }
    }
}

/// How long the pipelined writer keeps its own connection with no work
/// (closing the database closes it at once). Long in this crate's unit
/// tests, so a test can tell closing at once from the idle timeout however
/// slow a loaded machine makes the close itself.
const UNSYNCED_IDLE: Duration = if cfg!(test) {
    Duration::from_secs(30)
} else {
    Duration::from_secs(1)
};

/// Pipelined when the batch allows it and the database is a SQLite file in
/// WAL mode whose commits sync (`synchronous = FULL`): anything else is
/// already as fast as it gets, or would be weakened. Starts the syncer.
async fn durability<B: Batch>(database: &Database, batch: &Arc<B>) -> Durability<B> {
    let Database::Sqlite(pool) = database else {
        return Durability::AtCommit;
    };
    if !batch.visible_before_durable() || pool.options().get_max_connections() < 2 {
        return Durability::AtCommit;
    }
    let setting = async {
        let mut connection = pool.acquire().await?;
        let synchronous: i64 = sqlx::query_scalar("PRAGMA synchronous")
            .fetch_one(&mut *connection)
            .await?;
        let journal: String = sqlx::query_scalar("PRAGMA journal_mode")
            .fetch_one(&mut *connection)
            .await?;
        let file: String =
            sqlx::query_scalar("SELECT file FROM pragma_database_list WHERE name = 'main'")
                .fetch_one(&mut *connection)
                .await?;
        Ok::<_, sqlx::Error>((synchronous, journal, file))
    };
    // Anything unexpected keeps SQLite's own sync: slower, never weaker.
    let Ok((2, journal, file)) = setting.await else {
        return Durability::AtCommit;
    };
    if !journal.eq_ignore_ascii_case("wal") || file.is_empty() {
        return Durability::AtCommit;
    }
    match WalSync::open(Path::new(&file)) {
        Ok(wal) => pipelined(pool, batch, wal),
        Err(_) => Durability::AtCommit,
    }
}

/// Pipelined durability on `pool`'s file, synced by `wal`: starts the syncer.
fn pipelined<B: Batch>(pool: &SqlitePool, batch: &Arc<B>, wal: WalSync) -> Durability<B> {
    let connect = Box::new(
        pool.connect_options()
            .as_ref()
            .clone()
            .synchronous(SqliteSynchronous::Normal),
    );
    let (synced, committed) = mpsc::channel(SYNCS_QUEUED);
    let failed = Arc::new(AtomicBool::new(false));
    tokio::spawn(settle_when_durable(
        batch.clone(),
        Arc::new(wal),
        committed,
        failed.clone(),
    ));
    Durability::Pipelined {
        connect,
        synced,
        failed,
    }
}

/// Committed batches waiting for a sync, at most: one, the next sync's.
const SYNCS_QUEUED: usize = 1;

/// The syncer: waits for committed batches, syncs the WAL once for all
/// that have arrived, then tells their callers.
async fn settle_when_durable<B: Batch>(
    batch: Arc<B>,
    wal: Arc<WalSync>,
    mut committed: mpsc::Receiver<Vec<B::Item>>,
    failed: Arc<AtomicBool>,
) {
    let mut batches = Vec::with_capacity(SYNCS_QUEUED);
    while committed.recv_many(&mut batches, SYNCS_QUEUED).await > 0 {
        if failed.load(Ordering::Acquire) {
            // Committed behind a failed sync: never durable for sure.
            let error = sync_failed_before(&*batch, batches.iter().map(Vec::len).sum());
            for item in batches.drain(..).flatten() {
                batch.settle(item, Err(&error));
            }
            continue;
        }
        let syncing = wal.clone();
        let outcome = match tokio::task::spawn_blocking(move || syncing.sync()).await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(error)) => Err(format!(
                "syncing {} to disk failed ({error})",
                wal.wal().display()
            )),
            Err(_) => Err("the thread syncing the WAL to disk was lost".to_owned()),
        };
        let outcome = outcome.map_err(|why| {
            failed.store(true, Ordering::Release);
            StorageError::Unavailable {
                what: batch.describe(batches.iter().map(Vec::len).sum()),
                why: format!(
                    "{why}: they are committed and readable but may not survive a power \
                     loss; this writer takes no more writes until the process restarts \
                     (check the disk first)"
                ),
            }
        });
        for item in batches.drain(..).flatten() {
            batch.settle(item, outcome.as_ref().map(|_| ()));
        }
    }
}

/// Why a pipelined writer refuses `items` items after a failed sync.
fn sync_failed_before<B: Batch>(batch: &B, items: usize) -> StorageError {
    StorageError::Unavailable {
        what: batch.describe(items),
        why: "an earlier sync of the database's WAL to disk failed, so nothing written \
              after it can be made durable; restart the process once the disk is checked"
            .into(),
    }
}

/// How many writer tasks share the queue: one for SQLite, which takes one
/// writer at a time anyway; several for PostgreSQL, whose row locks let
/// batches of unrelated rows commit side by side (and whose own WAL flush
/// groups their commits). Two batches that lock the same rows in opposite
/// orders deadlock; PostgreSQL aborts one, and its items are retried alone.
fn writers(database: &Database) -> usize {
    match database {
        Database::Sqlite(_) => 1,
        Database::Postgres(_) => POSTGRES_WRITERS,
    }
}

/// Writer tasks per PostgreSQL committer.
const POSTGRES_WRITERS: usize = 4;

fn database_closed(database: &Database) -> bool {
    match database {
        Database::Sqlite(pool) => pool.is_closed(),
        Database::Postgres(pool) => pool.is_closed(),
    }
}

/// [`commit`], with a panic in the batch's own code turned into an error:
/// the writer task lives on (a dead writer would refuse every later write)
/// and the batch's items are retried alone, like after any failure, so only
/// the item whose write panics fails.
async fn commit_contained<B: Batch>(
    place: &Place<'_>,
    held: &mut Option<Held>,
    batch: &B,
    items: &mut [B::Item],
) -> Result<(), StorageError> {
    let count = items.len();
    let attempt = AssertUnwindSafe(commit(place, held, batch, items));
    match attempt.catch_unwind().await {
        Ok(outcome) => outcome,
        Err(panic) => {
            // Back to the pool, as after any failed batch: the dropped
            // transaction has queued its rollback on it.
            *held = None;
            let message = panic
                .downcast_ref::<&str>()
                .map(|text| (*text).to_owned())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "a panic without a message".to_owned());
            Err(StorageError::Unavailable {
                what: batch.describe(count),
                why: format!("the write panicked ({message}); nothing was committed"),
            })
        }
    }
}

/// Where a writer commits: its database, how a pipelined writer opens its
/// own connection (`unsynced`), and the SQLite file's write turn.
struct Place<'a> {
    database: &'a Database,
    unsynced: Option<&'a SqliteConnectOptions>,
    turn: Option<&'a WriteTurn>,
}

/// The write turn of `database`'s file: SQLite files only (an in-memory
/// database has one connection, and PostgreSQL locks rows), keyed by the
/// file's canonical path. `None` if that path cannot be resolved, which
/// leaves SQLite's own lock to order writers, as before turns.
fn write_turn(database: &Database) -> Option<WriteTurn> {
    let Database::Sqlite(pool) = database else {
        return None;
    };
    if pool.options().get_max_connections() < 2 {
        return None;
    }
    let file = std::fs::canonicalize(pool.connect_options().get_filename()).ok()?;
    Some(WriteTurn::for_file(&file))
}

/// Writes `items` in one transaction on the held connection and commits it.
/// With none held it takes one from the pool, or, for a pipelined writer
/// (`unsynced`), opens its own. On SQLite the transaction runs in the
/// file's write turn.
async fn commit<B: Batch>(
    place: &Place<'_>,
    held: &mut Option<Held>,
    batch: &B,
    items: &mut [B::Item],
) -> Result<(), StorageError> {
    let Place {
        database,
        unsynced,
        turn,
    } = *place;
    let described = batch.describe(items.len());
    let failed = |what: &str| {
        let what = what.to_owned();
        move |source| StorageError::Query { what, source }
    };
    let connection = match held.take() {
        Some(connection) => held.insert(connection),
        None => held.insert(match (database, unsynced) {
            (Database::Sqlite(pool), Some(_)) if pool.is_closed() => {
                return Err(StorageError::Unavailable {
                    what: described,
                    why: "the database has been closed".into(),
                });
            }
            (Database::Sqlite(_), Some(connect)) => Held::Unsynced(
                SqliteConnection::connect_with(connect)
                    .await
                    .map_err(failed(&described))?,
            ),
            (Database::Sqlite(pool), None) => {
                Held::Sqlite(pool.acquire().await.map_err(failed(&described))?)
            }
            (Database::Postgres(pool), _) => {
                Held::Postgres(pool.acquire().await.map_err(failed(&described))?)
            }
        }),
    };
    let connection: &mut SqliteConnection = match connection {
        Held::Sqlite(connection) => connection,
        Held::Unsynced(connection) => connection,
        Held::Postgres(connection) => {
            if batch.postgres_without_transaction(items) {
                return batch
                    .write(Conn::Postgres(connection), items)
                    .await
                    .map_err(failed(&described));
            }
            let mut tx = connection.begin().await.map_err(failed(&described))?;
            batch
                .write(Conn::Postgres(&mut tx), items)
                .await
                .map_err(failed(&described))?;
            return tx.commit().await.map_err(failed(&described));
        }
    };
    // Held until this function returns: after `COMMIT`, or after the
    // rollback of a failed transaction.
    let _turn = match turn {
        Some(turn) => turn.take().await,
        None => None,
    };
    let scripted = match batch.sqlite_transaction(connection, items) {
        Some(script) => Some(script.await),
        None => None,
    };
    if let Some(outcome) = scripted {
        let clean = outcome.is_ok() || roll_back(connection).await;
        if !clean {
            // A transaction may still be open on it: never reuse it.
            if let Some(Held::Sqlite(mut broken)) = held.take() {
                broken.close_on_drop();
            }
        }
        return outcome.map_err(failed(&described));
    }
    // IMMEDIATE: take the write lock at BEGIN, so a batch that reads
    // before it writes never has to upgrade (and fail) mid-way.
    let mut tx = connection
        .begin_with("BEGIN IMMEDIATE")
        .await
        .map_err(failed(&described))?;
    match batch.write(Conn::Sqlite(&mut tx), items).await {
        Ok(()) => tx.commit().await.map_err(failed(&described)),
        Err(error) => {
            // Rolled back within the turn, so the next writer never finds
            // this transaction still holding SQLite's lock. If the rollback
            // fails, dropping the transaction tries again.
            let _ = tx.rollback().await;
            Err(failed(&described)(error))
        }
    }
}

/// Rolls back whatever transaction a failed script left open; `false` if the
/// connection's state is unknown (the rollback itself failed for another
/// reason than there being nothing to roll back).
/// (Boxed: as a plain `async fn` the spawned writer's future cannot be shown
/// to be `Send`.)
fn roll_back(connection: &mut SqliteConnection) -> BoxFuture<'_, bool> {
    Box::pin(async move {
        match sqlx::query("ROLLBACK").execute(connection).await {
            Ok(_) => true,
            Err(sqlx::Error::Database(error)) => {
                error.message().contains("no transaction is active")
            }
            Err(_) => false,
        }
    })
}

#[cfg(test)]
mod tests {
    use tokio::sync::oneshot;

    use super::*;

    /// Words written one row each; writing "boom" panics. `pipelined`:
    /// readers may see them before they are durable.
    struct Words {
        pipelined: bool,
    }

    struct Word {
        text: &'static str,
        done: oneshot::Sender<Result<(), String>>,
    }

    impl Batch for Words {
        type Item = Word;

        fn write<'t>(
            &'t self,
            mut conn: Conn<'t>,
            items: &'t mut [Word],
        ) -> BoxFuture<'t, Result<(), sqlx::Error>> {
            Box::pin(async move {
                for item in items.iter() {
                    assert_ne!(item.text, "boom", "the batch's own code panics");
                    on_conn!(conn.reborrow(), connection => {
                        sqlx::query("INSERT INTO words (text) VALUES ($1)")
                            .bind(item.text)
                            .execute(connection)
                            .await
                            .map(drop)
                    })?;
                }
                Ok(())
            })
        }

        fn visible_before_durable(&self) -> bool {
            self.pipelined
        }

        fn settle(&self, item: Word, outcome: Result<(), &StorageError>) {
            let _ = item.done.send(outcome.map_err(ToString::to_string));
        }

        fn describe(&self, items: usize) -> String {
            format!("writing {items} word(s)")
        }
    }

    async fn write(group: &GroupCommit<Words>, text: &'static str) -> Result<(), String> {
        let (done, outcome) = oneshot::channel();
        group.submit(Word { text, done }).await;
        outcome.await.expect("every item is settled")
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_panicking_write_fails_alone_and_the_writer_lives_on() {
        let database = Database::in_memory().await.expect("database");
        let Database::Sqlite(pool) = &database else {
            unreachable!("in-memory is SQLite")
        };
        sqlx::query("CREATE TABLE words (text TEXT NOT NULL)")
            .execute(pool)
            .await
            .expect("table");
        let group = GroupCommit::new(database.clone(), Words { pipelined: false }, 16);
        let (a, boom, c) = tokio::join!(
            write(&group, "a"),
            write(&group, "boom"),
            write(&group, "c")
        );
        assert_eq!(a, Ok(()));
        assert_eq!(c, Ok(()));
        let error = boom.expect_err("the panicking write fails");
        assert!(error.contains("panicked"), "{error}");
        assert!(error.contains("the batch's own code panics"), "{error}");
        // The writer task survived: later writes still commit.
        assert_eq!(write(&group, "d").await, Ok(()));
        let rows: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM words")
            .fetch_one(pool)
            .await
            .expect("count");
        assert_eq!(rows, 3);
    }

    async fn words_table(database: &Database) {
        let Database::Sqlite(pool) = database else {
            unreachable!("SQLite")
        };
        sqlx::query("CREATE TABLE words (text TEXT NOT NULL)")
            .execute(pool)
            .await
            .expect("table");
    }

    async fn words(database: &Database) -> i64 {
        let Database::Sqlite(pool) = database else {
            unreachable!("SQLite")
        };
        sqlx::query_scalar("SELECT COUNT(*) FROM words")
            .fetch_one(pool)
            .await
            .expect("count")
    }

    fn sqlite_file(dir: &tempfile::TempDir) -> String {
        format!("sqlite://{}", dir.path().join("words.db").display())
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn only_a_batch_that_allows_it_on_a_synced_wal_file_is_pipelined() {
        let dir = tempfile::tempdir().expect("dir");
        let file = Database::connect(&sqlite_file(&dir)).await.expect("file");
        let pipelined = Arc::new(Words { pipelined: true });
        let at_commit = Arc::new(Words { pipelined: false });
        assert!(matches!(
            durability(&file, &pipelined).await,
            Durability::Pipelined { .. }
        ));
        // Approval decisions and the like: never readable before durable.
        assert!(matches!(
            durability(&file, &at_commit).await,
            Durability::AtCommit
        ));
        // Nothing to gain: no fsync in the commit, or no file.
        let unsynced = Database::connect_with(
            &format!("sqlite://{}", dir.path().join("normal.db").display()),
            &crate::storage::DatabaseOptions {
                sync_full: false,
                ..Default::default()
            },
        )
        .await
        .expect("normal");
        assert!(matches!(
            durability(&unsynced, &pipelined).await,
            Durability::AtCommit
        ));
        let memory = Database::in_memory().await.expect("memory");
        assert!(matches!(
            durability(&memory, &pipelined).await,
            Durability::AtCommit
        ));
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn pipelined_writes_are_acknowledged_and_survive_reopening() {
        let dir = tempfile::tempdir().expect("dir");
        let database = Database::connect(&sqlite_file(&dir)).await.expect("file");
        words_table(&database).await;
        let group = Arc::new(GroupCommit::new(
            database.clone(),
            Words { pipelined: true },
            16,
        ));
        let writers: Vec<_> = (0..200)
            .map(|_| {
                let group = group.clone();
                tokio::spawn(async move { write(&group, "w").await })
            })
            .collect();
        for writer in writers {
            assert_eq!(writer.await.expect("writer"), Ok(()));
        }
        database.close().await;
        // Closing the database closes the writer's own connection too (well
        // before its idle timeout): the last connection gone, SQLite folds
        // the WAL into the database file and removes it.
        let wal = dir.path().join("words.db-wal");
        let deadline = std::time::Instant::now() + UNSYNCED_IDLE / 2;
        while wal.exists() {
            assert!(
                std::time::Instant::now() < deadline,
                "the writer kept the closed database open"
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        drop(group);
        let reopened = Database::connect(&sqlite_file(&dir)).await.expect("reopen");
        assert_eq!(words(&reopened).await, 200);
    }

    /// Two writers of one file (the audit log's and the gate's, say), each
    /// on a handle of its own, with SQLite told not to wait for its lock at
    /// all: every write still commits, because they take turns in the
    /// process instead of meeting at SQLite's lock (which, without turns,
    /// answers "database is locked" at once).
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn two_writers_of_one_file_take_turns() {
        let dir = tempfile::tempdir().expect("dir");
        let impatient = crate::storage::DatabaseOptions {
            busy_timeout: Duration::ZERO,
            ..Default::default()
        };
        let first = Database::connect_with(&sqlite_file(&dir), &impatient)
            .await
            .expect("file");
        words_table(&first).await;
        let second = Database::connect_with(&sqlite_file(&dir), &impatient)
            .await
            .expect("file again");
        let groups = [
            Arc::new(GroupCommit::new(
                first.clone(),
                Words { pipelined: true },
                4,
            )),
            Arc::new(GroupCommit::new(second, Words { pipelined: false }, 4)),
        ];
        let writers: Vec<_> = (0..400)
            .map(|n| {
                let group = groups[n % 2].clone();
                tokio::spawn(async move { write(&group, "w").await })
            })
            .collect();
        for writer in writers {
            assert_eq!(writer.await.expect("writer"), Ok(()));
        }
        assert_eq!(words(&first).await, 400);
    }

    /// While the file's turn is held, no writer of the file commits, whatever
    /// handle or spelling of the path it came by; once given back, all do.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_held_turn_holds_every_writer_of_the_file() {
        let dir = tempfile::tempdir().expect("dir");
        let first = Database::connect(&sqlite_file(&dir)).await.expect("file");
        words_table(&first).await;
        let second = Database::connect(&format!("sqlite://{}/./words.db", dir.path().display()))
            .await
            .expect("the file by another spelling");
        let file = std::fs::canonicalize(dir.path().join("words.db")).expect("path");
        let turn = WriteTurn::for_file(&file);
        let held = turn.take().await.expect("a free turn");
        let groups = [
            Arc::new(GroupCommit::new(
                first.clone(),
                Words { pipelined: true },
                4,
            )),
            Arc::new(GroupCommit::new(second, Words { pipelined: false }, 4)),
        ];
        let writes: Vec<_> = groups
            .iter()
            .map(|group| {
                let group = group.clone();
                tokio::spawn(async move { write(&group, "w").await })
            })
            .collect();
        tokio::time::sleep(Duration::from_millis(300)).await;
        assert!(writes.iter().all(|write| !write.is_finished()));
        assert_eq!(words(&first).await, 0, "nothing committed out of turn");
        drop(held);
        for write in writes {
            assert_eq!(write.await.expect("writer"), Ok(()));
        }
        assert_eq!(words(&first).await, 2);
    }

    /// A pipelined writer of words over the file `words.db` in `dir`, which
    /// runs `before_sync` before each sync of its WAL (to hold or fail it).
    fn pipelined_writer(
        database: &Database,
        dir: &tempfile::TempDir,
        before_sync: impl Fn() -> std::io::Result<()> + Send + Sync + 'static,
    ) -> mpsc::Sender<Word> {
        let Database::Sqlite(pool) = database else {
            unreachable!("SQLite")
        };
        let batch = Arc::new(Words { pipelined: true });
        let wal =
            WalSync::with_before_sync(&dir.path().join("words.db"), before_sync).expect("wal");
        let durability = pipelined(pool, &batch, wal);
        let (sender, receiver) = mpsc::channel(16);
        tokio::spawn(commit_batches_with(
            database.clone(),
            batch,
            Arc::new(Mutex::new(receiver)),
            16,
            durability,
        ));
        sender
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_pipelined_write_is_readable_before_its_sync_but_answered_only_after() {
        let dir = tempfile::tempdir().expect("dir");
        let database = Database::connect(&sqlite_file(&dir)).await.expect("file");
        words_table(&database).await;
        let (release, released) = std::sync::mpsc::channel::<()>();
        let released = std::sync::Mutex::new(released);
        let writer = pipelined_writer(&database, &dir, move || {
            released
                .lock()
                .expect("release")
                .recv()
                .map_err(std::io::Error::other)
        });
        let (done, mut outcome) = oneshot::channel();
        writer
            .send(Word { text: "held", done })
            .await
            .expect("writer");
        // Committed: another connection reads it while its sync is held.
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while words(&database).await == 0 {
            assert!(std::time::Instant::now() < deadline, "never committed");
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        // Not answered before its sync returns.
        tokio::time::sleep(Duration::from_millis(100)).await;
        assert!(
            matches!(outcome.try_recv(), Err(oneshot::error::TryRecvError::Empty)),
            "answered before the WAL was synced"
        );
        release.send(()).expect("syncer waiting");
        assert_eq!(outcome.await.expect("settled"), Ok(()));
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_write_whose_sync_fails_is_not_acknowledged_and_the_writer_stops() {
        let dir = tempfile::tempdir().expect("dir");
        let database = Database::connect(&sqlite_file(&dir)).await.expect("file");
        words_table(&database).await;
        // Every sync fails, as on a disk reporting write errors.
        let sender = pipelined_writer(&database, &dir, || {
            Err(std::io::Error::other("injected write error"))
        });
        let send = |text| {
            let sender = sender.clone();
            async move {
                let (done, outcome) = oneshot::channel();
                sender.send(Word { text, done }).await.expect("writer");
                outcome.await.expect("settled")
            }
        };
        let error = send("first").await.expect_err("the sync failed");
        assert!(error.contains("syncing"), "{error}");
        assert!(error.contains("may not survive a power loss"), "{error}");
        // Nothing after a failed sync is durable for sure: later writes are
        // refused, not committed.
        for text in ["second", "third"] {
            let error = send(text).await.expect_err("refused after a failed sync");
            assert!(error.contains("an earlier sync"), "{error}");
        }
        // The first is committed (readable) though its caller was told it
        // may not last: the error says so.
        assert_eq!(words(&database).await, 1);
    }
}
