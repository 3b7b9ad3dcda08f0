//! Hook factories: hooks that need config, built by name.
//!
//! An agent's config names hooks with their config
//! (`{name: connector_rate_limit, config: {per_user_per_minute: 5}}`). Hooks
//! declared with the attributes need no config; hooks that do register a
//! [`HookFactory`] with [`hook_factory!`](crate::hook_factory), which turns
//! a [`FactoryInput`] — the entry's config (JSON; `null` when absent), the
//! shared [`Resources`] and the agent's own settings — into a hook. A factory
//! registered `every_agent` builds a hook for every agent, whether its config
//! names it or not (the approval gate is one).
//!
//! ```
//! use hooks::factory::{Built, FactoryInput, Resources};
//! use hooks::registry::RegisteredHook;
//! use hooks::{Hook, HookContext, HookOutcome, HookResult, PreToolUseHook};
//! use serde_json::json;
//!
//! /// Blocks tools whose name is on a list given in config.
//! struct DenyList(Vec<String>);
//!
//! impl Hook for DenyList {
//!     fn name(&self) -> &str { "deny_list" }
//!     fn should_trigger(&self, ctx: &HookContext) -> bool { self.0.contains(&ctx.tool_name) }
//!     fn execute<'a>(&'a self, _: &'a HookContext) -> HookOutcome<'a> {
//!         HookResult::block("this tool is denied").into()
//!     }
//! }
//! impl PreToolUseHook for DenyList {}
//!
//! fn build_deny_list(input: &FactoryInput<'_>) -> Result<Built, String> {
//!     let tools: Vec<String> = input.parse_config()?;
//!     Ok(RegisteredHook::pre(DenyList(tools)).into())
//! }
//!
//! hooks::hook_factory!("deny_list", "blocks the listed tools", build_deny_list);
//!
//! let factory = hooks::factory::find_factory("deny_list").unwrap();
//! let config = json!(["shell_exec"]);
//! let built = factory.build(&FactoryInput::new("deny_list", &config, &Resources::new())).unwrap();
//! assert!(matches!(built.item, hooks::factory::BuiltItem::Hook(_)));
//! ```

mod agent_flag;
mod resources;

use std::collections::BTreeSet;
use std::sync::Arc;

use serde::de::DeserializeOwned;
use serde_json::Value;

pub use crate::ask::AskHandler;
use crate::observer::CallObserver;
use crate::registry::RegisteredHook;
pub use agent_flag::{AgentFlag, agent_flags};
pub(crate) use agent_flag::{FLAG_PREFIX, agent_flag};
pub use resources::{ResourceKey, Resources};

/// What a factory built: a hook or an observer, and possibly an
/// [`AskHandler`] (the approval gate is one) for command hooks that answer
/// "ask".
#[derive(Clone)]
pub struct Built {
    /// The hook or observer.
    pub item: BuiltItem,
    /// Where "ask" decisions of command hooks should go, if this is a gate.
    pub ask_handler: Option<Arc<dyn AskHandler>>,
    /// JSON Schemas of tools' arguments that this hook knows (tool name,
    /// schema); see [`with_args_schema`](Self::with_args_schema).
    pub args_schemas: Vec<(String, Value)>,
    /// What the config leaves unchecked or likely to surprise, for `hooks
    /// check` and [`AgentConfig::build_registry_with_warnings`](crate::config::AgentConfig::build_registry_with_warnings);
    /// see [`with_warning`](Self::with_warning).
    pub warnings: Vec<String>,
}

/// The hook or observer a factory built.
#[derive(Clone)]
pub enum BuiltItem {
    /// A pre, post or session-start hook.
    Hook(RegisteredHook),
    /// A call observer (e.g. an audit log).
    Observer(Arc<dyn CallObserver>),
}

impl From<RegisteredHook> for Built {
    fn from(hook: RegisteredHook) -> Self {
        Built {
            item: BuiltItem::Hook(hook),
            ask_handler: None,
            args_schemas: Vec::new(),
            warnings: Vec::new(),
        }
    }
}

