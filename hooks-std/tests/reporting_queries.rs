//! Real-world reporting queries, one corpus per dialect under
//! `tests/fixtures/reporting/`: each must be a read under its own dialect,
//! or the guard blocks the dashboards a read-only org still needs. And the
//! shared write corpus must stay writes under each of those single dialects.
//!
//! A corpus file holds queries separated by lines holding only `;;`; lines
//! starting with `--` are comments (kept in the query text, which the
//! classifier must read past too).

use hooks_std::{FunctionAllowlist, SqlClassifier, SqlDialect, SqlVerdict};

/// Hostile SQL with the reason the all-dialect guard gives (shared with the
/// workspace's `bypass` test).
const WRITES: &[(&str, &str)] = include!("fixtures/sql_writes.rs");

/// SQL with whether it writes under every dialect (shared with
/// `readonly_guard.rs`).
const CLASSIFIED: &[(&str, bool)] = include!("fixtures/sql_classification.rs");

/// Each corpus file and the dialect its queries are written in.
const CORPORA: &[(&str, SqlDialect)] = &[
    ("postgresql.sql", SqlDialect::PostgreSql),
    ("mysql.sql", SqlDialect::MySql),
    ("sqlite.sql", SqlDialect::Sqlite),
    ("bigquery.sql", SqlDialect::BigQuery),
    ("snowflake.sql", SqlDialect::Snowflake),
    ("mssql.sql", SqlDialect::MsSql),
];

/// Fewer queries than this in a corpus file fails the test.
const MIN_QUERIES: usize = 100;

fn classifier(dialect: SqlDialect) -> SqlClassifier {
    SqlClassifier::new(vec![dialect], FunctionAllowlist::default())
}

/// The queries of a corpus file: the text between `;;` lines, trimmed,
/// skipping pieces that hold only comments and blank lines.
fn queries(file: &str) -> Vec<String> {
    let path = format!(
        "{}/tests/fixtures/reporting/{file}",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let mut queries = Vec::new();
    let mut current = String::new();
    for line in text.lines().chain(std::iter::once(";;")) {
        if line.trim() == ";;" {
            let has_sql = current.lines().any(|l| {
                let l = l.trim();
                !l.is_empty() && !l.starts_with("--")
            });
            if has_sql {
                queries.push(current.trim().to_owned());
            }
            current.clear();
        } else {
            current.push_str(line);
            current.push('\n');
        }
    }
    queries
}

#[test]
fn reporting_queries_are_reads_under_their_dialect() {
    let mut failures = Vec::new();
    let mut counts = Vec::new();
    for &(file, dialect) in CORPORA {
        let queries = queries(file);
        counts.push((file, queries.len()));
        let mut seen = std::collections::HashSet::new();
        for query in &queries {
            if !seen.insert(query.as_str()) {
                failures.push(format!("{file}: duplicate query:\n{query}"));
            }
        }
        let classifier = classifier(dialect);
        for (index, query) in queries.iter().enumerate() {
            let verdict = classifier.classify(query);
            if verdict != SqlVerdict::Read {
                failures.push(format!(
                    "{file} #{} ({dialect}): {verdict:?}\n{query}",
                    index + 1
                ));
            }
        }
    }
    for &(file, count) in &counts {
        if count < MIN_QUERIES {
            failures.push(format!("{file}: {count} queries, fewer than {MIN_QUERIES}"));
        }
    }
    assert!(
        failures.is_empty(),
        "{} reporting queries not classified as reads (counts: {counts:?}):\n\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

#[test]
fn the_write_corpus_stays_writes_under_each_single_dialect() {
    let mut failures = Vec::new();
    for &(_, dialect) in CORPORA {
        let classifier = classifier(dialect);
        let writes = WRITES.iter().map(|(sql, _)| *sql).chain(
            CLASSIFIED
                .iter()
                .filter(|(_, writes)| *writes)
                .map(|(sql, _)| *sql),
        );
        for sql in writes {
            if !classifier.classify(sql).is_write() {
                failures.push(format!("{dialect}: {sql:?}"));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "writes classified as reads under a single dialect:\n{}",
        failures.join("\n")
    );
}
