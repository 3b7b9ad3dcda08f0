//! `ReadOnlyGuard`: no writes while an org is in read-only mode.
//!
//! Where an org's mode comes from ([`OrgModeSource`]: a static list or the
//! database, with a backend feature) is always here, for every hook that asks; the guard and its
//! SQL classifier (`sqlparser`) need the `readonly-guard` feature.

#[cfg(any(feature = "sqlite", feature = "postgres"))]
mod database_modes;
#[cfg(feature = "readonly-guard")]
mod guard;
mod org_mode;
#[cfg(feature = "readonly-guard")]
mod sql;
#[cfg(feature = "readonly-guard")]
mod sql_arguments;

#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub use database_modes::DatabaseOrgModes;
#[cfg(feature = "readonly-guard")]
pub use guard::{READ_ONLY_REASON, ReadOnlyGuard, ReadOnlyGuardConfig};
pub use org_mode::{ModeFuture, OrgModeError, OrgModeSource, StaticOrgModes};
#[cfg(feature = "readonly-guard")]
pub use sql::{
    FunctionAllowlist, MAX_CHAIN_LINKS, MAX_NESTING, MAX_SQL_BYTES, MAX_TOKENS,
    MAX_TOKENS_PER_CALL, SqlClassifier, SqlDialect, SqlVerdict, UnknownDialect, classify_sql,
};
#[cfg(feature = "readonly-guard")]
pub use sql_arguments::{MAX_ARGUMENT_VALUES, MAX_SQL_BYTES_PER_CALL, MAX_SQL_TEXTS_PER_CALL};
