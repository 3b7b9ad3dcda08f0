//! Building the standard hooks by name, from their config-file form.
//!
//! One mechanism, the runtime's: every standard hook is a registered
//! [`HookFactory`](hooks_runtime::factory::HookFactory) that builds a [`Built`] from
//! its config and the shared [`Resources`]; the approval gate's factory is
//! registered for every agent, and the agent's `require_confirmation_for_all`
//! reaches it typed. [`build_std_hook`] is the same builder with a typed
//! error, for code that builds standard hooks directly. The resources the
//! standard hooks need are looked up under the keys [`DATABASE`],
//! [`APPROVALS`] and [`ORG_MODES`].

use std::sync::Arc;

use hooks_runtime::{
    factory::{Built, FactoryInput, ResourceKey, Resources},
    observer::CallObserver,
    registry::RegisteredHook,
    text::did_you_mean,
};
use serde_json::Value;

use crate::audit::AuditLogHook;
use crate::config::ConfigError;
use crate::config::parse_config;
use crate::gate::channel::{Channel as _, OfflineChannel};
use crate::gate::{
    ApprovalGate, ApprovalGateConfig, Approvals, ApprovalsConfig, ConfirmationStore,
    StaticDirectory,
};
use crate::rate_limit::ConnectorRateLimitHook;
#[cfg(feature = "readonly")]
use crate::readonly::{DatabaseOrgModes, ReadOnlyGuard};
use crate::readonly::{OrgModeSource, StaticOrgModes};
#[cfg(feature = "args-schema")]
use crate::schema::{ArgsSchemaConfig, ArgsSchemaHook};
use crate::storage::{Database, StorageError};
use crate::truncate::ResultTruncateHook;

/// The database: the audit log's, the rate limit's `database` backend's,
/// and the read-only guard's org modes when [`ORG_MODES`] is not given.
pub const DATABASE: ResourceKey<Database> = ResourceKey::new("a database");

/// The approval machinery the approval gate parks calls in.
pub const APPROVALS: ResourceKey<Approvals> = ResourceKey::new(
    "the approval machinery (an `Approvals` with a store, a channel and an approver directory)",
);

/// Where the read-only guard learns which orgs are read-only.
pub const ORG_MODES: ResourceKey<Arc<dyn OrgModeSource>> = ResourceKey::new("an org mode source");

/// The names [`build_std_hook`] knows (a hook whose feature is off is
/// known, and refused with the feature to turn on).
pub const STD_HOOK_NAMES: [&str; 6] = [
    ApprovalGate::NAME,
    ARGS_SCHEMA,
    AuditLogHook::NAME,
    ConnectorRateLimitHook::NAME,
    READONLY_GUARD,
    ResultTruncateHook::NAME,
];

/// [`ArgsSchemaHook`](crate::ArgsSchemaHook)'s name, with or without its feature.
const ARGS_SCHEMA: &str = "args_schema";
/// [`ReadOnlyGuard`](crate::ReadOnlyGuard)'s name, with or without its feature.
const READONLY_GUARD: &str = "readonly_guard";

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
    /// The hook is a standard hook this build leaves out.
    #[error(
        "the standard hook \"{hook}\" is not in this build; enable the `{feature}` feature \
         (of the `hooks` crate, or of hooks-std) to use it"
    )]
    NotInThisBuild {
        /// The hook.
        hook: &'static str,
        /// The cargo feature that brings it.
        feature: &'static str,
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
/// and the [`Resources`] it needs: a [`DATABASE`] (the audit log; the rate
/// limit's `database` backend; the read-only guard's org modes when no
/// [`ORG_MODES`] is given) and [`APPROVALS`] (the approval gate; without
/// it the gate blocks every call that needs approval). The
/// approval gate comes with its "ask" handler, as its factory builds it.
/// Built outside an agent's config, the gate asks for every call only if
/// its own config says `require_confirmation_for_all: true`.
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// use hooks::factory::{BuiltItem, Resources};
/// use hooks::std_hooks::{build_std_hook, Database, DATABASE};
/// use serde_json::json;
///
/// let resources = Resources::new().with(DATABASE, Database::in_memory().await.unwrap());
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
    build(&FactoryInput::new(name, config, resources))
}

