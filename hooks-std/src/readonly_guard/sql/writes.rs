//! Finding the part of a parsed statement that writes.
//!
//! A walk over the whole tree, not just the top: writes hide in subqueries,
//! CTEs, `EXPLAIN`'s statement, procedural blocks and function calls.

use std::ops::ControlFlow;

use sqlparser::ast::{
    BinaryOperator, Expr, Ident, PipeOperator, Query, SetExpr, Statement, TableFactor, Visit,
    Visitor,
};

use super::functions::FunctionAllowlist;
use super::lexical::LOCKING_HINTS;

/// Why `statement` (and everything inside it) may write, or `None` if it
/// only reads.
pub(crate) fn why_it_writes(
    statement: &Statement,
    functions: &FunctionAllowlist,
) -> Option<String> {
    match statement.visit(&mut WriteFinder { functions }) {
        ControlFlow::Break(reason) => Some(reason),
        ControlFlow::Continue(()) => None,
    }
}

/// Stops the walk at the first thing that is not positively a read.
struct WriteFinder<'a> {
    functions: &'a FunctionAllowlist,
}

impl Visitor for WriteFinder<'_> {
    type Break = String;

    fn pre_visit_statement(&mut self, statement: &Statement) -> ControlFlow<String> {
        match statement_reads(statement) {
            true => ControlFlow::Continue(()),
            false => ControlFlow::Break(format!("{} statement", leading_keywords(statement))),
        }
    }

    fn pre_visit_query(&mut self, query: &Query) -> ControlFlow<String> {
        if !query.locks.is_empty() {
            return ControlFlow::Break("SELECT … FOR UPDATE/SHARE locks rows".to_owned());
        }
        if body_creates_table(&query.body) {
            return ControlFlow::Break("SELECT … INTO creates a table".to_owned());
        }
        for operator in &query.pipe_operators {
            if let PipeOperator::Call { function, .. } = operator
                && let Some(reason) = self.functions.refuse(&function.name)
            {
                return ControlFlow::Break(reason);
            }
        }
        ControlFlow::Continue(())
    }

    fn pre_visit_expr(&mut self, expr: &Expr) -> ControlFlow<String> {
        // Method calls (`x.f()`) arrive here too, as functions inside a field access.
        let refused = match expr {
            Expr::Function(function) => self.functions.refuse(&function.name),
            // MySQL's `SELECT @a := 1` sets a session variable, like `SET`.
            Expr::BinaryOp {
                op: BinaryOperator::Assignment,
                left,
                ..
            } => Some(format!("{left} := … assigns a variable")),
            Expr::CompoundIdentifier(parts) => sequence_pseudo_column(parts),
            _ => None,
        };
        refused.map_or(ControlFlow::Continue(()), ControlFlow::Break)
    }

    fn pre_visit_table_factor(&mut self, table: &TableFactor) -> ControlFlow<String> {
        // `FROM dblink(…)`: a table with arguments is a function call.
        let refused = match table {
            TableFactor::Table {
                name,
                args: Some(_),
                ..
            }
            | TableFactor::Function { name, .. } => self.functions.refuse(name),
            _ => None,
        };
        if let Some(reason) = refused {
            return ControlFlow::Break(reason);
        }
        // SQL Server's `WITH (UPDLOCK)` and friends lock like `FOR UPDATE`.
        if let TableFactor::Table { with_hints, .. } = table
            && let Some(hint) = with_hints.iter().find(|hint| !hint_only_reads(hint))
        {
            return ControlFlow::Break(format!("the table hint {hint} takes locks"));
        }
        // … also written without WITH after an alias (`FROM t a (UPDLOCK)`),
        // which parsers read as the alias's column names.
        if let TableFactor::Table {
            alias: Some(alias), ..
        } = table
            && let Some(hint) = alias
                .columns
                .iter()
                .find(|column| is_locking_hint(&column.name))
        {
            return ControlFlow::Break(format!("the table hint {} takes locks", hint.name));
        }
        ControlFlow::Continue(())
    }
}

/// Sequence pseudo-columns: `s.nextval` advances the sequence in Snowflake,
/// Oracle and H2 (`currval` only reads it, but names the same object and
/// is as rare in a report).
const SEQUENCE_PSEUDO_COLUMNS: &[&str] = &["nextval", "currval"];

