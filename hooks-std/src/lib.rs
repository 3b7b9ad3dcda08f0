//! Standard hooks for `hooks`.
//!
//! * [`gate::ApprovalGate`] — the durable human-approval gate, with its
//!   [`gate::ConfirmationStore`], [`gate::channel::Channel`]s (Feishu/Lark, Slack)
//!   and a verified callback router.
//! * [`AuditLogHook`] — one durable row per attempted call (group commit).
//! * [`ReadOnlyGuard`] — no writes while an org is read-only (SQL parsed by
//!   `sqlparser`).
//! * [`ResultTruncateHook`] — long results cut on a character boundary.
//! * [`ArgsSchemaHook`] — a tool's args must match its JSON Schema (runs
//!   first, so later guards see the declared types).
//! * [`ConnectorRateLimitHook`] — GCRA quotas per (connector, user), a
//!   default and per-connector quotas (`connectors:`), in memory or shared
//!   through the database.
//!
//! Each hook, channel and backend is a cargo feature (all on by default
//! here; the `hooks` facade forwards each under the same name):
//!
//! | feature | brings |
//! |---|---|
//! | `gate` | [`gate`]: the approval gate, its store, `Approvals` and callback router |
//! | `feishu`, `slack`, `web` | the approval channels of those names |
//! | `audit` | [`AuditLogHook`] |
//! | `rate-limit` | [`ConnectorRateLimitHook`] |
//! | `truncate` | [`ResultTruncateHook`] |
//! | `readonly` | [`ReadOnlyGuard`] and its SQL classifier |
//! | `args-schema` | [`ArgsSchemaHook`] |
//! | `sqlite`, `postgres` | [`Database`] on that backend |
//!
//! `gate`, `audit` and `rate-limit` keep state in the database and need a
//! backend. A config that names a hook, a channel or a database URL whose
//! feature is off is refused with the feature to turn on.
//!
//! Storage is one sqlx pool ([`Database`]): SQLite by default, PostgreSQL for
//! several replicas, migrations embedded. Each hook builds from its serde
//! config (unknown keys are errors), also by name through [`build_std_hook`].
//!
//! In an agent config file, `hooks.class_hooks` names each hook with its
//! config; the keys are the fields of its config type:
//!
//! | name | config | keys |
//! |---|---|---|
//! | `approval_gate` | [`ApprovalGateConfig`](gate::ApprovalGateConfig) | `when`, `require_confirmation_for_all`, `timeout`, `approver_scope`, `approvers`, `channel`, `feishu`, `slack`, `priority` |
//! | `args_schema` | [`ArgsSchemaConfig`] | `schemas`, `require_schema`, `max_depth`, `priority` |
//! | `audit_log` | [`AuditLogConfig`] | `redact_keys`, `group_commit`, `max_batch`, `timeout`, `fail_open` |
//! | `connector_rate_limit` | [`RateLimitConfig`] | `default`, `per_user_per_minute`, `connectors` (per-connector quotas), `backend`, `priority` |
//! | `readonly_guard` | [`ReadOnlyConfig`] | `sql_tools`, `sql_arg_keys`, `check_all_string_args`, `dialect`, `allow_functions`, `priority` |
//! | `result_truncate` | [`TruncateConfig`] | `max_chars`, `priority` |
//!
//! Below, every key's type, default and meaning, with an example agent
//! config per hook.
//!
//! ```
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! use std::sync::Arc;
//! use hooks::{HookContext, HookRegistry};
//! use hooks::std_hooks::{ReadOnlyGuard, StaticOrgModes};
//! use serde_json::{json, Value};
//!
//! let modes = Arc::new(StaticOrgModes::with_read_only(["acme"]));
//! let registry = HookRegistry::builder().pre(ReadOnlyGuard::new(modes)).build().unwrap();
//! let ctx = HookContext::tool_call("sql_exec", json!({"q": "DELETE FROM invoices"})).with_org("acme");
//! let report = registry.run_tool_call(ctx, async |_: &Value| Ok::<_, String>(json!("deleted"))).await;
//! assert!(!report.tool_ran);
//! # });
//! ```
//!
#![doc = include_str!("../../docs/std-hooks.md")]

#[cfg(all(
    any(feature = "gate", feature = "audit", feature = "rate-limit"),
    not(any(feature = "sqlite", feature = "postgres"))
))]
compile_error!(
    "hooks-std: the `gate`, `audit` and `rate-limit` features keep their state in a \
     database; turn on a backend too: `sqlite` (embedded) or `postgres`"
);

#[cfg(feature = "audit")]
pub mod audit;
mod config;
pub mod factory;
#[cfg(feature = "gate")]
pub mod gate;
#[cfg(feature = "rate-limit")]
pub mod rate_limit;
pub mod readonly;
#[cfg(feature = "args-schema")]
pub mod schema;
#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub mod storage;
pub mod text;
#[cfg(feature = "truncate")]
pub mod truncate;

/// The failpoint crate behind [`gate::crash_points`] (feature `failpoints`):
/// tests configure failpoints with it (`fail::cfg`, `fail::FailScenario`).
#[cfg(feature = "failpoints")]
pub use fail;

#[cfg(feature = "audit")]
pub use audit::{AuditEntry, AuditLogConfig, AuditLogHook, AuditOutcome, AuditRow, Redactor, Sent};
pub use config::ConfigError;
#[cfg(feature = "gate")]
pub use factory::APPROVALS;
#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub use factory::{DATABASE, offline_resources};
pub use factory::{FactoryError, ORG_MODES, STD_HOOK_NAMES, build_std_hook};
#[cfg(feature = "rate-limit")]
pub use rate_limit::{
    ConnectorRateLimitHook, DatabaseLimiter, LimiterBackend, MemoryLimiter, Quota, RateLimitConfig,
};
#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub use readonly::DatabaseOrgModes;
#[cfg(feature = "readonly")]
pub use readonly::{
    FunctionAllowlist, ReadOnlyConfig, ReadOnlyGuard, SqlClassifier, SqlDialect, SqlVerdict,
    classify_sql,
};
pub use readonly::{OrgModeError, OrgModeSource, StaticOrgModes};
#[cfg(feature = "args-schema")]
pub use schema::{ArgsSchemaBuilder, ArgsSchemaConfig, ArgsSchemaHook, SchemaError};
#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub use storage::{Database, DatabaseOptions, StorageError};
#[cfg(feature = "truncate")]
pub use truncate::{ResultTruncateHook, TruncateConfig, truncate_text};