/// Builds the standard hook the input names, for the input's agent.
fn build(input: &FactoryInput<'_>) -> Result<Built, FactoryError> {
    let FactoryInput {
        name,
        config,
        resources,
        ..
    } = *input;
    let database = resources.get(DATABASE);
    Ok(match name {
        ApprovalGate::NAME => {
            let gate = approval_gate(input)?;
            let built = Built::from(RegisteredHook::Pre(gate.clone()));
            // Without approvals nothing can be asked: a command hook that
            // answers "ask" is then blocked, in a dry run as in a real call.
            if gate.has_approvals() {
                built.with_ask_handler(gate)
            } else {
                built
            }
        }
        #[cfg(feature = "args-schema")]
        ArgsSchemaHook::NAME => {
            let hook = ArgsSchemaHook::from_config(config)?;
            // Each tool's schema, declared so the agent's build checks the
            // `args.…` paths other hooks read for that tool against it.
            let schemas: ArgsSchemaConfig =
                hooks_runtime::factory::parse_factory_config(ArgsSchemaHook::NAME, config)
                    .unwrap_or_default();
            schemas.schemas.into_iter().fold(
                Built::from(RegisteredHook::pre(hook)),
                |built, (tool, schema)| built.with_args_schema(tool, schema),
            )
        }
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
        #[cfg(not(feature = "args-schema"))]
        ARGS_SCHEMA => {
            return Err(FactoryError::NotInThisBuild {
                hook: ARGS_SCHEMA,
                feature: "args-schema",
            });
        }
        #[cfg(not(feature = "readonly"))]
        READONLY_GUARD => {
            return Err(FactoryError::NotInThisBuild {
                hook: READONLY_GUARD,
                feature: "readonly",
            });
        }
        #[cfg(feature = "readonly")]
        ReadOnlyGuard::NAME => {
            let modes = resources.get(ORG_MODES);
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
    Ok(Resources::new()
        .with(DATABASE, database)
        .with(APPROVALS, approvals)
        .with(ORG_MODES, modes))
}

/// The gate from its config, the agent's settings and the approval
/// machinery: it asks for every call when its own config or the agent's
/// `require_confirmation_for_all` says so. Without an [`APPROVALS`]
/// resource the gate is still built, and blocks every call that would need
/// approval (unless its config selects a channel: then the missing resource
/// is an error).
fn approval_gate(input: &FactoryInput<'_>) -> Result<Arc<ApprovalGate>, FactoryError> {
    let mut config: ApprovalGateConfig = parse_config(ApprovalGate::NAME, input.config)?;
    config.require_confirmation_for_all |= input.agent.require_confirmation_for_all;
    let gate = match input.resources.get(APPROVALS) {
        Some(approvals) => {
            // One place for the channel: a section in the config and a
            // channel started in code would be two (checks and dry runs
            // run on the offline channel, which reaches nobody).
            let offline = approvals.channel().kind() == OfflineChannel.kind();
            if let (Some(settings), false) = (config.channel_settings()?, offline) {
                return Err(ConfigError::new(
                    ApprovalGate::NAME,
                    format!(
                        "the approval channel is set twice: by the config's `{}` section and \
                         by the approval machinery given in code (the {} channel \"{}\"); set \
                         it in one place: remove the section, or build the gate from the config \
                         with `ApprovalGate::builder_from_config`",
                        settings.kind(),
                        approvals.channel().kind(),
                        approvals.channel().channel_id()
                    ),
                )
                .into());
            }
            ApprovalGate::with_config(approvals.clone(), config)?
        }
        None => ApprovalGate::without_approvals(config)?,
    };
    Ok(Arc::new(gate))
}

/// Registers a runtime factory for each standard hook, all built by
/// [`build_std_hook`].
macro_rules! std_factories {
    ($($hook:ident: $description:literal),* $(,)?) => {$(
        hooks_runtime::hook_factory!($hook::NAME, $description, |input| {
            build(input).map_err(|error| error.to_string())
        });
    )*};
}

// Every agent gets the gate: a call can always be held for a person.
hooks_runtime::hook_factory!(
    every_agent ApprovalGate::NAME,
    "pauses a call until a person approves it (durable; Feishu/Lark or Slack); every agent gets it",
    |input| build(input).map_err(|error| error.to_string())
);

std_factories! {
    AuditLogHook: "one durable audit row per attempted call",
    ConnectorRateLimitHook: "call quotas per (connector, user)",
    ResultTruncateHook: "cuts long results on a character boundary",
}
// Registered with or without their features: a config that names one in a
// build without it is told which feature to turn on.
hooks_runtime::hook_factory!(
    ARGS_SCHEMA,
    "blocks calls whose args do not match the tool's JSON Schema",
    |input| build(input).map_err(|error| error.to_string())
);
hooks_runtime::hook_factory!(
    READONLY_GUARD,
    "blocks writes while the org is read-only",
    |input| build(input).map_err(|error| error.to_string())
);

#[cfg(test)]
mod tests {
    use super::*;

    /// The names registered without the hooks' features are the hooks' own.
    #[test]
    fn the_names_known_without_a_feature_are_the_hooks_names() {
        #[cfg(feature = "args-schema")]
        assert_eq!(ARGS_SCHEMA, ArgsSchemaHook::NAME);
        #[cfg(feature = "readonly")]
        assert_eq!(READONLY_GUARD, ReadOnlyGuard::NAME);
        assert!(STD_HOOK_NAMES.contains(&ARGS_SCHEMA) && STD_HOOK_NAMES.contains(&READONLY_GUARD));
    }
}
