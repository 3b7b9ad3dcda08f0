//! ReadOnlyGuard: SQL classification table, metadata facts, org toggled at run time.

use std::sync::Arc;

use hooks_runtime::{HookContext, HookRegistry, Observation};
use hooks_std::readonly_guard::{ModeFuture, OrgModeError};
use hooks_std::{
    FunctionAllowlist, OrgModeSource, ReadOnlyGuard, SqlClassifier, SqlDialect, SqlVerdict,
    StaticOrgModes, classify_sql,
};
use serde_json::{Value, json};

#[test]
fn sql_statements_are_classified() {
    // (statement, writes?)
    let table: &[(&str, bool)] = include!("fixtures/sql_classification.rs");
    assert!(table.len() >= 30);
    for (sql, writes) in table {
        let verdict = classify_sql(sql);
        assert_eq!(verdict.is_write(), *writes, "{sql:?} → {verdict:?}");
    }
    assert!(matches!(
        classify_sql("DELET FROM t"),
        SqlVerdict::Unparsable(_)
    ));
    let postgres = SqlClassifier::new(vec![SqlDialect::PostgreSql], FunctionAllowlist::default());
    assert_eq!(
        postgres.classify("BEGIN; SELECT 1; COMMIT"),
        SqlVerdict::Read
    );
    assert!(classify_sql("BEGIN; SELECT 1; COMMIT").is_write());
}

fn registry(modes: Arc<dyn OrgModeSource>) -> HookRegistry {
    HookRegistry::builder()
        .pre(ReadOnlyGuard::new(modes))
        .build()
        .expect("registry")
}

async fn run(
    registry: &HookRegistry,
    tool: &str,
    args: Value,
    metadata: &[(&str, Value)],
) -> Observation {
    let mut ctx = HookContext::tool_call(tool, args)
        .with_org("acme")
        .with_user("alice");
    for (key, value) in metadata {
        ctx = ctx.with_metadata(*key, value.clone());
    }
    registry
        .run_tool_call(ctx, async |_: &Value| Ok::<_, String>(json!("ran")))
        .await
        .observation
}

#[tokio::test]
async fn writes_are_blocked_only_while_the_org_is_read_only() {
    let modes = Arc::new(StaticOrgModes::new());
    let registry = registry(modes.clone());
    let delete = json!({"q": "DELETE FROM invoices"});
    assert_eq!(
        run(&registry, "sql_exec", delete.clone(), &[]).await,
        Observation::Output(json!("ran"))
    );

    modes.set_read_only("acme", true);
    let Observation::Blocked { hook, reason } =
        run(&registry, "sql_exec", delete.clone(), &[]).await
    else {
        panic!("a write in a read-only org must be blocked");
    };
    assert_eq!(hook, "readonly_guard");
    assert!(
        reason.starts_with("Org is in read-only mode — write blocked."),
        "{reason}"
    );
    let select = json!({"q": "SELECT * FROM invoices"});
    assert_eq!(
        run(&registry, "sql_query", select, &[]).await,
        Observation::Output(json!("ran"))
    );

    modes.set_read_only("acme", false);
    assert_eq!(
        run(&registry, "sql_exec", delete, &[]).await,
        Observation::Output(json!("ran"))
    );
}

#[tokio::test]
async fn unparsable_sql_and_missing_sql_count_as_writes() {
    let registry = registry(Arc::new(StaticOrgModes::with_read_only(["acme"])));
    let Observation::Blocked { reason, .. } =
        run(&registry, "sql_exec", json!({"q": "DELET FROM t"}), &[]).await
    else {
        panic!("unparsable SQL must be blocked");
    };
    assert!(reason.contains("did not parse"), "{reason}");
    assert!(
        run(&registry, "sql_exec", json!({"table": "t"}), &[])
            .await
            .is_blocked()
    );
}

#[tokio::test]
async fn metadata_marks_writes_for_other_tools() {
    let registry = registry(Arc::new(StaticOrgModes::with_read_only(["acme"])));
    let args = json!({"url": "https://example.invalid"});
    assert!(
        run(
            &registry,
            "http__fetch",
            args.clone(),
            &[("method", json!("POST"))]
        )
        .await
        .is_blocked()
    );
    assert!(
        run(
            &registry,
            "http__fetch",
            args.clone(),
            &[("http_method", json!("delete"))]
        )
        .await
        .is_blocked()
    );
    assert!(
        run(
            &registry,
            "crm__update",
            args.clone(),
            &[("side_effects", json!(true))]
        )
        .await
        .is_blocked()
    );
    assert!(
        !run(
            &registry,
            "http__fetch",
            args.clone(),
            &[("method", json!("GET"))]
        )
        .await
        .is_blocked()
    );
    assert!(
        !run(
            &registry,
            "crm__lookup",
            args,
            &[("read_only", json!(true))]
        )
        .await
        .is_blocked()
    );
}

