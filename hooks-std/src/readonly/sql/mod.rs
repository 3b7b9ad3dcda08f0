//! Deciding whether SQL text writes, by parsing it in every dialect it may
//! be run in.

mod dialects;
mod functions;
mod lexical;
mod reason;
mod writes;

use sqlparser::parser::{Parser, ParserError};
use sqlparser::tokenizer::Tokenizer;

pub use dialects::{SqlDialect, UnknownDialect};
pub use functions::FunctionAllowlist;

/// SQL longer than this is not parsed: it counts as a write. Parsing is
/// repeated per dialect, and no read a tool needs in read-only mode is this long.
pub const MAX_SQL_BYTES: usize = 1024 * 1024;

/// What a piece of SQL does, as far as read-only mode cares.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SqlVerdict {
    /// Every statement only reads, in every dialect checked.
    Read,
    /// Some statement writes, or may write, in some dialect; the reason
    /// names the statement, the dialect and why.
    Write(String),
    /// The text did not parse in some dialect (and no dialect found a write);
    /// treated as a write (fail closed). The reason names the dialect.
    Unparsable(String),
}

impl SqlVerdict {
    /// True unless every statement is known to only read.
    pub fn is_write(&self) -> bool {
        !matches!(self, SqlVerdict::Read)
    }
}

/// Classifies `sql` (one or more statements) under every dialect in
/// [`SqlDialect::ALL`], allowing only the built-in read-only functions.
pub fn classify_sql(sql: &str) -> SqlVerdict {
    SqlClassifier::default().classify(sql)
}

/// Classifies SQL text under a set of dialects.
///
/// Text is a read only if, in **every** configured dialect, it parses and
/// each statement is one of: a query (`SELECT`, `VALUES`, `TABLE`, `WITH …`)
/// without `INTO`, `FOR UPDATE`/`FOR SHARE` or a data-modifying CTE;
/// `EXPLAIN`/`DESCRIBE` of a read (with or without `ANALYZE`: `EXPLAIN` is
/// judged by what it explains); `SHOW …`; transaction control (`BEGIN`,
/// `COMMIT`, `ROLLBACK`, savepoints), with any statements of a procedural
/// `BEGIN … END` block judged one by one; or a reporting `PRAGMA`
/// (`table_info`, …). Every function called, anywhere, must be on the
/// [`FunctionAllowlist`]. On top of each dialect's own rules, text with a
/// line break other than `\n` is also read with those breaks as `\n`, a
/// MySQL executable comment (`/*! … */`) makes the text a write, and so does
/// a bare word that starts a writing statement (`SELECT 1 DELETE FROM t` is
/// two statements to SQL Server) or a locking SQL Server table hint.
///
/// Not seen: what a called view, rule, trigger or allowed function does
/// inside the database, and server settings that change how text is read
/// (PostgreSQL `standard_conforming_strings = off`, MySQL
/// `NO_BACKSLASH_ESCAPES`/`ANSI_QUOTES`) when the dialect set is narrowed to
/// one database.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SqlClassifier {
    dialects: Vec<SqlDialect>,
    functions: FunctionAllowlist,
}

impl Default for SqlClassifier {
    /// Every dialect, built-in functions only.
    fn default() -> Self {
        SqlClassifier {
            dialects: SqlDialect::ALL.to_vec(),
            functions: FunctionAllowlist::default(),
        }
    }
}

impl SqlClassifier {
    /// A classifier for `dialects` (all of them if empty) allowing `functions`.
    pub fn new(dialects: Vec<SqlDialect>, functions: FunctionAllowlist) -> Self {
        SqlClassifier {
            dialects: if dialects.is_empty() {
                SqlDialect::ALL.to_vec()
            } else {
                dialects
            },
            functions,
        }
    }

    /// The dialects every statement must be a read in.
    pub fn dialects(&self) -> &[SqlDialect] {
        &self.dialects
    }

    /// What `sql` does. A write found in any dialect wins over a parse
    /// failure in another, because its reason says more.
    pub fn classify(&self, sql: &str) -> SqlVerdict {
        if sql.len() > MAX_SQL_BYTES {
            return SqlVerdict::Write(format!(
                "the SQL is {} bytes, over the {MAX_SQL_BYTES}-byte limit the guard parses, \
                 so it is treated as a write",
                sql.len()
            ));
        }
        if let Some(why) = lexical::executable_comment(sql) {
            return SqlVerdict::Write(format!("{} is a write: {why}", reason::quoted(sql)));
        }
        let plain = lexical::with_plain_line_breaks(sql);
        let mut unparsable = None;
        for text in std::iter::once(sql).chain(plain.as_deref()) {
            for &dialect in &self.dialects {
                match self.classify_in(text, dialect) {
                    SqlVerdict::Read => {}
                    SqlVerdict::Write(reason) => return SqlVerdict::Write(reason),
                    SqlVerdict::Unparsable(reason) => {
                        unparsable.get_or_insert(reason);
                    }
                }
            }
        }
        unparsable.map_or(SqlVerdict::Read, SqlVerdict::Unparsable)
    }

    fn classify_in(&self, sql: &str, dialect: SqlDialect) -> SqlVerdict {
        let parser_dialect = dialect.parser_dialect();
        let parsed = Tokenizer::new(parser_dialect, sql)
            .tokenize_with_location()
            .map_err(ParserError::from)
            .and_then(|tokens| {
                let hidden_statement = lexical::writing_statement_word(&tokens);
                let statements = Parser::new(parser_dialect)
                    .with_tokens_with_locations(tokens)
                    .parse_statements()?;
                Ok((statements, hidden_statement))
            });
        let (statements, hidden_statement) = match parsed {
            Ok(parsed) => parsed,
            Err(error) => {
                return SqlVerdict::Unparsable(format!(
                    "{} did not parse under {dialect} ({error}), so it is treated as a write",
                    reason::quoted(sql)
                ));
            }
        };
        if statements.is_empty() {
            return SqlVerdict::Unparsable(format!(
                "{} did not parse under {dialect} (no SQL statement found), \
                 so it is treated as a write",
                reason::quoted(sql)
            ));
        }
        for statement in &statements {
            if let Some(why) = writes::why_it_writes(statement, &self.functions) {
                return SqlVerdict::Write(format!(
                    "{} is a write under {dialect}: {why}",
                    reason::quoted(&statement.to_string())
                ));
            }
        }
        match hidden_statement {
            Some(why) => SqlVerdict::Write(format!(
                "{} is a write under {dialect}: {why}",
                reason::quoted(sql)
            )),
            None => SqlVerdict::Read,
        }
    }
}
