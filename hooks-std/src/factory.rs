//! Building the standard hooks by name, from their config-file form.
//!
//! One mechanism, the runtime's: every standard hook is a registered
//! [`HookFactory`](hooks_runtime::HookFactory) that builds a [`Built`] from
//! its config and the shared [`Resources`]. [`build_std_hook`] is the same
//! builder with a typed error, for code that builds standard hooks directly.

use std::sync::Arc;

use hooks_runtime::{Built, CallObserver, RegisteredHook, Resources, did_you_mean};
use serde_json::Value;

use crate::audit::AuditLogHook;
use crate::config::ConfigError;
use crate::gate::channel::OfflineChannel;
use crate::gate::{ApprovalGate, Approvals, ApprovalsConfig, ConfirmationStore, StaticDirectory};
use crate::rate_limit::ConnectorRateLimitHook;
use crate::readonly::{DatabaseOrgModes, OrgModeSource, ReadOnlyGuard, StaticOrgModes};
use crate::schema::ArgsSchemaHook;
use crate::storage::{Database, StorageError};
use crate::truncate::ResultTruncateHook;

/// The names [`build_std_hook`] knows.
pub const STD_HOOK_NAMES: [&str; 6] = [
    ApprovalGate::NAME,
    ArgsSchemaHook::NAME,
    AuditLogHook::NAME,
    ConnectorRateLimitHook::NAME,
    ReadOnlyGuard::NAME,
    ResultTruncateHook::NAME,
];

/// A standard hook could not be built from config.
#[derive(Debug, thiserror::Error)]
pub enum FactoryError {
    /// No standard hook has this name.
    #[error(
        "there is no standard hook named \"{name}\"{}; the standard hooks are {}",
        suggestion.as_ref().map(|s| format!(" (did you mean \"{s}\"?)")).unwrap_or_default(),
        STD_HOOK_NAMES.join(", ")
    )]
    UnknownHook {
        /// The name asked for.
        name: String,
        /// The closest known name, if one is close.
        suggestion: Option<String>,
    },
    /// The hook's config is invalid.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The hook needs something the [`Resources`] do not provide.
    #[error("hook \"{hook}\" needs {what}; add it to the Resources the hook is built with")]
    MissingResource {
        /// The hook.
        hook: &'static str,
        /// What it needs.
        what: &'static str,
    },
}

/// Builds the standard hook `name` from `config` (`null` for its defaults)
/// and the [`Resources`] it needs: a [`Database`] (the audit log; the rate
/// limit's `database` backend; the read-only guard's org modes when no
/// `Arc<dyn OrgModeSource>` is given) and [`Approvals`] (the approval gate).
/// The approval gate comes with its "ask" handler, as its factory builds it.
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// use hooks_runtime::{BuiltItem, Resources};
/// use hooks_std::{build_std_hook, Database};
/// use serde_json::json;
///
/// let resources = Resources::new().with(Database::in_memory().await.unwrap());
/// for (name, config) in [("readonly_guard", json!(null)), ("result_truncate", json!({"max_chars": 2000}))] {
///     let built = build_std_hook(name, &config, &resources).unwrap();
///     assert!(matches!(built.item, BuiltItem::Hook(_)));
/// }
/// let Err(unknown) = build_std_hook("readonly_gaurd", &json!(null), &resources) else {
///     panic!("no such hook");
/// };
/// assert!(unknown.to_string().contains("did you mean \"readonly_guard\""));
/// # });
/// ```
pub fn build_std_hook(
    name: &str,
    config: &Value,
    resources: &Resources,
) -> Result<Built, FactoryError> {
    let database = resources.get::<Database>();
    Ok(match name {
        ApprovalGate::NAME => {
            let gate = approval_gate(config, resources)?;
            Built::from(RegisteredHook::Pre(gate.clone())).with_ask_handler(gate)
        }
        ArgsSchemaHook::NAME => RegisteredHook::pre(ArgsSchemaHook::from_config(config)?).into(),
        AuditLogHook::NAME => {
            let database = database.cloned().ok_or(FactoryError::MissingResource {
                hook: AuditLogHook::NAME,
                what: "a database",
            })?;
            let observer: Arc<dyn CallObserver> =
                Arc::new(AuditLogHook::from_config(database, config)?);
            observer.into()
        }
        ConnectorRateLimitHook::NAME => RegisteredHook::pre(ConnectorRateLimitHook::from_config(
            config,
            database.cloned(),
        )?)
        .into(),
        ReadOnlyGuard::NAME => {
            let modes = resources.get::<Arc<dyn OrgModeSource>>();
            let modes: Arc<dyn OrgModeSource> = match (modes, database) {
                (Some(modes), _) => modes.clone(),
                (None, Some(database)) => Arc::new(DatabaseOrgModes::new(database.clone())),
                (None, None) => {
                    return Err(FactoryError::MissingResource {
                        hook: ReadOnlyGuard::NAME,
                        what: "an org mode source or a database",
                    });
                }
            };
            RegisteredHook::pre(ReadOnlyGuard::from_config(modes, config)?).into()
        }
        ResultTruncateHook::NAME => {
            RegisteredHook::post(ResultTruncateHook::from_config(config)?).into()
        }
        unknown => {
            return Err(FactoryError::UnknownHook {
                name: unknown.to_owned(),
                suggestion: did_you_mean(unknown, STD_HOOK_NAMES).map(str::to_owned),
            });
        }
    })
}

/// Resources for config checks, dry runs and tests: a private in-memory
/// database, the approval machinery on an [`OfflineChannel`] (so a gate
/// that must ask someone blocks), and static org modes in which `read_only`
/// orgs are read-only. Call inside a Tokio runtime.
pub async fn offline_resources<I, S>(read_only: I) -> Result<Resources, StorageError>
where
    I: IntoIterator<Item = S>,
    S: Into<String>,
{
    let database = Database::in_memory().await?;
    let approvals = Approvals::start(
        ConfirmationStore::new(database.clone()),
        Arc::new(OfflineChannel),
        Arc::new(StaticDirectory::new()),
        ApprovalsConfig::default(),
    );
    let modes: Arc<dyn OrgModeSource> = Arc::new(StaticOrgModes::with_read_only(read_only));
    Ok(Resources::new().with(database).with(approvals).with(modes))
}

/// The gate from its config and the approval machinery.
fn approval_gate(config: &Value, resources: &Resources) -> Result<Arc<ApprovalGate>, FactoryError> {
    let approvals = resources
        .get::<Approvals>()
        .cloned()
        .ok_or(FactoryError::MissingResource {
            hook: ApprovalGate::NAME,
            what: "the approval machinery (an `Approvals` with a store, a channel and an approver directory)",
        })?;
    Ok(Arc::new(ApprovalGate::from_config(approvals, config)?))
}

/// Registers a runtime factory for each standard hook, all built by
/// [`build_std_hook`].
macro_rules! std_factories {
    ($($hook:ident: $description:literal),* $(,)?) => {$(
        hooks_runtime::hook_factory!($hook::NAME, $description, |config, resources| {
            build_std_hook($hook::NAME, config, resources).map_err(|error| error.to_string())
        });
    )*};
}

std_factories! {
    ApprovalGate: "pauses a call until a person approves it (durable, Feishu/Lark)",
    ArgsSchemaHook: "blocks calls whose args do not match the tool's JSON Schema",
    AuditLogHook: "one durable audit row per attempted call",
    ConnectorRateLimitHook: "call quotas per (connector, user)",
    ReadOnlyGuard: "blocks writes while the org is read-only",
    ResultTruncateHook: "cuts long results on a character boundary",
}
