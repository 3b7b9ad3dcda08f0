//! `ConnectorRateLimit`: call quotas per (connector, user).

mod bucket;
mod database;
mod gcra;
mod memory;

use std::collections::HashMap;
use std::time::Duration;

use hooks_runtime::{Hook, HookContext, HookError, HookOutcome, HookResult, PreToolUseHook};
use serde::Deserialize;
use serde_json::Value;
use tokio::time::Instant;

use crate::config::{ConfigError, parse_config};
use crate::storage::Database;
use crate::text::fold_identifier;
pub use bucket::{connector_key, user_key};
pub use database::DatabaseLimiter;
pub use gcra::{Admission, Quota, admit};
pub use memory::MemoryLimiter;

/// Config of [`ConnectorRateLimit`]. In a config file, the shorthand
/// `per_user_per_minute: N` stands for `default: {calls: N, period: 60s}`,
/// and `connectors:` gives connectors their own quotas:
///
/// ```yaml
/// - name: connector_rate_limit
///   config:
///     default: { calls: 10, period: 1m }
///     connectors:
///       oa: { calls: 3, period: 1m }
///       crm: { calls: 100, period: 1h }
///     backend: database
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(try_from = "RateLimitFile")]
pub struct ConnectorRateLimitConfig {
    /// The quota of connectors not listed in `connectors` (default 10 per 60 s).
    pub default: Quota,
    /// Quotas by connector name, compared [folded](fold_identifier) like the
    /// connectors of calls (`OA` and `oa` are one entry; giving both is an
    /// error). A tool without `__` is its own connector, so a tool name works
    /// here too.
    pub connectors: HashMap<String, Quota>,
    /// Priority (default 20).
    pub priority: i32,
    /// Where the state lives: `memory` (default; one process) or `database`
    /// (shared by every replica using the same database).
    pub backend: LimiterBackend,
}

/// [`ConnectorRateLimitConfig`] as a config file writes it.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RateLimitFile {
    default: Option<Quota>,
    per_user_per_minute: Option<std::num::NonZeroU32>,
    #[serde(default)]
    connectors: HashMap<String, Quota>,
    priority: Option<i32>,
    #[serde(default)]
    backend: LimiterBackend,
}

impl TryFrom<RateLimitFile> for ConnectorRateLimitConfig {
    type Error = &'static str;

    fn try_from(file: RateLimitFile) -> Result<Self, Self::Error> {
        let default = match (file.default, file.per_user_per_minute) {
            (Some(_), Some(_)) => {
                return Err("give either `per_user_per_minute` or `default`, not both");
            }
            (Some(quota), None) => quota,
            (None, Some(calls)) => Quota {
                calls: calls.get(),
                period: Duration::from_secs(60),
            },
            (None, None) => Quota::default(),
        };
        Ok(ConnectorRateLimitConfig {
            default,
            connectors: file.connectors,
            priority: file.priority.unwrap_or(20),
            backend: file.backend,
        })
    }
}

/// Where [`ConnectorRateLimit`] keeps its state.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LimiterBackend {
    /// In this process ([`MemoryLimiter`]).
    #[default]
    Memory,
    /// In the database ([`DatabaseLimiter`]), so replicas share one limit.
    Database,
}

/// The state behind one hook.
enum Limiter {
    Memory {
        limiter: MemoryLimiter,
        origin: Instant,
    },
    Database(DatabaseLimiter),
}

impl Default for ConnectorRateLimitConfig {
    fn default() -> Self {
        ConnectorRateLimitConfig {
            default: Quota::default(),
            connectors: HashMap::new(),
            priority: 20,
            backend: LimiterBackend::Memory,
        }
    }
}

/// A pre hook limiting each user's calls to each connector (GCRA).
///
/// Every call is counted: against its connector as [`connector_key`] derives
/// it (`metadata.connector`, else the tool name up to `__`, else the whole
/// tool name), for its user as [`user_key`] folds it. Both are compared after
/// NFKC, case folding and removal of invisible characters, so `OA__pay`,
/// `ｏａ__pay` and `__oa__pay` share the quota of `oa`. A call this hook
/// blocks consumes no quota, and the block says when to retry. A call it
/// allows is counted then and there: if a later pre hook blocks it, or the
/// caller stops waiting before the tool runs, the quota stays spent. In a
/// dry run ([`HookRegistry::explain`](hooks_runtime::HookRegistry::explain))
/// it checks the quota without spending any. State lives in memory (one process, paused-clock friendly)
/// or in the database (every replica shares one limit; the database's clock
/// decides). A database error blocks the call (fail closed).
pub struct ConnectorRateLimit {
    config: ConnectorRateLimitConfig,
    /// `config.connectors` with folded names.
    quotas: HashMap<String, Quota>,
    limiter: Limiter,
}

impl ConnectorRateLimit {
    /// The name config files use.
    pub const NAME: &'static str = "connector_rate_limit";

    /// A hook with this config and fresh in-memory state; a config asking for
    /// the `database` backend is an error here (use [`with_database`](Self::with_database)).
    pub fn new(config: ConnectorRateLimitConfig) -> Result<Self, ConfigError> {
        Self::build(config, None)
    }

    /// A hook with this config; `database` serves the `database` backend.
    pub fn with_database(
        config: ConnectorRateLimitConfig,
        database: Database,
    ) -> Result<Self, ConfigError> {
        Self::build(config, Some(database))
    }

