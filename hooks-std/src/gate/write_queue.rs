//! The approval gate's writes as a group-commit batch: decisions, approval
//! stamps, expiries, card references and the rest share transactions, and
//! each caller still learns its own outcome once its transaction committed.
//!
//! A queued write is either one [`Statement`] with its arguments (most of
//! them) or a closure over the transaction's connection (the few with logic
//! between statements). The writes of a batch run one after another; every
//! statement is conditional (only a pending request moves, an approval is
//! stamped once), so a write sees the effect of those before it in the same
//! batch exactly as it would after their commits. On SQLite the statement
//! writes go to the driver in scripts, each kind of write together (see
//! [`statement`](super::statement)).

use std::sync::{Arc, Mutex, PoisonError};

use tokio::sync::oneshot;

use sqlx::SqliteConnection;

use super::statement::{Returned, Statement, run_script};
use crate::storage::{Batch, BoxFuture, Conn, StorageError};

/// A queued write, with its result until the batch commits.
pub(crate) trait QueuedWrite: Send {
    /// Runs the write in the open transaction, keeping its result.
    fn run<'t>(&'t mut self, conn: Conn<'t>) -> BoxFuture<'t, Result<(), sqlx::Error>>;

    /// The write as one statement, if it is one: such writes may run in a
    /// script with their neighbours, and hear back through
    /// [`returned`](Self::returned) instead of [`run`](Self::run).
    fn statement(&self) -> Option<&Statement> {
        None
    }

    /// Whether the write's caller has stopped waiting for it (a timeout, a
    /// dropped request): such a write is skipped, never run. Its caller may
    /// already act on not having heard back, and another write it then
    /// makes may share this batch, reordered (see [`run_in_scripts`]).
    fn abandoned(&self) -> bool {
        false
    }

    /// Whether what the write returns must be read before it commits, so
    /// that a row this version cannot read rolls the write back. A decision
    /// is such a write: it must never stand on a request its caller could
    /// not read (an approval recorded, then reported as failed). Other
    /// writes may commit first and be read after (see
    /// `postgres_without_transaction` on [`GateWrites`]).
    fn reads_before_commit(&self) -> bool {
        false
    }

    /// Keeps what the write's [`statement`](Self::statement) returned when
    /// it ran in a script.
    fn returned(&mut self, returned: Returned) -> Result<(), sqlx::Error> {
        drop(returned);
        Err(sqlx::Error::Protocol(
            "a gate write that is not a statement was run in a script".into(),
        ))
    }

    /// Hands the caller its result once committed, or the reason it failed.
    fn settle(self: Box<Self>, outcome: Result<(), &StorageError>);
}

/// A write returning `T`, and its caller's end of the line.
pub(crate) struct Job<T, F> {
    write: F,
    what: String,
    output: Option<T>,
    done: oneshot::Sender<Result<T, StorageError>>,
}

impl<T, F> Job<T, F> {
    /// A job for `write`, described as `what` in errors; its result goes to `done`.
    pub(crate) fn new(
        write: F,
        what: String,
        done: oneshot::Sender<Result<T, StorageError>>,
    ) -> Self {
        Job {
            write,
            what,
            output: None,
            done,
        }
    }
}

impl<T, F> QueuedWrite for Job<T, F>
where
    T: Send + 'static,
    F: for<'t> Fn(Conn<'t>) -> BoxFuture<'t, Result<T, sqlx::Error>> + Send + 'static,
{
    fn run<'t>(&'t mut self, conn: Conn<'t>) -> BoxFuture<'t, Result<(), sqlx::Error>> {
        Box::pin(async move {
            self.output = None;
            self.output = Some((self.write)(conn).await?);
            Ok(())
        })
    }

    fn settle(self: Box<Self>, outcome: Result<(), &StorageError>) {
        let Job {
            what, output, done, ..
        } = *self;
        tell(done, what, output, outcome);
    }
}

