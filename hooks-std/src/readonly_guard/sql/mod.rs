//! Deciding whether SQL text writes, by parsing it in every dialect it may
//! be run in.

mod complexity;
mod dialects;
mod functions;
mod lexical;
mod readings;
mod reason;
mod writes;

use std::panic::AssertUnwindSafe;

use sqlparser::parser::Parser;

pub use complexity::{MAX_CHAIN_LINKS, MAX_NESTING, MAX_TOKENS};
pub use dialects::{SqlDialect, UnknownDialect};
pub use functions::FunctionAllowlist;
pub(crate) use lexical::WRITING_STATEMENT_WORDS;
use readings::Reading;

/// SQL longer than this is not parsed: it counts as a write. Parsing is
/// repeated per dialect (64 KiB takes about a second in a debug build), and
/// no read a tool needs in read-only mode is this long.
pub const MAX_SQL_BYTES: usize = 64 * 1024;

/// All the tokens one call may have parsed, summed over its SQL texts and
/// over the re-reading of a text with other line breaks as `\n`, as if
/// each were parsed under all 13 dialects (a token parsed under fewer
/// counts for less, one parsed several times for more); past it the call
/// is a write, unparsed. With [`MAX_TOKENS`] per text this bounds a call's
/// parsing work, however many argument keys it spells.
pub const MAX_TOKENS_PER_CALL: usize = 20_000;

/// [`MAX_TOKENS_PER_CALL`] in the unit spent: one token parsed once.
pub(crate) const TOKEN_PARSES_PER_CALL: usize = MAX_TOKENS_PER_CALL * SqlDialect::ALL.len();

