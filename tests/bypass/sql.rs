//! The read-only guard against a hostile model: SQL that tries to pass a
//! write off as a read. Every case here was (or would be) a bypass: the guard
//! must call it a write. The read table keeps the guard usable.

use std::sync::Arc;

use hooks_runtime::HookContext;
use hooks_std::{FunctionAllowlist, ReadOnlyGuard, SqlClassifier, SqlDialect, StaticOrgModes};
use proptest::prelude::*;
use serde_json::{Value, json};

fn guard(config: Value) -> ReadOnlyGuard {
    ReadOnlyGuard::from_config(Arc::new(StaticOrgModes::new()), &config).expect("valid config")
}

fn reason(guard: &ReadOnlyGuard, args: Value) -> Option<String> {
    let ctx = HookContext::tool_call("sql_exec", args).with_org("acme");
    guard.write_reason(&ctx)
}

fn sql_reason(guard: &ReadOnlyGuard, sql: &str) -> Option<String> {
    reason(guard, json!({ "sql": sql }))
}

/// Hostile SQL, each a write to some database the guard may sit in front of
/// (shared with hooks-std's reporting-query test, which checks each stays a
/// write under every single dialect).
const WRITES: &[(&str, &str)] = include!("../../hooks-std/tests/fixtures/sql_writes.rs");

/// Reads a SQL tool runs every day; they must stay reads under the default
/// (every dialect) configuration, or the guard is useless.
const READS: &[&str] = &[
    "SELECT 1",
    "select * from invoices where id = 4",
    "SELECT i.id, c.name FROM invoices AS i JOIN customers AS c ON c.id = i.customer_id WHERE i.total > 100",
    "SELECT a, count(*), sum(total), avg(total), min(total), max(total) FROM t GROUP BY a HAVING count(*) > 1 ORDER BY a LIMIT 5",
    "WITH recent AS (SELECT * FROM orders WHERE day > '2026-01-01') SELECT * FROM recent",
    "SELECT id, row_number() OVER (PARTITION BY customer_id ORDER BY day) AS n FROM orders",
    "SELECT id, lag(total) OVER (ORDER BY day), rank() OVER (ORDER BY total DESC) FROM orders",
    "SELECT now(), current_date, current_timestamp",
    "SELECT coalesce(a, 0), nullif(b, 0), greatest(a, b), least(a, b) FROM t",
    "SELECT upper(name), lower(name), length(name), trim(name), substring(name, 1, 3), concat(a, b) FROM t",
    "SELECT round(total, 2), abs(delta), floor(x), ceil(x), power(x, 2), sqrt(x) FROM t",
    "SELECT CAST(total AS DECIMAL(10, 2)), EXTRACT(YEAR FROM day) FROM invoices",
    "SELECT CASE WHEN total > 100 THEN 'big' ELSE 'small' END FROM invoices",
    "SELECT * FROM a UNION SELECT * FROM b",
    "SELECT * FROM t WHERE id IN (SELECT id FROM u) AND EXISTS (SELECT 1 FROM v)",
    "SELECT COUNT(DISTINCT customer_id) FROM invoices",
    "SELECT 'DELETE FROM t' AS text",
    "SELECT 1 -- a comment\r\nFROM t",
    "/* block */ SELECT x FROM y",
    "SELECT 1; SELECT 2",
    "EXPLAIN SELECT * FROM invoices",
    "SELECT pg_catalog.lower(name) FROM t",
    "SELECT * FROM invoices WITH (NOLOCK)",
    "SELECT \"update\", \"delete\" FROM audit_columns",
    "SELECT created_at, updated_at, deleted FROM invoices",
];

#[test]
fn hostile_sql_is_a_write() {
    let guard = guard(Value::Null);
    let mut wrong = Vec::new();
    for (sql, why) in WRITES {
        match sql_reason(&guard, sql) {
            Some(reason) if reason.contains(why) => {}
            other => wrong.push((*sql, *why, other)),
        }
    }
    assert!(
        wrong.is_empty(),
        "not blocked for the expected reason: {wrong:#?}"
    );
}

#[test]
fn everyday_reads_stay_reads() {
    let guard = guard(Value::Null);
    let blocked: Vec<(&str, String)> = READS
        .iter()
        .filter_map(|sql| sql_reason(&guard, sql).map(|reason| (*sql, reason)))
        .collect();
    assert!(blocked.is_empty(), "reads treated as writes: {blocked:#?}");
}

