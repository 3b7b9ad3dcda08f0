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
