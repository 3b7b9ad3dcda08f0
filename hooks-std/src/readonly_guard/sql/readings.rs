//! Every way a database may split the text into tokens.
//!
//! `sqlparser`'s lexer for one dialect does not always lex like the real
//! database: Hive and Databricks strings take backslash escapes, ClickHouse
//! identifiers too, DuckDB has `E'…'` strings, BigQuery raw strings keep
//! `\'`. Where a string or comment ends decides which statements run, so
//! the text is tokenized under **every** dialect's lexer whatever the
//! configured set, and each distinct token stream is a reading to judge.
//! Narrowing the dialects narrows the parsers, never the lexing.

use sqlparser::tokenizer::{TokenWithSpan, Tokenizer, TokenizerError};

use super::dialects::SqlDialect;

/// One way to split the text into tokens, and who must find it a read.
pub(crate) struct Reading {
    /// The tokens, whitespace and comments included.
    pub(crate) tokens: Vec<TokenWithSpan>,
    /// The dialects whose lexer produced exactly these tokens.
    pub(crate) lexers: Vec<SqlDialect>,
    /// The dialects whose parser must find only reads in these tokens: the
    /// configured lexers among `lexers`, or every configured dialect when
    /// some other dialect's lexer produced them (a configured database may
    /// lex like it, as far as anyone can tell from `sqlparser`).
    pub(crate) parsers: Vec<SqlDialect>,
}

/// A lexer that could not tokenize the text: which one, and its error.
pub(crate) struct LexError {
    pub(crate) dialect: SqlDialect,
    pub(crate) error: TokenizerError,
}

/// The distinct readings of `sql` under every dialect's lexer, each with
/// the `configured` dialects that must parse it. Any lexer failing fails
/// the whole text (closed): that database might have read it.
pub(crate) fn readings(sql: &str, configured: &[SqlDialect]) -> Result<Vec<Reading>, LexError> {
    let mut readings: Vec<Reading> = Vec::new();
    for dialect in SqlDialect::ALL {
        let tokens = Tokenizer::new(dialect.parser_dialect(), sql)
            .tokenize_with_location()
            .map_err(|error| LexError { dialect, error })?;
        match readings
            .iter_mut()
            .find(|reading| same_tokens(&reading.tokens, &tokens))
        {
            Some(reading) => reading.lexers.push(dialect),
            None => readings.push(Reading {
                tokens,
                lexers: vec![dialect],
                parsers: Vec::new(),
            }),
        }
    }
    for reading in &mut readings {
        reading.parsers = if reading.lexers.iter().all(|d| configured.contains(d)) {
            reading.lexers.clone()
        } else {
            configured.to_vec()
        };
    }
    Ok(readings)
}

/// Whether two token streams are the same tokens (positions aside).
fn same_tokens(a: &[TokenWithSpan], b: &[TokenWithSpan]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.token == y.token)
}