struct DownDatabase;

impl OrgModeSource for DownDatabase {
    fn is_read_only<'a>(&'a self, org_id: &'a str) -> ModeFuture<'a> {
        Box::pin(async move {
            Err(OrgModeError {
                org_id: org_id.to_owned(),
                message: "connection refused".into(),
            })
        })
    }
}

#[tokio::test]
async fn a_failed_mode_lookup_blocks_writes_but_not_reads() {
    let registry = registry(Arc::new(DownDatabase));
    assert!(
        run(&registry, "sql_exec", json!({"q": "DELETE FROM t"}), &[])
            .await
            .is_blocked()
    );
    assert!(
        !run(&registry, "sql_query", json!({"q": "SELECT 1"}), &[])
            .await
            .is_blocked()
    );
}

/// Text on which the SQL parser itself panics (sqlparser 0.58's SQLite
/// dialect unwraps in `parse_infix`; found by fuzzing) is a parse failure
/// under that dialect: classified as a write, never a crash, whichever
/// dialects the guard reads with.
#[test]
fn text_the_sql_parser_panics_on_is_a_write_not_a_crash() {
    let sql = "SELECT sLECT id,d, body FROM notes WHERE body REGEXP @@-OU,NT(*, / SM(COUNT( BYT";
    assert!(
        matches!(classify_sql(sql), SqlVerdict::Unparsable(_)),
        "{:?}",
        classify_sql(sql)
    );
    let sqlite = SqlClassifier::new(vec![SqlDialect::Sqlite], FunctionAllowlist::default());
    let SqlVerdict::Unparsable(why) = sqlite.classify(sql) else {
        panic!("a write under SQLite");
    };
    assert!(why.contains("treated as a write"), "{why}");
    // The smallest input of the same kind.
    for sql in ["SELECT a REGEXP @@-b", "SELECT 1 WHERE x REGEXP @@"] {
        assert!(sqlite.classify(sql).is_write(), "{sql}");
    }
}

#[test]
fn config_is_checked() {
    let modes: Arc<dyn OrgModeSource> = Arc::new(StaticOrgModes::new());
    assert!(ReadOnlyGuard::from_config(modes.clone(), &Value::Null).is_ok());
    let unknown = ReadOnlyGuard::from_config(modes.clone(), &json!({"sql_toolz": "x"}))
        .err()
        .expect("unknown key");
    assert!(
        unknown.to_string().contains("unknown field `sql_toolz`"),
        "{unknown}"
    );
    let bad_when =
        ReadOnlyGuard::from_config(modes.clone(), &json!({"sql_tools": "tool_nme == \"x\""}))
            .err()
            .expect("bad when");
    assert!(
        bad_when.to_string().contains("unknown field `tool_nme`"),
        "{bad_when}"
    );
    assert!(ReadOnlyGuard::from_config(modes, &json!({"dialect": "cobol"})).is_err());
}

#[test]
fn the_reads_the_readme_names_are_reads() {
    let all = SqlClassifier::default();
    // A reporting PRAGMA with its argument quoted (SQLite); unquoted it
    // parses nowhere, and a PRAGMA that changes anything is a write.
    assert_eq!(
        all.classify("PRAGMA table_info('invoices')"),
        SqlVerdict::Read
    );
    assert!(all.classify("PRAGMA table_info(invoices)").is_write());
    assert!(all.classify("PRAGMA optimize").is_write());
    // `TABLE t` parses in no dialect, so it is a write (fail closed);
    // `BEGIN; … COMMIT` is a read where every configured dialect has it.
    assert!(all.classify("TABLE invoices").is_write());
    let postgres = SqlClassifier::new(vec![SqlDialect::PostgreSql], FunctionAllowlist::default());
    assert!(postgres.classify("TABLE invoices").is_write());
    assert!(all.classify("BEGIN; SELECT 1; COMMIT").is_write());
    assert_eq!(
        postgres.classify("BEGIN; SELECT 1; COMMIT"),
        SqlVerdict::Read
    );
}

/// The reporting query `hooks check` names when a guard reads every
/// dialect: blocked under all of them (MySQL's parser wants a unit after
/// the interval literal), a read once the dialect is PostgreSQL's.
#[test]
fn a_postgres_interval_query_is_a_read_only_under_its_dialect() {
    let sql = "SELECT coalesce(sum(amount), 0) FROM t WHERE created_at > now() - interval '1 day'";
    assert!(SqlClassifier::default().classify(sql).is_write());
    let postgres = SqlClassifier::new(vec![SqlDialect::PostgreSql], FunctionAllowlist::default());
    assert_eq!(postgres.classify(sql), SqlVerdict::Read);
}