/// The stack the parse runs on. The complexity bounds keep the tree
/// shallow; this leaves a wide margin for `sqlparser`'s recursive walk,
/// printing and drop of it, even in a debug build, whatever stack the
/// caller (a 2 MiB tokio worker) has. Only the pages used are committed.
const CLASSIFY_STACK_BYTES: usize = 32 * 1024 * 1024;

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
/// each statement is one of: a query (`SELECT`, `VALUES`, `WITH …`)
/// without `INTO`, `FOR UPDATE`/`FOR SHARE` or a data-modifying CTE;
/// `EXPLAIN`/`DESCRIBE` of a read (with or without `ANALYZE`: `EXPLAIN` is
/// judged by what it explains); `SHOW …`; transaction control (`START
/// TRANSACTION`, `COMMIT`, `ROLLBACK`, savepoints; `BEGIN;` only where every
/// configured dialect parses it, which BigQuery and Snowflake do not), with
/// any statements of a procedural `BEGIN … END` block judged one by one; or
/// a reporting SQLite `PRAGMA` with a quoted argument (`PRAGMA
/// table_info('t')`; unquoted it parses nowhere). `TABLE t` parses in no
/// dialect and is a write. Every function called, anywhere, must be on the
/// [`FunctionAllowlist`]; `s.nextval`/`s.currval` and `@a := 1` are writes.
///
/// The text is tokenized under every dialect's lexer whatever the
/// configured set (narrowing narrows the parsers, never where strings and
/// comments end), and each distinct token stream must parse as a read. On
/// top of that, text with a line break other than `\n` is also read with
/// those breaks as `\n`, a MySQL executable comment (`/*! … */`) makes the
/// text a write, and so does a bare word inside a statement that starts a
/// writing statement (`SELECT 1 DELETE FROM t` is two statements to SQL
/// Server) or a locking SQL Server table hint (`WITH (UPDLOCK)`, `t a
/// (UPDLOCK)`, `OPTION (TABLE HINT(t, XLOCK))`). Text over
/// [`MAX_SQL_BYTES`], with more than [`MAX_TOKENS`] tokens, [`MAX_NESTING`]
/// brackets open at once or [`MAX_CHAIN_LINKS`] links on one path
/// (operators, join words, and prefixes the parser recurses on such as
/// `INTERVAL`; see [`too_complex`](Self::too_complex)) is a write, unparsed,
/// and so is a call's text past [`MAX_TOKENS_PER_CALL`].
///
/// Not seen: what a called view, rule, trigger or allowed function does
/// inside the database; PostgreSQL attribute notation (`t.f` calls `f(t)`
/// for a function `f` on the row type, so `SELECT t.f FROM t` may run a
/// user function); and server settings that change how text is read
/// (PostgreSQL `standard_conforming_strings = off`, MySQL
/// `NO_BACKSLASH_ESCAPES`/`ANSI_QUOTES`) beyond the lexers `sqlparser` has.
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
    ///
    /// Runs on a thread of its own with a large stack; a panic inside the
    /// parser, or a thread that cannot be started, is a write (fail closed).
    pub fn classify(&self, sql: &str) -> SqlVerdict {
        let mut budget = TOKEN_PARSES_PER_CALL;
        self.classify_within(sql, &mut budget)
    }

    /// [`classify`](Self::classify), spending from `budget` (what is left
    /// of the call's [`TOKEN_PARSES_PER_CALL`]) one unit per token per
    /// parse; text that would overspend it is a write, unparsed.
    pub(crate) fn classify_within(&self, sql: &str, budget: &mut usize) -> SqlVerdict {
        if sql.len() > MAX_SQL_BYTES {
            return SqlVerdict::Write(too_long(sql));
        }
        std::thread::scope(|scope| {
            let worker = std::thread::Builder::new()
                .name("sql-classifier".to_owned())
                .stack_size(CLASSIFY_STACK_BYTES)
                .spawn_scoped(scope, || self.classify_here(sql, budget));
            match worker.map(|handle| handle.join()) {
                Ok(Ok(verdict)) => verdict,
                Ok(Err(_panic)) => SqlVerdict::Write(format!(
                    "{} made the SQL parser panic, so it is treated as a write",
                    reason::quoted(sql)
                )),
                Err(error) => SqlVerdict::Write(format!(
                    "the SQL could not be classified (no thread for the parser: {error}), \
                     so it is treated as a write"
                )),
            }
        })
    }

    /// Why `sql` is too long or too complex to parse safely, found by
    /// lexing and measuring it under every dialect without parsing it; or
    /// `None`. [`classify`](Self::classify) calls such text a write with
    /// this reason. A lexer error is not an answer here (the text then
    /// counts as unparsable when classified).
    pub fn too_complex(&self, sql: &str) -> Option<String> {
        if sql.len() > MAX_SQL_BYTES {
            return Some(too_long(sql));
        }
        let plain = lexical::with_plain_line_breaks(sql);
        std::iter::once(sql)
            .chain(plain.as_deref())
            .find_map(|text| {
                let readings = readings::readings(text, &self.dialects).ok()?;
                readings
                    .iter()
                    .find_map(|reading| complexity::too_complex(&reading.tokens))
                    .map(|why| format!("{} is a write: {why}", reason::quoted(text)))
            })
    }

    fn classify_here(&self, sql: &str, budget: &mut usize) -> SqlVerdict {
        if let Some(why) = lexical::executable_comment(sql) {
            return SqlVerdict::Write(format!("{} is a write: {why}", reason::quoted(sql)));
        }
        let plain = lexical::with_plain_line_breaks(sql);
        let mut unparsable = None;
        for text in std::iter::once(sql).chain(plain.as_deref()) {
            let readings = match readings::readings(text, &self.dialects) {
                Ok(readings) => readings,
                Err(failed) => {
                    unparsable.get_or_insert(format!(
                        "{} did not parse under {} ({}), so it is treated as a write",
                        reason::quoted(text),
                        failed.dialect,
                        failed.error
                    ));
                    continue;
                }
            };
            // Measured before anything is parsed: see `complexity`.
            if let Some(why) = readings
                .iter()
                .find_map(|reading| complexity::too_complex(&reading.tokens))
            {
                return SqlVerdict::Write(format!("{} is a write: {why}", reason::quoted(text)));
            }
            let cost: usize = readings
                .iter()
                .map(|reading| complexity::token_count(&reading.tokens) * reading.parsers.len())
                .sum();
            if cost > *budget {
                return SqlVerdict::Write(format!(
                    "the call's SQL has more than {MAX_TOKENS_PER_CALL} tokens in all (each \
                     text counted once more if it has line breaks other than \\n), \
                     too much SQL to classify safely, so it is treated as a write"
                ));
            }
            *budget -= cost;
            for reading in &readings {
                for &dialect in &reading.parsers {
                    match self.classify_reading(text, reading, dialect) {
                        SqlVerdict::Read => {}
                        SqlVerdict::Write(reason) => return SqlVerdict::Write(reason),
                        // Syntax of another database's quoting rules: only a
                        // writing word in it counts (see `readings`).
                        SqlVerdict::Unparsable(_) if reading.foreign => {
                            if let Some(why) = lexical::any_writing_word(&reading.tokens) {
                                return SqlVerdict::Write(format!(
                                    "{} is a write under {dialect} with {}'s quoting rules: \
                                     {why}",
                                    reason::quoted(text),
                                    reading.lexers[0]
                                ));
                            }
                        }
                        SqlVerdict::Unparsable(reason) => {
                            unparsable.get_or_insert(reason);
                        }
                    }
                }
            }
        }
        unparsable.map_or(SqlVerdict::Read, SqlVerdict::Unparsable)
    }

    /// `reading` parsed by `dialect`'s parser.
    fn classify_reading(&self, sql: &str, reading: &Reading, dialect: SqlDialect) -> SqlVerdict {
        let under = if reading.lexers.contains(&dialect) {
            dialect.to_string()
        } else {
            format!("{dialect} (with {}'s quoting rules)", reading.lexers[0])
        };
        // The parser can panic on text it does not expect (sqlparser
        // 0.58's SQLite dialect unwraps in `parse_infix`; found by fuzzing):
        // a panic is a parse failure, never a crash.
        let parsed = std::panic::catch_unwind(AssertUnwindSafe(|| {
            Parser::new(dialect.parser_dialect())
                .with_tokens_with_locations(reading.tokens.clone())
                .parse_statements()
        }));
        let statements = match parsed {
            Ok(Ok(statements)) => statements,
            Ok(Err(error)) => {
                return SqlVerdict::Unparsable(format!(
                    "{} did not parse under {under} ({error}), so it is treated as a write",
                    reason::quoted(sql)
                ));
            }
            Err(_) => {
                return SqlVerdict::Unparsable(format!(
                    "{} could not be parsed under {under} (the SQL parser failed on it), so it \
                     is treated as a write",
                    reason::quoted(sql)
                ));
            }
        };
        if statements.is_empty() {
            return SqlVerdict::Unparsable(format!(
                "{} did not parse under {under} (no SQL statement found), \
                 so it is treated as a write",
                reason::quoted(sql)
            ));
        }
        for statement in &statements {
            if let Some(why) = writes::why_it_writes(statement, &self.functions) {
                return SqlVerdict::Write(format!(
                    "{} is a write under {under}: {why}",
                    reason::quoted(&statement.to_string())
                ));
            }
        }
        match lexical::writing_statement_word(&reading.tokens)
            .or_else(|| lexical::locking_query_hint(&reading.tokens))
        {
            Some(why) => SqlVerdict::Write(format!(
                "{} is a write under {under}: {why}",
                reason::quoted(sql)
            )),
            None => SqlVerdict::Read,
        }
    }
}

fn too_long(sql: &str) -> String {
    format!(
        "the SQL is {} bytes, over the {MAX_SQL_BYTES}-byte limit, too long to classify \
         safely, so it is treated as a write",
        sql.len()
    )
}