/// Tells a write's caller its result once its batch committed, or why not.
fn tell<T>(
    done: oneshot::Sender<Result<T, StorageError>>,
    what: String,
    output: Option<T>,
    outcome: Result<(), &StorageError>,
) {
    let result = match (outcome, output) {
        (Ok(()), Some(output)) => Ok(output),
        (Ok(()), None) => Err(StorageError::Unavailable {
            what,
            why: "the write did not run".into(),
        }),
        (Err(error), _) => Err(StorageError::Unavailable {
            what,
            why: error.to_string(),
        }),
    };
    let _ = done.send(result);
}

/// A write that is one statement, its result read from what the statement
/// returned by `decode`.
pub(crate) struct StatementJob<T> {
    statement: Statement,
    decode: fn(Returned) -> Result<T, sqlx::Error>,
    reads_before_commit: bool,
    what: String,
    output: Option<T>,
    done: oneshot::Sender<Result<T, StorageError>>,
}

impl<T> StatementJob<T> {
    /// A job running `statement`, its result `decode`d from what it returned,
    /// described as `what` in errors; the result goes to `done`.
    pub(crate) fn new(
        statement: Statement,
        decode: fn(Returned) -> Result<T, sqlx::Error>,
        what: String,
        done: oneshot::Sender<Result<T, StorageError>>,
    ) -> Self {
        StatementJob {
            statement,
            decode,
            reads_before_commit: false,
            what,
            output: None,
            done,
        }
    }

    /// The same job, its result read before its transaction commits (see
    /// [`QueuedWrite::reads_before_commit`]).
    pub(crate) fn read_before_commit(self) -> Self {
        StatementJob {
            reads_before_commit: true,
            ..self
        }
    }
}

impl StatementJob<u64> {
    /// A job running `statement` whose result is how many rows it changed.
    pub(crate) fn counting(
        statement: Statement,
        what: String,
        done: oneshot::Sender<Result<u64, StorageError>>,
    ) -> Self {
        StatementJob::new(statement, Returned::affected, what, done)
    }
}

impl<T: Send + 'static> QueuedWrite for StatementJob<T> {
    fn run<'t>(&'t mut self, conn: Conn<'t>) -> BoxFuture<'t, Result<(), sqlx::Error>> {
        Box::pin(async move {
            self.output = None;
            let returned = self.statement.run(conn).await?;
            self.returned(returned)
        })
    }

    fn statement(&self) -> Option<&Statement> {
        Some(&self.statement)
    }

    fn abandoned(&self) -> bool {
        self.done.is_closed()
    }

    fn reads_before_commit(&self) -> bool {
        self.reads_before_commit
    }

    fn returned(&mut self, returned: Returned) -> Result<(), sqlx::Error> {
        self.output = None;
        self.output = Some((self.decode)(returned)?);
        Ok(())
    }

    fn settle(self: Box<Self>, outcome: Result<(), &StorageError>) {
        let StatementJob {
            what, output, done, ..
        } = *self;
        tell(done, what, output, outcome);
    }
}

/// The longest script: the same statement this many times at most. Scripts
/// are the same statement repeated a power of two times, up to this, so a
/// busy writer's scripts are five per kind of write at most, and the gate's
/// seventeen kinds fit the connection's statement cache (100 statements by
/// default) with room for its reads.
const MAX_SCRIPT: usize = 16;