/// A named dialect reads text as its database does (its lexer and its
/// parser), while a write another database's quoting would reveal still
/// blocks.
#[test]
fn a_named_dialect_lexes_as_its_database_and_other_readings_still_find_writes() {
    let only = |dialect| SqlClassifier::new(vec![dialect], FunctionAllowlist::default());
    for (dialect, sql) in [
        (SqlDialect::BigQuery, "SELECT a[OFFSET(0)] FROM `proj.ds.t`"),
        (
            SqlDialect::MsSql,
            "SELECT TOP (5) [Order Id], @@VERSION FROM [dbo].[Orders]",
        ),
        (
            SqlDialect::PostgreSql,
            "SELECT id FROM s WHERE doc ? 'k' AND tags @> ARRAY['vip']",
        ),
    ] {
        assert_eq!(
            only(dialect).classify(sql),
            SqlVerdict::Read,
            "{dialect}: {sql}"
        );
        assert!(
            SqlClassifier::default().classify(sql).is_write(),
            "all dialects: {sql}"
        );
    }
    assert_eq!(
        only(SqlDialect::MySql).classify("SHOW CREATE TABLE orders"),
        SqlVerdict::Read
    );
    // PostgreSQL reads `'a\''` as a string and then another; MySQL's `\'`
    // escape makes the DROP a statement. PostgreSQL alone still blocks it.
    let hidden = "SELECT 'a\\''; DROP TABLE t; --'";
    assert!(only(SqlDialect::PostgreSql).classify(hidden).is_write());
    // `SHOW` only opening a statement: in SQL Server `SELECT 1 SHOW` is an
    // alias, and the CREATE after it a statement of its own.
    assert!(
        only(SqlDialect::MsSql)
            .classify("SELECT 1 SHOW CREATE TABLE x (a int)")
            .is_write()
    );
}

/// `database_url` names the dialect by its scheme (from the URL, or from
/// the environment variable it names), and no message repeats the URL.
#[test]
fn the_dialect_comes_from_the_database_url() {
    let modes: Arc<dyn OrgModeSource> = Arc::new(StaticOrgModes::new());
    let guard = |config: Value| ReadOnlyGuard::from_config(modes.clone(), &config);
    let interval = HookContext::tool_call(
        "sql_report",
        json!({"sql": "SELECT coalesce(sum(amount), 0) FROM t WHERE created_at > now() - interval '1 day'"}),
    );
    let postgres =
        guard(json!({"database_url": "postgresql+psycopg://app:s3cret@db/shop"})).expect("a guard");
    assert_eq!(postgres.write_reason(&interval), None);
    let mysql = guard(json!({"database_url": "mysql://app:s3cret@db/shop"})).expect("a guard");
    assert!(mysql.write_reason(&interval).is_some());
    // A write stays a write, whatever the database.
    let delete = HookContext::tool_call("sql_exec", json!({"sql": "DELETE FROM t"}));
    assert!(postgres.write_reason(&delete).is_some());

    // SAFETY: set before any other thread of this test reads it; no other
    // test reads this variable.
    unsafe { std::env::set_var("HOOKS_TEST_REPORTING_DB", "postgres://app:s3cret@db/shop") };
    let from_env = guard(json!({"database_url": "${HOOKS_TEST_REPORTING_DB}"})).expect("a guard");
    assert_eq!(from_env.write_reason(&interval), None);

    for (config, says) in [
        (
            json!({"database_url": "oracle://app:s3cret@db/shop"}),
            "scheme \"oracle\"",
        ),
        (
            json!({"database_url": "$HOOKS_TEST_UNSET_DATABASE_URL"}),
            "HOOKS_TEST_UNSET_DATABASE_URL, which is not set",
        ),
        (
            json!({"database_url": "postgres://app:s3cret@db/shop", "dialect": "mysql"}),
            "both `dialect` and `database_url`",
        ),
    ] {
        let error = guard(config).err().expect("refused").to_string();
        assert!(error.contains(says), "{error}");
        assert!(!error.contains("s3cret"), "{error}");
    }
}

#[test]
fn too_complex_measures_without_parsing_and_agrees_with_classify() {
    let classifier = SqlClassifier::default();
    let everyday = "SELECT i.id FROM invoices i JOIN customers c ON c.id = i.customer_id";
    assert_eq!(classifier.too_complex(everyday), None);
    assert_eq!(classifier.classify(everyday), SqlVerdict::Read);
    // 2,000 Snowflake joins aborted the process when parsed; measured, they
    // are refused before any parser sees them.
    let joins = format!("SELECT x FROM a{}", " JOIN a".repeat(2_000));
    let reason = classifier.too_complex(&joins).expect("too complex");
    assert!(
        reason.contains("too complex to classify safely"),
        "{reason}"
    );
    assert_eq!(classifier.classify(&joins), SqlVerdict::Write(reason));
    let long = format!(
        "SELECT 1{}",
        " ".repeat(hooks_std::readonly_guard::MAX_SQL_BYTES)
    );
    assert!(
        classifier
            .too_complex(&long)
            .is_some_and(|r| r.contains("too long"))
    );
}