#[test]
fn procedural_blocks_are_looked_into() {
    for dialect in ["bigquery", "snowflake"] {
        let guard = guard(json!({ "dialect": dialect }));
        assert!(
            sql_reason(&guard, "BEGIN DELETE FROM invoices; END").is_some(),
            "{dialect}"
        );
        // setval, not DELETE: the bare-word scan would catch a DELETE even
        // if the walker skipped the block.
        let reason = sql_reason(
            &guard,
            "BEGIN SELECT 1; EXCEPTION WHEN ERROR THEN SELECT setval('s', 1); END",
        );
        assert!(
            reason
                .as_deref()
                .is_some_and(|r| r.contains("calls setval")),
            "{dialect}: {reason:?}"
        );
        let reason = sql_reason(&guard, "BEGIN SELECT nextval('s'); END");
        assert!(
            reason
                .as_deref()
                .is_some_and(|r| r.contains("calls nextval")),
            "{dialect}: {reason:?}"
        );
    }
    let bigquery = guard(json!({ "dialect": "bigquery" }));
    assert_eq!(sql_reason(&bigquery, "BEGIN SELECT 1; END"), None);
}

#[test]
fn narrowing_to_one_dialect_keeps_its_own_rules() {
    // PostgreSQL ends `--` comments at \r, so the DELETE runs there …
    let postgres = guard(json!({ "dialect": "postgresql" }));
    assert!(sql_reason(&postgres, "SELECT 1; -- x\rDELETE FROM invoices").is_some());
    // … and, narrowed to a database that does not, it is still a write,
    // because the guard also reads every line end as the end of a comment.
    let mysql = guard(json!({ "dialect": "mysql" }));
    assert!(sql_reason(&mysql, "SELECT 1; -- x\rDELETE FROM invoices").is_some());
    // MySQL's backslash-escaped quote keeps the DELETE inside the string
    // there, but narrowing narrows the parsers, never the lexing: other
    // databases end the string at `\'`, so it is a write under mysql too …
    assert!(sql_reason(&mysql, "SELECT 'a\\'; DELETE FROM invoices; -- '").is_some());
    // … and in PostgreSQL.
    assert!(sql_reason(&postgres, "SELECT 'a\\'; DELETE FROM invoices; -- '").is_some());
    // A read in the narrowed dialect only: PostgreSQL casts.
    assert_eq!(
        sql_reason(&postgres, "SELECT total::text FROM invoices"),
        None
    );
    let several = guard(json!({ "dialect": ["postgresql", "sqlite"] }));
    assert!(sql_reason(&several, "SELECT 1 /* /* */ ; DELETE FROM invoices; -- */").is_some());
    assert_eq!(sql_reason(&several, "SELECT 1 /* c */"), None);
}

#[test]
fn every_sql_argument_is_classified() {
    let guard = guard(Value::Null);
    let writes = [
        json!({"sql": "SELECT 1", "query": "DELETE FROM invoices"}),
        json!({"query": "DELETE FROM invoices", "sql": "SELECT 1"}),
        json!({"sql": "SELECT 1", "statement": 42}),
        json!({"sql": "SELECT 1", "q": {"text": "DELETE FROM invoices"}}),
        json!({"sql": ["DELETE FROM invoices"]}),
        json!({"sql": "SELECT 1", "SQL": "DELETE FROM invoices"}),
        json!({"sql": "SELECT 1", "Query": "DELETE FROM invoices"}),
        json!({"table": "invoices"}),
    ];
    for args in writes {
        assert!(reason(&guard, args.clone()).is_some(), "{args}");
    }
    assert_eq!(
        reason(&guard, json!({"sql": "SELECT 1", "query": "SELECT 2"})),
        None
    );
    assert_eq!(
        reason(&guard, json!({"sql": "SELECT 1", "query": null})),
        None
    );
}

