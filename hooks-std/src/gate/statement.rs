//! A gate write that is one statement with its arguments, and how the
//! statements of a batch run on SQLite as one script.
//!
//! Most of the gate's writes are a single conditional statement. Run one by
//! one inside a batch's transaction, each costs a round trip to the SQLite
//! driver's worker thread (two thread wake-ups), and under load those trips,
//! not the statements, were what the single writer spent its time on.
//! Described as data instead — the SQL and its arguments — several run as
//! one multi-statement script in one trip. They still run one after another
//! in the same transaction, each seeing the effects of those before it, and
//! each caller gets its own statement's rows and count back.
//!
//! A script is the same statement repeated a power-of-two number of times
//! (see `write_queue`), so the scripts a busy gate sends are few and stay
//! prepared in the driver's statement cache: parsing a fresh script for
//! every batch cost more than the round trips it saved.
//!
//! On PostgreSQL a statement with arguments cannot share a message with
//! another, so there each one runs as before, alone.

use futures_util::TryStreamExt as _;
use futures_util::stream::BoxStream;
use serde_json::Value;
use sqlx::postgres::{PgQueryResult, PgRow};
use sqlx::query::Query;
use sqlx::sqlite::{SqliteQueryResult, SqliteRow};
use sqlx::types::Json;
use sqlx::{Database, Either, Encode, Executor as _, FromRow, Row as _, SqliteConnection, Type};

use crate::storage::Conn;

/// One argument of a [`Statement`].
#[derive(Debug, Clone)]
enum Arg {
    Text(String),
    OptionalText(Option<String>),
    Int(i64),
    Json(Value),
}

/// A statement in the store's dialect (SQLite's placeholders are `?1`,
/// `?2`, …), with its arguments in placeholder order.
#[derive(Debug, Clone)]
pub(crate) struct Statement {
    sql: String,
    args: Vec<Arg>,
}

impl Statement {
    /// `sql`, with no arguments yet.
    pub(crate) fn new(sql: String) -> Self {
        Statement {
            sql,
            args: Vec::new(),
        }
    }

    /// Binds the next placeholder to `value`.
    pub(crate) fn text(mut self, value: impl Into<String>) -> Self {
        self.args.push(Arg::Text(value.into()));
        self
    }

    /// Binds the next placeholder to `value`, or NULL.
    pub(crate) fn optional_text(mut self, value: Option<impl Into<String>>) -> Self {
        self.args.push(Arg::OptionalText(value.map(Into::into)));
        self
    }

    /// Binds the next placeholder to `value`.
    pub(crate) fn int(mut self, value: i64) -> Self {
        self.args.push(Arg::Int(value));
        self
    }

    /// Binds the next placeholder to `value` as JSON.
    pub(crate) fn json(mut self, value: Value) -> Self {
        self.args.push(Arg::Json(value));
        self
    }

    /// The statement's SQL.
    pub(crate) fn sql(&self) -> &str {
        &self.sql
    }

    /// Runs the statement alone on `conn`.
    pub(crate) async fn run(&self, conn: Conn<'_>) -> Result<Returned, sqlx::Error> {
        Ok(match conn {
            Conn::Sqlite(connection) => {
                let steps = connection.fetch_many(bind(sqlx::query(&self.sql), &self.args));
                let (rows, affected) = collect(steps, SqliteQueryResult::rows_affected).await?;
                Returned {
                    rows: Rows::Sqlite(rows),
                    affected,
                }
            }
            Conn::Postgres(connection) => {
                let steps = connection.fetch_many(bind(sqlx::query(&self.sql), &self.args));
                let (rows, affected) = collect(steps, PgQueryResult::rows_affected).await?;
                Returned {
                    rows: Rows::Postgres(rows),
                    affected,
                }
            }
        })
    }
}

/// The rows of a one-statement query's `steps`, and the rows it changed.
async fn collect<R, D>(
    mut steps: BoxStream<'_, Result<Either<D, R>, sqlx::Error>>,
    changed: fn(&D) -> u64,
) -> Result<(Vec<R>, u64), sqlx::Error> {
    let (mut rows, mut affected) = (Vec::new(), 0);
    while let Some(step) = steps.try_next().await? {
        match step {
            Either::Left(done) => affected += changed(&done),
            Either::Right(row) => rows.push(row),
        }
    }
    Ok((rows, affected))
}

