//! SQL text for the read-only guard, classified under each dialect alone
//! and under all of them. Beyond not failing: what the SQLite dialect
//! calls a read, run on a real SQLite database with writes turned off
//! (`PRAGMA query_only`), never attempts a write or changes anything.

#![no_main]

use std::sync::LazyLock;
use std::time::{Duration, Instant};

use hooks_std::readonly_guard::{FunctionAllowlist, SqlClassifier, SqlDialect, SqlVerdict};
use libfuzzer_sys::fuzz_target;
use sqlx::sqlite::{SqliteConnectOptions, SqliteConnection};
use sqlx::{ConnectOptions, Row};

static RUNTIME: LazyLock<tokio::runtime::Runtime> = LazyLock::new(|| {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime")
});

static ONE_DIALECT: LazyLock<Vec<(SqlDialect, SqlClassifier)>> = LazyLock::new(|| {
    SqlDialect::ALL
        .iter()
        .map(|&dialect| {
            (
                dialect,
                SqlClassifier::new(vec![dialect], FunctionAllowlist::default()),
            )
        })
        .collect()
});

static ALL_DIALECTS: LazyLock<SqlClassifier> = LazyLock::new(SqlClassifier::default);

/// The tables reporting queries read, with a few rows.
const SCHEMA: &str = "CREATE TABLE t (id INTEGER PRIMARY KEY, amount REAL, created_at TEXT, name TEXT, doc TEXT);
CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_id INTEGER, total REAL, status TEXT, created_at TEXT);
CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT, region TEXT);
CREATE VIEW v AS SELECT id, amount FROM t;
CREATE INDEX t_created ON t(created_at);
INSERT INTO t VALUES (1, 10.5, '2026-01-01', 'a', '{\"k\": 1}'), (2, 3, '2026-02-01', 'b', '[1,2]');
INSERT INTO orders VALUES (1, 1, 99.5, 'paid', '2026-01-02'), (2, 2, 5, 'open', '2026-03-01');
INSERT INTO customers VALUES (1, 'acme', 'eu'), (2, 'globex', 'us');";

struct Database {
    connection: SqliteConnection,
}

impl Database {
    async fn open() -> Database {
        let mut connection = SqliteConnectOptions::new()
            .in_memory(true)
            .connect()
            .await
            .expect("an in-memory SQLite database");
        sqlx::raw_sql(SCHEMA)
            .execute(&mut connection)
            .await
            .expect("the schema");
        Database { connection }
    }

    /// Rows changed, and the schema's version: what a write moves.
    async fn state(&mut self) -> (i64, i64) {
        let row = sqlx::query(
            "SELECT total_changes(), (SELECT schema_version FROM pragma_schema_version)",
        )
        .fetch_one(&mut self.connection)
        .await
        .expect("the state");
        (row.get(0), row.get(1))
    }

    /// Runs `sql` with writes off and a deadline: the error, if any.
    async fn run_read_only(&mut self, sql: &str) -> Option<String> {
        sqlx::raw_sql("PRAGMA query_only = ON")
            .execute(&mut self.connection)
            .await
            .expect("query_only");
        let deadline = Instant::now() + Duration::from_millis(200);
        {
            let mut handle = self.connection.lock_handle().await.expect("the handle");
            handle.set_progress_handler(1000, move || Instant::now() < deadline);
        }
        let error = sqlx::raw_sql(sql)
            .execute(&mut self.connection)
            .await
            .err()
            .map(|error| error.to_string());
        let mut handle = self.connection.lock_handle().await.expect("the handle");
        handle.remove_progress_handler();
        error
    }
}

static DATABASE: LazyLock<tokio::sync::Mutex<Option<Database>>> =
    LazyLock::new(|| tokio::sync::Mutex::new(None));

fuzz_target!(|data: &[u8]| {
    let Ok(sql) = std::str::from_utf8(data) else {
        return;
    };
    let _ = ALL_DIALECTS.classify(sql);
    let mut sqlite_read = false;
    for (dialect, classifier) in ONE_DIALECT.iter() {
        let verdict = classifier.classify(sql);
        if *dialect == SqlDialect::Sqlite {
            sqlite_read = matches!(verdict, SqlVerdict::Read);
        }
    }
    // A NUL ends the text for SQLite's C interface, and sqlx's statement
    // loop never moves past one: the classifier's verdict on such text is
    // checked above, its execution is not.
    if !sqlite_read || sql.contains('\0') {
        return;
    }
    RUNTIME.block_on(async {
        let mut slot = DATABASE.lock().await;
        if slot.is_none() {
            *slot = Some(Database::open().await);
        }
        let database = slot.as_mut().expect("the database");
        let before = database.state().await;
        let error = database.run_read_only(sql).await;
        if let Some(error) = &error {
            assert!(
                !error.contains("readonly"),
                "the SQLite dialect calls {sql:?} a read, and SQLite refused it as a write: {error}"
            );
        }
        let after = database.state().await;
        assert_eq!(
            before, after,
            "the SQLite dialect calls {sql:?} a read, and it changed the database ({error:?})"
        );
        // Whatever it was, start the next input on a fresh database when it
        // failed in a way that may leave a transaction open.
        if error.is_some() {
            *slot = None;
        }
    });
});