impl From<Arc<dyn CallObserver>> for Built {
    fn from(observer: Arc<dyn CallObserver>) -> Self {
        Built {
            item: BuiltItem::Observer(observer),
            ask_handler: None,
            args_schemas: Vec::new(),
            warnings: Vec::new(),
        }
    }
}

impl Built {
    /// Marks what was built as the place "ask" decisions go.
    pub fn with_ask_handler(mut self, handler: Arc<dyn AskHandler>) -> Self {
        self.ask_handler = Some(handler);
        self
    }

    /// Declares that calls of `tool` take arguments valid under the JSON
    /// Schema `schema` (a schema guard that enforces it, or a tool
    /// catalogue, knows this). When an agent's config is built, every
    /// `args.…` path that a hook's `when` reads for that tool is checked
    /// against it: a path no valid arguments have is a config error with a
    /// did-you-mean (the guard could never fire), and a path the check cannot
    /// decide is a [`ConfigWarning`](crate::config::ConfigWarning).
    pub fn with_args_schema(mut self, tool: impl Into<String>, schema: Value) -> Self {
        self.args_schemas.push((tool.into(), schema));
        self
    }

    /// Adds a warning about this hook's config: something it leaves
    /// unchecked or that is likely to surprise (the agent still runs).
    /// `hooks check` prints it with the config entry it belongs to.
    pub fn with_warning(mut self, message: impl Into<String>) -> Self {
        self.warnings.push(message.into());
        self
    }
}

/// Builds a hook from its input; an `Err` says what is wrong with the
/// config or which resource is missing.
pub type BuildFn = fn(&FactoryInput<'_>) -> Result<Built, String>;

/// Which agents a factory's hook is attached to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Attach {
    /// Only the agents whose config names it.
    WhenNamed,
    /// Every agent: built with its entry's config when the agent's config
    /// names it (at most once), with `null` config otherwise. An agent
    /// cannot leave it out.
    EveryAgent,
}

/// The settings of a hook built outside any agent's config: no flag set.
static NO_FLAGS: AgentSettings = AgentSettings {
    flags: BTreeSet::new(),
};

/// What a factory builds a hook from.
#[derive(Debug, Clone, Copy)]
pub struct FactoryInput<'a> {
    /// The hook's name, as the config file spells it.
    pub name: &'a str,
    /// The entry's config; `null` when absent.
    pub config: &'a serde_json::Value,
    /// The shared resources (a database, the approval machinery…).
    pub resources: &'a Resources,
    /// The settings of the agent the hook is built for.
    pub agent: &'a AgentSettings,
}

impl<'a> FactoryInput<'a> {
    /// The input for building `name` outside any agent's config (default
    /// agent settings).
    pub fn new(name: &'a str, config: &'a serde_json::Value, resources: &'a Resources) -> Self {
        FactoryInput {
            name,
            config,
            resources,
            agent: &NO_FLAGS,
        }
    }

    /// The same input for an agent with these settings.
    pub fn for_agent(mut self, agent: &'a AgentSettings) -> Self {
        self.agent = agent;
        self
    }

    /// Deserializes the config (`null` means the type's default). Give
    /// `T` `#[serde(deny_unknown_fields)]` so typos are errors.
    pub fn parse_config<T: DeserializeOwned + Default>(&self) -> Result<T, String> {
        parse_factory_config(self.name, self.config)
    }
}

/// What an agent's config says that applies to every hook built for it:
/// the [agent flags](AgentFlag) that are set, its own and, for a delegated
/// agent, its callers'.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct AgentSettings {
    /// The names of the flags that are set.
    pub flags: BTreeSet<String>,
}

impl AgentSettings {
    /// These settings with the flag `name` set.
    pub fn with_flag(mut self, name: impl Into<String>) -> Self {
        self.flags.insert(name.into());
        self
    }

    /// Whether the flag `name` is set.
    pub fn flag(&self, name: &str) -> bool {
        self.flags.contains(name)
    }
}

