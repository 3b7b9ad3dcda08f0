//! Which function calls a read may make.
//!
//! A `SELECT` can write through a function (`setval`, `dblink_exec`,
//! `lo_unlink`, `set_config`, …), and no parser can tell a harmless function
//! from a harmful one by its shape. So the guard trusts only names on a
//! built-in list of functions known not to write, plus names the config adds.

use sqlparser::ast::{Ident, ObjectName, ObjectNamePart};

/// Built-in functions known not to write, lower case, sorted (binary search).
///
/// Kept deliberately to plain computations and catalog reads: aggregates,
/// window functions, string, math, date/time, JSON and array functions,
/// conditionals and casts. Absent on purpose: sequence functions (`nextval`,
/// `setval`), anything that locks, sleeps, signals, notifies, reads or writes
/// files or large objects, opens connections, changes settings or assigns a
/// transaction id.
const READ_ONLY_FUNCTIONS: &[&str] = &[
    "abs",
    "acos",
    "age",
    "any_value",
    "approx_count_distinct",
    "approx_percentile", // Snowflake: approximate percentile aggregate
    "approx_quantiles",  // BigQuery: approximate quantiles aggregate
    "array",
    "array_agg",
    "array_append",
    "array_cat",
    "array_contains",
    "array_dims",
    "array_length",
    "array_lower",
    "array_position",
    "array_positions",
    "array_prepend",
    "array_remove",
    "array_replace",
    "array_size",
    "array_to_json",
    "array_to_string",
    "array_upper",
    "ascii",
    "asin",
    "atan",
    "atan2",
    "avg",
    "bit_and",
    "bit_length",
    "bit_or",
    "bit_xor",
    "bool_and",
    "bool_or",
    "boolor_agg", // Snowflake: boolean OR aggregate
    "btrim",
    "cardinality",
    "cast",
    "cbrt",
    "ceil",
    "ceiling",
    "char",
    "char_length",
    "character_length",
    "charindex",
    "checksum", // SQL Server: hash of values
    "choose",   // SQL Server: the n-th argument
    "chr",
    "clock_timestamp",
    "coalesce",
    "concat",
    "concat_ws",
    "contains",
    "convert",
    "convert_timezone", // Snowflake: timestamp converted between time zones
    "convert_tz",       // MySQL: a datetime converted between time zones
    "corr",
    "cos",
    "cot",
    "count",
    "count_big", // SQL Server: COUNT returning bigint
    "count_if",
    "countif",
    "covar_pop",
    "covar_samp",
    "cube", // SQL Server: GROUP BY CUBE (parsed there as a call)
    "cume_dist",
    "curdate", // MySQL: today's date
    "current_catalog",
    "current_database",
    "current_date",
    "current_role",
    "current_schema",
    "current_time",
    "current_timestamp",
    "current_user",
    "database", // MySQL: the current database's name
    "date",
    "date_add",
    "date_diff",
    "date_format",
    "date_part",
    "date_sub",
    "date_trunc",
    "dateadd",
    "datediff",
    "datefromparts", // SQL Server: a date from year, month, day
    "datename",
    "datepart",
    "datetime",
    "datetrunc", // SQL Server: truncate a date to a part
    "day",
    "dayname", // MySQL: weekday name
    "dayofmonth",
    "dayofweek",
    "dayofyear",
    "db_name", // SQL Server: the current database's name
    "degrees",
    "dense_rank",
    "div",
    "div0",         // Snowflake: division returning 0 on a zero divisor
    "editdistance", // Snowflake: Levenshtein distance
    "encode",
    "ends_with",
    "eomonth", // SQL Server: last day of the month
    "every",
    "exp",
    "extract",
    "farm_fingerprint", // BigQuery: FarmHash fingerprint
    "first_value",
    "flatten", // Snowflake: table function exploding a VARIANT
    "floor",
    "format",
    "format_date",
    "format_timestamp",
    "from_unixtime",
    "gcd",
    "generate_date_array", // BigQuery: an array of dates
    "generate_series",
    "generator", // Snowflake: table function producing empty rows
    "get_path",  // Snowflake: value at a path in a VARIANT
    "getdate",
    "getutcdate",
    "greatest",
    "group_concat",
    "grouping",  // PostgreSQL, MySQL, SQL Server: which GROUPING SETS level a row is
    "hash",      // Snowflake: 64-bit hash of values
    "hashbytes", // SQL Server: digest of a value
    "hex",       // MySQL, SQLite: hexadecimal text of a value
    "hour",
    "if",
    "iff", // Snowflake: inline if
    "ifnull",
    "iif",
    "initcap",
    "instr",
    "isjson", // SQL Server: JSON validity test
    "isnull",
    "json_agg",
    "json_array",
    "json_array_elements",
    "json_array_elements_text",
    "json_array_length",
    "json_arrayagg", // MySQL: aggregate into a JSON array
    "json_build_array",
    "json_build_object",
    "json_contains", // MySQL: JSON containment test
    "json_each",
    "json_each_text",
    "json_extract",
    "json_extract_path",
    "json_extract_path_text",
    "json_extract_scalar",
    "json_group_array", // SQLite: aggregate into a JSON array
    "json_length",      // MySQL: length of a JSON value
    "json_object",
    "json_object_agg",
    "json_object_keys",
    "json_query",
    "json_query_array", // BigQuery: JSON array elements
    "json_type",        // SQLite: type of a JSON value
    "json_typeof",
    "json_unquote",
    "json_valid",
    "json_value",
    "jsonb_agg",
    "jsonb_array_elements",
    "jsonb_array_elements_text",
    "jsonb_array_length",
    "jsonb_build_array",
    "jsonb_build_object",
    "jsonb_each",
    "jsonb_each_text",
    "jsonb_extract_path",
    "jsonb_extract_path_text",
    "jsonb_object_agg",
    "jsonb_object_keys",
    "jsonb_path_exists",
    "jsonb_path_query",
    "jsonb_pretty",
    "jsonb_typeof",
    "julianday",
    "lag",
    "last_day",
    "last_value",
    "lcase",
    "lcm",
    "lead",
    "least",
    "left",
    "len",
    "length",
    "listagg",
    "ln",
    "localtime",
    "localtimestamp",
    "locate",
    "log",
    "log10",
    "log2",
    "logical_or", // BigQuery: boolean OR aggregate
    "lower",
    "lpad",
    "ltrim",
    "make_date",
    "make_interval",
    "make_timestamp",
    "makedate", // MySQL: a date from year and day of year
    "max",
    "md5",
    "median",
    "min",
    "minute",
    "mod",
    "mode",
    "month",
    "monthname", // MySQL: month name
    "now",
    "nth_value",
    "ntile",
    "nullif",
    "nvl",
    "nvl2",
    "object_construct", // Snowflake: build an OBJECT
    "object_name",      // SQL Server: catalog name of an object id
    "octet_length",
    "offset",  // BigQuery: array element by zero-based position (`arr[OFFSET(0)]`)
    "ordinal", // BigQuery: array element by one-based position
    "overlay",
    "parse_date", // BigQuery: parse a date string
    "parse_json", // Snowflake: text to VARIANT
    "patindex",   // SQL Server: position of a pattern
    "percent_rank",
    "percentile_cont",
    "percentile_disc",
    "pi",
    "position",
    "pow",
    "power",
    "printf", // SQLite: formatted string
    "quarter",
    "quote", // SQLite: a value as an SQL literal
    "radians",
    "rank",
    "ratio_to_report", // Snowflake: window share of the total
    "regexp_contains", // BigQuery: regex match test
    "regexp_count",
    "regexp_extract", // BigQuery: regex match extraction
    "regexp_instr",
    "regexp_like",
    "regexp_match",
    "regexp_matches",
    "regexp_replace",
    "regexp_split_to_array",
    "regexp_substr",
    "repeat",
    "replace",
    "replicate",
    "reverse",
    "right",
    "rollup", // SQL Server: GROUP BY ROLLUP (parsed there as a call)
    "round",
    "row",
    "row_number",
    "row_to_json",
    "rpad",
    "rtrim",
    "safe_cast",
    "safe_divide",
    "safe_offset",  // BigQuery: `OFFSET`, NULL when out of range
    "safe_ordinal", // BigQuery: `ORDINAL`, NULL when out of range
    "second",
    "seq4", // Snowflake: row sequence numbers in a GENERATOR (no sequence object)
    "session_user",
    "sha1",
    "sha2", // MySQL, Snowflake: SHA-2 digest
    "sha256",
    "sign",
    "sin",
    "space",
    "split", // BigQuery: split a string into an array
    "split_part",
    "sqlite_version", // SQLite: the library version
    "sqrt",
    "square",
    "starts_with",
    "startswith", // Snowflake: prefix test
    "statement_timestamp",
    "stddev",
    "stddev_pop",
    "stddev_samp",
    "stdev",       // SQL Server: sample standard deviation
    "str_to_date", // MySQL: parse a date string
    "strftime",
    "string_agg",
    "string_split", // SQL Server: table function splitting a string
    "string_to_array",
    "strpos",
    "stuff", // SQL Server: replace part of a string
    "substr",
    "substring",
    "substring_index", // MySQL: substring before the n-th delimiter
    "sum",
    "suser_sname",  // SQL Server: the current login's name
    "switchoffset", // SQL Server: datetimeoffset in another offset
    "sysdate",
    "sysdatetime",    // SQL Server: current time
    "sysutcdatetime", // SQL Server: current UTC time
    "tan",
    "time",
    "time_format", // MySQL: format a time
    "timediff",    // MySQL: difference of two times
    "timestamp",
    "timestamp_diff",
    "timestamp_seconds", // BigQuery: timestamp from epoch seconds
    "timestamp_sub",     // BigQuery: timestamp minus an interval
    "timestamp_trunc",
    "timestampadd",
    "timestampdiff",
    "to_char",
    "to_date",
    "to_hex",
    "to_json",
    "to_jsonb",
    "to_number",
    "to_timestamp",
    "total", // SQLite: floating-point sum aggregate
    "transaction_timestamp",
    "translate",
    "trim",
    "trunc",
    "try_cast",
    "try_convert",
    "try_to_number", // Snowflake: text to number or NULL
    "typeof",
    "ucase",
    "unicode", // SQLite, SQL Server: code point of the first character
    "unistr",
    "unix_seconds", // BigQuery: epoch seconds of a timestamp
    "unix_timestamp",
    "unixepoch",
    "unnest",
    "upper",
    "user",
    "utc_timestamp",
    "var", // SQL Server: sample variance
    "var_pop",
    "var_samp",
    "variance",
    "version",
    "week",
    "width_bucket",
    "year",
    "yearweek", // MySQL: year and week of a date
];

