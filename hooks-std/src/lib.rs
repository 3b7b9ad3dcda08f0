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
//! `docs/std-hooks.md` in the repository gives every key's type, default
//! and meaning, with an example agent config per hook.
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

pub mod audit;
mod config;
pub mod factory;
pub mod gate;
pub mod rate_limit;
pub mod readonly;
#[cfg(feature = "args-schema")]
pub mod schema;
pub mod storage;
pub mod text;
pub mod truncate;

/// The failpoint crate behind [`gate::crash_points`] (feature `failpoints`):
/// tests configure failpoints with it (`fail::cfg`, `fail::FailScenario`).
#[cfg(feature = "failpoints")]
pub use fail;

pub use audit::{AuditEntry, AuditLogConfig, AuditLogHook, AuditOutcome, AuditRow, Redactor, Sent};
pub use config::ConfigError;
pub use factory::{
    APPROVALS, DATABASE, FactoryError, ORG_MODES, STD_HOOK_NAMES, build_std_hook, offline_resources,
};
pub use rate_limit::{
    ConnectorRateLimitHook, DatabaseLimiter, LimiterBackend, MemoryLimiter, Quota, RateLimitConfig,
};
pub use readonly::{DatabaseOrgModes, OrgModeError, OrgModeSource, StaticOrgModes};
#[cfg(feature = "readonly")]
pub use readonly::{
    FunctionAllowlist, ReadOnlyConfig, ReadOnlyGuard, SqlClassifier, SqlDialect, SqlVerdict,
    classify_sql,
};
#[cfg(feature = "args-schema")]
pub use schema::{ArgsSchemaBuilder, ArgsSchemaConfig, ArgsSchemaHook, SchemaError};
pub use storage::{Database, DatabaseOptions, StorageError};
pub use truncate::{ResultTruncateHook, TruncateConfig, truncate_text};