/// A named way to build a hook from config. Register one with
/// [`hook_factory!`](crate::hook_factory).
#[derive(Debug)]
pub struct HookFactory {
    /// The name config files use.
    pub name: &'static str,
    /// One line for tables and `hooks check`.
    pub description: &'static str,
    /// Which agents get the hook.
    pub attach: Attach,
    build_fn: BuildFn,
    /// The `hook_factory!` invocation's file and line, if known.
    at: Option<(&'static str, u32)>,
}

impl HookFactory {
    /// A factory whose hook an agent gets when its config names it (used
    /// by [`hook_factory!`](crate::hook_factory)).
    pub const fn new(name: &'static str, description: &'static str, build: BuildFn) -> Self {
        HookFactory {
            name,
            description,
            attach: Attach::WhenNamed,
            build_fn: build,
            at: None,
        }
    }

    /// A factory whose hook every agent gets (used by
    /// `hook_factory!(every_agent …)`).
    pub const fn every_agent(
        name: &'static str,
        description: &'static str,
        build: BuildFn,
    ) -> Self {
        HookFactory {
            name,
            description,
            attach: Attach::EveryAgent,
            build_fn: build,
            at: None,
        }
    }

    /// The same factory, declared at `file:line` (`hook_factory!` passes
    /// `file!()` and `line!()`), so errors can say where.
    pub const fn at(mut self, file: &'static str, line: u32) -> Self {
        self.at = Some((file, line));
        self
    }

    /// Where the factory was declared, if known.
    pub fn declaration(&self) -> Option<crate::registry::Declaration> {
        self.at
            .map(|(file, line)| crate::registry::Declaration::Source { file, line })
    }

    /// Builds the hook.
    pub fn build(&self, input: &FactoryInput<'_>) -> Result<Built, String> {
        (self.build_fn)(input)
    }
}

inventory::collect!(HookFactory);

/// Every factory registered anywhere in the program.
pub fn factories() -> impl Iterator<Item = &'static HookFactory> {
    inventory::iter::<HookFactory>.into_iter()
}

/// The factory named `name`.
pub fn find_factory(name: &str) -> Option<&'static HookFactory> {
    factories().find(|factory| factory.name == name)
}

/// Deserializes a factory's config (`null` means the type's default). Give
/// `T` `#[serde(deny_unknown_fields)]` so typos are errors.
pub fn parse_factory_config<T: DeserializeOwned + Default>(
    hook: &str,
    config: &Value,
) -> Result<T, String> {
    if config.is_null() {
        return Ok(T::default());
    }
    serde_json::from_value(config.clone())
        .map_err(|error| format!("invalid config for hook \"{hook}\": {error}"))
}

/// Registers a hook factory by name, for agent config files.
///
/// `hook_factory!("name", "description", build_fn)` where `build_fn` is a
/// `fn(&FactoryInput<'_>) -> Result<Built, String>`: agents get the hook
/// when their config names it. `hook_factory!(every_agent "name",
/// "description", build_fn)`: every agent gets it. Needs no dependency
/// besides this crate (or the `hooks` facade).
#[macro_export]
macro_rules! hook_factory {
    (every_agent $name:expr, $description:expr, $build:expr $(,)?) => {
        $crate::__private::inventory::submit! {
            $crate::factory::HookFactory::every_agent($name, $description, $build)
                .at(::core::file!(), ::core::line!())
        }
    };
    ($name:expr, $description:expr, $build:expr $(,)?) => {
        $crate::__private::inventory::submit! {
            $crate::factory::HookFactory::new($name, $description, $build)
                .at(::core::file!(), ::core::line!())
        }
    };
}

/// Declares an [agent flag](AgentFlag): a top-level boolean of agent
/// configs (named `require_…`) that the hook of the factory `read_by`
/// reads from [`FactoryInput::agent`].
///
/// ```
/// hooks::agent_flag!(
///     "require_two_people",
///     read_by = "payment_quorum",
///     "every payment needs two approvers"
/// );
/// assert!(hooks::factory::agent_flags().iter().any(|flag| flag.name == "require_two_people"));
/// ```
#[macro_export]
macro_rules! agent_flag {
    ($name:expr, read_by = $hook:expr, $description:expr $(,)?) => {
        $crate::__private::inventory::submit! {
            $crate::factory::AgentFlag {
                name: $name,
                read_by: $hook,
                description: $description,
            }
        }
    };
}