/// The only schema a built-in may be qualified with and stay trusted:
/// `public.count` may be anyone's function, `pg_catalog.count` is the built-in.
const BUILT_IN_SCHEMA: &str = "pg_catalog";

/// The functions a read may call: the built-in list plus configured names.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FunctionAllowlist {
    /// Configured names, lower case, split at dots.
    extra: Vec<Vec<String>>,
}

impl FunctionAllowlist {
    /// The built-in list plus `names`: a plain name (`my_report`) allows that
    /// function in any schema, a dotted one (`reports.monthly`) only exactly
    /// that qualified name. Names compare ASCII case-insensitively.
    pub fn with_extra<I, S>(names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        FunctionAllowlist {
            extra: names
                .into_iter()
                .map(|name| {
                    name.as_ref()
                        .split('.')
                        .map(|part| part.trim().to_ascii_lowercase())
                        .collect()
                })
                .collect(),
        }
    }

    /// Why calling `name` may write, or `None` if it is known not to.
    pub(crate) fn refuse(&self, name: &ObjectName) -> Option<String> {
        let mut parts = Vec::with_capacity(name.0.len());
        for part in &name.0 {
            match part {
                ObjectNamePart::Identifier(ident) => parts.push(ident),
                ObjectNamePart::Function(_) => {
                    return Some(format!(
                        "calls {name}, whose name is computed, so it cannot be known to be read-only"
                    ));
                }
            }
        }
        if self.allows(&parts) {
            return None;
        }
        Some(format!(
            "calls {}, which is not known to be read-only",
            parts
                .iter()
                .map(|ident| ident.value.as_str())
                .collect::<Vec<_>>()
                .join(".")
        ))
    }