/// Runs the statement writes `items` on SQLite's `connection` in the open
/// transaction, each kind of write in scripts of itself (see [`MAX_SCRIPT`]),
/// handing each write its own result.
///
/// The writes of a batch are reordered, grouped by statement: they come
/// from callers none of whom has heard back (each waits for its write to
/// commit before doing anything else), so any order of them is one those
/// callers could have seen; within a kind they keep their order. A caller
/// that stopped waiting has, in effect, heard back, and may have made
/// another write that depends on the first not having happened: its
/// abandoned write is skipped (see [`QueuedWrite::abandoned`]), so it can
/// never run after that caller's later one.
async fn run_in_scripts(
    connection: &mut SqliteConnection,
    items: &mut [Box<dyn QueuedWrite>],
) -> Result<(), sqlx::Error> {
    let mut order: Vec<usize> = (0..items.len())
        .filter(|&index| !items[index].abandoned())
        .collect();
    let mut bounds = Vec::new();
    {
        let sql_of = |index: usize| items[index].statement().map(Statement::sql);
        order.sort_by(|a, b| sql_of(*a).cmp(&sql_of(*b)));
        let mut start = 0;
        while start < order.len() {
            let kind = sql_of(order[start]);
            let same = order[start..]
                .iter()
                .take_while(|&&index| sql_of(index) == kind)
                .count();
            let chunk = prev_power_of_two(same.min(MAX_SCRIPT));
            bounds.push(start..start + chunk);
            start += chunk;
        }
    }
    for bound in bounds {
        let indices = &order[bound];
        let returned = {
            let statements: Option<Vec<&Statement>> = indices
                .iter()
                .map(|&index| items[index].statement())
                .collect();
            let statements = statements.ok_or_else(|| {
                sqlx::Error::Protocol(
                    "a gate write that is not a statement was run in a script".into(),
                )
            })?;
            run_script(connection, &statements).await?
        };
        for (&index, returned) in indices.iter().zip(returned) {
            items[index].returned(returned)?;
        }
    }
    Ok(())
}

/// The largest power of two not above `n` (which is at least 1).
fn prev_power_of_two(n: usize) -> usize {
    1 << (usize::BITS - 1 - n.max(1).leading_zeros())
}

/// The gate's writes as a [`Batch`].
pub(crate) struct GateWrites;

impl Batch for GateWrites {
    type Item = Box<dyn QueuedWrite>;

    fn write<'t>(
        &'t self,
        conn: Conn<'t>,
        items: &'t mut [Self::Item],
    ) -> BoxFuture<'t, Result<(), sqlx::Error>> {
        Box::pin(async move {
            match conn {
                Conn::Sqlite(connection) => {
                    // Each run of statement writes in scripts; the others alone.
                    let mut start = 0;
                    while start < items.len() {
                        let run = items[start..]
                            .iter()
                            .take_while(|item| item.statement().is_some())
                            .count();
                        if run == 0 {
                            if !items[start].abandoned() {
                                items[start].run(Conn::Sqlite(&mut *connection)).await?;
                            }
                            start += 1;
                        } else {
                            run_in_scripts(connection, &mut items[start..start + run]).await?;
                            start += run;
                        }
                    }
                }
                Conn::Postgres(connection) => {
                    for item in items.iter_mut().filter(|item| !item.abandoned()) {
                        item.run(Conn::Postgres(&mut *connection)).await?;
                    }
                }
            }
            Ok(())
        })
    }

    /// A lone statement write is its own transaction on PostgreSQL unless
    /// it must be read before it commits (a decision): `BEGIN` and `COMMIT`
    /// around it are two more round trips, and under load most writes are
    /// alone (four writer tasks take writes as they come). What such a write
    /// returns is read after it committed, so a read that fails (a value
    /// this version cannot decode) reports an error for a write that
    /// stands: the same uncertainty as a `COMMIT` whose reply is lost. For
    /// these writes that is on the safe side: an approval stamped and
    /// reported as failed blocks its call, a request created or a card
    /// claimed or recorded and reported as failed blocks its call and
    /// waits for its deadline (the outbox redraws a recorded card), an
    /// expiry or a cancellation only ends a request.
    fn postgres_without_transaction(&self, items: &[Self::Item]) -> bool {
        matches!(items, [only] if only.statement().is_some() && !only.reads_before_commit())
    }

    /// Safe for the gate because nothing it does rests on a read alone:
    /// every step with an effect outside the database (running the tool,
    /// sending or redrawing a card, telling an approver their decision
    /// counted) waits for a write of its own (the approval stamp, the card
    /// claim, the outbox take, the decision), and a write is acknowledged
    /// only after a sync of the WAL that began after it committed, which
    /// makes everything committed before it durable too, the decision it
    /// read included. What a power loss can take back is only what a pure
    /// read showed: a page listing a decision, or a call blocked on a
    /// rejection (the safe side).
    fn visible_before_durable(&self) -> bool {
        true
    }

    fn settle(&self, item: Self::Item, outcome: Result<(), &StorageError>) {
        item.settle(outcome);
    }

    fn describe(&self, items: usize) -> String {
        format!("{items} write(s) of the approval gate to confirmation_requests")
    }
}

