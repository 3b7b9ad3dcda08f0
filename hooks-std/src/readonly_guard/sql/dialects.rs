//! The SQL dialects the guard reads statements in.

use std::fmt;

use sqlparser::dialect::{
    AnsiDialect, BigQueryDialect, ClickHouseDialect, DatabricksDialect, Dialect, DuckDbDialect,
    GenericDialect, HiveDialect, MsSqlDialect, MySqlDialect, PostgreSqlDialect, RedshiftSqlDialect,
    SQLiteDialect, SnowflakeDialect,
};

/// A SQL dialect `sqlparser` can read.
///
/// The guard reads a statement once per configured dialect because databases
/// disagree about where comments and strings end: text that is one harmless
/// `SELECT` to one database can hold a `DELETE` for another.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SqlDialect {
    /// `sqlparser`'s permissive generic dialect.
    Generic,
    /// PostgreSQL (nested block comments, `--` comments end at `\r`).
    PostgreSql,
    /// MySQL and MariaDB (backslash escapes in strings, `#` comments).
    MySql,
    /// SQLite (block comments do not nest).
    Sqlite,
    /// Microsoft SQL Server.
    MsSql,
    /// Google BigQuery (procedural `BEGIN … END` blocks).
    BigQuery,
    /// Snowflake (procedural `BEGIN … END` blocks).
    Snowflake,
    /// DuckDB.
    DuckDb,
    /// Amazon Redshift.
    Redshift,
    /// ClickHouse.
    ClickHouse,
    /// Apache Hive.
    Hive,
    /// ANSI SQL.
    Ansi,
    /// Databricks.
    Databricks,
}

impl SqlDialect {
    /// Every dialect, the default set: a statement is a read only if it is
    /// one in each of them.
    pub const ALL: [SqlDialect; 13] = [
        SqlDialect::Generic,
        SqlDialect::PostgreSql,
        SqlDialect::MySql,
        SqlDialect::Sqlite,
        SqlDialect::MsSql,
        SqlDialect::BigQuery,
        SqlDialect::Snowflake,
        SqlDialect::DuckDb,
        SqlDialect::Redshift,
        SqlDialect::ClickHouse,
        SqlDialect::Hive,
        SqlDialect::Ansi,
        SqlDialect::Databricks,
    ];

    /// The name config files use (`postgresql`, `mssql`, …).
    pub fn name(self) -> &'static str {
        match self {
            SqlDialect::Generic => "generic",
            SqlDialect::PostgreSql => "postgresql",
            SqlDialect::MySql => "mysql",
            SqlDialect::Sqlite => "sqlite",
            SqlDialect::MsSql => "mssql",
            SqlDialect::BigQuery => "bigquery",
            SqlDialect::Snowflake => "snowflake",
            SqlDialect::DuckDb => "duckdb",
            SqlDialect::Redshift => "redshift",
            SqlDialect::ClickHouse => "clickhouse",
            SqlDialect::Hive => "hive",
            SqlDialect::Ansi => "ansi",
            SqlDialect::Databricks => "databricks",
        }
    }

    /// The dialect called `name` (ASCII case-insensitive; `postgres` also works).
    pub fn from_name(name: &str) -> Result<SqlDialect, UnknownDialect> {
        let wanted = name.trim();
        if wanted.eq_ignore_ascii_case("postgres") {
            return Ok(SqlDialect::PostgreSql);
        }
        SqlDialect::ALL
            .into_iter()
            .find(|dialect| dialect.name().eq_ignore_ascii_case(wanted))
            .ok_or_else(|| UnknownDialect {
                name: name.to_owned(),
                suggestion: hooks_runtime::text::did_you_mean(
                    &wanted.to_ascii_lowercase(),
                    SqlDialect::ALL.iter().map(|dialect| dialect.name()),
                ),
            })
    }

    /// `sqlparser`'s reader for this dialect.
    pub(crate) fn parser_dialect(self) -> &'static dyn Dialect {
        match self {
            SqlDialect::Generic => &GenericDialect {},
            SqlDialect::PostgreSql => &PostgreSqlDialect {},
            SqlDialect::MySql => &MySqlDialect {},
            SqlDialect::Sqlite => &SQLiteDialect {},
            SqlDialect::MsSql => &MsSqlDialect {},
            SqlDialect::BigQuery => &BigQueryDialect {},
            SqlDialect::Snowflake => &SnowflakeDialect {},
            SqlDialect::DuckDb => &DuckDbDialect {},
            SqlDialect::Redshift => &RedshiftSqlDialect {},
            SqlDialect::ClickHouse => &ClickHouseDialect {},
            SqlDialect::Hive => &HiveDialect {},
            SqlDialect::Ansi => &AnsiDialect {},
            SqlDialect::Databricks => &DatabricksDialect {},
        }
    }
}

impl fmt::Display for SqlDialect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A config named a dialect the guard does not know.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown SQL dialect \"{name}\"{}; known dialects: {}",
    .suggestion.map(|s| format!(" (did you mean \"{s}\"?)")).unwrap_or_default(),
    SqlDialect::ALL.map(SqlDialect::name).join(", ")
)]
pub struct UnknownDialect {
    /// The name as written.
    pub name: String,
    /// The closest known name, if one is close.
    pub suggestion: Option<&'static str>,
}