/// Why `a.b.nextval` writes, if its last part is a sequence pseudo-column.
fn sequence_pseudo_column(parts: &[Ident]) -> Option<String> {
    let last = parts.last()?;
    (parts.len() > 1
        && SEQUENCE_PSEUDO_COLUMNS
            .iter()
            .any(|name| name.eq_ignore_ascii_case(&last.value)))
    .then(|| {
        let name = parts
            .iter()
            .map(|part| part.value.as_str())
            .collect::<Vec<_>>()
            .join(".");
        format!("{name} advances a sequence")
    })
}

fn is_locking_hint(name: &Ident) -> bool {
    LOCKING_HINTS
        .iter()
        .any(|hint| hint.eq_ignore_ascii_case(&name.value))
}

/// Table hints that take no locks beyond a plain read's.
fn hint_only_reads(hint: &Expr) -> bool {
    let text = hint.to_string();
    [
        "NOLOCK",
        "READUNCOMMITTED",
        "READCOMMITTED",
        "READPAST",
        "NOWAIT",
        "NOEXPAND",
    ]
    .iter()
    .any(|harmless| harmless.eq_ignore_ascii_case(&text))
        || text.to_ascii_uppercase().starts_with("INDEX")
}

/// Statements that read, provided what is inside them reads too (the walk
/// goes on into `EXPLAIN`'s statement and into `BEGIN … END` blocks).
/// Everything else counts as a write, including statements that merely
/// change session state (`SET`, `USE`, `PREPARE`), because nothing says
/// they are harmless.
fn statement_reads(statement: &Statement) -> bool {
    match statement {
        Statement::Query(_)
        | Statement::Explain { .. }
        | Statement::ExplainTable { .. }
        | Statement::StartTransaction { .. }
        | Statement::Commit { .. }
        | Statement::Rollback { .. }
        | Statement::Savepoint { .. }
        | Statement::ReleaseSavepoint { .. }
        | Statement::ShowFunctions { .. }
        | Statement::ShowVariable { .. }
        | Statement::ShowStatus { .. }
        | Statement::ShowVariables { .. }
        | Statement::ShowCreate { .. }
        | Statement::ShowColumns { .. }
        | Statement::ShowDatabases { .. }
        | Statement::ShowSchemas { .. }
        | Statement::ShowObjects(_)
        | Statement::ShowTables { .. }
        | Statement::ShowViews { .. }
        | Statement::ShowCollation { .. } => true,
        Statement::Pragma {
            name,
            value: _,
            is_eq: false,
        } => {
            name.0.len() == 1
                && READ_PRAGMAS
                    .iter()
                    .any(|p| name.to_string().eq_ignore_ascii_case(p))
        }
        _ => false,
    }
}

/// SQLite pragmas that only report (`PRAGMA table_info(t)`). Others change
/// settings or the file (`PRAGMA wal_checkpoint`, `PRAGMA optimize`).
const READ_PRAGMAS: &[&str] = &[
    "collation_list",
    "database_list",
    "foreign_key_list",
    "function_list",
    "index_info",
    "index_list",
    "index_xinfo",
    "table_info",
    "table_list",
    "table_xinfo",
];

/// `SELECT … INTO t` in any branch of a set operation.
fn body_creates_table(body: &SetExpr) -> bool {
    match body {
        SetExpr::Select(select) => select.into.is_some(),
        SetExpr::SetOperation { left, right, .. } => {
            body_creates_table(left) || body_creates_table(right)
        }
        _ => false,
    }
}

/// The statement's leading keywords for the reason: `DELETE`, and for
/// definitions the object kind too (`CREATE TEMPORARY TABLE`).
fn leading_keywords(statement: &Statement) -> String {
    let text = statement.to_string();
    let mut words = text
        .split_whitespace()
        .take_while(|word| word.chars().all(|c| c.is_ascii_uppercase()));
    let Some(first) = words.next() else {
        return "this kind of".to_owned();
    };
    let mut keywords = first.to_owned();
    if matches!(first, "CREATE" | "DROP" | "ALTER") {
        for word in words.take(3) {
            keywords.push(' ');
            keywords.push_str(word);
        }
    }
    keywords
}
