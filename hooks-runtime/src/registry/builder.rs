//! Assembling a registry from registered hooks, names and instances.

use std::collections::HashMap;
use std::sync::Arc;

use hooks_when::did_you_mean;

use super::error::RegistryError;
use super::registration::{Declaration, RegisteredHook, registered_hooks};
use super::{HookRegistry, Hooks};
use crate::hook::{PostToolUseHook, PreToolUseHook, SessionStartHook};
use crate::observer::CallObserver;

/// Collects hooks, then checks and orders them into a [`HookRegistry`].
///
/// ```
/// use hooks::{Hook, HookContext, HookOutcome, HookRegistry, HookResult, PreToolUseHook};
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
    /// Each hook, with where it was declared (for errors).
    hooks: Vec<(RegisteredHook, Option<Declaration>)>,
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
        self.hooks.extend(
            registered_hooks()
                .map(|registration| (registration.instantiate(), registration.declaration())),
        );
        self
    }

    /// Adds the registered hooks with these names, in any order. An unknown name
    /// is an error (with the closest registered name as a suggestion). If
    /// several attributes registered one name, all are added, so building
    /// reports the duplicate with where each was declared.
    pub fn registered_named<I, S>(mut self, names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        for name in names {
            let name = name.as_ref();
            let before = self.hooks.len();
            self.hooks.extend(
                registered_hooks()
                    .filter(|registration| registration.name() == name)
                    .map(|registration| (registration.instantiate(), registration.declaration())),
            );
            if self.hooks.len() == before {
                self.errors.push(RegistryError::UnknownHook {
                    name: name.to_owned(),
                    suggestion: did_you_mean(name, registered_hooks().map(|r| r.name()))
                        .map(str::to_owned),
                });
            }
        }
        self
    }

    /// Adds a pre-tool-use hook instance (declared, for errors, where this
    /// is called).
    #[track_caller]
    pub fn pre(self, hook: impl PreToolUseHook + 'static) -> Self {
        let at = Declaration::caller(std::panic::Location::caller());
        self.hook_declared(RegisteredHook::Pre(Arc::new(hook)), Some(at))
    }

    /// Adds a post-tool-use hook instance (declared, for errors, where this
    /// is called).
    #[track_caller]
    pub fn post(self, hook: impl PostToolUseHook + 'static) -> Self {
        let at = Declaration::caller(std::panic::Location::caller());
        self.hook_declared(RegisteredHook::Post(Arc::new(hook)), Some(at))
    }

    /// Adds a session-start hook instance (declared, for errors, where this
    /// is called).
    #[track_caller]
    pub fn session_start(self, hook: impl SessionStartHook + 'static) -> Self {
        let at = Declaration::caller(std::panic::Location::caller());
        self.hook_declared(RegisteredHook::SessionStart(Arc::new(hook)), Some(at))
    }

    /// Adds a hook of any point (shared instances: `RegisteredHook::Pre(arc.clone())`),
    /// declared, for errors, where this is called.
    #[track_caller]
    pub fn hook(self, hook: RegisteredHook) -> Self {
        let at = Declaration::caller(std::panic::Location::caller());
        self.hook_declared(hook, Some(at))
    }

    /// Adds a hook of any point, declared at `at` (`None`: not known), which
    /// registry errors name.
    pub fn hook_declared(mut self, hook: RegisteredHook, at: Option<Declaration>) -> Self {
        self.hooks.push((hook, at));
        self
    }

    /// Adds a call observer: it sees every attempted call once, on every path
    /// (see [`CallObserver`]). Observers run in the order they are added.
    pub fn observer(mut self, observer: Arc<dyn CallObserver>) -> Self {
        self.observers.push(observer);
        self
    }

    /// Adds several hooks (declared, for errors, where this is called).
    #[track_caller]
    pub fn hooks<I: IntoIterator<Item = RegisteredHook>>(mut self, hooks: I) -> Self {
        let at = Declaration::caller(std::panic::Location::caller());
        self.hooks
            .extend(hooks.into_iter().map(|hook| (hook, Some(at.clone()))));
        self
    }

    /// Checks names and orders each point's hooks by (priority, name).
    pub fn build(self) -> Result<HookRegistry, RegistryError> {
        let mut errors = self.errors;
        let mut seen: HashMap<&str, (crate::HookPoint, &Option<Declaration>)> = HashMap::new();
        for (hook, at) in &self.hooks {
            let name = hook.hook().name();
            if name.is_empty() {
                errors.push(RegistryError::EmptyName {
                    point: hook.point(),
                    at: at.clone(),
                });
                continue;
            }
            match seen.get(name) {
                Some(&(first, first_at)) => errors.push(RegistryError::DuplicateName {
                    name: name.to_owned(),
                    first,
                    first_at: first_at.clone(),
                    second: hook.point(),
                    second_at: at.clone(),
                }),
                None => {
                    seen.insert(name, (hook.point(), at));
                }
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
        for (hook, _) in self.hooks {
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
