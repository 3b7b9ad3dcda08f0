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
    "chr",
    "clock_timestamp",
    "coalesce",
    "concat",
    "concat_ws",
    "contains",
    "convert",
    "corr",
    "cos",
    "cot",
    "count",
    "count_if",
    "countif",
    "covar_pop",
    "covar_samp",
    "cume_dist",
    "current_catalog",
    "current_database",
    "current_date",
    "current_role",
    "current_schema",
    "current_time",
    "current_timestamp",
    "current_user",
    "date",
    "date_add",
    "date_diff",
    "date_format",
    "date_part",
    "date_sub",
    "date_trunc",
    "dateadd",
    "datediff",
    "datename",
    "datepart",
    "datetime",
    "day",
    "dayofmonth",
    "dayofweek",
    "dayofyear",
    "degrees",
    "dense_rank",
    "div",
    "encode",
    "ends_with",
    "every",
    "exp",
    "extract",
    "first_value",
    "floor",
    "format",
    "format_date",
    "format_timestamp",
    "from_unixtime",
    "gcd",
    "generate_series",
    "getdate",
    "getutcdate",
    "greatest",
    "group_concat",
    "hour",
    "if",
    "ifnull",
    "iif",
    "initcap",
    "instr",
    "isnull",
    "json_agg",
    "json_array",
    "json_array_elements",
    "json_array_elements_text",
    "json_array_length",
    "json_build_array",
    "json_build_object",
    "json_each",
    "json_each_text",
    "json_extract",
    "json_extract_path",
    "json_extract_path_text",
    "json_extract_scalar",
    "json_object",
    "json_object_agg",
    "json_object_keys",
    "json_query",
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
    "lower",
    "lpad",
    "ltrim",
    "make_date",
    "make_interval",
    "make_timestamp",
    "max",
    "md5",
    "median",
    "min",
    "minute",
    "mod",
    "mode",
    "month",
    "now",
    "nth_value",
    "ntile",
    "nullif",
    "nvl",
    "nvl2",
    "octet_length",
    "overlay",
    "percent_rank",
    "percentile_cont",
    "percentile_disc",
    "pi",
    "position",
    "pow",
    "power",
    "quarter",
    "radians",
    "rank",
    "regexp_count",
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
    "round",
    "row",
    "row_number",
    "row_to_json",
    "rpad",
    "rtrim",
    "safe_cast",
    "safe_divide",
    "second",
    "session_user",
    "sha1",
    "sha256",
    "sign",
    "sin",
    "space",
    "split_part",
    "sqrt",
    "square",
    "starts_with",
    "statement_timestamp",
    "stddev",
    "stddev_pop",
    "stddev_samp",
    "strftime",
    "string_agg",
    "string_to_array",
    "strpos",
    "substr",
    "substring",
    "sum",
    "sysdate",
    "tan",
    "time",
    "timestamp",
    "timestamp_diff",
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
    "transaction_timestamp",
    "translate",
    "trim",
    "trunc",
    "try_cast",
    "try_convert",
    "typeof",
    "ucase",
    "unistr",
    "unix_timestamp",
    "unixepoch",
    "unnest",
    "upper",
    "user",
    "utc_timestamp",
    "var_pop",
    "var_samp",
    "variance",
    "version",
    "week",
    "width_bucket",
    "year",
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
