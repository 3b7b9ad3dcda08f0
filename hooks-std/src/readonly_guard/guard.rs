//! The guard: a SQL tool's call is blocked while its org is read-only,
//! unless every statement in its arguments is a read.

use std::sync::Arc;

use hooks_runtime::{
    Hook, HookContext, HookOutcome, HookPoint, HookResult, PreToolUseHook, when::When,
};
use serde::{Deserialize, Deserializer};
use serde_json::Value;

use super::org_mode::OrgModeSource;
use super::sql::{self, FunctionAllowlist, SqlClassifier, SqlDialect, SqlVerdict};
use super::sql_arguments;
use crate::config::{ConfigError, parse_config};

/// The block reason the LLM sees.
pub const READ_ONLY_REASON: &str = "Org is in read-only mode — write blocked.";

/// Config of [`ReadOnlyGuard`].
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ReadOnlyGuardConfig {
    /// Which tools take SQL (a `when` expression); default `tool_name starts_with "sql_"`.
    pub sql_tools: String,
    /// Argument keys that may hold SQL text; every one present is
    /// classified. Only these top-level keys are read unless
    /// `check_all_string_args` is on, so the list must name every argument
    /// the tool runs as SQL.
    pub sql_arg_keys: Vec<String>,
    /// Also classify every other string argument of a SQL tool, nested ones
    /// included, that looks like SQL (holds a `;` or a word that starts a
    /// statement, e.g. `select`, `delete`, `set`, `use`, or starts with any
    /// SQL keyword followed by more text). For tools that take SQL under
    /// keys not known in advance; prose in an argument that contains such a
    /// word then counts as a write, and so do args with more than
    /// [`MAX_ARGUMENT_VALUES`](super::MAX_ARGUMENT_VALUES) values. Default false.
    pub check_all_string_args: bool,
    /// The dialect (`postgresql`) or dialects (`[postgresql, sqlite]`) the
    /// SQL tools run against. Absent: every dialect the guard knows, which is
    /// the safe choice when the database is not known; naming the real one
    /// lets through reads only it understands (`total::text`).
    #[serde(deserialize_with = "dialect_names")]
    pub dialect: Option<Vec<String>>,
    /// The URL of the database the SQL tools run against, instead of
    /// `dialect`: its scheme names the dialect (`postgres://…`,
    /// `mysql+pymysql://…`, `jdbc:sqlserver://…`). `$NAME` or `${NAME}`
    /// reads it from that environment variable when the guard is built.
    /// Only the scheme is read, and no message repeats the URL.
    pub database_url: Option<String>,
    /// Functions, besides the built-in read-only list, that a read may call
    /// (`my_report` in any schema, `reports.monthly` exactly).
    pub allow_functions: Vec<String>,
    /// Priority (default 5).
    pub priority: i32,
}

impl Default for ReadOnlyGuardConfig {
    fn default() -> Self {
        ReadOnlyGuardConfig {
            sql_tools: r#"tool_name starts_with "sql_""#.to_owned(),
            sql_arg_keys: ["sql", "query", "q", "statement"]
                .map(str::to_owned)
                .to_vec(),
            check_all_string_args: false,
            dialect: None,
            database_url: None,
            allow_functions: Vec::new(),
            priority: 5,
        }
    }
}

/// `dialect: postgresql` or `dialect: [postgresql, sqlite]`.
fn dialect_names<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<Vec<String>>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Names {
        One(String),
        Several(Vec<String>),
    }
    match Option::<Names>::deserialize(deserializer) {
        Ok(None) => Ok(None),
        Ok(Some(Names::One(name))) => Ok(Some(vec![name])),
        Ok(Some(Names::Several(names))) => Ok(Some(names)),
        Err(_) => Err(serde::de::Error::custom(
            "`dialect` must be a dialect name or a list of names",
        )),
    }
}

/// The dialect `database_url` names: the URL, or the one in the
/// environment variable `$NAME` / `${NAME}`, read by its scheme.
fn dialect_of_url(url: &str) -> Result<SqlDialect, ConfigError> {
    let error = |message: String| ConfigError::new(ReadOnlyGuard::NAME, message);
    let variable = url
        .strip_prefix("${")
        .and_then(|rest| rest.strip_suffix('}'))
        .or_else(|| url.strip_prefix('$'));
    let url = match variable {
        Some(name) => std::env::var(name).map_err(|_| {
            error(format!(
                "`database_url` reads the environment variable {name}, which is not set (or \
                 not UTF-8); set it, or name the database with `dialect`"
            ))
        })?,
        None => url.to_owned(),
    };
    SqlDialect::from_database_url(&url).ok_or_else(|| {
        let scheme: String = url
            .split_once(':')
            .map(|(scheme, _)| scheme)
            .unwrap_or_default()
            .chars()
            .take(40)
            .collect();
        error(format!(
            "`database_url` has the scheme {scheme:?}, which names no database the guard \
             reads (postgres, mysql, mariadb, sqlite, mssql, sqlserver, bigquery, snowflake, \
             duckdb, redshift, clickhouse, hive, databricks); name the dialect with `dialect`"
        ))
    })
}

/// A pre hook that blocks writes while the call's org is read-only.
///
/// A call writes when, in this order: it is a SQL tool (per `sql_tools`) and
/// any of its SQL arguments writes under any configured dialect (see
/// [`SqlClassifier`]) — SQL that does not parse, a SQL tool without SQL
/// text, or a SQL argument that is not text counts as a write (fail
/// closed); or its metadata says so: `side_effects:
/// true`, or an HTTP `method`/`http_method` of POST, PUT, PATCH or DELETE.
/// `read_only: true` in metadata marks a non-SQL tool as a read; a tool with
/// no such facts is treated as a read. Only writes cost a mode lookup; a
/// failed lookup blocks.
pub struct ReadOnlyGuard {
    modes: Arc<dyn OrgModeSource>,
    sql_tools: When,
    sql_arg_keys: Vec<String>,
    check_all_string_args: bool,
    classifier: SqlClassifier,
    priority: i32,
}

