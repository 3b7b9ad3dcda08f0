//! Hook factories: hooks that need config, built by name.
//!
//! An agent's config names hooks with their config
//! (`{name: connector_rate_limit, config: {per_user_per_minute: 5}}`). Hooks
//! declared with the attributes need no config; hooks that do register a
//! [`HookFactory`] with [`hook_factory!`](crate::hook_factory), which turns a
//! name, the entry's config (JSON; `null` when absent) and the shared
//! [`Resources`] into a hook.
//!
//! ```
//! use hooks_runtime::{
//!     Built, Hook, HookContext, HookOutcome, HookResult, PreToolUseHook, RegisteredHook, Resources,
//! };
//! use serde_json::{Value, json};
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
//! fn build_deny_list(config: &Value, _: &Resources) -> Result<Built, String> {
//!     let tools: Vec<String> = hooks_runtime::parse_factory_config("deny_list", config)?;
//!     Ok(RegisteredHook::pre(DenyList(tools)).into())
//! }
//!
//! hooks_runtime::hook_factory!("deny_list", "blocks the listed tools", build_deny_list);
//!
//! let factory = hooks_runtime::find_factory("deny_list").unwrap();
//! let built = (factory.build)(&json!(["shell_exec"]), &Resources::new()).unwrap();
//! assert!(matches!(built.item, hooks_runtime::BuiltItem::Hook(_)));
//! ```

mod resources;

use std::sync::Arc;

use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::ask::AskHandler;
use crate::observer::CallObserver;
use crate::registry::RegisteredHook;
pub use resources::Resources;

/// What a factory built: a hook or an observer, and possibly an
/// [`AskHandler`] (the approval gate is one) for command hooks that answer
/// "ask".
#[derive(Clone)]
pub struct Built {
    /// The hook or observer.
    pub item: BuiltItem,
    /// Where "ask" decisions of command hooks should go, if this is a gate.
    pub ask_handler: Option<Arc<dyn AskHandler>>,
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
        }
    }
}

impl From<Arc<dyn CallObserver>> for Built {
    fn from(observer: Arc<dyn CallObserver>) -> Self {
        Built {
            item: BuiltItem::Observer(observer),
            ask_handler: None,
        }
    }
}

impl Built {
    /// Marks what was built as the place "ask" decisions go.
    pub fn with_ask_handler(mut self, handler: Arc<dyn AskHandler>) -> Self {
        self.ask_handler = Some(handler);
        self
    }
}

/// Builds a hook from its config and the shared resources; an `Err` says
/// what is wrong with the config or which resource is missing.
pub type BuildFn = fn(&Value, &Resources) -> Result<Built, String>;

/// A named way to build a hook from config. Register one with
/// [`hook_factory!`](crate::hook_factory).
pub struct HookFactory {
    /// The name config files use.
    pub name: &'static str,
    /// One line for tables and `hooks check`.
    pub description: &'static str,
    /// The builder.
    pub build: BuildFn,
}

impl HookFactory {
    /// A factory (used by [`hook_factory!`](crate::hook_factory)).
    pub const fn new(name: &'static str, description: &'static str, build: BuildFn) -> Self {
        HookFactory {
            name,
            description,
            build,
        }
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
/// `fn(&serde_json::Value, &Resources) -> Result<Built, String>`. Needs no
/// dependency besides this crate (or the `hooks` facade).
#[macro_export]
macro_rules! hook_factory {
    ($name:expr, $description:expr, $build:expr $(,)?) => {
        $crate::__private::inventory::submit! {
            $crate::HookFactory::new($name, $description, $build)
        }
    };
}