/// Binds `args` to `query`, in order.
fn bind<'q, DB>(
    mut query: Query<'q, DB, <DB as Database>::Arguments<'q>>,
    args: &'q [Arg],
) -> Query<'q, DB, <DB as Database>::Arguments<'q>>
where
    DB: Database,
    &'q str: Encode<'q, DB> + Type<DB>,
    Option<&'q str>: Encode<'q, DB> + Type<DB>,
    i64: Encode<'q, DB> + Type<DB>,
    Json<&'q Value>: Encode<'q, DB> + Type<DB>,
{
    for arg in args {
        query = bind_one(query, arg);
    }
    query
}

/// Binds `arg` to the next placeholder of `query`.
fn bind_one<'q, DB>(
    query: Query<'q, DB, <DB as Database>::Arguments<'q>>,
    arg: &'q Arg,
) -> Query<'q, DB, <DB as Database>::Arguments<'q>>
where
    DB: Database,
    &'q str: Encode<'q, DB> + Type<DB>,
    Option<&'q str>: Encode<'q, DB> + Type<DB>,
    i64: Encode<'q, DB> + Type<DB>,
    Json<&'q Value>: Encode<'q, DB> + Type<DB>,
{
    match arg {
        Arg::Text(value) => query.bind(value.as_str()),
        Arg::OptionalText(value) => query.bind(value.as_deref()),
        Arg::Int(value) => query.bind(*value),
        Arg::Json(value) => query.bind(Json(value)),
    }
}

/// The rows a statement returned, as the backend gave them.
enum Rows {
    Sqlite(Vec<SqliteRow>),
    Postgres(Vec<PgRow>),
}

/// What one statement returned: its rows (`RETURNING`) and how many rows it
/// changed.
pub(crate) struct Returned {
    rows: Rows,
    affected: u64,
}

impl Returned {
    /// How many rows the statement inserted, updated or deleted.
    pub(crate) fn affected(self) -> Result<u64, sqlx::Error> {
        Ok(self.affected)
    }

    /// The first row returned, if any.
    pub(crate) fn first<T>(self) -> Result<Option<T>, sqlx::Error>
    where
        T: for<'r> FromRow<'r, SqliteRow> + for<'r> FromRow<'r, PgRow>,
    {
        match self.rows {
            Rows::Sqlite(rows) => rows.first().map(T::from_row).transpose(),
            Rows::Postgres(rows) => rows.first().map(T::from_row).transpose(),
        }
    }

    /// Every row returned.
    pub(crate) fn all<T>(self) -> Result<Vec<T>, sqlx::Error>
    where
        T: for<'r> FromRow<'r, SqliteRow> + for<'r> FromRow<'r, PgRow>,
    {
        match self.rows {
            Rows::Sqlite(rows) => rows.iter().map(T::from_row).collect(),
            Rows::Postgres(rows) => rows.iter().map(T::from_row).collect(),
        }
    }

    /// The first column of the first row returned, as an integer, if any.
    pub(crate) fn first_int(self) -> Result<Option<i64>, sqlx::Error> {
        match self.rows {
            Rows::Sqlite(rows) => rows.first().map(|row| row.try_get(0)).transpose(),
            Rows::Postgres(rows) => rows.first().map(|row| row.try_get(0)).transpose(),
        }
    }
}