impl ReadOnlyGuard {
    /// The name config files use.
    pub const NAME: &'static str = "readonly_guard";

    /// A guard with default config reading modes from `modes`.
    pub fn new(modes: Arc<dyn OrgModeSource>) -> Self {
        Self::with_config(modes, ReadOnlyGuardConfig::default())
            .expect("the default config is valid")
    }

    /// A guard with this config.
    pub fn with_config(
        modes: Arc<dyn OrgModeSource>,
        config: ReadOnlyGuardConfig,
    ) -> Result<Self, ConfigError> {
        let sql_tools = When::parse(&config.sql_tools, HookPoint::PreToolUse)
            .map_err(|errors| ConfigError::new(Self::NAME, format!("bad `sql_tools`: {errors}")))?;
        let dialects = match (&config.dialect, &config.database_url) {
            (Some(_), Some(_)) => {
                return Err(ConfigError::new(
                    Self::NAME,
                    "both `dialect` and `database_url` are set; keep one (the URL's scheme \
                     names the dialect)",
                ));
            }
            (None, Some(url)) => vec![dialect_of_url(url)?],
            (None, None) => SqlDialect::ALL.to_vec(),
            (Some(names), None) if names.is_empty() => {
                return Err(ConfigError::new(
                    Self::NAME,
                    "`dialect` is an empty list; name at least one dialect, \
                     or leave `dialect` out to check every dialect",
                ));
            }
            (Some(names), None) => names
                .iter()
                .map(|name| SqlDialect::from_name(name))
                .collect::<Result<_, _>>()
                .map_err(|error| ConfigError::new(Self::NAME, error.to_string()))?,
        };
        Ok(ReadOnlyGuard {
            modes,
            sql_tools,
            sql_arg_keys: config.sql_arg_keys,
            check_all_string_args: config.check_all_string_args,
            classifier: SqlClassifier::new(
                dialects,
                FunctionAllowlist::with_extra(&config.allow_functions),
            ),
            priority: config.priority,
        })
    }

    /// Builds the guard from its config-file form (`null` for defaults).
    pub fn from_config(modes: Arc<dyn OrgModeSource>, config: &Value) -> Result<Self, ConfigError> {
        Self::with_config(modes, parse_config(Self::NAME, config)?)
    }

    /// Why this call writes, or `None` for a read.
    pub fn write_reason(&self, ctx: &HookContext) -> Option<String> {
        if self.sql_tools.matches(ctx) {
            let texts = match sql_arguments::sql_texts(
                &ctx.tool_name,
                &ctx.tool_args,
                &self.sql_arg_keys,
                self.check_all_string_args,
            ) {
                Ok(texts) => texts,
                Err(reason) => return Some(reason),
            };
            let several = texts.len() > 1;
            let mut budget = sql::TOKEN_PARSES_PER_CALL;
            return texts.into_iter().find_map(|(key, sql)| {
                match self.classifier.classify_within(sql, &mut budget) {
                    SqlVerdict::Read => None,
                    SqlVerdict::Write(reason) | SqlVerdict::Unparsable(reason) if several => {
                        Some(format!("argument `{key}`: {reason}"))
                    }
                    SqlVerdict::Write(reason) | SqlVerdict::Unparsable(reason) => Some(reason),
                }
            });
        }
        if ctx.flag("side_effects") || ctx.flag("side_effect") {
            return Some("the tool has side effects".to_owned());
        }
        let method = ["http_method", "method"]
            .iter()
            .find_map(|key| ctx.metadata.get(*key).and_then(Value::as_str));
        if let Some(method) = method
            && ["POST", "PUT", "PATCH", "DELETE"]
                .iter()
                .any(|m| m.eq_ignore_ascii_case(method))
        {
            return Some(format!("HTTP {}", method.to_ascii_uppercase()));
        }
        None
    }
}

impl Hook for ReadOnlyGuard {
    fn name(&self) -> &str {
        Self::NAME
    }

    fn priority(&self) -> i32 {
        self.priority
    }

    fn should_trigger(&self, ctx: &HookContext) -> bool {
        !ctx.org_id.is_empty()
    }

    /// Calls that plainly read are let through at once. Writes need the
    /// org's mode, which may wait on its source; SQL is parsed once, here.
    fn execute<'a>(&'a self, ctx: &'a HookContext) -> HookOutcome<'a> {
        if !self.sql_tools.matches(ctx) && self.write_reason(ctx).is_none() {
            return HookOutcome::Ready(Ok(HookResult::allow()));
        }
        HookOutcome::pending(async move {
            let Some(reason) = self.write_reason(ctx) else {
                return Ok(HookResult::allow());
            };
            match self.modes.is_read_only(&ctx.org_id).await {
                Ok(false) => {
                    Ok(HookResult::allow().with_side_effect(format!("write allowed: {reason}")))
                }
                Ok(true) => Ok(HookResult::block(format!("{READ_ONLY_REASON} ({reason})"))
                    .with_side_effect(format!("blocked write: {reason}"))),
                Err(error) => Ok(HookResult::block(format!(
                    "{error}; the write is blocked because the read-only guard fails closed"
                ))),
            }
        })
    }

    fn when_source(&self) -> Option<&str> {
        Some("org_id exists")
    }

    fn description(&self) -> Option<&str> {
        Some("blocks writes while the org is read-only")
    }
}

impl PreToolUseHook for ReadOnlyGuard {}
