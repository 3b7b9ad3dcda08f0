//! `AuditLog`: one durable row in `connector_call_logs` per attempted call.

mod insert;
mod query;
mod redact;
mod row;
mod writer;

use std::time::Duration;

use hooks_runtime::{
    ErrorPolicy, HookError, HookFuture, HookResult,
    config::ConfigDuration,
    observer::{CallObserver, CallRecord},
};
use serde::Deserialize;
use serde_json::Value;

use crate::config::{ConfigError, parse_config};
use crate::storage::Database;
pub use query::AuditEntry;
pub use redact::{DEFAULT_REDACT_KEYS, MAX_DEPTH, NESTED_TOO_DEEPLY, REDACTED, Redactor};
pub use row::{AuditOutcome, AuditRow, Sent};
use writer::AuditWriter;

/// Config of [`AuditLog`].
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct AuditLogConfig {
    /// Key names whose values are replaced by `"[redacted]"` at any depth
    /// (see [`Redactor`] for how they match); default
    /// [`DEFAULT_REDACT_KEYS`] (password, passwd, pwd, secret, token, api_key,
    /// private_key, credential, auth, authorization, bearer, cookie, session,
    /// refresh_token, client_secret, …). Giving a list replaces the defaults;
    /// credentials inside values (`Bearer …`, `?access_token=…`, PEM keys, …)
    /// are masked either way.
    pub redact_keys: Vec<String>,
    /// Commit the rows of concurrent calls together (default true): one
    /// writer task commits whatever has queued as one transaction. With
    /// `false` every call commits its own transaction.
    pub group_commit: bool,
    /// Most rows per shared transaction (default 256).
    pub max_batch: usize,
    /// How long a call may wait for its row to commit (default `"10s"`).
    #[serde(deserialize_with = "ConfigDuration::text")]
    pub timeout: Duration,
    /// When the write fails, let the result through anyway (default false:
    /// the result is withheld).
    pub fail_open: bool,
}

impl Default for AuditLogConfig {
    fn default() -> Self {
        AuditLogConfig {
            redact_keys: DEFAULT_REDACT_KEYS
                .iter()
                .map(|name| (*name).to_owned())
                .collect(),
            group_commit: true,
            max_batch: 256,
            timeout: Duration::from_secs(10),
            fail_open: false,
        }
    }
}

/// Writes one row to `connector_call_logs` for every attempted tool call.
///
/// It is a [`CallObserver`], not a post hook, so it sees every path — allowed,
/// blocked by any pre hook, tool error, result withheld by a post hook, a
/// panicking or timed-out hook — exactly once. The row is committed before the
/// observation is returned; concurrent calls share transactions (group
/// commit). If the write fails, the result is withheld unless the config says
/// `fail_open`. Register it with
/// [`HookRegistryBuilder::observer`](hooks_runtime::HookRegistryBuilder::observer);
/// observers run in registration order, so register it last to record what
/// the others decided.
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// use std::sync::Arc;
/// use hooks::{HookContext, HookRegistry};
/// use hooks::std_hooks::{AuditLog, Database};
/// use serde_json::{json, Value};
///
/// let db = Database::in_memory().await.unwrap();
/// let audit = Arc::new(AuditLog::new(db.clone()));
/// let registry = HookRegistry::builder().observer(audit).build().unwrap();
/// let ctx = HookContext::tool_call("crm__lookup", json!({"id": 7, "api_key": "k"}));
/// registry.run_tool_call(ctx, async |_: &Value| Ok::<_, String>(json!("found"))).await;
/// # });
/// ```
pub struct AuditLog {
    writer: AuditWriter,
    redactor: Redactor,
    timeout: Duration,
    policy: ErrorPolicy,
}

impl AuditLog {
    /// The name config files use.
    pub const NAME: &'static str = "audit_log";

    /// An audit log with default config writing to `database`.
    pub fn new(database: Database) -> Self {
        Self::with_config(database, AuditLogConfig::default()).expect("the default config is valid")
    }

    /// An audit log with this config.
    pub fn with_config(database: Database, config: AuditLogConfig) -> Result<Self, ConfigError> {
        if config.max_batch == 0 {
            return Err(ConfigError::new(
                Self::NAME,
                "`max_batch` must be at least 1",
            ));
        }
        if config.timeout.is_zero() {
            return Err(ConfigError::new(Self::NAME, "`timeout` must not be zero"));
        }
        Ok(AuditLog {
            writer: if config.group_commit {
                AuditWriter::queued(database, config.max_batch)
            } else {
                AuditWriter::PerRow(database)
            },
            redactor: Redactor::new(&config.redact_keys),
            timeout: config.timeout,
            policy: if config.fail_open {
                ErrorPolicy::FailOpen
            } else {
                ErrorPolicy::FailClosed
            },
        })
    }

    /// Builds the hook from its config-file form (`null` for defaults).
    pub fn from_config(database: Database, config: &Value) -> Result<Self, ConfigError> {
        Self::with_config(database, parse_config(Self::NAME, config)?)
    }
}

impl CallObserver for AuditLog {
    fn name(&self) -> &str {
        Self::NAME
    }

    fn observe<'a>(&'a self, record: CallRecord<'a>) -> HookFuture<'a> {
        let row = AuditRow::from_record(&record, &self.redactor);
        Box::pin(async move {
            self.writer
                .write(row)
                .await
                .map_err(|message| HookError::new(format!("audit write failed: {message}")))?;
            Ok(HookResult::allow())
        })
    }

    fn timeout(&self) -> Duration {
        self.timeout
    }

    fn on_error(&self) -> ErrorPolicy {
        self.policy
    }
}
