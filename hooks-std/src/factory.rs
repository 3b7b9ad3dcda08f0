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

#[cfg(any(
    feature = "approval-gate",
    feature = "args-schema",
    feature = "connector-rate-limit",
    feature = "readonly-guard",
    feature = "result-truncate"
))]
use hooks_runtime::registry::RegisteredHook;
use hooks_runtime::{
    factory::{Built, FactoryInput, ResourceKey, Resources},
    text::did_you_mean,
};
use serde_json::Value;

use crate::config::ConfigError;
use crate::readonly_guard::OrgModeSource;
#[cfg(any(feature = "sqlite", feature = "postgres"))]
use crate::storage::{Database, StorageError};

/// The database: the audit log's, the rate limit's `database` backend's,
/// and the read-only guard's org modes when [`ORG_MODES`] is not given.
#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub const DATABASE: ResourceKey<Database> = ResourceKey::new("a database");

/// The approval machinery the approval gate parks calls in.
#[cfg(feature = "approval-gate")]
pub const APPROVALS: ResourceKey<crate::approval_gate::Approvals> = ResourceKey::new(
    "the approval machinery (an `Approvals` with a store, a channel and an approver directory)",
);

/// Where the read-only guard learns which orgs are read-only.
pub const ORG_MODES: ResourceKey<Arc<dyn OrgModeSource>> = ResourceKey::new("an org mode source");

/// The names [`build_std_hook`] knows (a hook whose feature is off is
/// known, and refused with the feature to turn on).
pub const STD_HOOK_NAMES: [&str; 6] = [
    APPROVAL_GATE,
    ARGS_SCHEMA,
    AUDIT_LOG,
    CONNECTOR_RATE_LIMIT,
    READONLY_GUARD,
    RESULT_TRUNCATE,
];

// Each standard hook's name, known whether or not its feature is on.
const APPROVAL_GATE: &str = "approval_gate";
const ARGS_SCHEMA: &str = "args_schema";
const AUDIT_LOG: &str = "audit_log";
const CONNECTOR_RATE_LIMIT: &str = "connector_rate_limit";
const READONLY_GUARD: &str = "readonly_guard";
const RESULT_TRUNCATE: &str = "result_truncate";

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
    match input.name {
        APPROVAL_GATE => approval_gate(input),
        ARGS_SCHEMA => args_schema(input),
        AUDIT_LOG => audit_log(input),
        CONNECTOR_RATE_LIMIT => connector_rate_limit(input),
        READONLY_GUARD => readonly_guard(input),
        RESULT_TRUNCATE => result_truncate(input),
        unknown => Err(FactoryError::UnknownHook {
            name: unknown.to_owned(),
            suggestion: did_you_mean(unknown, STD_HOOK_NAMES).map(str::to_owned),
        }),
    }
}

/// The builder of a standard hook whose feature is off: it refuses, naming
/// the feature.
macro_rules! not_in_this_build {
    ($builder:ident, $hook:expr, $feature:literal) => {
        #[cfg(not(feature = $feature))]
        fn $builder(_: &FactoryInput<'_>) -> Result<Built, FactoryError> {
            Err(FactoryError::NotInThisBuild {
                hook: $hook,
                feature: $feature,
            })
        }
    };
}

not_in_this_build!(approval_gate, APPROVAL_GATE, "approval-gate");
not_in_this_build!(args_schema, ARGS_SCHEMA, "args-schema");
not_in_this_build!(audit_log, AUDIT_LOG, "audit-log");
not_in_this_build!(
    connector_rate_limit,
    CONNECTOR_RATE_LIMIT,
    "connector-rate-limit"
);
not_in_this_build!(readonly_guard, READONLY_GUARD, "readonly-guard");
not_in_this_build!(result_truncate, RESULT_TRUNCATE, "result-truncate");