#[test]
fn the_block_reason_names_statement_dialect_and_cause() {
    let postgres = guard(json!({ "dialect": "postgresql" }));
    let reason = sql_reason(&postgres, "SELECT setval('s', 1)").expect("a write");
    assert!(reason.contains("SELECT setval('s', 1)"), "{reason}");
    assert!(reason.contains("postgresql"), "{reason}");
    assert!(reason.contains("calls setval"), "{reason}");

    let all = guard(Value::Null);
    let reason =
        sql_reason(&all, "SELECT 1 /* /* */ ; DELETE FROM invoices; -- */").expect("a write");
    assert!(reason.contains("DELETE FROM invoices"), "{reason}");
    assert!(
        reason.contains("sqlite") || reason.contains("mysql"),
        "{reason}"
    );

    // The statement is cut, and a \r in it is shown, not obeyed.
    let long = format!("SELECT nextval('s'), '{}'", "x".repeat(500));
    let reason = sql_reason(&all, &long).expect("a write");
    assert!(reason.len() < 400, "{reason}");
    let reason = sql_reason(&postgres, "SELECT 1; -- x\rDELETE FROM invoices").expect("a write");
    assert!(!reason.contains('\r'), "{reason:?}");
}

#[test]
fn extra_functions_are_allowed_by_name_only() {
    let guard = guard(json!({ "allow_functions": ["my_report", "reports.monthly"] }));
    assert_eq!(sql_reason(&guard, "SELECT my_report(1)"), None);
    assert_eq!(sql_reason(&guard, "SELECT MY_REPORT(1)"), None);
    assert_eq!(sql_reason(&guard, "SELECT reports.monthly(1)"), None);
    assert!(sql_reason(&guard, "SELECT other.monthly(1)").is_some());
    assert!(sql_reason(&guard, "SELECT setval('s', 1)").is_some());
}

#[test]
fn dialect_names_are_checked() {
    let modes = Arc::new(StaticOrgModes::new());
    let error = ReadOnlyGuard::from_config(modes.clone(), &json!({"dialect": "postgressql"}))
        .err()
        .expect("unknown dialect");
    assert!(
        error.to_string().contains("did you mean \"postgresql\""),
        "{error}"
    );
    let error = ReadOnlyGuard::from_config(modes.clone(), &json!({"dialect": ["mysql", "cobol"]}))
        .err()
        .expect("unknown dialect");
    assert!(error.to_string().contains("cobol"), "{error}");
    assert!(ReadOnlyGuard::from_config(modes.clone(), &json!({"dialect": []})).is_err());
    assert!(ReadOnlyGuard::from_config(modes, &json!({"dialect": "Postgres"})).is_ok());
}

// ---- cost and complexity: hostile text must not crash or stall the guard ----

/// `sql_reason` on a thread with a 2 MiB stack, a tokio worker's default:
/// a guard that recursed once per operator would overflow it and abort the
/// whole process (and every agent session in it).
fn sql_reason_on_small_stack(config: Value, sql: String) -> Option<String> {
    std::thread::Builder::new()
        .stack_size(2 * 1024 * 1024)
        .spawn(move || sql_reason(&guard(config), &sql))
        .expect("spawn")
        .join()
        .expect("the guard did not panic")
}

#[test]
fn long_operator_chains_are_writes_without_overflow() {
    let links = [
        "+1", " AND 1", " || 'a'", "::int", " -> 'a'", "[1]", " OR x", " IS NULL",
    ];
    for link in links {
        // 200 links overflowed a 2 MiB stack before: now it is classified
        // like any other text (the `+1` chain is a read) …
        let sql = format!("SELECT x{}", link.repeat(200));
        let reason = sql_reason_on_small_stack(Value::Null, sql);
        if link == "+1" {
            assert_eq!(reason, None);
        }
        // … and past the bound it is a write, unparsed.
        for terms in [1_000, 100_000] {
            let sql = format!("SELECT x{}", link.repeat(terms));
            let reason = sql_reason_on_small_stack(Value::Null, sql);
            assert!(
                reason
                    .as_deref()
                    .is_some_and(|r| r.contains("to classify safely")),
                "{terms} × {link:?}: {reason:?}"
            );
        }
    }
    // The bound counts links along one path, brackets included.
    let level = format!("{}(", "1+".repeat(26));
    let sql = format!("SELECT {}1{}", level.repeat(10), ")".repeat(10));
    let reason = sql_reason_on_small_stack(Value::Null, sql);
    assert!(reason.is_some_and(|r| r.contains("too complex to classify safely")));
    // Narrowed, the same holds (PostgreSQL reads every spelling above).
    let sql = format!("SELECT x{}", "::int".repeat(1_000));
    let reason = sql_reason_on_small_stack(json!({"dialect": "postgresql"}), sql);
    assert!(reason.is_some_and(|r| r.contains("too complex to classify safely")));
}

