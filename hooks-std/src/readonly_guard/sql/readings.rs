//! Every way a database may split the text into tokens.
//!
//! `sqlparser`'s lexer for one dialect does not always lex like the real
//! database: Hive and Databricks strings take backslash escapes, ClickHouse
//! identifiers too, DuckDB has `E'…'` strings, BigQuery raw strings keep
//! `\'`. Where a string or comment ends decides which statements run, so
//! the text is tokenized under **every** dialect's lexer whatever the
//! configured set, and each distinct token stream is a reading to judge.
//!
//! A reading a configured dialect's lexer produced is that database's own:
//! its parser must find only reads in it, and a lexer of its that fails
//! fails the text. A *foreign* reading, which only other dialects' lexers
//! produced, is how the configured database might read the text were
//! `sqlparser`'s lexer wrong about it: a write found in it still counts,
//! but syntax the configured database does not have (BigQuery's backticks
//! to PostgreSQL's lexer, SQL Server's `[brackets]` to MySQL's) neither
//! fails the lexing nor makes the text unparsable. With every dialect
//! configured (the default) no reading is foreign.

use sqlparser::tokenizer::{TokenWithSpan, Tokenizer, TokenizerError};

use super::dialects::SqlDialect;

/// One way to split the text into tokens, and who must find it a read.
pub(crate) struct Reading {
    /// The tokens, whitespace and comments included.
    pub(crate) tokens: Vec<TokenWithSpan>,
    /// The dialects whose lexer produced exactly these tokens.
    pub(crate) lexers: Vec<SqlDialect>,
    /// The dialects whose parser reads these tokens: the configured lexers
    /// among `lexers`, or every configured dialect for a foreign reading.
    pub(crate) parsers: Vec<SqlDialect>,
    /// Whether only dialects that are not configured lexed it this way.
    pub(crate) foreign: bool,
}

/// A lexer that could not tokenize the text: which one, and its error.
pub(crate) struct LexError {
    pub(crate) dialect: SqlDialect,
    pub(crate) error: TokenizerError,
}

/// The distinct readings of `sql` under every dialect's lexer, each with
/// the `configured` dialects that must parse it. A configured dialect's
/// lexer failing fails the whole text (closed): that database might have
/// read it; another dialect's only drops its reading.
pub(crate) fn readings(sql: &str, configured: &[SqlDialect]) -> Result<Vec<Reading>, LexError> {
    let mut readings: Vec<Reading> = Vec::new();
    for dialect in SqlDialect::ALL {
        let tokens = match Tokenizer::new(dialect.parser_dialect(), sql).tokenize_with_location() {
            Ok(tokens) => tokens,
            Err(error) if configured.contains(&dialect) => {
                return Err(LexError { dialect, error });
            }
            Err(_) => continue,
        };
        match readings
            .iter_mut()
            .find(|reading| same_tokens(&reading.tokens, &tokens))
        {
            Some(reading) => reading.lexers.push(dialect),
            None => readings.push(Reading {
                tokens,
                lexers: vec![dialect],
                parsers: Vec::new(),
                foreign: false,
            }),
        }
    }
    for reading in &mut readings {
        let own: Vec<SqlDialect> = reading
            .lexers
            .iter()
            .copied()
            .filter(|dialect| configured.contains(dialect))
            .collect();
        reading.foreign = own.is_empty();
        reading.parsers = if reading.foreign {
            configured.to_vec()
        } else {
            own
        };
    }
    Ok(readings)
}

/// Whether two token streams are the same tokens (positions aside).
fn same_tokens(a: &[TokenWithSpan], b: &[TokenWithSpan]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.token == y.token)
}