/// Runs `statements` one after another on SQLite in one round trip, as one
/// multi-statement script (prepared once and kept in the connection's
/// statement cache), in the transaction already open, and returns what each
/// returned, in order. A failing statement fails the script where it
/// stands: the caller rolls back.
pub(crate) async fn run_script(
    connection: &mut SqliteConnection,
    statements: &[&Statement],
) -> Result<Vec<Returned>, sqlx::Error> {
    let mut script = String::new();
    // Each placeholder's argument, in the order the placeholders appear.
    let mut in_order: Vec<&Arg> = Vec::new();
    for statement in statements {
        let numbers = unnumber_into(&mut script, &statement.sql)?;
        let highest = numbers.iter().copied().max().unwrap_or(0);
        if highest != statement.args.len() {
            return Err(sqlx::Error::Protocol(format!(
                "a gate statement has {highest} placeholder(s) but {} argument(s): {}",
                statement.args.len(),
                statement.sql
            )));
        }
        in_order.extend(numbers.iter().map(|number| &statement.args[number - 1]));
        script.push_str("; ");
    }
    let mut query = sqlx::query(&script);
    for arg in in_order {
        query = bind_one(query, arg);
    }
    // One result per statement, after its rows.
    let mut results = Vec::with_capacity(statements.len());
    let mut rows = Vec::new();
    let mut steps = connection.fetch_many(query);
    while let Some(step) = steps.try_next().await? {
        match step {
            Either::Right(row) => rows.push(row),
            Either::Left(done) => results.push(Returned {
                rows: Rows::Sqlite(std::mem::take(&mut rows)),
                affected: done.rows_affected(),
            }),
        }
    }
    drop(steps);
    if results.len() != statements.len() {
        return Err(sqlx::Error::Protocol(format!(
            "a script of {} statement(s) gave {} result(s)",
            statements.len(),
            results.len()
        )));
    }
    Ok(results)
}

