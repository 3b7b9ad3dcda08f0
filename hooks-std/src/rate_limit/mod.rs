//! `ConnectorRateLimitHook`: call quotas per (connector, user).

mod gcra;
mod memory;

use std::collections::HashMap;
use std::sync::Arc;

use hooks_runtime::{Hook, HookContext, HookFuture, HookResult, PreToolUseHook};
use serde::Deserialize;
use serde_json::Value;
use tokio::time::Instant;

use crate::config::{ConfigError, parse_config};
pub use gcra::{Admission, Quota, admit};
pub use memory::MemoryLimiter;

/// Config of [`ConnectorRateLimitHook`].
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RateLimitConfig {
    /// The quota of connectors not listed in `connectors` (default 10 per 60 s).
    pub default: Quota,
    /// Quotas by connector name.
    pub connectors: HashMap<String, Quota>,
    /// Priority (default 20).
    pub priority: i32,
}

impl Default for RateLimitConfig {
    fn default() -> Self {
        RateLimitConfig {
            default: Quota::default(),
            connectors: HashMap::new(),
            priority: 20,
        }
    }
}

/// A pre hook limiting each user's calls to each connector (GCRA).
///
/// It triggers on calls that have a connector (`connector__action` names or
/// `metadata.connector`). A blocked call consumes no quota, and the block says
/// when to retry. This backend keeps state in memory (one process); replicas
/// sharing one limit need the database backend, which is not built yet.
pub struct ConnectorRateLimitHook {
    config: RateLimitConfig,
    limiter: Arc<MemoryLimiter>,
    origin: Instant,
}

impl ConnectorRateLimitHook {
    /// The name config files use.
    pub const NAME: &'static str = "connector_rate_limit";

    /// A hook with this config and fresh in-memory state.
    pub fn new(config: RateLimitConfig) -> Result<Self, ConfigError> {
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
        Ok(ConnectorRateLimitHook {
            config,
            limiter: Arc::new(MemoryLimiter::new()),
            origin: Instant::now(),
        })
    }

    /// Builds the hook from its config-file form (`null` for defaults).
    pub fn from_config(config: &Value) -> Result<Self, ConfigError> {
        Self::new(parse_config(Self::NAME, config)?)
    }

    fn quota(&self, connector: &str) -> &Quota {
        self.config
            .connectors
            .get(connector)
            .unwrap_or(&self.config.default)
    }
}

impl Hook for ConnectorRateLimitHook {
    fn name(&self) -> &str {
        Self::NAME
    }

    fn priority(&self) -> i32 {
        self.config.priority
    }

    fn should_trigger(&self, ctx: &HookContext) -> bool {
        ctx.connector().is_some()
    }

    fn execute<'a>(&'a self, ctx: &'a HookContext) -> HookFuture<'a> {
        Box::pin(async move {
            let connector = ctx.connector().unwrap_or_default();
            let quota = self.quota(connector);
            let now = Instant::now().saturating_duration_since(self.origin);
            Ok(
                match self.limiter.check(connector, &ctx.user_id, quota, now) {
                    Admission::Allow { .. } => HookResult::allow(),
                    Admission::Deny { retry_after } => HookResult::block(format!(
                        "rate limit exceeded: {} calls per {:?} for connector `{connector}` and user `{}`; retry in {:.1}s",
                        quota.calls,
                        quota.period,
                        ctx.user_id,
                        retry_after.as_secs_f64().max(0.1)
                    )),
                },
            )
        })
    }

    fn when_source(&self) -> Option<&str> {
        Some("connector exists")
    }

    fn description(&self) -> Option<&str> {
        Some("per-connector, per-user call quotas")
    }
}

impl PreToolUseHook for ConnectorRateLimitHook {}