/// A yes/no question asked at most once: a write that runs again (its batch
/// failed) gets the first answer, so a reply window that said "commit" is
/// not asked a second time (which would close it).
pub(crate) struct AskedOnce<F> {
    state: Arc<Mutex<(Option<F>, Option<bool>)>>,
}

impl<F> Clone for AskedOnce<F> {
    fn clone(&self) -> Self {
        AskedOnce {
            state: self.state.clone(),
        }
    }
}

impl<F: FnOnce() -> bool> AskedOnce<F> {
    pub(crate) fn new(question: F) -> Self {
        AskedOnce {
            state: Arc::new(Mutex::new((Some(question), None))),
        }
    }

    /// The answer, asking the question the first time.
    pub(crate) fn ask(&self) -> bool {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(answer) = state.1 {
            return answer;
        }
        let answer = state.0.take().is_some_and(|question| question());
        state.1 = Some(answer);
        answer
    }
}

#[cfg(test)]
mod tests {
    use sqlx::Connection as _;

    use super::*;

    /// A table of counters `c0` … `c{count - 1}`, all at zero.
    async fn counters(count: usize) -> SqliteConnection {
        let mut connection = SqliteConnection::connect("sqlite::memory:")
            .await
            .expect("connect");
        sqlx::query("CREATE TABLE c (id TEXT PRIMARY KEY, n INTEGER NOT NULL)")
            .execute(&mut connection)
            .await
            .expect("table");
        for i in 0..count {
            sqlx::query("INSERT INTO c (id, n) VALUES (?1, 0)")
                .bind(format!("c{i}"))
                .execute(&mut connection)
                .await
                .expect("row");
        }
        connection
    }

    /// Where a write's caller hears back.
    type Answer<T> = oneshot::Receiver<Result<T, StorageError>>;

    /// Stamps counter `id` (`c<n>`) once, as the gate stamps an approval:
    /// `Some(n)` the first time, so each caller can tell its own row, `None`
    /// after.
    fn stamp(id: &str) -> (Box<dyn QueuedWrite>, Answer<Option<i64>>) {
        let statement = Statement::new(
            "UPDATE c SET n = n + 1 WHERE id = ?1 AND n = 0 \
             RETURNING CAST(substr(id, 2) AS INTEGER)"
                .into(),
        )
        .text(id);
        let (done, result) = oneshot::channel();
        let job = StatementJob::new(
            statement,
            Returned::first_int,
            format!("stamping {id}"),
            done,
        );
        (Box::new(job), result)
    }

