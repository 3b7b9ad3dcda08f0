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
//! each queued write in turn.

use std::sync::{Arc, OnceLock};

use sqlx::pool::PoolConnection;
use sqlx::{Connection, PgConnection, Postgres, Sqlite, SqliteConnection};
use std::future::Future;
use std::pin::Pin;
use tokio::sync::{Mutex, mpsc};

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

    /// Tells the item's caller how it went: `Ok` once its transaction is
    /// committed, otherwise why not.
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
}

/// The writer task: one transaction per batch, each item alone after a
/// failed batch.
async fn commit_batches<B: Batch>(
    database: Database,
    batch: Arc<B>,
    queue: Arc<Mutex<mpsc::Receiver<B::Item>>>,
    max_batch: usize,
) {
    let mut items = Vec::with_capacity(max_batch);
    let mut held: Option<Held> = None;
    // An in-memory SQLite database has exactly one connection: keeping it
    // would starve every reader.
    let keep = match &database {
        Database::Sqlite(pool) => pool.options().get_max_connections() > 1,
        Database::Postgres(_) => true,
    };
    loop {
        let more_queued = {
            // Never wait for work (or for another writer waiting for work)
            // while holding a pooled connection: readers need it.
            let mut queue = match queue.try_lock() {
                Ok(queue) if !queue.is_empty() => queue,
                Ok(queue) => {
                    held = None;
                    queue
                }
                Err(_) => {
                    held = None;
                    queue.lock().await
                }
            };
            if queue.recv_many(&mut items, max_batch).await == 0 {
                return;
            }
            !queue.is_empty()
        };
        match commit(&database, &mut held, &*batch, &mut items).await {
            Ok(()) => {
                for item in items.drain(..) {
                    batch.settle(item, Ok(()));
                }
            }
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
                    let outcome = commit(&database, &mut held, &*batch, &mut alone).await;
                    if outcome.is_err() {
                        held = None;
                    }
                    let [item] = alone;
                    batch.settle(item, outcome.as_ref().map(|_| ()));
                }
            }
        }
        if !keep || !more_queued || database_closed(&database) {
            held = None;
        }
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

/// Writes `items` in one transaction on the held connection (acquiring one
/// if none is held) and commits it.
async fn commit<B: Batch>(
    database: &Database,
    held: &mut Option<Held>,
    batch: &B,
    items: &mut [B::Item],
) -> Result<(), StorageError> {
    let described = batch.describe(items.len());
    let failed = |what: &str| {
        let what = what.to_owned();
        move |source| StorageError::Query { what, source }
    };
    let connection = match held.take() {
        Some(connection) => held.insert(connection),
        None => held.insert(match database {
            Database::Sqlite(pool) => {
                Held::Sqlite(pool.acquire().await.map_err(failed(&described))?)
            }
            Database::Postgres(pool) => {
                Held::Postgres(pool.acquire().await.map_err(failed(&described))?)
            }
        }),
    };
    match connection {
        Held::Sqlite(connection) => {
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
            batch
                .write(Conn::Sqlite(&mut tx), items)
                .await
                .map_err(failed(&described))?;
            tx.commit().await.map_err(failed(&described))
        }
        Held::Postgres(connection) => {
            let mut tx = connection.begin().await.map_err(failed(&described))?;
            batch
                .write(Conn::Postgres(&mut tx), items)
                .await
                .map_err(failed(&described))?;
            tx.commit().await.map_err(failed(&described))
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
