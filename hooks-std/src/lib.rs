//! Standard hooks for `hooks`.
//!
//! * [`approval_gate::ApprovalGate`] — the durable human-approval gate, with its
//!   [`approval_gate::ConfirmationStore`], [`approval_gate::channel::Channel`]s (Feishu/Lark, Slack)
//!   and a verified callback router.
//! * [`AuditLog`] — one durable row per attempted call (group commit).
//! * [`ReadOnlyGuard`] — no writes while an org is read-only (SQL parsed by
//!   `sqlparser`).
//! * [`ResultTruncate`] — long results cut on a character boundary.
//! * [`ArgsSchema`] — a tool's args must match its JSON Schema (runs
//!   first, so later guards see the declared types).
//! * [`ConnectorRateLimit`] — GCRA quotas per (connector, user), a
//!   default and per-connector quotas (`connectors:`), in memory or shared
//!   through the database.
//!
//! Each hook, channel and backend is a cargo feature (all on by default
//! here; the `hooks` facade forwards each under the same name):
//!
//! | feature | brings |
//! |---|---|
//! | `approval-gate` | [`approval_gate`]: the approval gate, its store, `Approvals` and callback router |
//! | `feishu`, `slack`, `web` | the approval channels of those names |
//! | `audit-log` | [`AuditLog`] |
//! | `connector-rate-limit` | [`ConnectorRateLimit`] |
//! | `result-truncate` | [`ResultTruncate`] |
//! | `readonly-guard` | [`ReadOnlyGuard`] and its SQL classifier |
//! | `args-schema` | [`ArgsSchema`] |
//! | `sqlite`, `postgres` | [`Database`] on that backend |
//!
//! `approval-gate`, `audit-log` and `connector-rate-limit` keep state in the database and need a
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
//! | `approval_gate` | [`ApprovalGateConfig`](approval_gate::ApprovalGateConfig) | `when`, `require_confirmation_for_all`, `timeout`, `approver_scope`, `approvers`, `channel`, `feishu`, `slack`, `priority` |
//! | `args_schema` | [`ArgsSchemaConfig`] | `schemas`, `require_schema`, `max_depth`, `priority` |
//! | `audit_log` | [`AuditLogConfig`] | `redact_keys`, `group_commit`, `max_batch`, `timeout`, `fail_open` |
//! | `connector_rate_limit` | [`ConnectorRateLimitConfig`] | `default`, `per_user_per_minute`, `connectors` (per-connector quotas), `backend`, `priority` |
//! | `readonly_guard` | [`ReadOnlyGuardConfig`] | `sql_tools`, `sql_arg_keys`, `check_all_string_args`, `dialect`, `allow_functions`, `priority` |
//! | `result_truncate` | [`ResultTruncateConfig`] | `max_chars`, `priority` |
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
    any(
        feature = "approval-gate",
        feature = "audit-log",
        feature = "connector-rate-limit"
    ),
    not(any(feature = "sqlite", feature = "postgres"))
))]
compile_error!(
    "hooks-std: the `approval-gate`, `audit-log` and `connector-rate-limit` features keep their state in a \
     database; turn on a backend too: `sqlite` (embedded) or `postgres`"
);

#[cfg(feature = "approval-gate")]
pub mod approval_gate;
#[cfg(feature = "args-schema")]
pub mod args_schema;
#[cfg(feature = "audit-log")]
pub mod audit_log;
mod config;
#[cfg(feature = "connector-rate-limit")]
pub mod connector_rate_limit;
pub mod factory;
pub mod readonly_guard;
#[cfg(feature = "result-truncate")]
pub mod result_truncate;
#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub mod storage;
pub mod text;

/// The failpoint crate behind [`approval_gate::crash_points`] (feature `failpoints`):
/// tests configure failpoints with it (`fail::cfg`, `fail::FailScenario`).
#[cfg(feature = "failpoints")]
pub use fail;

#[cfg(feature = "args-schema")]
pub use args_schema::{ArgsSchema, ArgsSchemaBuilder, ArgsSchemaConfig, SchemaError};
#[cfg(feature = "audit-log")]
pub use audit_log::{AuditEntry, AuditLog, AuditLogConfig, AuditOutcome, AuditRow, Redactor, Sent};
pub use config::ConfigError;
#[cfg(feature = "connector-rate-limit")]
pub use connector_rate_limit::{
    ConnectorRateLimit, ConnectorRateLimitConfig, DatabaseLimiter, LimiterBackend, MemoryLimiter,
    Quota,
};
#[cfg(feature = "approval-gate")]
pub use factory::APPROVALS;
#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub use factory::{DATABASE, offline_resources};
pub use factory::{
    FactoryError, ORG_MODES, REQUIRE_CONFIRMATION_FOR_ALL, STD_HOOK_NAMES, build_std_hook,
};
#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub use readonly_guard::DatabaseOrgModes;
#[cfg(feature = "readonly-guard")]
pub use readonly_guard::{
    FunctionAllowlist, ReadOnlyGuard, ReadOnlyGuardConfig, SqlClassifier, SqlDialect, SqlVerdict,
    classify_sql,
};
pub use readonly_guard::{OrgModeError, OrgModeSource, StaticOrgModes};
#[cfg(feature = "result-truncate")]
pub use result_truncate::{ResultTruncate, ResultTruncateConfig, truncate_text};
#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub use storage::{Database, DatabaseOptions, StorageError};