    #[tokio::test]
    async fn each_write_of_a_batch_hears_its_own_result_and_a_second_stamp_finds_the_first() {
        let mut connection = counters(40).await;
        let mut items: Vec<Box<dyn QueuedWrite>> = Vec::new();
        let mut stamps = Vec::new();
        let mut inserts = Vec::new();
        // 40 stamps (one script of 32, one of 8), an insert after every
        // tenth, and c5 stamped twice: the later one must find it stamped.
        for i in 0..40 {
            let (item, result) = stamp(&format!("c{i}"));
            items.push(item);
            stamps.push(result);
            if i % 10 == 9 {
                let statement = Statement::new(
                    "INSERT INTO c (id, n) VALUES (?1, ?2) ON CONFLICT (id) DO NOTHING".into(),
                )
                .text(format!("new{i}"))
                .int(7);
                let (done, result) = oneshot::channel();
                items.push(Box::new(StatementJob::new(
                    statement,
                    Returned::affected,
                    "inserting".into(),
                    done,
                )));
                inserts.push(result);
            }
        }
        let (again, again_result) = stamp("c5");
        items.push(again);

        let mut tx = connection.begin().await.expect("begin");
        GateWrites
            .write(Conn::Sqlite(&mut tx), &mut items)
            .await
            .expect("batch written");
        tx.commit().await.expect("commit");
        for item in items {
            item.settle(Ok(()));
        }

        for (i, result) in (0_i64..).zip(stamps) {
            let stamped = result.await.expect("answered").expect("written");
            assert_eq!(stamped, Some(i), "c{i} hears of its own stamp");
        }
        for result in inserts {
            assert_eq!(result.await.expect("answered").expect("written"), 1);
        }
        let again = again_result.await.expect("answered").expect("written");
        assert_eq!(
            again, None,
            "a second stamp of c5 in the same batch finds it stamped"
        );
        let stamped: i64 = sqlx::query_scalar("SELECT count(*) FROM c WHERE n = 1")
            .fetch_one(&mut connection)
            .await
            .expect("read");
        assert_eq!(stamped, 40);
    }

    #[tokio::test]
    async fn a_write_whose_caller_stopped_waiting_is_skipped() {
        let mut connection = counters(2).await;
        let (kept, kept_answer) = stamp("c0");
        let (dropped, dropped_answer) = stamp("c1");
        drop(dropped_answer);
        let mut items = vec![kept, dropped];
        let mut tx = connection.begin().await.expect("begin");
        GateWrites
            .write(Conn::Sqlite(&mut tx), &mut items)
            .await
            .expect("batch written");
        tx.commit().await.expect("commit");
        for item in items {
            item.settle(Ok(()));
        }
        assert_eq!(
            kept_answer.await.expect("answered").expect("written"),
            Some(0)
        );
        let stamped: Vec<String> = sqlx::query_scalar("SELECT id FROM c WHERE n = 1")
            .fetch_all(&mut connection)
            .await
            .expect("read");
        assert_eq!(
            stamped,
            vec!["c0".to_owned()],
            "c1's abandoned stamp never ran"
        );
    }

    /// A write that is not a statement: how many counters are stamped.
    fn count_stamped(conn: Conn<'_>) -> BoxFuture<'_, Result<i64, sqlx::Error>> {
        Box::pin(async move {
            let Conn::Sqlite(connection) = conn else {
                unreachable!("the test runs on SQLite")
            };
            sqlx::query_scalar("SELECT count(*) FROM c WHERE n = 1")
                .fetch_one(connection)
                .await
        })
    }

    #[tokio::test]
    async fn a_write_with_logic_runs_between_the_statements_around_it() {
        let mut connection = counters(3).await;
        let (first, _first_answer) = stamp("c0");
        let (last, _last_answer) = stamp("c2");
        let (done, seen) = oneshot::channel();
        let count = Job::new(count_stamped, "counting".into(), done);
        let mut items: Vec<Box<dyn QueuedWrite>> = vec![first, Box::new(count), last];
        let mut tx = connection.begin().await.expect("begin");
        GateWrites
            .write(Conn::Sqlite(&mut tx), &mut items)
            .await
            .expect("batch written");
        tx.commit().await.expect("commit");
        for item in items {
            item.settle(Ok(()));
        }
        let seen = seen.await.expect("answered").expect("written");
        assert_eq!(
            seen, 1,
            "the count sees the stamp queued before it, not the one after"
        );
    }

    #[test]
    fn scripts_are_powers_of_two() {
        let sizes: Vec<usize> = [1, 2, 3, 5, 8, 16, 17, 31, 1000]
            .into_iter()
            .map(|n| prev_power_of_two(n.min(MAX_SCRIPT)))
            .collect();
        assert_eq!(sizes, vec![1, 2, 2, 4, 8, 16, 16, 16, 16]);
    }
}