/// Asserts `sql` is a write found by measuring alone, before any parse:
/// checked first with [`SqlClassifier::too_complex`], which parses nothing,
/// so a missing bound fails this test instead of aborting the process on a
/// parser stack overflow; only then through the guard.
fn assert_too_complex_unparsed(config: Value, what: &str, sql: &str) {
    let classifier = match config.get("dialect").and_then(Value::as_str) {
        Some(name) => SqlClassifier::new(
            vec![SqlDialect::from_name(name).expect("a dialect")],
            FunctionAllowlist::default(),
        ),
        None => SqlClassifier::default(),
    };
    let measured = classifier.too_complex(sql);
    assert!(
        measured
            .as_deref()
            .is_some_and(|r| r.contains("to classify safely") && !r.contains("tokens")),
        "{what}: measuring must refuse it below the token cap: {measured:?}"
    );
    let started = std::time::Instant::now();
    let reason = sql_reason(&guard(config), sql);
    assert_eq!(reason, measured, "{what}");
    assert!(
        started.elapsed() < std::time::Duration::from_secs(10),
        "{what}"
    );
}

/// Constructs `sqlparser` recurses on once per word, with no bracket and no
/// operator symbol: each repeated to just under [`MAX_TOKENS`] (the Snowflake
/// JOIN chain and the INTERVAL chain overflowed even a 32 MiB stack and
/// aborted the process at 1,500 and 3,000 levels).
#[test]
fn bracketless_recursion_is_a_write_unparsed() {
    let cap = hooks_std::readonly_guard::MAX_TOKENS;
    // (what, head, repeated part, its tokens, tail)
    let constructs: &[(&str, &str, &str, usize, &str)] = &[
        ("JOIN", "SELECT * FROM a", " JOIN a", 2, ""),
        ("INNER JOIN", "SELECT * FROM a", " INNER JOIN a", 3, ""),
        ("LEFT JOIN", "SELECT * FROM a", " LEFT JOIN a", 3, ""),
        ("RIGHT JOIN", "SELECT * FROM a", " RIGHT JOIN a", 3, ""),
        (
            "FULL OUTER JOIN",
            "SELECT * FROM a",
            " FULL OUTER JOIN a",
            4,
            "",
        ),
        ("CROSS JOIN", "SELECT * FROM a", " CROSS JOIN a", 3, ""),
        ("NATURAL JOIN", "SELECT * FROM a", " NATURAL JOIN a", 3, ""),
        ("CROSS APPLY", "SELECT * FROM a", " CROSS APPLY a", 3, ""),
        ("INTERVAL", "SELECT ", "INTERVAL ", 1, "'1'"),
        ("NOT", "SELECT ", "NOT ", 1, "1"),
        ("unary minus", "SELECT ", "- ", 1, "1"),
        ("unary plus", "SELECT ", "+ ", 1, "1"),
        ("bitwise not", "SELECT ", "~ ", 1, "1"),
        ("PRIOR", "SELECT ", "PRIOR ", 1, "a"),
        ("EXISTS", "SELECT ", "EXISTS ", 1, "(SELECT 1)"),
        ("ARRAY", "SELECT ", "ARRAY ", 1, "[1]"),
        ("DATE", "SELECT ", "DATE ", 1, "'2026-01-01'"),
        ("TIMESTAMP", "SELECT ", "TIMESTAMP ", 1, "'2026-01-01'"),
        ("CASE", "SELECT ", "CASE WHEN a THEN ", 4, "1"),
        ("AT TIME ZONE", "SELECT a", " AT TIME ZONE 'UTC'", 4, ""),
        ("COLLATE", "SELECT a", " COLLATE c", 2, ""),
        ("IS NOT", "SELECT a", " IS NOT NULL", 3, ""),
    ];
    for &(what, head, part, tokens, tail) in constructs {
        let repeats = (cap - 8) / tokens;
        let sql = format!("{head}{}{tail}", part.repeat(repeats));
        assert_too_complex_unparsed(Value::Null, what, &sql);
    }
    // The reported attacks as sent, and narrowed to the dialect that crashed.
    let joins = format!("SELECT * FROM a{}", " JOIN a".repeat(2_000));
    assert_too_complex_unparsed(Value::Null, "2,000 joins", &joins);
    assert_too_complex_unparsed(json!({"dialect": "snowflake"}), "snowflake joins", &joins);
    let intervals = format!("SELECT {}'1'", "INTERVAL ".repeat(3_000));
    assert_too_complex_unparsed(Value::Null, "3,000 intervals", &intervals);
    // Everyday joins and a CASE stay reads.
    let guard = guard(Value::Null);
    let joined = format!(
        "SELECT * FROM a{}",
        (0..40)
            .map(|i| format!(" LEFT JOIN b{i} ON b{i}.id = a.id"))
            .collect::<String>()
    );
    assert_eq!(sql_reason(&guard, &joined), None);
}

