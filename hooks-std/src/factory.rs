//! Building the standard hooks by name, from their config-file form.

use std::sync::Arc;

use hooks_runtime::{
    Built, CallObserver, HookRegistryBuilder, RegisteredHook, Resources, did_you_mean,
};
use serde_json::Value;

use crate::audit::AuditLogHook;
use crate::channel::OfflineChannel;
use crate::config::ConfigError;
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

/// What the standard hooks may need besides their config.
#[derive(Clone, Default)]
pub struct StdResources {
    /// The hooks' database: the audit log needs it, the rate limit's
    /// `database` backend needs it, and the read-only guard reads org modes
    /// from it when no `org_modes` source is given.
    pub database: Option<Database>,
    /// Where the read-only guard reads org modes; overrides `database`.
    pub org_modes: Option<Arc<dyn OrgModeSource>>,
    /// The approval machinery (store, channel, directory) the approval gate uses.
    pub approvals: Option<Approvals>,
}

/// A standard hook built from config, ready to add to a registry.
#[derive(Clone)]
pub enum StdHook {
    /// A pre or post hook.
    Hook(RegisteredHook),
    /// A call observer (the audit log).
    Observer(Arc<dyn CallObserver>),
}

impl std::fmt::Debug for StdHook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StdHook::Hook(hook) => f.debug_tuple("Hook").field(hook).finish(),
            StdHook::Observer(_) => f.write_str("Observer(..)"),
        }
    }
}

impl StdHook {
    /// Adds the hook to `builder`.
    pub fn add_to(self, builder: HookRegistryBuilder) -> HookRegistryBuilder {
        match self {
            StdHook::Hook(hook) => builder.hook(hook),
            StdHook::Observer(observer) => builder.observer(observer),
        }
    }
}

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
    /// The hook needs something [`StdResources`] does not provide.
    #[error("hook \"{hook}\" needs {what}; add it to the StdResources given to the factory")]
    MissingResource {
        /// The hook.
        hook: &'static str,
        /// What it needs.
        what: &'static str,
    },
}

/// Builds the standard hook `name` from `config` (`null` for its defaults).
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// use hooks_runtime::HookRegistry;
/// use hooks_std::{build_std_hook, Database, StdResources};
/// use serde_json::json;
///
/// let resources = StdResources { database: Some(Database::in_memory().await.unwrap()), ..Default::default() };
/// let mut builder = HookRegistry::builder();
/// for (name, config) in [("readonly_guard", json!(null)), ("result_truncate", json!({"max_chars": 2000}))] {
///     builder = build_std_hook(name, &config, &resources).unwrap().add_to(builder);
/// }
/// let registry = builder.build().unwrap();
/// assert!(build_std_hook("readonly_gaurd", &json!(null), &resources)
///     .unwrap_err().to_string().contains("did you mean \"readonly_guard\""));
/// # });
/// ```
pub fn build_std_hook(
    name: &str,
    config: &Value,
    resources: &StdResources,
) -> Result<StdHook, FactoryError> {
    Ok(match name {
        ApprovalGate::NAME => StdHook::Hook(RegisteredHook::Pre(approval_gate(config, resources)?)),
        ArgsSchemaHook::NAME => {
            StdHook::Hook(RegisteredHook::pre(ArgsSchemaHook::from_config(config)?))
        }
        AuditLogHook::NAME => {
            let database = resources
                .database
                .clone()
                .ok_or(FactoryError::MissingResource {
                    hook: AuditLogHook::NAME,
                    what: "a database",
                })?;
            StdHook::Observer(Arc::new(AuditLogHook::from_config(database, config)?))
        }
        ConnectorRateLimitHook::NAME => StdHook::Hook(RegisteredHook::pre(
            ConnectorRateLimitHook::from_config(config, resources.database.clone())?,
        )),
        ReadOnlyGuard::NAME => {
            let modes: Arc<dyn OrgModeSource> = match (&resources.org_modes, &resources.database) {
                (Some(modes), _) => modes.clone(),
                (None, Some(database)) => Arc::new(DatabaseOrgModes::new(database.clone())),
                (None, None) => {
                    return Err(FactoryError::MissingResource {
                        hook: ReadOnlyGuard::NAME,
                        what: "an org mode source or a database",
                    });
                }
            };
            StdHook::Hook(RegisteredHook::pre(ReadOnlyGuard::from_config(
                modes, config,
            )?))
        }
        ResultTruncateHook::NAME => StdHook::Hook(RegisteredHook::post(
            ResultTruncateHook::from_config(config)?,
        )),
        unknown => {
            return Err(FactoryError::UnknownHook {
                name: unknown.to_owned(),
                suggestion: did_you_mean(unknown, STD_HOOK_NAMES).map(str::to_owned),
            });
        }
    })
}

impl StdResources {
    /// Picks the standard hooks' resources out of a registry-wide
    /// [`Resources`] map: a [`Database`], an `Arc<dyn OrgModeSource>` and
    /// [`Approvals`], each if present.
    pub fn from_resources(resources: &Resources) -> Self {
        StdResources {
            database: resources.get::<Database>().cloned(),
            org_modes: resources.get::<Arc<dyn OrgModeSource>>().cloned(),
            approvals: resources.get::<Approvals>().cloned(),
        }
    }
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

impl From<StdHook> for Built {
    fn from(hook: StdHook) -> Self {
        match hook {
            StdHook::Hook(hook) => hook.into(),
            StdHook::Observer(observer) => observer.into(),
        }
    }
}

/// The factory behind every standard hook but the gate.
fn build_by_name(name: &str, config: &Value, resources: &Resources) -> Result<Built, String> {
    build_std_hook(name, config, &StdResources::from_resources(resources))
        .map(Built::from)
        .map_err(|error| error.to_string())
}

/// The approval gate from its config and the approval machinery.
fn approval_gate(
    config: &Value,
    resources: &StdResources,
) -> Result<Arc<ApprovalGate>, FactoryError> {
    let approvals = resources
        .approvals
        .clone()
        .ok_or(FactoryError::MissingResource {
            hook: ApprovalGate::NAME,
            what: "the approval machinery (an `Approvals` with a store, a channel and an approver directory)",
        })?;
    Ok(Arc::new(ApprovalGate::from_config(approvals, config)?))
}

/// The gate's factory: the hook, which also takes "ask" decisions from
/// command hooks.
fn build_approval_gate(config: &Value, resources: &Resources) -> Result<Built, String> {
    let gate = approval_gate(config, &StdResources::from_resources(resources))
        .map_err(|error| error.to_string())?;
    Ok(Built::from(RegisteredHook::Pre(gate.clone())).with_ask_handler(gate))
}

hooks_runtime::hook_factory!(
    ApprovalGate::NAME,
    "pauses a call until a person approves it (durable, Feishu/Lark)",
    build_approval_gate
);

/// Registers the factories of standard hooks that `build_by_name` builds.
macro_rules! by_name_factories {
    ($($hook:ident: $description:literal),* $(,)?) => {$(
        hooks_runtime::hook_factory!($hook::NAME, $description, |config, resources| {
            build_by_name($hook::NAME, config, resources)
        });
    )*};
}

by_name_factories! {
    ArgsSchemaHook: "blocks calls whose args do not match the tool's JSON Schema",
    AuditLogHook: "one durable audit row per attempted call",
    ConnectorRateLimitHook: "call quotas per (connector, user)",
    ReadOnlyGuard: "blocks writes while the org is read-only",
    ResultTruncateHook: "cuts long results on a character boundary",
}