    /// A hook with this config, using `database` if the config's backend is `database`.
    pub fn build(
        config: ConnectorRateLimitConfig,
        database: Option<Database>,
    ) -> Result<Self, ConfigError> {
        for (connector, quota) in std::iter::once(("(default)", &config.default)).chain(
            config
                .connectors
                .iter()
                .map(|(name, quota)| (name.as_str(), quota)),
        ) {
            if quota.calls == 0 || quota.period.is_zero() {
                return Err(ConfigError::new(
                    Self::NAME,
                    format!(
                        "the quota of {connector} must allow at least one call in a non-zero period"
                    ),
                ));
            }
        }
        let mut quotas = HashMap::new();
        for (connector, quota) in &config.connectors {
            let folded = fold_identifier(connector).into_owned();
            if quotas.insert(folded.clone(), *quota).is_some() {
                return Err(ConfigError::new(
                    Self::NAME,
                    format!(
                        "two quotas for connector `{folded}` (names are compared ignoring case, \
                         width and invisible characters); keep one"
                    ),
                ));
            }
        }
        let limiter = match (config.backend, database) {
            (LimiterBackend::Memory, _) => Limiter::Memory {
                limiter: MemoryLimiter::new(),
                origin: Instant::now(),
            },
            (LimiterBackend::Database, Some(database)) => {
                Limiter::Database(DatabaseLimiter::new(database))
            }
            (LimiterBackend::Database, None) => {
                return Err(ConfigError::new(
                    Self::NAME,
                    "`backend: database` needs a database; give the hook one or use `backend: memory`",
                ));
            }
        };
        Ok(ConnectorRateLimit {
            config,
            quotas,
            limiter,
        })
    }

    /// Builds the hook from its config-file form (`null` for defaults);
    /// `database` serves the `database` backend. The shorthand
    /// `per_user_per_minute: N` stands for `default: {calls: N, period: 1m}`.
    pub fn from_config(config: &Value, database: Option<Database>) -> Result<Self, ConfigError> {
        Self::build(parse_config(Self::NAME, config)?, database)
    }

    /// How long `user` must wait before calling `connector`, or `None` when the
    /// call is admitted (and counted, unless `dry`).
    async fn check(
        &self,
        connector: &str,
        user: &str,
        quota: &Quota,
        dry: bool,
    ) -> Result<Option<Duration>, HookError> {
        match &self.limiter {
            Limiter::Memory { limiter, origin } => {
                Ok(memory_check(limiter, *origin, connector, user, quota, dry))
            }
            Limiter::Database(limiter) if dry => limiter
                .peek(connector, user, quota)
                .await
                .map_err(HookError::new),
            Limiter::Database(limiter) => limiter
                .check(connector, user, quota)
                .await
                .map_err(HookError::new),
        }
    }

    fn quota(&self, connector: &str) -> &Quota {
        self.quotas.get(connector).unwrap_or(&self.config.default)
    }
}

impl Hook for ConnectorRateLimit {
    fn name(&self) -> &str {
        Self::NAME
    }

    fn priority(&self) -> i32 {
        self.config.priority
    }

    /// The in-memory limiter decides at once; the shared one asks its
    /// database. In a dry run the quota is checked, not spent.
    fn execute<'a>(&'a self, ctx: &'a HookContext) -> HookOutcome<'a> {
        let dry = hooks_runtime::trace::in_dry_run();
        if let Limiter::Memory { limiter, origin } = &self.limiter {
            let (connector, user) = (connector_key(ctx), user_key(ctx));
            let quota = self.quota(&connector);
            let retry_after = memory_check(limiter, *origin, &connector, &user, quota, dry);
            return HookOutcome::Ready(Ok(verdict(&connector, &user, quota, retry_after)));
        }
        HookOutcome::pending(async move {
            let (connector, user) = (connector_key(ctx), user_key(ctx));
            let quota = self.quota(&connector);
            let retry_after = self.check(&connector, &user, quota, dry).await?;
            Ok(verdict(&connector, &user, quota, retry_after))
        })
    }

    fn description(&self) -> Option<&str> {
        Some("per-connector, per-user call quotas")
    }
}

impl PreToolUseHook for ConnectorRateLimit {}

/// Asks the in-memory limiter, at the tokio clock's current time; `dry`
/// leaves the state as it is.
fn memory_check(
    limiter: &MemoryLimiter,
    origin: Instant,
    connector: &str,
    user: &str,
    quota: &Quota,
    dry: bool,
) -> Option<Duration> {
    let now = Instant::now().saturating_duration_since(origin);
    let admission = if dry {
        limiter.peek(connector, user, quota, now)
    } else {
        limiter.check(connector, user, quota, now)
    };
    match admission {
        Admission::Allow { .. } => None,
        Admission::Deny { retry_after } => Some(retry_after),
    }
}

/// Allows the call, or blocks it saying when to retry.
fn verdict(
    connector: &str,
    user: &str,
    quota: &Quota,
    retry_after: Option<Duration>,
) -> HookResult {
    match retry_after {
        None => HookResult::allow(),
        Some(retry_after) => HookResult::block(format!(
            "rate limit exceeded: {} calls per {:?} for connector `{connector}` and user `{}`; retry in {:.1}s",
            quota.calls,
            quota.period,
            user,
            retry_after.as_secs_f64().max(0.1)
        )),
    }
}