/// A CASE's WHENs are siblings, not a chain: a long flat CASE stays a read,
/// while CASEs nested in one another still count along the path.
#[test]
fn a_long_flat_case_is_a_read_but_deep_nesting_is_not() {
    let guard = guard(Value::Null);
    let whens: String = (0..400)
        .map(|i| format!(" WHEN a = {i} THEN {i} + 1"))
        .collect();
    let sql = format!("SELECT CASE{whens} ELSE 0 END FROM t");
    assert_eq!(sql_reason(&guard, &sql), None);
    let nested = format!(
        "SELECT {}1{} FROM t",
        "CASE WHEN a = 1 THEN ".repeat(300),
        " END".repeat(300)
    );
    assert_too_complex_unparsed(Value::Null, "nested CASE", &nested);
}

/// `OPTION (TABLE HINT(t, XLOCK))` takes the same locks as `WITH (XLOCK)`.
#[test]
fn query_hints_that_lock_are_writes() {
    let guard = guard(Value::Null);
    let mssql = self::guard(json!({"dialect": "mssql"}));
    for sql in [
        "SELECT a FROM t OPTION (TABLE HINT(t, XLOCK))",
        "SELECT a FROM t OPTION (TABLE HINT (t, UPDLOCK))",
        "SELECT a FROM t OPTION (MAXDOP 1, TABLE HINT(t, NOLOCK, HOLDLOCK))",
        "select a from t option (table hint(t, tablockx))",
    ] {
        for guard in [&guard, &mssql] {
            let reason = sql_reason(guard, sql);
            assert!(reason.is_some(), "{sql}");
        }
    }
}

#[test]
fn a_long_dotted_name_is_a_write_without_overflow() {
    let sql = format!("SELECT x{}", ".y".repeat(100_000));
    let reason = sql_reason_on_small_stack(Value::Null, sql);
    assert!(reason.is_some_and(|r| r.contains("to classify safely")));
    let sql = format!("SELECT x{}", ".y".repeat(1_000));
    assert!(sql_reason_on_small_stack(Value::Null, sql).is_some());
}

#[test]
fn deep_nesting_is_a_write_and_returns_promptly() {
    // Parse time doubles with each level under some dialects: 30 levels of
    // nested calls would run for hours if they were parsed.
    let nested = |open: &str, close: &str, levels: usize| {
        format!("SELECT {}1{}", open.repeat(levels), close.repeat(levels))
    };
    for sql in [
        nested("abs(", ")", 30),
        nested("(", ")", 30),
        nested("coalesce(", ", 0)", 30),
        nested("(SELECT ", ")", 30),
        nested("abs(", ")", 1_000),
    ] {
        let reason = sql_reason_on_small_stack(Value::Null, sql.clone());
        assert!(
            reason
                .as_deref()
                .is_some_and(|r| r.contains("nested too deeply to classify safely")),
            "{sql:.40}: {reason:?}"
        );
        let reason = sql_reason_on_small_stack(json!({"dialect": "mssql"}), sql.clone());
        assert!(reason.is_some(), "{sql:.40}");
    }
    // SQLite cannot lex `[` as an array: a write before any nesting counts.
    let sql = nested("ARRAY[", "]", 30);
    assert!(sql_reason_on_small_stack(Value::Null, sql).is_some());
    // Everyday nesting stays a read.
    assert_eq!(
        sql_reason(
            &guard(Value::Null),
            "SELECT round(coalesce(sum(abs(total)), 0), 2) FROM t WHERE id IN (SELECT id FROM u WHERE x IN (SELECT x FROM v))"
        ),
        None
    );
}

