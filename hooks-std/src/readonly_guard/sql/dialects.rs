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

    /// The dialect of the database a connection URL points at, read from
    /// its scheme alone (`postgres://…`, `mysql+pymysql://…`,
    /// `jdbc:sqlserver://…`, `sqlite:data.db`); `None` for a scheme that
    /// names no database the guard knows.
    pub fn from_database_url(url: &str) -> Option<SqlDialect> {
        let url = url.trim();
        let url = match url.get(..5) {
            Some(prefix) if prefix.eq_ignore_ascii_case("jdbc:") => &url[5..],
            _ => url,
        };
        let (scheme, _) = url.split_once(':')?;
        // SQLAlchemy's `dialect+driver`.
        let database = scheme.split('+').next()?.to_ascii_lowercase();
        Some(match database.as_str() {
            "postgres" | "postgresql" => SqlDialect::PostgreSql,
            "mysql" | "mariadb" => SqlDialect::MySql,
            "sqlite" | "sqlite3" => SqlDialect::Sqlite,
            "mssql" | "sqlserver" => SqlDialect::MsSql,
            "bigquery" => SqlDialect::BigQuery,
            "snowflake" => SqlDialect::Snowflake,
            "duckdb" => SqlDialect::DuckDb,
            "redshift" => SqlDialect::Redshift,
            "clickhouse" => SqlDialect::ClickHouse,
            "hive" | "hive2" => SqlDialect::Hive,
            "databricks" => SqlDialect::Databricks,
            _ => return None,
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_database_url_names_its_dialect_by_its_scheme() {
        for (url, dialect) in [
            ("postgres://app:s3cret@db:5432/shop", SqlDialect::PostgreSql),
            ("PostgreSQL://db/shop", SqlDialect::PostgreSql),
            ("postgresql+psycopg2://db/shop", SqlDialect::PostgreSql),
            ("jdbc:postgresql://db/shop", SqlDialect::PostgreSql),
            ("mysql://root@127.0.0.1/test", SqlDialect::MySql),
            ("mariadb://db/x", SqlDialect::MySql),
            ("sqlite:data.db", SqlDialect::Sqlite),
            ("sqlite::memory:", SqlDialect::Sqlite),
            ("mssql://sa@db/x", SqlDialect::MsSql),
            ("JDBC:sqlserver://db;databaseName=x", SqlDialect::MsSql),
            ("bigquery://my-project/dataset", SqlDialect::BigQuery),
            ("snowflake://acct/db", SqlDialect::Snowflake),
            ("duckdb:///data.duckdb", SqlDialect::DuckDb),
            ("redshift+psycopg2://c/db", SqlDialect::Redshift),
            ("clickhouse://db:9000", SqlDialect::ClickHouse),
            ("jdbc:hive2://db:10000", SqlDialect::Hive),
            ("databricks://token@host", SqlDialect::Databricks),
        ] {
            assert_eq!(SqlDialect::from_database_url(url), Some(dialect), "{url}");
        }
        for url in [
            "",
            "db.example.com",
            "oracle://db",
            "mongodb://x",
            "jdbc:",
            "+:x",
        ] {
            assert_eq!(SqlDialect::from_database_url(url), None, "{url}");
        }
    }
}
