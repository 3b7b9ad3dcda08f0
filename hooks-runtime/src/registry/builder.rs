//! Assembling a registry from registered hooks, names and instances.

use std::collections::HashMap;
use std::sync::Arc;

use hooks_when::did_you_mean;

use super::error::RegistryError;
use super::registration::{RegisteredHook, registered_hooks};
use super::{HookRegistry, Hooks};
use crate::hook::{PostToolUseHook, PreToolUseHook, SessionStartHook};
use crate::observer::CallObserver;

/// Collects hooks, then checks and orders them into a [`HookRegistry`].
///
/// ```
/// use hooks_runtime::{Hook, HookContext, HookOutcome, HookRegistry, HookResult, PreToolUseHook};
///
/// struct DenyAll;
/// impl Hook for DenyAll {
///     fn name(&self) -> &str { "deny_all" }
///     fn execute<'a>(&'a self, _: &'a HookContext) -> HookOutcome<'a> {
///         HookResult::block("nothing runs today").into()
///     }
/// }
/// impl PreToolUseHook for DenyAll {}
///
/// let registry = HookRegistry::builder().pre(DenyAll).build().unwrap();
/// assert_eq!(registry.len(), 1);
/// assert!(HookRegistry::builder().pre(DenyAll).pre(DenyAll).build().is_err());
/// ```
#[derive(Default)]
pub struct HookRegistryBuilder {
    hooks: Vec<RegisteredHook>,
    observers: Vec<Arc<dyn CallObserver>>,
    errors: Vec<RegistryError>,
}

impl HookRegistryBuilder {
    /// An empty builder.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds every hook the attributes registered in this program.
    pub fn registered(mut self) -> Self {
        self.hooks
            .extend(registered_hooks().map(|registration| registration.instantiate()));
        self
    }

    /// Adds the registered hooks with these names, in any order. An unknown name
    /// is an error (with the closest registered name as a suggestion).
    pub fn registered_named<I, S>(mut self, names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        for name in names {
            let name = name.as_ref();
            match registered_hooks().find(|registration| registration.name() == name) {
                Some(registration) => self.hooks.push(registration.instantiate()),
                None => self.errors.push(RegistryError::UnknownHook {
                    name: name.to_owned(),
                    suggestion: did_you_mean(name, registered_hooks().map(|r| r.name()))
                        .map(str::to_owned),
                }),
            }
        }
        self
    }

    /// Adds a pre-tool-use hook instance.
    pub fn pre(self, hook: impl PreToolUseHook + 'static) -> Self {
        self.hook(RegisteredHook::Pre(Arc::new(hook)))
    }

    /// Adds a post-tool-use hook instance.
    pub fn post(self, hook: impl PostToolUseHook + 'static) -> Self {
        self.hook(RegisteredHook::Post(Arc::new(hook)))
    }

    /// Adds a session-start hook instance.
    pub fn session_start(self, hook: impl SessionStartHook + 'static) -> Self {
        self.hook(RegisteredHook::SessionStart(Arc::new(hook)))
    }

    /// Adds a hook of any point (shared instances: `RegisteredHook::Pre(arc.clone())`).
    pub fn hook(mut self, hook: RegisteredHook) -> Self {
        self.hooks.push(hook);
        self
    }

    /// Adds a call observer: it sees every attempted call once, on every path
    /// (see [`CallObserver`]). Observers run in the order they are added.
    pub fn observer(mut self, observer: Arc<dyn CallObserver>) -> Self {
        self.observers.push(observer);
        self
    }

    /// Adds several hooks.
    pub fn hooks<I: IntoIterator<Item = RegisteredHook>>(mut self, hooks: I) -> Self {
        self.hooks.extend(hooks);
        self
    }

    /// Checks names and orders each point's hooks by (priority, name).
    pub fn build(self) -> Result<HookRegistry, RegistryError> {
        let mut errors = self.errors;
        let mut seen: HashMap<&str, crate::HookPoint> = HashMap::new();
        for hook in &self.hooks {
            let name = hook.hook().name();
            if name.is_empty() {
                errors.push(RegistryError::EmptyName {
                    point: hook.point(),
                });
                continue;
            }
            if let Some(first) = seen.insert(name, hook.point()) {
                errors.push(RegistryError::DuplicateName {
                    name: name.to_owned(),
                    first,
                    second: hook.point(),
                });
            }
        }
        match errors.len() {
            0 => {}
            1 => return Err(errors.remove(0)),
            _ => return Err(RegistryError::Several(errors)),
        }
        let mut hooks = Hooks {
            observers: self.observers,
            ..Hooks::default()
        };
        for hook in self.hooks {
            match hook {
                RegisteredHook::Pre(hook) => hooks.pre.push(hook),
                RegisteredHook::Post(hook) => hooks.post.push(hook),
                RegisteredHook::SessionStart(hook) => hooks.session_start.push(hook),
            }
        }
        hooks
            .pre
            .sort_by(|a, b| (a.priority(), a.name()).cmp(&(b.priority(), b.name())));
        hooks
            .post
            .sort_by(|a, b| (a.priority(), a.name()).cmp(&(b.priority(), b.name())));
        hooks
            .session_start
            .sort_by(|a, b| (a.priority(), a.name()).cmp(&(b.priority(), b.name())));
        Ok(HookRegistry {
            hooks: Arc::new(hooks),
        })
    }
}
