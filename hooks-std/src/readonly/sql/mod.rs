//! Deciding whether SQL text writes, by parsing it.

use sqlparser::ast::{Query, SetExpr, Statement};
use sqlparser::dialect::{Dialect, GenericDialect};
use sqlparser::parser::Parser;

/// What a piece of SQL does, as far as read-only mode cares.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SqlVerdict {
    /// Every statement only reads.
    Read,
    /// At least one statement writes (or may write); the reason names it.
    Write(String),
    /// The text did not parse; treated as a write (fail closed).
    Unparsable(String),
}

impl SqlVerdict {
    /// True unless every statement is known to only read.
    pub fn is_write(&self) -> bool {
        !matches!(self, SqlVerdict::Read)
    }
}

/// Classifies `sql` (one or more statements) with `dialect` (generic if `None`).
///
/// Reads: `SELECT` / `VALUES` / `TABLE` queries, `WITH … SELECT` whose CTEs
/// only read, `EXPLAIN` without `ANALYZE`, `SHOW …`, `DESCRIBE`, and
/// transaction control. Everything else writes, including `SELECT … INTO`,
/// `SELECT … FOR UPDATE`, data-modifying CTEs and statements this parser does
/// not model. Functions with side effects inside a `SELECT` (`nextval`, …) are
/// not detected.
pub fn classify_sql(sql: &str, dialect: Option<&dyn Dialect>) -> SqlVerdict {
    let generic = GenericDialect {};
    let dialect = dialect.unwrap_or(&generic);
    let statements = match Parser::parse_sql(dialect, sql) {
        Ok(statements) => statements,
        Err(error) => return SqlVerdict::Unparsable(error.to_string()),
    };
    if statements.is_empty() {
        return SqlVerdict::Unparsable("no SQL statement found".to_owned());
    }
    for statement in &statements {
        if let Some(reason) = statement_writes(statement) {
            return SqlVerdict::Write(reason);
        }
    }
    SqlVerdict::Read
}

/// Why `statement` writes, or `None` if it only reads.
fn statement_writes(statement: &Statement) -> Option<String> {
    match statement {
        Statement::Query(query) => query_writes(query),
        Statement::Explain {
            analyze, statement, ..
        } => {
            if *analyze {
                statement_writes(statement)
                    .map(|reason| format!("EXPLAIN ANALYZE runs it: {reason}"))
            } else {
                None
            }
        }
        Statement::ExplainTable { .. }
        | Statement::StartTransaction { .. }
        | Statement::Commit { .. }
        | Statement::Rollback { .. } => None,
        other => {
            let name = variant_name(other);
            if name.starts_with("Show") {
                None
            } else {
                Some(format!("{} statement", statement_keyword(other, &name)))
            }
        }
    }
}

fn query_writes(query: &Query) -> Option<String> {
    if let Some(with) = &query.with {
        for cte in &with.cte_tables {
            if let Some(reason) = query_writes(&cte.query) {
                return Some(format!("CTE `{}`: {reason}", cte.alias.name));
            }
        }
    }
    if !query.locks.is_empty() {
        return Some("SELECT … FOR UPDATE/SHARE locks rows".to_owned());
    }
    set_expr_writes(&query.body)
}

fn set_expr_writes(body: &SetExpr) -> Option<String> {
    match body {
        SetExpr::Select(select) => select
            .into
            .as_ref()
            .map(|_| "SELECT … INTO creates a table".to_owned()),
        SetExpr::Query(query) => query_writes(query),
        SetExpr::SetOperation { left, right, .. } => {
            set_expr_writes(left).or_else(|| set_expr_writes(right))
        }
        SetExpr::Values(_) | SetExpr::Table(_) => None,
        SetExpr::Insert(_) => Some("INSERT".to_owned()),
        SetExpr::Update(_) => Some("UPDATE".to_owned()),
        SetExpr::Delete(_) => Some("DELETE".to_owned()),
    }
}

/// The enum variant's name, e.g. `CreateTable` (from the derived `Debug`).
fn variant_name(statement: &Statement) -> String {
    let debug = format!("{statement:?}");
    debug
        .split(|c: char| !c.is_ascii_alphanumeric() && c != '_')
        .next()
        .unwrap_or_default()
        .to_owned()
}

/// The statement's leading SQL keywords, for the block reason (`DELETE`, `CREATE TABLE`).
fn statement_keyword(statement: &Statement, variant: &str) -> String {
    let text = statement.to_string();
    let words: Vec<&str> = text.split_whitespace().take(2).collect();
    match words.as_slice() {
        [first, second] if second.chars().all(|c| c.is_ascii_uppercase()) => {
            format!("{first} {second}")
        }
        [first, ..] if first.chars().all(|c| c.is_ascii_uppercase()) => (*first).to_owned(),
        _ => variant.to_owned(),
    }
}