#[test]
fn long_sql_is_a_write_unparsed() {
    let guard = guard(Value::Null);
    let padded = format!("SELECT 1{}", " ".repeat(70 * 1024));
    let blocked = sql_reason(&guard, &padded);
    assert!(blocked.is_some_and(|r| r.contains("too long to classify safely")));
    // Many arguments, each under the limit, add up.
    let chunk = format!("SELECT 1{}", " ".repeat(60 * 1024));
    let args = json!({"sql": chunk, "SQL": chunk, "Sql": chunk, "query": chunk, "QUERY": chunk});
    let reason = reason(&guard, args);
    assert!(
        reason.as_deref().is_some_and(|r| r.contains("in one call")),
        "{reason:?}"
    );
}

#[test]
fn a_narrowed_dialect_still_reads_text_as_every_database_may() {
    let cases = [
        ("databricks", "SELECT '\\''; DELETE FROM invoices; --'"),
        ("hive", "SELECT '\\''; DELETE FROM invoices; --'"),
        ("clickhouse", "SELECT \"\\\"\"; DELETE FROM invoices; -- \""),
        ("duckdb", "SELECT E'\\''; DELETE FROM invoices; --'"),
        ("bigquery", "SELECT r'\\''; DELETE FROM invoices; --'"),
        ("postgresql", "SELECT E'\\''; DELETE FROM invoices; --'"),
    ];
    for (dialect, sql) in cases {
        let reason = sql_reason(&guard(json!({ "dialect": dialect })), sql);
        assert!(
            reason.as_deref().is_some_and(|r| r.contains("DELETE")),
            "{dialect}: {sql}: {reason:?}"
        );
    }
    // Narrowing still narrows what parses: a PostgreSQL cast.
    let postgres = guard(json!({ "dialect": "postgresql" }));
    assert_eq!(
        sql_reason(&postgres, "SELECT total::text FROM invoices"),
        None
    );
}

#[test]
fn every_string_argument_can_be_classified() {
    let decoy = json!({"q": "SELECT 1", "command": "DELETE FROM invoices"});
    // The default reads only the configured keys (documented) …
    assert_eq!(reason(&guard(Value::Null), decoy.clone()), None);
    // … and `check_all_string_args` reads every string that holds SQL.
    let all = guard(json!({ "check_all_string_args": true }));
    let writes = [
        decoy,
        json!({"sql": "SELECT 1", "params": {"sql_text": "UPDATE invoices SET paid = 1"}}),
        json!({"sql": "SELECT 1", "batch": ["SELECT 2", "drop table invoices"]}),
        json!({"sql": "SELECT 1", "note": "x; TRUNCATE invoices"}),
        json!({"command": "VACUUM invoices"}),
    ];
    for args in writes {
        assert!(reason(&all, args.clone()).is_some(), "{args}");
    }
    let reads = [
        json!({"sql": "SELECT * FROM invoices", "table": "invoices", "limit": 5, "note": "monthly report"}),
        json!({"command": "SELECT 1", "format": "csv"}),
    ];
    for args in reads {
        assert_eq!(reason(&all, args.clone()), None, "{args}");
    }
}

/// Writes whose first word is on no list of statement words: any string
/// starting with a SQL keyword is classified.
#[test]
fn every_string_argument_starting_with_a_keyword_is_classified() {
    let all = guard(json!({ "check_all_string_args": true }));
    for command in [
        "REASSIGN OWNED BY alice TO bob",
        "PURGE BINARY LOGS BEFORE '2026-01-01'",
        "ENABLE TRIGGER audit ON invoices",
        "DISABLE TRIGGER ALL ON invoices",
        "STOP REPLICA",
        "CHANGE REPLICATION SOURCE TO SOURCE_HOST = 'evil'",
        "RESTART",
        "CLONE INSTANCE FROM 'root'@'evil':3306 IDENTIFIED BY 'x'",
        "  restart",
    ] {
        let args = json!({"q": "SELECT 1", "command": command});
        assert!(reason(&all, args).is_some(), "{command}");
    }
}