/// The gate from its config, the agent's settings and the approval
/// machinery: it asks for every call when its own config or the agent's
/// `require_confirmation_for_all` says so. Without an [`APPROVALS`]
/// resource the gate is still built, and blocks every call that would need
/// approval (unless its config selects a channel: then the missing resource
/// is an error).
#[cfg(feature = "approval-gate")]
fn approval_gate(input: &FactoryInput<'_>) -> Result<Built, FactoryError> {
    use crate::approval_gate::channel::{Channel as _, OfflineChannel};
    use crate::approval_gate::{ApprovalGate, ApprovalGateConfig};
    use crate::config::parse_config;

    let mut config: ApprovalGateConfig = parse_config(ApprovalGate::NAME, input.config)?;
    config.require_confirmation_for_all |= input.agent.flag(REQUIRE_CONFIRMATION_FOR_ALL);
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
    let gate = Arc::new(gate);
    let built = Built::from(RegisteredHook::Pre(gate.clone()));
    // Without approvals nothing can be asked: a command hook that answers
    // "ask" is then blocked, in a dry run as in a real call.
    Ok(if gate.has_approvals() {
        built.with_ask_handler(gate)
    } else {
        built
    })
}

#[cfg(feature = "args-schema")]
fn args_schema(input: &FactoryInput<'_>) -> Result<Built, FactoryError> {
    use crate::args_schema::{ArgsSchema, ArgsSchemaConfig};

    let hook = ArgsSchema::from_config(input.config)?;
    // Each tool's schema, declared so the agent's build checks the
    // `args.…` paths other hooks read for that tool against it.
    let schemas: ArgsSchemaConfig =
        hooks_runtime::factory::parse_factory_config(ArgsSchema::NAME, input.config)
            .unwrap_or_default();
    Ok(schemas.schemas.into_iter().fold(
        Built::from(RegisteredHook::pre(hook)),
        |built, (tool, schema)| built.with_args_schema(tool, schema),
    ))
}

#[cfg(feature = "audit-log")]
fn audit_log(input: &FactoryInput<'_>) -> Result<Built, FactoryError> {
    use crate::audit_log::AuditLog;
    use hooks_runtime::observer::CallObserver;

    let database = input
        .resources
        .get(DATABASE)
        .cloned()
        .ok_or(FactoryError::MissingResource {
            hook: AuditLog::NAME,
            what: "a database",
        })?;
    let observer: Arc<dyn CallObserver> = Arc::new(AuditLog::from_config(database, input.config)?);
    Ok(observer.into())
}

#[cfg(feature = "connector-rate-limit")]
fn connector_rate_limit(input: &FactoryInput<'_>) -> Result<Built, FactoryError> {
    use crate::connector_rate_limit::ConnectorRateLimit;

    let database = input.resources.get(DATABASE).cloned();
    let hook = ConnectorRateLimit::from_config(input.config, database)?;
    Ok(RegisteredHook::pre(hook).into())
}

#[cfg(feature = "readonly-guard")]
fn readonly_guard(input: &FactoryInput<'_>) -> Result<Built, FactoryError> {
    use crate::readonly_guard::ReadOnlyGuard;

    let modes = match input.resources.get(ORG_MODES) {
        Some(modes) => modes.clone(),
        None => modes_in_the_database(input.resources).ok_or(FactoryError::MissingResource {
            hook: ReadOnlyGuard::NAME,
            what: "an org mode source or a database",
        })?,
    };
    let built = Built::from(RegisteredHook::pre(ReadOnlyGuard::from_config(
        modes,
        input.config,
    )?));
    let every_dialect = ["dialect", "database_url"]
        .iter()
        .all(|key| input.config.get(key).is_none_or(Value::is_null));
    Ok(if every_dialect {
        built.with_warning(
            "`dialect` is not set, so SQL is read under every dialect the guard knows and \
             a statement any one of them cannot read as a read is blocked (PostgreSQL's \
             `now() - interval '1 day'`, for one, which MySQL's parser refuses); set \
             `dialect` to your database's, e.g. `dialect: postgresql`, or give its \
             `database_url`",
        )
    } else {
        built
    })
}

/// The org modes kept in the [`DATABASE`], if the resources have one.
#[cfg(feature = "readonly-guard")]
#[cfg_attr(
    not(any(feature = "sqlite", feature = "postgres")),
    allow(unused_variables)
)]
fn modes_in_the_database(resources: &Resources) -> Option<Arc<dyn OrgModeSource>> {
    #[cfg(any(feature = "sqlite", feature = "postgres"))]
    if let Some(database) = resources.get(DATABASE) {
        return Some(Arc::new(crate::readonly_guard::DatabaseOrgModes::new(
            database.clone(),
        )));
    }
    None
}

#[cfg(feature = "result-truncate")]
fn result_truncate(input: &FactoryInput<'_>) -> Result<Built, FactoryError> {
    use crate::result_truncate::ResultTruncate;

    Ok(RegisteredHook::post(ResultTruncate::from_config(input.config)?).into())
}