/// Appends `sql` to `script` with each numbered placeholder `?n` written
/// as a plain `?`, and returns the numbers in the order they appeared. In a
/// script the driver numbers plain placeholders across all its statements,
/// one argument each, in order; numbered ones would count from the script's
/// first argument, and a statement whose numbers skip some (a script's
/// later statement, renumbered) makes the driver stop binding early.
///
/// A `?` that SQLite would not read as a placeholder (in a quoted string or
/// name, or a comment) would shift every later argument of the script onto
/// the wrong placeholder, other callers' included, so the store's SQL has
/// none: a quoted `?`, a comment, an unnumbered `?` or `?0` is an error, and
/// the script is not run.
fn unnumber_into(script: &mut String, sql: &str) -> Result<Vec<usize>, sqlx::Error> {
    let refused = |why: &str| sqlx::Error::Protocol(format!("a gate statement {why}: {sql}"));
    if sql.contains("--") || sql.contains("/*") {
        return Err(refused("has a comment"));
    }
    let mut numbers = Vec::new();
    let mut quote: Option<char> = None;
    let mut chars = sql.char_indices().peekable();
    while let Some((_, c)) = chars.next() {
        match (quote, c) {
            (Some(open), _) if c == open => quote = None,
            (Some(_), '?') => return Err(refused("has a `?` inside quotes")),
            (Some(_), _) => {}
            (None, '\'' | '"' | '`' | '[') => quote = Some(if c == '[' { ']' } else { c }),
            (None, '?') => {
                let mut number = String::new();
                while let Some((_, digit)) = chars.next_if(|(_, next)| next.is_ascii_digit()) {
                    number.push(digit);
                }
                let number = number
                    .parse::<usize>()
                    .ok()
                    .filter(|number| *number > 0)
                    .ok_or_else(|| refused("has an unnumbered placeholder"))?;
                numbers.push(number);
                script.push('?');
                continue;
            }
            (None, _) => {}
        }
        script.push(c);
    }
    if quote.is_some() {
        return Err(refused("has an unclosed quote"));
    }
    Ok(numbers)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_become_plain_and_their_numbers_are_kept_in_order() {
        let mut script = String::from("BEGIN; ");
        let numbers = unnumber_into(&mut script, "UPDATE t SET a = ?2 WHERE id = ?1 OR b = ?2")
            .expect("unnumbered");
        assert_eq!(script, "BEGIN; UPDATE t SET a = ? WHERE id = ? OR b = ?");
        assert_eq!(numbers, vec![2, 1, 2]);
    }

    #[test]
    fn an_unnumbered_or_zero_placeholder_is_refused() {
        let mut script = String::new();
        assert!(unnumber_into(&mut script, "SELECT ? + 1").is_err());
        assert!(unnumber_into(&mut script, "SELECT ?0 + 1").is_err());
    }

    #[test]
    fn a_question_mark_sqlite_would_not_bind_is_refused() {
        // Counted here but not by SQLite, it would move every later argument.
        for sql in [
            "SELECT 'what?1' WHERE id = ?1",
            "SELECT \"a?1\" FROM t WHERE id = ?1",
            "SELECT 1 -- ?1",
            "SELECT /* ?1 */ 1",
            "SELECT 'unclosed",
        ] {
            assert!(unnumber_into(&mut String::new(), sql).is_err(), "{sql}");
        }
        // Quoted text without a `?` is fine, doubled quotes included.
        let mut script = String::new();
        let numbers = unnumber_into(&mut script, "UPDATE t SET s = 'it''s' WHERE id = ?1")
            .expect("unnumbered");
        assert_eq!(script, "UPDATE t SET s = 'it''s' WHERE id = ?");
        assert_eq!(numbers, vec![1]);
    }

    async fn table() -> SqliteConnection {
        use sqlx::Connection as _;
        let mut connection = SqliteConnection::connect("sqlite::memory:")
            .await
            .expect("connect");
        sqlx::query("CREATE TABLE t (id TEXT PRIMARY KEY, n INTEGER NOT NULL, note TEXT)")
            .execute(&mut connection)
            .await
            .expect("table");
        connection
    }

    #[tokio::test]
    async fn each_statement_of_a_script_sees_those_before_it_and_returns_its_own_rows() {
        let mut connection = table().await;
        let insert = |id: &str, n: i64| {
            Statement::new(
                "INSERT INTO t (id, n) VALUES (?1, ?2) ON CONFLICT (id) DO NOTHING".into(),
            )
            .text(id)
            .int(n)
        };
        let bump = |id: &str| {
            Statement::new(
                "UPDATE t SET n = n + 1, note = ?2 WHERE id = ?1 AND ?2 = ?2 RETURNING n".into(),
            )
            .text(id)
            .optional_text(Some("bumped"))
        };
        let statements = [
            insert("a", 1),
            insert("a", 5),
            bump("a"),
            bump("missing"),
            insert("b", 10),
            bump("b"),
            bump("a"),
        ];
        let refs: Vec<&Statement> = statements.iter().collect();
        let returned = run_script(&mut connection, &refs).await.expect("script");
        let shapes: Vec<(u64, Option<i64>)> = returned
            .into_iter()
            .map(|returned| {
                let affected = returned.affected;
                (affected, returned.first_int().expect("decoded"))
            })
            .collect();
        assert_eq!(
            shapes,
            vec![
                (1, None),
                (0, None),
                (1, Some(2)),
                (0, None),
                (1, None),
                (1, Some(11)),
                (1, Some(3)),
            ]
        );
        let committed: Vec<(String, i64)> = sqlx::query_as("SELECT id, n FROM t ORDER BY id")
            .fetch_all(&mut connection)
            .await
            .expect("read");
        assert_eq!(committed, vec![("a".into(), 3), ("b".into(), 11)]);
    }

    #[tokio::test]
    async fn a_failing_statement_fails_the_script_and_leaves_the_transaction_to_roll_back() {
        let mut connection = table().await;
        let statements = [
            Statement::new("INSERT INTO t (id, n) VALUES (?1, ?2)".into())
                .text("a")
                .int(1),
            // NOT NULL violated.
            Statement::new("INSERT INTO t (id, n) VALUES (?1, NULL)".into()).text("b"),
        ];
        let refs: Vec<&Statement> = statements.iter().collect();
        sqlx::query("BEGIN IMMEDIATE")
            .execute(&mut connection)
            .await
            .expect("begun");
        assert!(run_script(&mut connection, &refs).await.is_err());
        sqlx::query("ROLLBACK")
            .execute(&mut connection)
            .await
            .expect("rolled back");
        let count: i64 = sqlx::query_scalar("SELECT count(*) FROM t")
            .fetch_one(&mut connection)
            .await
            .expect("read");
        assert_eq!(count, 0, "nothing of a failed script is committed");
    }

    #[tokio::test]
    async fn arguments_must_match_placeholders() {
        let mut connection = table().await;
        let statement = Statement::new("INSERT INTO t (id, n) VALUES (?1, ?2)".into()).text("a");
        let error = run_script(&mut connection, &[&statement])
            .await
            .err()
            .expect("refused");
        assert!(
            error
                .to_string()
                .contains("2 placeholder(s) but 1 argument(s)")
        );
    }
}