/// Hostile argument shapes cost bounded memory and time: a long key over
/// many items is refused by count, not expanded into a path per item.
#[test]
fn huge_argument_trees_are_a_write_without_expanding_them() {
    let all = guard(json!({ "check_all_string_args": true }));
    let args = json!({"sql": "SELECT 1", "k".repeat(2_000): vec![0; 20_000]});
    let reason = reason(&all, args);
    assert!(
        reason
            .as_deref()
            .is_some_and(|r| r.contains("too many arguments to classify")),
        "{reason:?}"
    );
    // A modest nested tree is still read through.
    let args = json!({"sql": "SELECT 1", "rows": vec![json!({"id": 1, "tag": "x"}); 1_000]});
    assert_eq!(self::reason(&all, args), None);
}

/// Every text is lexed and parsed under 13 dialects (twice with a `\r`):
/// the tokens of one call are budgeted, so many keys each holding a big
/// read cannot pin the worker for seconds.
#[test]
fn the_sql_of_one_call_has_a_token_budget() {
    let guard = guard(Value::Null);
    let columns = vec!["a"; 1_900].join(",");
    let text = format!("SELECT {columns} FROM t\r");
    let mut args = serde_json::Map::new();
    for key in [
        "sql", "SQL", "Sql", "sQl", "query", "QUERY", "Query", "q", "Q",
    ] {
        args.insert(key.to_owned(), Value::String(text.clone()));
    }
    let started = std::time::Instant::now();
    let reason = reason(&guard, Value::Object(args));
    assert!(
        reason
            .as_deref()
            .is_some_and(|r| r.contains("too much SQL to classify safely")),
        "{reason:?}"
    );
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
    // One such text alone is a read.
    assert_eq!(sql_reason(&guard, &text), None);
}

// ---- property tests: variants of known writes stay writes ----

const BASE_WRITES: &[&str] = &[
    "DELETE FROM invoices",
    "UPDATE invoices SET paid = 1 WHERE id = 2",
    "INSERT INTO invoices VALUES (1)",
    "DROP TABLE invoices",
    "TRUNCATE invoices",
    "SELECT setval('s', 1)",
    "SELECT pg_catalog.nextval('s')",
    "EXPLAIN (ANALYZE) DELETE FROM invoices",
    "WITH x AS (DELETE FROM invoices RETURNING *) SELECT * FROM x",
    "SELECT * INTO copy FROM invoices",
];

/// What may stand where a write's tokens are separated by a space.
const SEPARATORS: &[&str] = &[
    " ",
    "  ",
    "\t",
    "\n",
    "\r",
    "\r\n",
    "\x0b",
    "\x0c",
    "/**/",
    "/* c */",
    "/* /* */ */",
    "-- c\n",
    "# c\n",
    "\u{a0}",
    "\u{2028}",
    "\u{3000}",
];

/// Text put before the write; some hide it from one dialect's reader.
const PREFIXES: &[&str] = &[
    "",
    "SELECT 1;",
    "SELECT 1; ",
    "SELECT 1 ",
    "SELECT 1\n",
    "SELECT * FROM invoices\n",
    "select 1 ;\n",
    "/* c */ ",
    "-- c\n",
    "SELECT 'a';",
    "BEGIN;",
    "SELECT 1; -- x\r",
    "SELECT 1 /* /* */ ;",
    "SELECT 'a\\';",
    "SELECT $$;$$;",
    "\u{feff}",
];

const SUFFIXES: &[&str] = &["", ";", "; -- tail", "; SELECT 1", "\n", " /* */"];

/// Letters a model may swap in for ASCII ones (fullwidth, Cyrillic, Turkish i).
fn unicode_form(c: char, pick: u8) -> String {
    match (pick % 4, c) {
        (0, 'a'..='z' | 'A'..='Z') => {
            char::from_u32(c.to_ascii_uppercase() as u32 - 'A' as u32 + 0xFF21)
                .map_or_else(|| c.to_string(), String::from)
        }
        (1, 'e' | 'E') => "\u{435}".to_owned(),
        (2, 'i' | 'I') => "\u{130}".to_owned(),
        (3, _) => format!("{c}\u{200b}"),
        _ => c.to_string(),
    }
}