/// Resources for config checks, dry runs and tests: a private in-memory
/// database, the approval machinery on an
/// [`OfflineChannel`](crate::approval_gate::channel::OfflineChannel) (so a gate that
/// must ask someone blocks; feature `approval-gate`), and static org modes in which
/// `read_only` orgs are read-only. Call inside a Tokio runtime.
#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub async fn offline_resources<I, S>(read_only: I) -> Result<Resources, StorageError>
where
    I: IntoIterator<Item = S>,
    S: Into<String>,
{
    let database = Database::in_memory().await?;
    let modes: Arc<dyn OrgModeSource> = Arc::new(
        crate::readonly_guard::StaticOrgModes::with_read_only(read_only),
    );
    let resources = Resources::new().with(ORG_MODES, modes);
    #[cfg(feature = "approval-gate")]
    let resources = {
        use crate::approval_gate::channel::OfflineChannel;
        use crate::approval_gate::{
            Approvals, ApprovalsConfig, ConfirmationStore, StaticDirectory,
        };
        resources.with(
            APPROVALS,
            Approvals::start(
                ConfirmationStore::new(database.clone()),
                Arc::new(OfflineChannel),
                Arc::new(StaticDirectory::new()),
                ApprovalsConfig::default(),
            ),
        )
    };
    Ok(resources.with(DATABASE, database))
}

/// Registers a runtime factory for each standard hook, all built by
/// [`build_std_hook`]. Each is registered with or without its feature: a
/// config that names one in a build without it is told which feature to
/// turn on.
macro_rules! std_factories {
    ($($name:ident: $description:literal),* $(,)?) => {$(
        hooks_runtime::hook_factory!($name, $description, |input| {
            build(input).map_err(|error| error.to_string())
        });
    )*};
}

/// The agent flag the approval gate reads: every tool call of the agent
/// (and of every agent it delegates to) needs a person's approval. Declared
/// whether or not the gate is in the build, so that a config asking for it
/// in a build without the gate is refused with the feature to turn on.
pub const REQUIRE_CONFIRMATION_FOR_ALL: &str = "require_confirmation_for_all";

hooks_runtime::agent_flag!(
    REQUIRE_CONFIRMATION_FOR_ALL,
    read_by = APPROVAL_GATE,
    "every tool call of the agent needs a person's approval"
);

// Every agent gets the gate: a call can always be held for a person.
#[cfg(feature = "approval-gate")]
hooks_runtime::hook_factory!(
    every_agent APPROVAL_GATE,
    "pauses a call until a person approves it (durable; Feishu/Lark, Slack or a web page); \
     every agent gets it",
    |input| build(input).map_err(|error| error.to_string())
);
#[cfg(not(feature = "approval-gate"))]
std_factories! {
    APPROVAL_GATE: "pauses a call until a person approves it (not in this build)",
}

std_factories! {
    ARGS_SCHEMA: "blocks calls whose args do not match the tool's JSON Schema",
    AUDIT_LOG: "one durable audit row per attempted call",
    CONNECTOR_RATE_LIMIT: "call quotas per (connector, user)",
    READONLY_GUARD: "blocks writes while the org is read-only",
    RESULT_TRUNCATE: "cuts long results on a character boundary",
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The names known without the hooks' features are the hooks' own.
    #[test]
    fn the_names_known_without_a_feature_are_the_hooks_names() {
        #[cfg(feature = "approval-gate")]
        assert_eq!(APPROVAL_GATE, crate::approval_gate::ApprovalGate::NAME);
        #[cfg(feature = "args-schema")]
        assert_eq!(ARGS_SCHEMA, crate::args_schema::ArgsSchema::NAME);
        #[cfg(feature = "audit-log")]
        assert_eq!(AUDIT_LOG, crate::audit_log::AuditLog::NAME);
        #[cfg(feature = "connector-rate-limit")]
        assert_eq!(
            CONNECTOR_RATE_LIMIT,
            crate::connector_rate_limit::ConnectorRateLimit::NAME
        );
        #[cfg(feature = "readonly-guard")]
        assert_eq!(READONLY_GUARD, crate::readonly_guard::ReadOnlyGuard::NAME);
        #[cfg(feature = "result-truncate")]
        assert_eq!(
            RESULT_TRUNCATE,
            crate::result_truncate::ResultTruncate::NAME
        );
    }
}