    fn allows(&self, parts: &[&Ident]) -> bool {
        let Some((last, qualifiers)) = parts.split_last() else {
            return false;
        };
        let configured = self.extra.iter().any(|entry| match entry.as_slice() {
            [single] => last.value.eq_ignore_ascii_case(single),
            several => {
                several.len() == parts.len()
                    && several
                        .iter()
                        .zip(parts)
                        .all(|(want, ident)| ident.value.eq_ignore_ascii_case(want))
            }
        });
        configured
            || (qualifiers
                .iter()
                .all(|q| names_built_in(q, BUILT_IN_SCHEMA))
                && READ_ONLY_FUNCTIONS
                    .binary_search(&lower_ascii(last).as_str())
                    .is_ok()
                && names_built_in(last, &lower_ascii(last)))
    }
}

/// Whether `ident` refers to the built-in spelled `lower` (lower case):
/// unquoted names are case-insensitive, quoted ones (`"SetVal"`) are exact in
/// PostgreSQL, so only the lower-case spelling is the built-in.
fn names_built_in(ident: &Ident, lower: &str) -> bool {
    match ident.quote_style {
        None => ident.value.eq_ignore_ascii_case(lower),
        Some(_) => ident.value == lower,
    }
}

/// Only ASCII letters are folded: a non-ASCII letter (`ı`, fullwidth `ｃ`)
/// never folds onto an allowed name.
fn lower_ascii(ident: &Ident) -> String {
    ident.value.to_ascii_lowercase()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_built_in_list_is_sorted_and_has_no_writer() {
        assert!(READ_ONLY_FUNCTIONS.windows(2).all(|w| w[0] < w[1]));
        for writer in [
            "nextval",
            "setval",
            "set_config",
            "dblink_exec",
            "lo_unlink",
            "pg_advisory_lock",
            "txid_current",
            "get_lock",
        ] {
            assert!(
                READ_ONLY_FUNCTIONS.binary_search(&writer).is_err(),
                "{writer}"
            );
        }
    }
}