fn variant(
    base: &str,
    casing: &[bool],
    separators: &[usize],
    unicode: Option<(usize, u8)>,
) -> String {
    let letters = base.chars().count().max(1);
    let mut text = String::new();
    let mut position = 0;
    for (index, word) in base.split(' ').enumerate() {
        if index > 0 {
            text.push_str(SEPARATORS[separators[index % separators.len()]]);
            position += 1;
        }
        for c in word.chars() {
            let c = if casing[position % casing.len()] {
                c.to_ascii_uppercase()
            } else {
                c.to_ascii_lowercase()
            };
            match unicode {
                Some((at, pick)) if at % letters == position => {
                    text.push_str(&unicode_form(c, pick));
                }
                _ => text.push(c),
            }
            position += 1;
        }
    }
    text
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 256,
        // A failure prints its minimal input; no regression file is written.
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn variants_of_writes_stay_writes(
        base in 0..BASE_WRITES.len(),
        casing in prop::collection::vec(any::<bool>(), 1..8),
        separators in prop::collection::vec(0..SEPARATORS.len(), 1..8),
        prefix in 0..PREFIXES.len(),
        suffix in 0..SUFFIXES.len(),
        unicode in prop::option::of((0usize..64, any::<u8>())),
    ) {
        let sql = format!(
            "{}{}{}",
            PREFIXES[prefix],
            variant(BASE_WRITES[base], &casing, &separators, unicode),
            SUFFIXES[suffix]
        );
        let guard = guard(Value::Null);
        prop_assert!(sql_reason(&guard, &sql).is_some(), "passed as a read: {:?}", sql);
    }

    #[test]
    fn a_read_followed_by_a_write_is_a_write(
        read in 0..READS.len(),
        base in 0..BASE_WRITES.len(),
        separator in 0..SEPARATORS.len(),
    ) {
        let sql = format!("{};{}{}", READS[read], SEPARATORS[separator], BASE_WRITES[base]);
        let guard = guard(Value::Null);
        prop_assert!(sql_reason(&guard, &sql).is_some(), "passed as a read: {:?}", sql);
    }

    #[test]
    fn read_casing_does_not_matter(
        read in 0..READS.len(),
        casing in prop::collection::vec(any::<bool>(), 1..8),
    ) {
        // Only keywords and names are re-cased; string literals keep their text.
        let sql: String = READS[read]
            .split('\'')
            .enumerate()
            .map(|(index, part)| {
                if index % 2 == 1 {
                    part.to_owned()
                } else {
                    part.chars()
                        .enumerate()
                        .map(|(at, c)| if casing[at % casing.len()] { c.to_ascii_uppercase() } else { c.to_ascii_lowercase() })
                        .collect()
                }
            })
            .collect::<Vec<_>>()
            .join("'");
        let guard = guard(Value::Null);
        prop_assert_eq!(sql_reason(&guard, &sql), None, "{:?}", sql);
    }
}

/// A guard named for one database (by `dialect` or `database_url`) reads
/// text with that database's lexer, and still blocks a write that another
/// database's quoting reveals, or a statement SQL Server would start after
/// an alias.
#[test]
fn a_guard_for_one_database_still_sees_writes_other_quoting_reveals() {
    for config in [
        json!({"dialect": "postgresql"}),
        json!({"database_url": "postgres://app:pw@db/shop"}),
    ] {
        let guard = guard(config);
        for sql in [
            // MySQL's `\'` escape ends the string later: the DROP is a statement.
            "SELECT 'a\\''; DROP TABLE t; --'",
            "SELECT 'a\\''; DELETE FROM t; --'",
        ] {
            assert!(sql_reason(&guard, sql).is_some(), "{sql}");
        }
        assert_eq!(sql_reason(&guard, "SELECT doc ? 'k' FROM s"), None);
    }
    let mssql = guard(json!({"database_url": "jdbc:sqlserver://db;databaseName=x"}));
    assert!(sql_reason(&mssql, "SELECT 1 SHOW CREATE TABLE x (a int)").is_some());
    assert_eq!(
        sql_reason(&mssql, "SELECT [Order Id] FROM [dbo].[Orders]"),
        None
    );
}
